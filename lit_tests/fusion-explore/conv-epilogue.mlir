// A conv kernel takes a stitched epilogue: in stitch mode the explorer grows the conv's
// patterns into its elementwise consumers (bias add of a per-channel broadcast, residual
// add, ReLU), so conv + bias + residual + ReLU is one fusion; XLA's rules leave the conv
// alone (a library call) and fuse the rest into a second kernel.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=xla}' | filecheck %s --check-prefix=XLA

// CHECK-LABEL: func.func @block
// CHECK-NEXT: %[[O:.*]] = stitch.fusion
// CHECK: graph.conv
// CHECK: graph.broadcast
// CHECK: graph.add
// CHECK: graph.add
// CHECK: graph.max
// CHECK: stitch.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[O]]

// XLA-LABEL: func.func @block
// XLA: %[[Y:.*]] = graph.conv
// XLA-NEXT: %[[O:.*]] = stitch.fusion (%{{.*}}, %[[Y]], %{{.*}})
// XLA-NOT: graph.conv
// XLA: func.return %[[O]]
func.func @block(%x: tensor<2x8x9x9xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>, %r: tensor<2x8x9x9xf32>) -> tensor<2x8x9x9xf32> {
  %y = graph.conv %x, %w strides [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<2x8x9x9xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x9x9xf32>
  %bb = graph.broadcast %b dims [1] : (tensor<8xf32>) -> tensor<2x8x9x9xf32>
  %z = graph.add %y, %bb : tensor<2x8x9x9xf32>
  %s = graph.add %z, %r : tensor<2x8x9x9xf32>
  %c0 = graph.constant dense<0.0> : tensor<2x8x9x9xf32>
  %o = graph.max %s, %c0 : tensor<2x8x9x9xf32>
  func.return %o : tensor<2x8x9x9xf32>
}
