// schedule.kernel / group / shared / yield print in the custom syntax they parse.
// RUN: fs-opt %s | fs-opt | filecheck %s

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  // CHECK: %[[Y:.*]] = schedule.kernel @softmax_k0 row {threads_per_row = 256 : i64, rows_per_block = 1 : i64} grid [4, 1, 1] block [256, 1, 1] cost {warps = 32 : i64} (%{{.*}}) : (tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  // CHECK-NEXT: ^{{.*}}(%[[X0:.*]]: tensor<4x1024xf32>):
  // CHECK-NEXT: schedule.shared @partials : memref<8xf32, 3 : i64>
  // CHECK-NEXT: schedule.shared @results : memref<2xf32, 3 : i64>
  // CHECK-NEXT: %[[M:.*]] = schedule.group block -> shared @results[0] : tensor<4xf32> {
  // CHECK-NEXT: %[[R:.*]] = graph.reduce max %[[X0]] dims [1] : (tensor<4x1024xf32>) -> tensor<4xf32>
  // CHECK-NEXT: schedule.yield %[[R]] : tensor<4xf32>
  // CHECK-NEXT: }
  // CHECK: %[[S:.*]] = schedule.group block -> shared @results[1] : tensor<4xf32> {
  // CHECK: graph.broadcast %[[M]] dims [0]
  // CHECK: %{{.*}} = schedule.group block -> global {row_dims = array<i64: 0>} : tensor<4x1024xf32> {
  // CHECK: schedule.yield %{{.*}} : tensor<4x1024xf32>
  // CHECK: func.return %[[Y]]
  %y = schedule.kernel @softmax_k0 row {threads_per_row = 256 : i64, rows_per_block = 1 : i64} grid [4, 1, 1] block [256, 1, 1] cost {warps = 32 : i64} (%x) : (tensor<4x1024xf32>) -> tensor<4x1024xf32> {
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
    %p = schedule.group block -> global {row_dims = array<i64: 0>} : tensor<4x1024xf32> {
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
  // CHECK: schedule.kernel @k loop {elements_per_thread = 1 : i64} grid [?, 1, 1] block [256, 1, 1] (%{{.*}}) : (tensor<?xf32>) -> tensor<?xf32> {
  // CHECK: schedule.group thread -> global : tensor<?xf32> {
  %y = schedule.kernel @k loop {elements_per_thread = 1 : i64} grid [?, 1, 1] block [256, 1, 1] (%x) : (tensor<?xf32>) -> tensor<?xf32> {
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
  %y = schedule.kernel @w row {threads_per_row = 32 : i64, rows_per_block = 8 : i64} grid [8, 1, 1] block [256, 1, 1] (%x) : (tensor<64x40xf32>) -> tensor<64xf32> {
  ^bb0(%x0: tensor<64x40xf32>):
    %g = schedule.group warp -> lanes : tensor<64xf32> {
      %r = graph.reduce sum %x0 dims [1] : (tensor<64x40xf32>) -> tensor<64xf32>
      schedule.yield %r : tensor<64xf32>
    }
    schedule.yield %g : tensor<64xf32>
  }
  func.return %y : tensor<64xf32>
}
