// report=true prints, per function, the kernels and the global bytes they read and
// write before fusion (one kernel per op) and after, with the chosen patterns' scores
// and the latency-evaluator's estimates of the plans (evaluator.mlir).
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch report=true}' 2>&1 >/dev/null | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=xla report=true evaluator=simple}' 2>&1 >/dev/null | filecheck %s --check-prefix=XLA

// CHECK: fusion-explore @layernorm: mode=stitch gpu=H100 top-k=3 beam=3 group-size=2 remote=true max-ops=128 evaluator=codegen
// CHECK-NEXT: before: 15 kernels, reads 0.36 MB, writes 0.30 MB
// CHECK-NEXT: after: 1 kernels (1 fused), reads 0.03 MB, writes 0.03 MB
// CHECK-NEXT: search: {{[0-9]+}} candidates, {{[0-9]+}} distinct plans
// CHECK-NEXT: evaluator: codegen
// CHECK-NEXT: kernel 0: fusion pattern=0 ops=15 f={{.*}} reads 0.03 MB writes 0.03 MB
// CHECK: fusion-explore @softmax: mode=stitch
// CHECK-NEXT: before: 7 kernels, reads 0.23 MB, writes 0.16 MB
// CHECK-NEXT: after: 1 kernels (1 fused), reads 0.03 MB, writes 0.03 MB

// XLA: fusion-explore @layernorm: mode=xla
// XLA-NEXT: before: 15 kernels
// XLA-NEXT: after: 5 kernels (3 fused), reads 0.10 MB, writes 0.07 MB
// XLA: kernel 0: graph.reduce reads 0.03 MB writes 0.00 MB
// XLA-NEXT: kernel 1: graph.div
// XLA-NEXT: kernel 2: fusion pattern=0 ops=4 f={{.*}}
// XLA: rejected {{[0-9]+}}x: codegen: xla: a reduction ends its fusion
// XLA: rejected {{[0-9]+}}x: codegen: xla: an expensive op on a smaller tensor would be recomputed per element
// XLA: fusion-explore @softmax: mode=xla
// XLA-NEXT: before: 7 kernels
// XLA-NEXT: after: 3 kernels (2 fused)
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
