// Attention of one head in three kernels (cuSync Fig. 2b, 5b): S = 64, head size 32:
//
//   p = q @ k^T,   r = softmax(p) (max-subtracted),   t = r @ v
//
// q/k/v 64x32; written by examples/cusync/generate.py.
func.func @attention(%q: tensor<64x32xf32>, %k: tensor<64x32xf32>, %v: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %kt = graph.transpose %k perm [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %p = graph.dot %q, %kt : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  %m = graph.reduce max %p dims [1] : (tensor<64x64xf32>) -> tensor<64xf32>
  %mb = graph.broadcast %m dims [0] : (tensor<64xf32>) -> tensor<64x64xf32>
  %d = graph.sub %p, %mb : tensor<64x64xf32>
  %e = graph.exp %d : tensor<64x64xf32>
  %s = graph.reduce sum %e dims [1] : (tensor<64x64xf32>) -> tensor<64xf32>
  %sb = graph.broadcast %s dims [0] : (tensor<64xf32>) -> tensor<64x64xf32>
  %r = graph.div %e, %sb : tensor<64x64xf32>
  %t = graph.dot %r, %v : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  func.return %t : tensor<64x32xf32>
}
