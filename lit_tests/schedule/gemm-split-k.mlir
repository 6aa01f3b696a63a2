// RUN: fs-opt %s | filecheck %s

// `split_k = S`: S blocks (grid z = batch x S) compute each output tile, one slice of
// the k-steps each; 1 (the default) is not printed.
// CHECK-LABEL: func.func @f
// CHECK: schedule.kernel @split gemm<tile = 64x64x16, thread = 8x8, split_k = 4> grid [1, 1, 4] block [64, 1, 1]
// CHECK: schedule.kernel @whole gemm<tile = 64x64x16, thread = 8x8> grid [1, 1, 1] block [64, 1, 1]
func.func @f(%y: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %d = schedule.kernel @split gemm<split_k = 4, tile = 64x64x16, thread = 8x8> grid [1, 1, 4] block [64, 1, 1] (%y, %y) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>):
    schedule.shared @a_tile : memref<1088xf32, 3>
    schedule.shared @b_tile : memref<1024xf32, 3>
    %g = schedule.group block -> global : tensor<64x64xf32> {
      %p = graph.dot %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      schedule.yield %p : tensor<64x64xf32>
    }
    schedule.yield %g : tensor<64x64xf32>
  }
  %e = schedule.kernel @whole gemm<tile = 64x64x16, thread = 8x8, split_k = 1> grid [1, 1, 1] block [64, 1, 1] (%y, %y) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>):
    schedule.shared @a_tile : memref<1088xf32, 3>
    schedule.shared @b_tile : memref<1024xf32, 3>
    %g = schedule.group block -> global : tensor<64x64xf32> {
      %p = graph.dot %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      schedule.yield %p : tensor<64x64xf32>
    }
    schedule.yield %g : tensor<64x64xf32>
  }
  func.return %d, %e : tensor<64x64xf32>, tensor<64x64xf32>
}
