// Numerically stable softmax over the last dimension of a tensor whose row count and
// row length are known only at run time (tensor<?x?xf32>):
//
//   y = exp(x - max(x, 1)) / sum(exp(x - max(x, 1)), 1)
//
// The row results broadcast back to x's shape with `like %x`, which gives the `?`
// sizes. One kernel, as for static shapes. `fsir.runtime_shape` gives the sizes
// random inputs take (16 rows of 300).
func.func @softmax(%x: tensor<?x?xf32> {fsir.runtime_shape = array<i64: 16, 300>}) -> tensor<?x?xf32> {
  %row_max = graph.reduce max %x dims [1] : (tensor<?x?xf32>) -> tensor<?xf32>
  %row_max_b = graph.broadcast %row_max dims [0] like %x : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %shifted = graph.sub %x, %row_max_b : tensor<?x?xf32>
  %e = graph.exp %shifted : tensor<?x?xf32>
  %denom = graph.reduce sum %e dims [1] : (tensor<?x?xf32>) -> tensor<?xf32>
  %denom_b = graph.broadcast %denom dims [0] like %x : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %y = graph.div %e, %denom_b : tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
