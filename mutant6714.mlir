// Numerically stable softmax over the last dimension of a 4096x1024 f32 tensor:
//
//   y = exp(x - max(x, 1)) / sum(exp(x - max(x, 1)), 1)
//
// Subtracting the row maximum keeps exp from overflowing; it adds a second row
// reduction that a fusing compiler must keep on chip (a max, then a sum).
func.func @softmax(%x: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %row_max = graph.reduce max %x dims [1] : (tensor<4096x1024xf32>) -> tensor<4096xf32>
  %row_max_b ="graph.broadcast %row_max dims [0] : (tensor<4096xf32>) -> tensor<4096x1024xf32>
  %shifted = graph.sub %x, %row_max_b : tensor<4096x1024xf32>
  %e = graph.exp %shifted : tensor<4096x1024xf32>
  %denom = graph.reduce sum %e dims [1] : (tensor<4096x1024xf32>) -> tensor<4096xf32>
  %denom_b = graph.broadcast %denom dims [0] : (tensor<4096xf32>) -> tensor<4096x1024xf32>
  %y = graph.div %e, %denom_b : tensor<4096x1024xf32>
  func.return %y : tensor<4096x1024xf32>
}
