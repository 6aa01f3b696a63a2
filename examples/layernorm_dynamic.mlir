// LayerNorm over the last dimension of an activation whose row count and row length
// are known only at run time (tensor<?x?xf32>):
//
//   n    = sum(ones like x, 1)              (the row length, as a float)
//   mean = sum(x, 1) / n                    var  = sum((x - mean)^2, 1) / n
//   rstd = rsqrt(var + 1e-5)                y    = (x - mean) * rstd * gamma + beta
//
// A broadcast to a `?` dim takes its size from its `like` operand. gamma and beta must
// have x's row length: the host checks it before the launch. One kernel, as for static
// shapes. `fsir.runtime_shape` gives the sizes random inputs take (8 rows of 96).
func.func @layernorm(%x: tensor<?x?xf32> {fsir.runtime_shape = array<i64: 8, 96>},
                     %gamma: tensor<?xf32> {fsir.runtime_shape = array<i64: 96>},
                     %beta: tensor<?xf32> {fsir.runtime_shape = array<i64: 96>}) -> tensor<?x?xf32> {
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %ones = graph.broadcast %one dims [] like %x : (tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %n = graph.reduce sum %ones dims [1] : (tensor<?x?xf32>) -> tensor<?xf32>

  %sum = graph.reduce sum %x dims [1] : (tensor<?x?xf32>) -> tensor<?xf32>
  %mean = graph.div %sum, %n : tensor<?xf32>
  %mean_b = graph.broadcast %mean dims [0] like %x : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %xc = graph.sub %x, %mean_b : tensor<?x?xf32>

  %xc_sq = graph.mul %xc, %xc : tensor<?x?xf32>
  %sq_sum = graph.reduce sum %xc_sq dims [1] : (tensor<?x?xf32>) -> tensor<?xf32>
  %var = graph.div %sq_sum, %n : tensor<?xf32>
  %eps = graph.constant dense<1.000000e-05> : tensor<f32>
  %eps_b = graph.broadcast %eps dims [] like %var : (tensor<f32>, tensor<?xf32>) -> tensor<?xf32>
  %var_eps = graph.add %var, %eps_b : tensor<?xf32>
  %rstd = graph.rsqrt %var_eps : tensor<?xf32>
  %rstd_b = graph.broadcast %rstd dims [0] like %x : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %xhat = graph.mul %xc, %rstd_b : tensor<?x?xf32>

  %gamma_b = graph.broadcast %gamma dims [1] like %x : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %beta_b = graph.broadcast %beta dims [1] like %x : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %scaled = graph.mul %xhat, %gamma_b : tensor<?x?xf32>
  %y = graph.add %scaled, %beta_b : tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
