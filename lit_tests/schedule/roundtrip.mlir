// schedule.kernel / group / shared / yield and the schedule attributes print in the
// syntax they parse, custom or generic.
// RUN: fs-opt %s | fs-opt | filecheck %s
// RUN: fs-opt %s --print-op-generic | fs-opt | filecheck %s

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  // CHECK: %[[Y:.*]] = schedule.kernel @softmax_k0 row<threads_per_row = 256, rows_per_block = 1> grid [4, 1, 1] block [256, 1, 1] cost {warps = 32 : i64} (%{{.*}}) : (tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  // CHECK-NEXT: ^{{.*}}(%[[X0:.*]]: tensor<4x1024xf32>):
  // CHECK-NEXT: schedule.shared @partials : memref<8xf32, 3 : i64>
  // CHECK-NEXT: schedule.shared @results : memref<2xf32, 3 : i64>
  // CHECK-NEXT: %[[M:.*]] = schedule.group block -> shared @results[0] : tensor<4xf32> {
  // CHECK-NEXT: %[[R:.*]] = graph.reduce max %[[X0]] dims [1] : (tensor<4x1024xf32>) -> tensor<4xf32>
  // CHECK-NEXT: schedule.yield %[[R]] : tensor<4xf32>
  // CHECK-NEXT: }
  // CHECK: %[[S:.*]] = schedule.group block -> shared @results[1] : tensor<4xf32> {
  // CHECK: graph.broadcast %[[M]] dims [0]
  // CHECK: %{{.*}} = schedule.group block -> global row_dims [0] : tensor<4x1024xf32> {
  // CHECK: schedule.yield %{{.*}} : tensor<4x1024xf32>
  // CHECK: func.return %[[Y]]
  %y = schedule.kernel @softmax_k0 row<threads_per_row = 256, rows_per_block = 1> grid [4, 1, 1] block [256, 1, 1] cost {warps = 32 : i64} (%x) : (tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  ^bb0(%x0: tensor<4x1024xf32>):
    schedule.shared @partials : memref<8xf32, 3>
    schedule.shared @results : memref<2xf32, 3>
    %m = schedule.group block -> shared @results[0] : tensor<4xf32> {
      %r = graph.reduce max %x0 dims [1] : (tensor<4x1024xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    %s = schedule.group block -> shared @results[1] : tensor<4xf32> {
      %mb = graph.broadcast %m dims [0] : (tensor<4xf32>) -> tensor<4x1024xf32>
      %d = graph.sub %x0, %mb : tensor<4x1024xf32>
      %e = graph.exp %d : tensor<4x1024xf32>
      %r = graph.reduce sum %e dims [1] : (tensor<4x1024xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    %p = schedule.group block -> global row_dims [0] : tensor<4x1024xf32> {
      %mb = graph.broadcast %m dims [0] : (tensor<4xf32>) -> tensor<4x1024xf32>
      %d = graph.sub %x0, %mb : tensor<4x1024xf32>
      %e = graph.exp %d : tensor<4x1024xf32>
      %sb = graph.broadcast %s dims [0] : (tensor<4xf32>) -> tensor<4x1024xf32>
      %q = graph.div %e, %sb : tensor<4x1024xf32>
      schedule.yield %q : tensor<4x1024xf32>
    }
    schedule.yield %p : tensor<4x1024xf32>
  }
  func.return %y : tensor<4x1024xf32>
}

// CHECK-LABEL: func.func @dynamic_loop
func.func @dynamic_loop(%x: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK: schedule.kernel @k loop grid [?, 1, 1] block [256, 1, 1] (%{{.*}}) : (tensor<?xf32>) -> tensor<?xf32> {
  // CHECK: schedule.group thread -> global : tensor<?xf32> {
  %y = schedule.kernel @k loop grid [?, 1, 1] block [256, 1, 1] (%x) : (tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%x0: tensor<?xf32>):
    %g = schedule.group thread -> global : tensor<?xf32> {
      %e = graph.exp %x0 : tensor<?xf32>
      schedule.yield %e : tensor<?xf32>
    }
    schedule.yield %g : tensor<?xf32>
  }
  func.return %y : tensor<?xf32>
}

// CHECK-LABEL: func.func @warp_lanes
func.func @warp_lanes(%x: tensor<64x40xf32>) -> tensor<64xf32> {
  // CHECK: schedule.group warp -> lanes : tensor<64xf32>
  %y = schedule.kernel @w row<threads_per_row = 32, rows_per_block = 8> grid [8, 1, 1] block [256, 1, 1] (%x) : (tensor<64x40xf32>) -> tensor<64xf32> {
  ^bb0(%x0: tensor<64x40xf32>):
    %g = schedule.group warp -> lanes : tensor<64xf32> {
      %r = graph.reduce sum %x0 dims [1] : (tensor<64x40xf32>) -> tensor<64xf32>
      schedule.yield %r : tensor<64xf32>
    }
    schedule.yield %g : tensor<64xf32>
  }
  func.return %y : tensor<64xf32>
}

// Each mapping's parameters, every field: keys in any order, printed in a fixed one,
// fields at their default left out.
// CHECK-LABEL: func.func @mappings
func.func @mappings(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  // CHECK: schedule.kernel @loop4 loop<vector_width = 4> grid [4, 1, 1] block [256, 1, 1] (%{{.*}})
  %a = schedule.kernel @loop4 loop<vector_width = 4> grid [4, 1, 1] block [256, 1, 1] (%x) : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x0: tensor<64x64xf32>):
    %g = schedule.group thread -> global : tensor<64x64xf32> {
      %e = graph.exp %x0 : tensor<64x64xf32>
      schedule.yield %e : tensor<64x64xf32>
    }
    schedule.yield %g : tensor<64x64xf32>
  }
  // CHECK: schedule.kernel @cached row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 4, row_steps = 2, vector_width = 2> grid [4, 1, 1] block [256, 1, 1] (%{{.*}})
  %b = schedule.kernel @cached row<vector_width = 2, row_steps = 2, elements_per_thread = 4, rows_per_block = 8, threads_per_row = 32> grid [4, 1, 1] block [256, 1, 1] (%x) : (tensor<64x64xf32>) -> tensor<64xf32> {
  ^bb0(%x0: tensor<64x64xf32>):
    %g = schedule.group warp -> lanes : tensor<64xf32> {
      %r = graph.reduce sum %x0 dims [1] : (tensor<64x64xf32>) -> tensor<64xf32>
      schedule.yield %r : tensor<64xf32>
    }
    schedule.yield %g : tensor<64xf32>
  }
  // CHECK: schedule.kernel @columns row<threads_per_row = 8, rows_per_block = 32, interleaved> grid [2, 1, 1] block [256, 1, 1] (%{{.*}})
  %c = schedule.kernel @columns row<threads_per_row = 8, rows_per_block = 32, interleaved, row_steps = 1, vector_width = 1> grid [2, 1, 1] block [256, 1, 1] (%x) : (tensor<64x64xf32>) -> tensor<64xf32> {
  ^bb0(%x0: tensor<64x64xf32>):
    schedule.shared @partials : memref<256xf32, 3>
    schedule.shared @results : memref<32xf32, 3>
    %g = schedule.group block -> shared @results[0] : tensor<64xf32> {
      %r = graph.reduce sum %x0 dims [0] : (tensor<64x64xf32>) -> tensor<64xf32>
      schedule.yield %r : tensor<64xf32>
    }
    schedule.yield %g : tensor<64xf32>
  }
  // CHECK: schedule.kernel @tiles gemm<tile = 32x32x16, thread = 2x4> grid [2, 2, 1] block [128, 1, 1] (%{{.*}}, %{{.*}})
  %d = schedule.kernel @tiles gemm<thread = 2x4, tile = 32x32x16> grid [2, 2, 1] block [128, 1, 1] (%x, %w) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x0: tensor<64x64xf32>, %w0: tensor<64x64xf32>):
    schedule.shared @a_tile : memref<512xf32, 3>
    schedule.shared @b_tile : memref<512xf32, 3>
    %g = schedule.group block -> global : tensor<64x64xf32> {
      %p = graph.dot %x0, %w0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      schedule.yield %p : tensor<64x64xf32>
    }
    schedule.yield %g : tensor<64x64xf32>
  }
  // CHECK: schedule.kernel @scalar_tiles gemm<tile = 16x16x16> grid [4, 4, 1] block [256, 1, 1] (%{{.*}}, %{{.*}})
  %e = schedule.kernel @scalar_tiles gemm<tile = 16x16x16, thread = 1x1> grid [4, 4, 1] block [256, 1, 1] (%x, %w) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x0: tensor<64x64xf32>, %w0: tensor<64x64xf32>):
    schedule.shared @a_tile : memref<256xf32, 3>
    schedule.shared @b_tile : memref<256xf32, 3>
    %g = schedule.group block -> global : tensor<64x64xf32> {
      %p = graph.dot %x0, %w0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      schedule.yield %p : tensor<64x64xf32>
    }
    schedule.yield %g : tensor<64x64xf32>
  }
  func.return %a, %b, %c, %d, %e : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// Every group composition and result storage.
