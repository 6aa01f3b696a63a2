// The attention mapping's parameters print in their order whatever order they are
// written in, and round-trip.
// RUN: fs-opt %s | filecheck %s
// RUN: fs-opt %s | fs-opt | filecheck %s

// CHECK-LABEL: func.func @f
// CHECK: schedule.kernel @k attention<block_q = 64, block_k = 32> grid [2, 24, 1] block [64, 1, 1] (%{{.*}})
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k attention<block_k = 32, block_q = 64> grid [2, 24, 1] block [64, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// With warp_rows (a warp per warp_rows query rows) the block is 32 · block_q / warp_rows threads.
// CHECK-LABEL: func.func @warp
// CHECK: schedule.kernel @k attention<block_q = 32, block_k = 32, warp_rows = 2> grid [4, 24, 1] block [512, 1, 1] (%{{.*}})
func.func @warp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k attention<warp_rows = 2, block_q = 32, block_k = 32> grid [4, 24, 1] block [512, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
