// RMSNorm (as in LLaMA) over the last dimension of a 1024x4096 f32 tensor, eps = 1e-6:
//
//   y = x * rsqrt(sum(x^2, 1) / 4096 + eps) * gamma
//
// One row reduction of 4096 elements (long rows: a block per row) feeding elementwise work.
func.func @rmsnorm(%x: tensor<1024x4096xf32>, %gamma: tensor<4096xf32>) -> tensor<1024x4096xf32> {
  %n = graph.constant dense<4.096000e+03> : tensor<1024xf32>
  %eps = graph.constant dense<9.99999997e-07> : tensor<1024xf32>
  %x_sq = graph.mul %x, %x : tensor<1024x4096xf32>
  %sq_sum = graph.reduce sum %x_sq dims [1] : (tensor<1024x4096xf32>) -> tensor<1024xf32>
  %mean_sq = graph.div %sq_sum, %n : tensor<1024xf32>
  %mean_sq_eps = graph.add %mean_sq, %eps : tensor<1024xf32>
  %rrms = graph.rsqrt %mean_sq_eps : tensor<1024xf32>
  %rrms_b = graph.broadcast %rrms dims [0] : (tensor<1024xf32>) -> tensor<1024x4096xf32>
  %normed = graph.mul %x, %rrms_b : tensor<1024x4096xf32>
  %gamma_b = graph.broadcast %gamma dims [1] : (tensor<4096xf32>) -> tensor<1024x4096xf32>
  %y = graph.mul %normed, %gamma_b : tensor<1024x4096xf32>
  func.return %y : tensor<1024x4096xf32>
}
