// LayerNorm → dot (pre-LN, as GPT-style blocks normalise before each projection): the
// normalisation's `x - mean` is also read by the variance, so in stitch mode the dot's
// operand gets its own copy of the normalisation, and the explorer offers a plan of a
// statistics kernel (mean and rstd per row, nothing else written) and a GEMM that
// normalises its A tiles as it loads them. The simplified evaluator (bytes and
// launches) prefers it; XLA's rules keep the dot alone.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch evaluator=simple}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch evaluator=simple report=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: fs-opt %s -p 'fusion-explore{mode=xla evaluator=simple}' | filecheck %s --check-prefix=XLA

// CHECK-LABEL: func.func @preln
// CHECK-NEXT: %[[MEAN:.*]], %[[RSTD:.*]] = stitch.fusion (%{{.*}}) {pattern = 0 : i64
// CHECK: graph.reduce sum
// CHECK: graph.rsqrt
// CHECK: stitch.yield %{{.*}}, %{{.*}} : tensor<64xf32>, tensor<64xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[D:.*]] = stitch.fusion ({{.*}}%[[MEAN]]{{.*}}%[[RSTD]]{{.*}}) {pattern = 1 : i64
// CHECK-NOT: graph.reduce
// CHECK: graph.sub
// CHECK: graph.mul
// CHECK: %[[Y:.*]] = graph.add
// CHECK-NEXT: %[[DA:.*]] = graph.dot %[[Y]]
// CHECK-NEXT: stitch.yield %[[DA]]
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[D]]

// REPORT: evaluator: simple chose plan {{[0-9]+}} of {{[0-9, ]+}} (plan {{[0-9]+}} with the ops it left alone fused, or with GEMM prologues)
// REPORT-NEXT: kernel 0: fusion pattern=0 ops=9
// REPORT-NEXT: kernel 1: fusion pattern=1 ops=9

// XLA-LABEL: func.func @preln
// XLA: %[[D:.*]] = graph.dot %{{.*}}, %{{.*}} :
// XLA-NEXT: func.return %[[D]]
func.func @preln(%x: tensor<64x48xf32>, %gamma: tensor<48xf32>, %beta: tensor<48xf32>, %w: tensor<48x40xf32>) -> tensor<64x40xf32> {
  %n = graph.constant dense<48.0> : tensor<64xf32>
  %eps = graph.constant dense<1.0e-05> : tensor<64xf32>
  %sum = graph.reduce sum %x dims [1] : (tensor<64x48xf32>) -> tensor<64xf32>
  %mean = graph.div %sum, %n : tensor<64xf32>
  %mean_b = graph.broadcast %mean dims [0] : (tensor<64xf32>) -> tensor<64x48xf32>
  %xc = graph.sub %x, %mean_b : tensor<64x48xf32>
  %sq = graph.mul %xc, %xc : tensor<64x48xf32>
  %sqsum = graph.reduce sum %sq dims [1] : (tensor<64x48xf32>) -> tensor<64xf32>
  %var = graph.div %sqsum, %n : tensor<64xf32>
  %ve = graph.add %var, %eps : tensor<64xf32>
  %rstd = graph.rsqrt %ve : tensor<64xf32>
  %rstd_b = graph.broadcast %rstd dims [0] : (tensor<64xf32>) -> tensor<64x48xf32>
  %xn = graph.mul %xc, %rstd_b : tensor<64x48xf32>
  %gamma_b = graph.broadcast %gamma dims [1] : (tensor<48xf32>) -> tensor<64x48xf32>
  %g = graph.mul %xn, %gamma_b : tensor<64x48xf32>
  %beta_b = graph.broadcast %beta dims [1] : (tensor<48xf32>) -> tensor<64x48xf32>
  %y = graph.add %g, %beta_b : tensor<64x48xf32>
  %d = graph.dot %y, %w : (tensor<64x48xf32>, tensor<48x40xf32>) -> tensor<64x40xf32>
  func.return %d : tensor<64x40xf32>
}
