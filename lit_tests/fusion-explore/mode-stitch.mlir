// fusion-explore{mode=stitch}: FusionStitching. LayerNorm and softmax become one
// fusion each: the row reductions in the middle are stitched (their results stay on
// chip for the consumers of the same rows), and the broadcasts of γ and β ride along.
// mode=stitch is the default, as in fs-run and fsir.compile.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s
// RUN: fs-opt %s -p fusion-explore | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch gpu=T4 top-k=2 beam=2 group-size=3}' | filecheck %s

// CHECK-LABEL: func.func @layernorm
// CHECK-SAME: (%[[X:.*]]: tensor<64x128xf32>, %[[G:.*]]: tensor<128xf32>, %[[B:.*]]: tensor<128xf32>)
// CHECK-NEXT: %[[Y:.*]] = stitch.fusion (%[[X]], %[[G]], %[[B]]) {pattern = 0 : i64, score = {{.*}} : f64}
// CHECK-SAME: : (tensor<64x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<64x128xf32> {
// CHECK-COUNT-2: graph.constant
// CHECK: graph.reduce sum
// CHECK: graph.reduce sum
// CHECK: graph.rsqrt
// CHECK: %[[YA:.*]] = graph.add
// CHECK-NEXT: stitch.yield %[[YA]] : tensor<64x128xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[Y]] : tensor<64x128xf32>

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<64x128xf32>)
// CHECK-NEXT: %[[Y:.*]] = stitch.fusion (%[[X]]) {pattern = 0 : i64
// CHECK-NEXT: ^{{.*}}(%[[XA:.*]]: tensor<64x128xf32>):
// CHECK-NEXT: graph.reduce max %[[XA]] dims [1]
// CHECK-NEXT: graph.broadcast
// CHECK-NEXT: graph.sub
// CHECK-NEXT: graph.exp
// CHECK-NEXT: graph.reduce sum
// CHECK-NEXT: graph.broadcast
// CHECK-NEXT: %[[D:.*]] = graph.div
// CHECK-NEXT: stitch.yield %[[D]]
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[Y]]
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
