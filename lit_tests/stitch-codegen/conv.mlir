// graph.conv becomes an implicit GEMM (`conv` mapping) on the tiling of the gemm
// mapping: per feature group (grid z) M = batch x output positions, N = output
// channels of the group, K = input channels of the group x kernel positions. The
// latency-evaluator scores the GEMM candidates whose tile fits the problem; `gemm=`
// forces one. A fused epilogue (bias, ReLU) stays in the kernel's one group.
// RUN: fs-opt %s --split-input-file -p stitch-codegen | filecheck %s
// RUN: fs-opt %s --split-input-file -p 'stitch-codegen{gemm="32x16x8/2x1"}' | filecheck %s --check-prefix=FORCED

// 2 groups of M = 2 x 5 x 5 = 50, N = 6, K = 4 x 9 = 36: N is covered by 16 columns,
// so the 16x16 tile is the only candidate; 4 row tiles, a group per grid z.
// CHECK-LABEL: func.func @grouped
// CHECK: schedule.kernel @grouped_k0 conv<tile = 16x16x16> grid [1, 4, 2] block [256, 1, 1]
// CHECK-SAME: candidates = 1 : i64, config = "conv/16x16x16/1x1"
// CHECK: schedule.shared @a_tile
// CHECK: schedule.shared @b_tile
// CHECK: schedule.group block -> global : tensor<2x12x5x5xf32>
// CHECK-NEXT: graph.conv

// FORCED-LABEL: func.func @grouped
// FORCED: schedule.kernel @grouped_k0 conv<tile = 32x16x8, thread = 2x1> grid [1, 2, 2] block [256, 1, 1]
// FORCED-SAME: candidates = 1 : i64, config = "conv/32x16x8/2x1"
func.func @grouped(%x: tensor<2x8x9x9xf32>, %w: tensor<12x4x3x3xf32>, %b: tensor<12xf32>) -> tensor<2x12x5x5xf32> {
  %r = stitch.fusion (%x, %w, %b) : (tensor<2x8x9x9xf32>, tensor<12x4x3x3xf32>, tensor<12xf32>) -> tensor<2x12x5x5xf32> {
  ^bb0(%xa: tensor<2x8x9x9xf32>, %wa: tensor<12x4x3x3xf32>, %ba: tensor<12xf32>):
    %y = graph.conv %xa, %wa strides [2, 2] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] lhs_dilation [1, 1] groups 2 : (tensor<2x8x9x9xf32>, tensor<12x4x3x3xf32>) -> tensor<2x12x5x5xf32>
    stitch.yield %y : tensor<2x12x5x5xf32>
  }
  func.return %r : tensor<2x12x5x5xf32>
}

// -----

// CHECK-LABEL: func.func @conv_relu
// CHECK: schedule.kernel @conv_relu_k0 conv<
// CHECK: schedule.group block -> global : tensor<1x8x6x6xf32> {
// CHECK-NEXT: %[[Y:.*]] = graph.conv
// CHECK-NEXT: %[[B:.*]] = graph.broadcast
// CHECK-NEXT: %[[Z:.*]] = graph.add %[[Y]], %[[B]]
// CHECK: %[[O:.*]] = graph.max %[[Z]]
// CHECK-NEXT: schedule.yield %[[O]]
func.func @conv_relu(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x6x6xf32> {
  %r = stitch.fusion (%x, %w, %b) : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32> {
  ^bb0(%xa: tensor<1x4x6x6xf32>, %wa: tensor<8x4x3x3xf32>, %ba: tensor<8xf32>):
    %y = graph.conv %xa, %wa strides [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
    %bb = graph.broadcast %ba dims [1] : (tensor<8xf32>) -> tensor<1x8x6x6xf32>
    %z = graph.add %y, %bb : tensor<1x8x6x6xf32>
    %c0 = graph.constant dense<0.0> : tensor<1x8x6x6xf32>
    %o = graph.max %z, %c0 : tensor<1x8x6x6xf32>
    stitch.yield %o : tensor<1x8x6x6xf32>
  }
  func.return %r : tensor<1x8x6x6xf32>
}
