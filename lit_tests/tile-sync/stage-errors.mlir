// schedule.stage checks StridedSync's stride: a stride belongs to policy strided and must
// divide the producer's tile columns (each strided group holds as many tiles, the value
// its semaphore is ready at).
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @fig4a(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %c = schedule.kernel @fig4a_k0 gemm<tile = 16x16x16> grid [2, 2, 1] block [256, 1, 1] (%a, %b) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%a_1: tensor<32x32xf32>, %b_1: tensor<32x32xf32>):
    %c_1 = schedule.group block -> global : tensor<32x32xf32> {
      %c_2 = graph.dot %a_1, %b_1 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
      schedule.yield %c_2 : tensor<32x32xf32>
    }
    schedule.yield %c_1 : tensor<32x32xf32>
  }
  // expected-error @+1 {{stride 3 must divide @fig4a_k0's 2 tile columns (each strided group has as many tiles)}}
  schedule.stage @fig4a_k0 pipeline 0 stream 0 priority 0 policy strided stride 3
  func.return %c : tensor<32x32xf32>
}

// -----

func.func @fig4a(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %c = schedule.kernel @fig4a_k0 gemm<tile = 16x16x16> grid [2, 2, 1] block [256, 1, 1] (%a, %b) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%a_1: tensor<32x32xf32>, %b_1: tensor<32x32xf32>):
    %c_1 = schedule.group block -> global : tensor<32x32xf32> {
      %c_2 = graph.dot %a_1, %b_1 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
      schedule.yield %c_2 : tensor<32x32xf32>
    }
    schedule.yield %c_1 : tensor<32x32xf32>
  }
  // expected-error @+1 {{a stride belongs to policy strided, and policy strided needs one}}
  schedule.stage @fig4a_k0 pipeline 0 stream 0 priority 0 policy strided
  func.return %c : tensor<32x32xf32>
}

// -----

func.func @fig4a(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %c = schedule.kernel @fig4a_k0 gemm<tile = 16x16x16> grid [2, 2, 1] block [256, 1, 1] (%a, %b) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%a_1: tensor<32x32xf32>, %b_1: tensor<32x32xf32>):
    %c_1 = schedule.group block -> global : tensor<32x32xf32> {
      %c_2 = graph.dot %a_1, %b_1 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
      schedule.yield %c_2 : tensor<32x32xf32>
    }
    schedule.yield %c_1 : tensor<32x32xf32>
  }
  // expected-error @+1 {{a stride belongs to policy strided, and policy strided needs one}}
  schedule.stage @fig4a_k0 pipeline 0 stream 0 priority 0 policy tile stride 2
  func.return %c : tensor<32x32xf32>
}
