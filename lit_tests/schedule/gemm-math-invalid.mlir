// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown gemm math 'int8' (expected fma, f16, bf16, tf32)}}
  %y = schedule.kernel @k gemm<tile = 64x64x32, thread = 32x32, math = int8> grid [1, 1, 1] block [128, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @h(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a tensor-core gemm needs warp tiles of multiples of 16x16 and a k-step of a multiple of 16, got thread = 16x8, tile_k = 16}}
  %y = schedule.kernel @k gemm<tile = 64x64x16, thread = 16x8, math = tf32> grid [1, 1, 1] block [1024, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @i(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a 64x64 tile of 32x32 micro-tiles needs block [128, 1, 1], got [4, 1, 1]}}
  %y = schedule.kernel @k gemm<tile = 64x64x32, thread = 32x32, math = bf16> grid [1, 1, 1] block [4, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @split(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{split_k must be positive, got 0}}
  %y = schedule.kernel @k gemm<tile = 64x64x16, thread = 8x8, split_k = 0> grid [1, 1, 1] block [64, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
