// A post-LN LayerNorm of a GEMM's output (bias + residual) whose rows (256) are wider
// than a row-normalising GEMM epilogue's block tile, read by a narrow dot: in the
// two-pass form (fsir/fusion/ln_stat.py) the first GEMM writes z and its rows'
// partial moments (16 columns each), and the second GEMM combines them and
// normalises z as it stages its A tiles: 2 kernels, no row kernel. The
// latency-evaluator compares this plan with the block as it is (a LayerNorm row
// kernel between the GEMMs) and keeps it at these 2048 rows (at 512 the statistics row
// kernel and a normalising prologue model faster). mode=xla keeps the LayerNorm as it is.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch report=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: fs-opt %s -p 'fusion-explore{mode=xla}' | filecheck %s --check-prefix=XLA

// CHECK-LABEL: func.func @post_ln
// CHECK-NEXT: %[[Z:.*]], %[[P:.*]] = stitch.fusion (%{{.*}}) {pattern = 0 : i64
// CHECK: graph.dot
// CHECK-NEXT: graph.broadcast
// CHECK-NEXT: graph.add
// CHECK-NEXT: %[[Z1:.*]] = graph.add
// CHECK-NEXT: %[[P1:.*]] = graph.tile_moments %[[Z1]] tile 16 : (tensor<2048x256xf32>) -> tensor<2048x16x2xf32>
// CHECK-NEXT: stitch.yield %[[Z1]], %[[P1]]
// CHECK: %[[Y:.*]] = stitch.fusion (%[[P]], %[[Z]], %{{.*}}) {pattern = 1 : i64
// CHECK: ^bb0(%[[PA:.*]]: tensor<2048x16x2xf32>, %[[ZA:.*]]: tensor<2048x256xf32>,
// CHECK: %[[S:.*]] = graph.combine_moments %[[PA]] tile 16 size 256 : (tensor<2048x16x2xf32>) -> tensor<2048x2xf32>
// CHECK: graph.sub %[[ZA]], %{{.*}}
// CHECK: graph.rsqrt
// CHECK: graph.dot
// CHECK: func.return %[[Y]]
// CHECK-NOT: graph.reduce

// REPORT: after: 2 kernels (2 fused)

// XLA-LABEL: func.func @post_ln
// XLA: graph.reduce sum
// XLA-NOT: graph.tile_moments
func.func @post_ln(%x: tensor<2048x256xf32>, %w: tensor<256x256xf32>, %bias: tensor<256xf32>, %gamma: tensor<256xf32>, %beta: tensor<256xf32>, %w1: tensor<256x64xf32>) -> tensor<2048x64xf32> {
  %d = graph.dot %x, %w : (tensor<2048x256xf32>, tensor<256x256xf32>) -> tensor<2048x256xf32>
  %bb = graph.broadcast %bias dims [1] : (tensor<256xf32>) -> tensor<2048x256xf32>
  %z0 = graph.add %d, %bb : tensor<2048x256xf32>
  %z = graph.add %z0, %x : tensor<2048x256xf32>
  %n = graph.constant dense<2.560000e+02> : tensor<2048xf32>
  %eps = graph.constant dense<1.000000e-05> : tensor<2048xf32>
  %sum = graph.reduce sum %z dims [1] : (tensor<2048x256xf32>) -> tensor<2048xf32>
  %mean = graph.div %sum, %n : tensor<2048xf32>
  %mean_b = graph.broadcast %mean dims [0] : (tensor<2048xf32>) -> tensor<2048x256xf32>
  %xc = graph.sub %z, %mean_b : tensor<2048x256xf32>
  %sq = graph.mul %xc, %xc : tensor<2048x256xf32>
  %sq_sum = graph.reduce sum %sq dims [1] : (tensor<2048x256xf32>) -> tensor<2048xf32>
  %var = graph.div %sq_sum, %n : tensor<2048xf32>
  %var_eps = graph.add %var, %eps : tensor<2048xf32>
  %rstd = graph.rsqrt %var_eps : tensor<2048xf32>
  %rstd_b = graph.broadcast %rstd dims [0] : (tensor<2048xf32>) -> tensor<2048x256xf32>
  %xhat = graph.mul %xc, %rstd_b : tensor<2048x256xf32>
  %g_b = graph.broadcast %gamma dims [1] : (tensor<256xf32>) -> tensor<2048x256xf32>
  %b_b = graph.broadcast %beta dims [1] : (tensor<256xf32>) -> tensor<2048x256xf32>
  %scaled = graph.mul %xhat, %g_b : tensor<2048x256xf32>
  %h = graph.add %scaled, %b_b : tensor<2048x256xf32>
  %y = graph.dot %h, %w1 : (tensor<2048x256xf32>, tensor<256x64xf32>) -> tensor<2048x64xf32>
  func.return %y : tensor<2048x64xf32>
}
