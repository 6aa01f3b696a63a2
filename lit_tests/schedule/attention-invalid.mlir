// The attention mapping's parameters: their verifier, the block they need, and what
// schedule-to-gpu needs of a (hand-written) attention kernel.
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{block_k must be 1 to 64 (a key tile is unrolled), got 128}}
  %y = schedule.kernel @k attention<block_q = 32, block_k = 128> grid [1, 1, 1] block [32, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the attention mapping needs block [64, 1, 1], got [32, 1, 1]}}
  %y = schedule.kernel @k attention<block_q = 64, block_k = 16> grid [1, 1, 1] block [32, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the attention mapping needs the parameter 'block_k'}}
  %y = schedule.kernel @k attention<block_q = 64> grid [1, 1, 1] block [64, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{with warp_rows, block_q must be a multiple of warp_rows (a warp per warp_rows rows, at most 32 warps) and block_k must be 32 (a key per lane), got block_q = 32, block_k = 16, warp_rows = 2}}
  %y = schedule.kernel @k attention<block_q = 32, block_k = 16, warp_rows = 2> grid [1, 1, 1] block [512, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the attention mapping needs block [256, 1, 1], got [32, 1, 1]}}
  %y = schedule.kernel @k attention<block_q = 16, block_k = 32, warp_rows = 2> grid [1, 1, 1] block [32, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
