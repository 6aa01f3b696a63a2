// LayerNorm → a narrow dot (2048x768 · 768x64: one column tile, so the GEMM normalises
// each A element once): with the statistics loaded once per tile row before the
// k-loop and γ, β once per k-step, the default (codegen) latency-evaluator chooses the
// statistics kernel + normalising GEMM over the row kernel writing the normalised
// activation (6.3 MB written and read back). Wide dots (BERT's 768x3072) keep the row
// kernel: there each of the product's column tiles would repeat the normalisation.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch report=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @preln_narrow
// CHECK-NEXT: %[[MEAN:.*]], %[[RSTD:.*]] = stitch.fusion (%{{.*}}) {pattern = 0 : i64
// CHECK: graph.rsqrt
// CHECK: stitch.yield %{{.*}}, %{{.*}} : tensor<2048xf32>, tensor<2048xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[D:.*]] = stitch.fusion ({{.*}}%[[MEAN]]{{.*}}%[[RSTD]]{{.*}}) {pattern = 1 : i64
// CHECK-NOT: graph.reduce
// CHECK: %[[Y:.*]] = graph.add
// CHECK-NEXT: %[[DA:.*]] = graph.dot %[[Y]]
// CHECK-NEXT: stitch.yield %[[DA]]
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[D]]

// REPORT: evaluator: codegen chose plan [[P:[0-9]+]] of {{[0-9]+}}, [[P]] (plan {{[0-9]+}} with the ops it left alone fused, or with GEMM prologues)
// REPORT-NEXT: kernel 0: fusion pattern=0
// REPORT-NEXT: kernel 1: fusion pattern=1
func.func @preln_narrow(%x: tensor<2048x768xf32>, %gamma: tensor<768xf32>, %beta: tensor<768xf32>, %w: tensor<768x64xf32>) -> tensor<2048x64xf32> {
  %n = graph.constant dense<768.0> : tensor<2048xf32>
  %eps = graph.constant dense<1.0e-05> : tensor<2048xf32>
  %sum = graph.reduce sum %x dims [1] : (tensor<2048x768xf32>) -> tensor<2048xf32>
  %mean = graph.div %sum, %n : tensor<2048xf32>
  %mean_b = graph.broadcast %mean dims [0] : (tensor<2048xf32>) -> tensor<2048x768xf32>
  %xc = graph.sub %x, %mean_b : tensor<2048x768xf32>
  %sq = graph.mul %xc, %xc : tensor<2048x768xf32>
  %sqsum = graph.reduce sum %sq dims [1] : (tensor<2048x768xf32>) -> tensor<2048xf32>
  %var = graph.div %sqsum, %n : tensor<2048xf32>
  %ve = graph.add %var, %eps : tensor<2048xf32>
  %rstd = graph.rsqrt %ve : tensor<2048xf32>
  %rstd_b = graph.broadcast %rstd dims [0] : (tensor<2048xf32>) -> tensor<2048x768xf32>
  %xn = graph.mul %xc, %rstd_b : tensor<2048x768xf32>
  %gamma_b = graph.broadcast %gamma dims [1] : (tensor<768xf32>) -> tensor<2048x768xf32>
  %g = graph.mul %xn, %gamma_b : tensor<2048x768xf32>
  %beta_b = graph.broadcast %beta dims [1] : (tensor<768xf32>) -> tensor<2048x768xf32>
  %y = graph.add %g, %beta_b : tensor<2048x768xf32>
  %d = graph.dot %y, %w : (tensor<2048x768xf32>, tensor<768x64xf32>) -> tensor<2048x64xf32>
  func.return %d : tensor<2048x64xf32>
}
