// The verifiers of the tile-synchronisation ops (schedule.stage, schedule.tile_dep and
// their lowered gpu forms).
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{schedule.stage names @nowhere, which is no schedule.kernel of this function}}
  schedule.stage @nowhere pipeline 0 stream 0 priority 0 policy tile
  func.return %x : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k loop grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %g = schedule.group thread -> global : tensor<4xf32> {
      %e = graph.exp %a : tensor<4xf32>
      schedule.yield %e : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  // expected-error @+1 {{unknown sync policy 'diagonal' (expected tile, row, strided, conv)}}
  schedule.stage @k pipeline 0 stream 0 priority 0 policy diagonal
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k loop grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %g = schedule.group thread -> global : tensor<4xf32> {
      %e = graph.exp %a : tensor<4xf32>
      schedule.yield %e : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  // expected-error @+1 {{a tile dependency maps (x, y, i, j) to (px, py), got (d0, d1) -> (d0, d1)}}
  schedule.tile_dep @k on @k operand 0 map affine_map<(x, y) -> (x, y)> extents [1, 1]
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k loop grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %g = schedule.group thread -> global : tensor<4xf32> {
      %e = graph.exp %a : tensor<4xf32>
      schedule.yield %e : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  // expected-error @+1 {{extents must be two positive sizes, got [0, 1]}}
  schedule.tile_dep @k on @k operand 0 map affine_map<(x, y, i, j) -> (i, j)> extents [0, 1]
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k loop grid [?, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %g = schedule.group thread -> global : tensor<4xf32> {
      %e = graph.exp %a : tensor<4xf32>
      schedule.yield %e : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  // expected-error @+1 {{a stage needs a static grid, @k has [-1, 1, 1]}}
  schedule.stage @k pipeline 0 stream 0 priority 0 policy row
  func.return %y : tensor<4xf32>
}

// -----

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%s: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1 : i32
      // expected-error @+1 {{gpu.sem_post needs a 1-D memref of i32 semaphores, got memref<?xf32>}}
      gpu.sem_post %s[%c0], %one : memref<?xf32>
      gpu.return
    }
  }
}

// -----

func.func @h(%s: memref<?xi32>) {
  %z = arith.constant 0 : i64
  // expected-error @+1 {{gpu.memset of a memref<?xi32> needs a i32 value, got i64}}
  gpu.memset %s, %z : memref<?xi32>, i64
  func.return
}
