// A LayerNorm after a dot whose rows fit one block tile (N ≤ 128): the explorer grows
// the dot's pattern through the row reductions, and the latency-evaluator takes the
// one GEMM kernel normalising its own rows over a GEMM writing the product plus a row
// kernel. Rows of 768 do not fit a tile: the dot's kernel ends before the LayerNorm.
// RUN: fs-opt %s --split-input-file -p 'fusion-explore{mode=stitch}' | filecheck %s

// CHECK-LABEL: func.func @narrow
// CHECK-NEXT: %[[Y:.*]] = stitch.fusion
// CHECK: graph.dot
// CHECK: graph.reduce sum
// CHECK: graph.reduce sum
// CHECK: graph.rsqrt
// CHECK: %[[O:.*]] = graph.add %[[G:.*]], %[[BETA:.*]] : tensor<128x64xf32>
// CHECK-NEXT: stitch.yield %[[O]]
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[Y]]
func.func @narrow(%x: tensor<128x48xf32>, %w: tensor<48x64xf32>, %bias: tensor<64xf32>, %gamma: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<128x64xf32> {
  %d = graph.dot %x, %w : (tensor<128x48xf32>, tensor<48x64xf32>) -> tensor<128x64xf32>
  %bias_b = graph.broadcast %bias dims [1] : (tensor<64xf32>) -> tensor<128x64xf32>
  %z = graph.add %d, %bias_b : tensor<128x64xf32>
  %n = graph.constant dense<64.0> : tensor<128xf32>
  %eps = graph.constant dense<1.0e-05> : tensor<128xf32>
  %sum = graph.reduce sum %z dims [1] : (tensor<128x64xf32>) -> tensor<128xf32>
  %mean = graph.div %sum, %n : tensor<128xf32>
  %mean_b = graph.broadcast %mean dims [0] : (tensor<128xf32>) -> tensor<128x64xf32>
  %xc = graph.sub %z, %mean_b : tensor<128x64xf32>
  %sq = graph.mul %xc, %xc : tensor<128x64xf32>
  %sqsum = graph.reduce sum %sq dims [1] : (tensor<128x64xf32>) -> tensor<128xf32>
  %var = graph.div %sqsum, %n : tensor<128xf32>
  %ve = graph.add %var, %eps : tensor<128xf32>
  %rstd = graph.rsqrt %ve : tensor<128xf32>
  %rstd_b = graph.broadcast %rstd dims [0] : (tensor<128xf32>) -> tensor<128x64xf32>
  %xn = graph.mul %xc, %rstd_b : tensor<128x64xf32>
  %gamma_b = graph.broadcast %gamma dims [1] : (tensor<64xf32>) -> tensor<128x64xf32>
  %g = graph.mul %xn, %gamma_b : tensor<128x64xf32>
  %beta_b = graph.broadcast %beta dims [1] : (tensor<64xf32>) -> tensor<128x64xf32>
  %y = graph.add %g, %beta_b : tensor<128x64xf32>
  func.return %y : tensor<128x64xf32>
}

// -----

// CHECK-LABEL: func.func @wide
// CHECK-NEXT: %[[D:.*]] = graph.dot
// CHECK-NEXT: %[[Y:.*]] = stitch.fusion (%{{.*}}, %[[D]])
// CHECK-NOT: graph.dot
// CHECK: graph.reduce sum
// CHECK: func.return %[[Y]]
func.func @wide(%x: tensor<128x48xf32>, %w: tensor<48x768xf32>, %bias: tensor<768xf32>) -> tensor<128x768xf32> {
  %d = graph.dot %x, %w : (tensor<128x48xf32>, tensor<48x768xf32>) -> tensor<128x768xf32>
  %bias_b = graph.broadcast %bias dims [1] : (tensor<768xf32>) -> tensor<128x768xf32>
  %z = graph.add %d, %bias_b : tensor<128x768xf32>
  %n = graph.constant dense<768.0> : tensor<128xf32>
  %eps = graph.constant dense<1.0e-05> : tensor<128xf32>
  %sum = graph.reduce sum %z dims [1] : (tensor<128x768xf32>) -> tensor<128xf32>
  %mean = graph.div %sum, %n : tensor<128xf32>
  %mean_b = graph.broadcast %mean dims [0] : (tensor<128xf32>) -> tensor<128x768xf32>
  %xc = graph.sub %z, %mean_b : tensor<128x768xf32>
  %sq = graph.mul %xc, %xc : tensor<128x768xf32>
  %sqsum = graph.reduce sum %sq dims [1] : (tensor<128x768xf32>) -> tensor<128xf32>
  %var = graph.div %sqsum, %n : tensor<128xf32>
  %ve = graph.add %var, %eps : tensor<128xf32>
  %rstd = graph.rsqrt %ve : tensor<128xf32>
  %rstd_b = graph.broadcast %rstd dims [0] : (tensor<128xf32>) -> tensor<128x768xf32>
  %y = graph.mul %xc, %rstd_b : tensor<128x768xf32>
  func.return %y : tensor<128x768xf32>
}
