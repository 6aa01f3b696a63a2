// Attention of one head in three kernels (cuSync Fig. 2b, 5b): S = 64, head size 32, H = 32:
//
//   xqkv = x @ wqkv,   t = softmax(q @ k^T) @ v (q, k, v: xqkv's column blocks),   o = t @ wo
//
// fsir compiles it as GEMM, attention, GEMM; written by examples/cusync/generate.py.
func.func @attention(%x: tensor<64x32xf32>, %wqkv: tensor<32x96xf32>, %wo: tensor<32x32xf32>) -> tensor<64x32xf32> {
  %xqkv = graph.dot %x, %wqkv : (tensor<64x32xf32>, tensor<32x96xf32>) -> tensor<64x96xf32>
  %q = graph.slice %xqkv start [0, 0] limit [64, 32] strides [1, 1] : (tensor<64x96xf32>) -> tensor<64x32xf32>
  %k = graph.slice %xqkv start [0, 32] limit [64, 64] strides [1, 1] : (tensor<64x96xf32>) -> tensor<64x32xf32>
  %v = graph.slice %xqkv start [0, 64] limit [64, 96] strides [1, 1] : (tensor<64x96xf32>) -> tensor<64x32xf32>
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
  %o = graph.dot %t, %wo : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  func.return %o : tensor<64x32xf32>
}
