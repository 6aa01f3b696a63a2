// The attention kernel also stores its output with the heads merged back: a transpose
// alone reading the p·v dot ([B, H, S, D] -> [B, S, H, D], the last dim kept last, as
// before BERT's output projection) is part of the fusion and its yield, so no copy
// kernel writes the transposed tensor; the reshape after it is a free view.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen' | filecheck %s --check-prefix=SCHED

// CHECK-LABEL: func.func @heads_merged
// CHECK-NEXT: %[[OT:.*]] = stitch.fusion (%k, %q, %v)
// CHECK: %[[O:.*]] = graph.dot %p
// CHECK-NEXT: %[[T:.*]] = graph.transpose %[[O]] perm [0, 2, 1, 3]
// CHECK-NEXT: stitch.yield %[[T]] : tensor<1x16x2x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[M:.*]] = graph.reshape %[[OT]]
// CHECK-NEXT: func.return %[[M]]

// SCHED-LABEL: func.func @heads_merged
// SCHED-COUNT-1: schedule.kernel
// SCHED-SAME: attention
// SCHED-NOT: schedule.kernel
func.func @heads_merged(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x16x16xf32> {
  %kt = graph.transpose %k perm [0, 1, 3, 2] : (tensor<1x2x16x8xf32>) -> tensor<1x2x8x16xf32>
  %s = graph.dot %q, %kt : (tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x16x16xf32>
  %scale = graph.constant dense<3.535534e-01> : tensor<1x2x16x16xf32>
  %x0 = graph.mul %s, %scale : tensor<1x2x16x16xf32>
  %mx = graph.reduce max %x0 dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
  %mxb = graph.broadcast %mx dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
  %sh = graph.sub %x0, %mxb : tensor<1x2x16x16xf32>
  %e = graph.exp %sh : tensor<1x2x16x16xf32>
  %sum = graph.reduce sum %e dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
  %sumb = graph.broadcast %sum dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
  %p = graph.div %e, %sumb : tensor<1x2x16x16xf32>
  %o = graph.dot %p, %v : (tensor<1x2x16x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  %ot = graph.transpose %o perm [0, 2, 1, 3] : (tensor<1x2x16x8xf32>) -> tensor<1x16x2x8xf32>
  %om = graph.reshape %ot : (tensor<1x16x2x8xf32>) -> tensor<1x16x16xf32>
  func.return %om : tensor<1x16x16xf32>
}

