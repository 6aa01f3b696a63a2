func.func @layernorm_dot(%x: tensor<13x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %w: tensor<16x12xf32>) -> tensor<13x12xf32> {
  %n = graph.constant dense<16.0> : tensor<13xf32>
  %sum = graph.reduce sum %x dims [1] : (tensor<13x16xf32>) -> tensor<13xf32>
  %mean = graph.div %sum, %n : tensor<13xf32>
  %mb = graph.broadcast %mean dims [0] : (tensor<13xf32>) -> tensor<13x16xf32>
  %xc = graph.sub %x, %mb : tensor<13x16xf32>
  %sq = graph.mul %xc, %xc : tensor<13x16xf32>
  %ss = graph.reduce sum %sq dims [1] : (tensor<13x16xf32>) -> tensor<13xf32>
  %var = graph.div %ss, %n : tensor<13xf32>
  %eps = graph.constant dense<1.0e-05> : tensor<13xf32>
  %ve = graph.add %var, %eps : tensor<13xf32>
  %rstd = graph.rsqrt %ve : tensor<13xf32>
  %rb = graph.broadcast %rstd dims [0] : (tensor<13xf32>) -> tensor<13x16xf32>
  %xn = graph.mul %xc, %rb : tensor<13x16xf32>
  %gb = graph.broadcast %gamma dims [1] : (tensor<16xf32>) -> tensor<13x16xf32>
  %xg = graph.mul %xn, %gb : tensor<13x16xf32>
  %bb = graph.broadcast %beta dims [1] : (tensor<16xf32>) -> tensor<13x16xf32>
  %y = graph.add %xg, %bb : tensor<13x16xf32>
  %d = graph.dot %y, %w : (tensor<13x16xf32>, tensor<16x12xf32>) -> tensor<13x12xf32>
  func.return %d : tensor<13x12xf32>
}