// CHECK-LABEL: func.func @groups
func.func @groups(%x: tensor<64x40xf32>) -> tensor<64x40xf32> {
  %y = schedule.kernel @g row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 2> grid [8, 1, 1] block [256, 1, 1] (%x) : (tensor<64x40xf32>) -> tensor<64x40xf32> {
  ^bb0(%x0: tensor<64x40xf32>):
    schedule.shared @results : memref<8xf32, 3>
    // CHECK: schedule.group thread -> reg : tensor<64xf32>
    %m = schedule.group thread -> reg : tensor<64xf32> {
      %r = graph.reduce max %x0 dims [1] : (tensor<64x40xf32>) -> tensor<64xf32>
      schedule.yield %r : tensor<64xf32>
    }
    // CHECK: schedule.group warp -> lanes : tensor<64xf32>
    %s = schedule.group warp -> lanes : tensor<64xf32> {
      %r = graph.reduce sum %x0 dims [1] : (tensor<64x40xf32>) -> tensor<64xf32>
      schedule.yield %r : tensor<64xf32>
    }
    // CHECK: schedule.group block -> shared @results[0] : tensor<64xf32>
    %t = schedule.group block -> shared @results[0] : tensor<64xf32> {
      %r = graph.reduce min %x0 dims [1] : (tensor<64x40xf32>) -> tensor<64xf32>
      schedule.yield %r : tensor<64xf32>
    }
    // CHECK: schedule.group block -> global row_dims [0] : tensor<64x40xf32>
    %g = schedule.group block -> global row_dims [0] : tensor<64x40xf32> {
      %mb = graph.broadcast %m dims [0] : (tensor<64xf32>) -> tensor<64x40xf32>
      %sb = graph.broadcast %s dims [0] : (tensor<64xf32>) -> tensor<64x40xf32>
      %tb = graph.broadcast %t dims [0] : (tensor<64xf32>) -> tensor<64x40xf32>
      %d = graph.sub %x0, %mb : tensor<64x40xf32>
      %q = graph.div %d, %sb : tensor<64x40xf32>
      %o = graph.add %q, %tb : tensor<64x40xf32>
      schedule.yield %o : tensor<64x40xf32>
    }
    schedule.yield %g : tensor<64x40xf32>
  }
  func.return %y : tensor<64x40xf32>
}

// The attributes on their own.
// CHECK-LABEL: func.func @attributes
// CHECK-SAME: mapping = #schedule<mapping gemm>, composition = #schedule<composition warp>, storage = #schedule<storage lanes>
// CHECK-SAME: loop = #schedule.loop, vector = #schedule.loop<vector_width = 2>
// CHECK-SAME: row = #schedule.row<threads_per_row = 1, rows_per_block = 256, elements_per_thread = 5>
// CHECK-SAME: gemm = #schedule.gemm<tile = 128x64x16, thread = 4x4>
func.func @attributes() attributes {mapping = #schedule<mapping gemm>, composition = #schedule<composition warp>, storage = #schedule<storage lanes>, loop = #schedule.loop, vector = #schedule.loop<vector_width = 2>, row = #schedule.row<elements_per_thread = 5, threads_per_row = 1, rows_per_block = 256>, gemm = #schedule.gemm<tile = 128x64x16, thread = 4x4>} {
  func.return
}
