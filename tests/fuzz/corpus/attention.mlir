func.func @attention(%q: tensor<2x2x5x8xf32>, %k: tensor<2x2x7x8xf32>, %v: tensor<2x2x7x8xf32>) -> tensor<2x2x5x8xf32> {
  %kt = graph.transpose %k perm [0, 1, 3, 2] : (tensor<2x2x7x8xf32>) -> tensor<2x2x8x7xf32>
  %s = graph.dot %q, %kt : (tensor<2x2x5x8xf32>, tensor<2x2x8x7xf32>) -> tensor<2x2x5x7xf32>
  %m = graph.reduce max %s dims [3] : (tensor<2x2x5x7xf32>) -> tensor<2x2x5xf32>
  %mb = graph.broadcast %m dims [0, 1, 2] : (tensor<2x2x5xf32>) -> tensor<2x2x5x7xf32>
  %c = graph.sub %s, %mb : tensor<2x2x5x7xf32>
  %e = graph.exp %c : tensor<2x2x5x7xf32>
  %sum = graph.reduce sum %e dims [3] : (tensor<2x2x5x7xf32>) -> tensor<2x2x5xf32>
  %sb = graph.broadcast %sum dims [0, 1, 2] : (tensor<2x2x5xf32>) -> tensor<2x2x5x7xf32>
  %p = graph.div %e, %sb : tensor<2x2x5x7xf32>
  %o = graph.dot %p, %v : (tensor<2x2x5x7xf32>, tensor<2x2x7x8xf32>) -> tensor<2x2x5x8xf32>
  func.return %o : tensor<2x2x5x8xf32>
}
