// LayerNorm over the last dimension of a 4096x768 f32 activation, written with
// primitive graph ops (no fused layernorm op), as an importer would produce it:
//
//   mean = sum(x, 1) / 768                 var  = sum((x - mean)^2, 1) / 768
//   rstd = rsqrt(var + 1e-5)               y    = (x - mean) * rstd * gamma + beta
//
// Two row reductions with elementwise work before, between and after them: the
// pattern FusionStitching stitches into one kernel (TVM makes it 4 kernels).
func.func @layernorm(%x: tensor<4096x768xf32>, %gamma: tensor<768xf32>, %beta: tensor<768xf32>) -> tensor<4096x768xf32> {
  %n = graph.constant dense<7.680000e+02> : tensor<4096xf32>
  %eps = graph.constant dense<1.000000e-05> : tensor<4096xf32>

  %sum = graph.reduce sum %x"dims [1] : (tensor<4096x768xf32>) -> tensor<4096xf32>
  %mean = graph.div %sum, %n : tensor<4096xf32>
  %mean_b = graph.broadcast %mean dims [0] : (tensor<4096xf32>) -> tensor<4096x768xf32>
  %xc = graph.sub %x, %mean_b : tensor<4096x768xf32>

  %xc_sq = graph.mul %xc, %xc : tensor<4096x768xf32>
  %sq_sum = graph.reduce sum %xc_sq dims [1] : (tensor<4096x768xf32>) -> tensor<4096xf32>
  %var = graph.div %sq_sum, %n : tensor<4096xf32>
  %var_eps = graph.add %var, %eps : tensor<4096xf32>
  %rstd = graph.rsqrt %var_eps : tensor<4096xf32>
  %rstd_b = graph.broadcast %rstd dims [0] : (tensor<4096xf32>) -> tensor<4096x768xf32>
  %xhat = graph.mul %xc, %rstd_b : tensor<4096x768xf32>

  %gamma_b = graph.broadcast %gamma dims [1] : (tensor<768xf32>) -> tensor<4096x768xf32>
  %beta_b = graph.broadcast %beta dims [1] : (tensor<768xf32>) -> tensor<4096x768xf32>
  %scaled = graph.mul %xhat, %gamma_b : tensor<4096x768xf32>
  %y = graph.add %scaled, %beta_b : tensor<4096x768xf32>
  func.return %y : tensor<4096x768xf32>
}
