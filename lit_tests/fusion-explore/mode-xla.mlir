// fusion-explore{mode=xla}: the XLA-rule baseline in the same search. A reduction ends
// its fusion and an expensive op on a smaller tensor is not fused into the middle, so
// LayerNorm takes 5 kernels (2 single ops, 3 fusions) and softmax 3 (1 + 2), as in
// FusionStitching fig. 1 (with the simplified evaluator choosing the plan; stitch-codegen's
// estimates prefer 6 kernels for LayerNorm at this small size).
// RUN: fs-opt %s -p 'fusion-explore{mode=xla evaluator=simple}' | filecheck %s

// CHECK-LABEL: func.func @layernorm
// CHECK-SAME: (%[[X:.*]]: tensor<64x128xf32>, %[[G:.*]]: tensor<128xf32>, %[[B:.*]]: tensor<128xf32>)
// CHECK: %[[SUM:.*]] = graph.reduce sum %[[X]] dims [1]
// CHECK-NEXT: %[[MEAN:.*]] = graph.div %[[SUM]]
// CHECK-NEXT: %[[XC:.*]], %[[SQ:.*]] = stitch.fusion (%[[MEAN]], %[[X]]) {pattern = 0 : i64
// CHECK: graph.reduce sum
// CHECK-NEXT: stitch.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[RSTD:.*]] = stitch.fusion (%[[SQ]]) {pattern = 1 : i64
// CHECK: graph.rsqrt
// CHECK-NEXT: stitch.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[Y:.*]] = stitch.fusion (%[[RSTD]], %[[XC]], %[[G]], %[[B]]) {pattern = 2 : i64
// CHECK-NOT: graph.reduce
// CHECK: func.return %[[Y]]

// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: %[[MAX:.*]] = graph.reduce max
// CHECK-NEXT: %[[E:.*]], %[[DEN:.*]] = stitch.fusion (%[[MAX]], %{{.*}}) {pattern = 0 : i64
// CHECK: graph.exp
// CHECK-NEXT: graph.reduce sum
// CHECK-NEXT: stitch.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[Y:.*]] = stitch.fusion (%[[DEN]], %[[E]]) {pattern = 1 : i64
// CHECK: graph.div
// CHECK: func.return %[[Y]]
func.func @layernorm(%x: tensor<64x128xf32>, %gamma: tensor<128xf32>, %beta: tensor<128xf32>) -> tensor<64x128xf32> {
  %n = graph.constant dense<1.280000e+02> : tensor<64xf32>
  %eps = graph.constant dense<1.000000e-05> : tensor<64xf32>
  %sum = graph.reduce sum %x dims [1] : (tensor<64x128xf32>) -> tensor<64xf32>
  %mean = graph.div %sum, %n : tensor<64xf32>
  %mean_b = graph.broadcast %mean dims [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %xc = graph.sub %x, %mean_b : tensor<64x128xf32>
  %xc_sq = graph.mul %xc, %xc : tensor<64x128xf32>
  %sq_sum = graph.reduce sum %xc_sq dims [1] : (tensor<64x128xf32>) -> tensor<64xf32>
  %var = graph.div %sq_sum, %n : tensor<64xf32>
  %var_eps = graph.add %var, %eps : tensor<64xf32>
  %rstd = graph.rsqrt %var_eps : tensor<64xf32>
  %rstd_b = graph.broadcast %rstd dims [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %xhat = graph.mul %xc, %rstd_b : tensor<64x128xf32>
  %gamma_b = graph.broadcast %gamma dims [1] : (tensor<128xf32>) -> tensor<64x128xf32>
  %beta_b = graph.broadcast %beta dims [1] : (tensor<128xf32>) -> tensor<64x128xf32>
  %scaled = graph.mul %xhat, %gamma_b : tensor<64x128xf32>
  %y = graph.add %scaled, %beta_b : tensor<64x128xf32>
  func.return %y : tensor<64x128xf32>
}

func.func @softmax(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %row_max = graph.reduce max %x dims [1] : (tensor<64x128xf32>) -> tensor<64xf32>
  %row_max_b = graph.broadcast %row_max dims [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %shifted = graph.sub %x, %row_max_b : tensor<64x128xf32>
  %e = graph.exp %shifted : tensor<64x128xf32>
  %denom = graph.reduce sum %e dims [1] : (tensor<64x128xf32>) -> tensor<64xf32>
  %denom_b = graph.broadcast %denom dims [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %y = graph.div %e, %denom_b : tensor<64x128xf32>
  func.return %y : tensor<64x128xf32>
}
