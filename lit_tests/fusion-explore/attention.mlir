// Attention is one fusion in stitch mode: softmax(q·kᵀ·scale + mask)·v -- both dots, the
// score chain (scale, additive mask broadcast, or a causal mask from iota / compare /
// select), the softmax and the transpose of k -- so the 16x16 scores never leave the
// kernel (`attention_patterns`). XLA's rules keep the dots apart. Probabilities read by
// another op (a second output here) must be written: then no attention is recognised.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=xla}' | filecheck %s --check-prefix=XLA

// CHECK-LABEL: func.func @additive
// CHECK-NEXT: %[[O:.*]] = stitch.fusion (%k, %q, %mask, %v)
// CHECK: graph.transpose
// CHECK: graph.dot
// CHECK: graph.broadcast %{{.*}} dims [0, 1, 2, 3]
// CHECK: graph.reduce max
// CHECK: graph.exp
// CHECK: graph.reduce sum
// CHECK: %[[OI:.*]] = graph.dot
// CHECK-NEXT: stitch.yield %[[OI]]
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[O]]
// XLA-LABEL: func.func @additive
// XLA: graph.dot
// XLA: stitch.fusion
// XLA: graph.dot

// CHECK-LABEL: func.func @causal
// CHECK-NEXT: %[[O:.*]] = stitch.fusion (%k, %q, %v)
// CHECK: graph.dot
// CHECK: graph.iota dim 0
// CHECK: graph.iota dim 1
// CHECK: graph.compare ge
// CHECK: graph.select
// CHECK: graph.dot
// CHECK: stitch.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[O]]

// CHECK-LABEL: func.func @probs_out
// CHECK: %[[S:.*]] = stitch.fusion (%k, %q)
// CHECK: graph.dot
// CHECK: stitch.yield
// CHECK: %[[P:.*]] = stitch.fusion (%[[S]], %mask)
// CHECK-NOT: graph.dot
// CHECK: stitch.yield
// CHECK: %[[O:.*]] = graph.dot %[[P]], %v
// CHECK: func.return %[[O]], %[[P]]

func.func @additive(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %mask: tensor<1x1x1x16xf32>) -> tensor<1x2x16x8xf32> {
  %kt = graph.transpose %k perm [0, 1, 3, 2] : (tensor<1x2x16x8xf32>) -> tensor<1x2x8x16xf32>
  %s = graph.dot %q, %kt : (tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x16x16xf32>
  %scale = graph.constant dense<3.535534e-01> : tensor<1x2x16x16xf32>
  %x0 = graph.mul %s, %scale : tensor<1x2x16x16xf32>
  %mb = graph.broadcast %mask dims [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<1x2x16x16xf32>
  %x = graph.add %x0, %mb : tensor<1x2x16x16xf32>
  %mx = graph.reduce max %x dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
  %mxb = graph.broadcast %mx dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
  %sh = graph.sub %x, %mxb : tensor<1x2x16x16xf32>
  %e = graph.exp %sh : tensor<1x2x16x16xf32>
  %sum = graph.reduce sum %e dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
  %sumb = graph.broadcast %sum dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
  %p = graph.div %e, %sumb : tensor<1x2x16x16xf32>
  %o = graph.dot %p, %v : (tensor<1x2x16x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  func.return %o : tensor<1x2x16x8xf32>
}

func.func @causal(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %kt = graph.transpose %k perm [0, 1, 3, 2] : (tensor<1x2x16x8xf32>) -> tensor<1x2x8x16xf32>
  %s = graph.dot %q, %kt : (tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x16x16xf32>
  %scale = graph.constant dense<3.535534e-01> : tensor<1x2x16x16xf32>
  %x0 = graph.mul %s, %scale : tensor<1x2x16x16xf32>
  %row = graph.iota dim 0 : tensor<16x16xi32>
  %col = graph.iota dim 1 : tensor<16x16xi32>
  %keep = graph.compare ge %row, %col : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
  %keep4 = graph.broadcast %keep dims [2, 3] : (tensor<16x16xi1>) -> tensor<1x2x16x16xi1>
  %ninf = graph.constant dense<-1.0e30> : tensor<1x2x16x16xf32>
  %ninf_t = graph.convert %ninf : (tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
  %x = graph.select %keep4, %x0, %ninf_t : (tensor<1x2x16x16xi1>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
  %mx = graph.reduce max %x dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
  %mxb = graph.broadcast %mx dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
  %sh = graph.sub %x, %mxb : tensor<1x2x16x16xf32>
  %e = graph.exp %sh : tensor<1x2x16x16xf32>
  %sum = graph.reduce sum %e dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
  %sumb = graph.broadcast %sum dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
  %p = graph.div %e, %sumb : tensor<1x2x16x16xf32>
  %o = graph.dot %p, %v : (tensor<1x2x16x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  func.return %o : tensor<1x2x16x8xf32>
}

func.func @probs_out(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %mask: tensor<1x1x1x16xf32>) -> (tensor<1x2x16x8xf32>, tensor<1x2x16x16xf32>) {
  %kt = graph.transpose %k perm [0, 1, 3, 2] : (tensor<1x2x16x8xf32>) -> tensor<1x2x8x16xf32>
  %s = graph.dot %q, %kt : (tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x16x16xf32>
  %scale = graph.constant dense<3.535534e-01> : tensor<1x2x16x16xf32>
  %x0 = graph.mul %s, %scale : tensor<1x2x16x16xf32>
  %mb = graph.broadcast %mask dims [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<1x2x16x16xf32>
  %x = graph.add %x0, %mb : tensor<1x2x16x16xf32>
  %mx = graph.reduce max %x dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
  %mxb = graph.broadcast %mx dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
  %sh = graph.sub %x, %mxb : tensor<1x2x16x16xf32>
  %e = graph.exp %sh : tensor<1x2x16x16xf32>
  %sum = graph.reduce sum %e dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
  %sumb = graph.broadcast %sum dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
  %p = graph.div %e, %sumb : tensor<1x2x16x16xf32>
  %o = graph.dot %p, %v : (tensor<1x2x16x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  func.return %o, %p : tensor<1x2x16x8xf32>, tensor<1x2x16x16xf32>
}
