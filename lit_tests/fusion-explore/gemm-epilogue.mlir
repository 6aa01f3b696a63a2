// A dot's kernel takes a stitched epilogue: in stitch mode the explorer grows the dot's
// patterns into its elementwise consumers, so x·W1 + b1 followed by GELU (tanh form)
// is one fusion, and the second GEMM's bias and residual add end in its kernel too.
// XLA's rules leave each dot alone (a library call) and fuse its consumers into a
// kernel of their own.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=xla}' | filecheck %s --check-prefix=XLA

// CHECK-LABEL: func.func @mlp
// CHECK-NEXT: %[[H:.*]] = stitch.fusion (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: graph.dot
// CHECK: graph.broadcast
// CHECK: graph.add
// CHECK: graph.tanh
// CHECK-NEXT: graph.add
// CHECK-NEXT: graph.mul
// CHECK-NEXT: %[[G:.*]] = graph.mul
// CHECK-NEXT: stitch.yield %[[G]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[O:.*]] = stitch.fusion (%[[H]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: graph.dot
// CHECK: graph.add
// CHECK: %[[R:.*]] = graph.add
// CHECK-NEXT: stitch.yield %[[R]]
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[O]]

// XLA-LABEL: func.func @mlp
// XLA: %[[D1:.*]] = graph.dot
// XLA-NEXT: %[[G:.*]] = stitch.fusion (%{{.*}}, %[[D1]])
// XLA-NOT: graph.dot
// XLA: stitch.yield
// XLA-NEXT: }
// XLA-NEXT: %[[D2:.*]] = graph.dot %[[G]]
// XLA-NEXT: %[[O:.*]] = stitch.fusion (%{{.*}}, %[[D2]], %{{.*}})
// XLA-NOT: graph.dot
// XLA: func.return %[[O]]
func.func @mlp(%x: tensor<64x32xf32>, %w1: tensor<32x128xf32>, %b1: tensor<128xf32>,
               %w2: tensor<128x32xf32>, %b2: tensor<32xf32>) -> tensor<64x32xf32> {
  %d1 = graph.dot %x, %w1 : (tensor<64x32xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
  %bb1 = graph.broadcast %b1 dims [1] : (tensor<128xf32>) -> tensor<64x128xf32>
  %h = graph.add %d1, %bb1 : tensor<64x128xf32>
  %c3 = graph.constant dense<0.044715> : tensor<64x128xf32>
  %c1 = graph.constant dense<1.0> : tensor<64x128xf32>
  %ch = graph.constant dense<0.5> : tensor<64x128xf32>
  %cs = graph.constant dense<0.7978845608> : tensor<64x128xf32>
  %h2 = graph.mul %h, %h : tensor<64x128xf32>
  %h3 = graph.mul %h2, %h : tensor<64x128xf32>
  %a = graph.mul %h3, %c3 : tensor<64x128xf32>
  %i = graph.add %h, %a : tensor<64x128xf32>
  %s = graph.mul %i, %cs : tensor<64x128xf32>
  %th = graph.tanh %s : tensor<64x128xf32>
  %o = graph.add %th, %c1 : tensor<64x128xf32>
  %hh = graph.mul %h, %ch : tensor<64x128xf32>
  %g = graph.mul %hh, %o : tensor<64x128xf32>
  %d2 = graph.dot %g, %w2 : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  %bb2 = graph.broadcast %b2 dims [1] : (tensor<32xf32>) -> tensor<64x32xf32>
  %y = graph.add %d2, %bb2 : tensor<64x32xf32>
  %r = graph.add %y, %x : tensor<64x32xf32>
  func.return %r : tensor<64x32xf32>
}
