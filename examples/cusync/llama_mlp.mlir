// LLaMA MLP (cuSync Fig. 3): B·S = 64 tokens, H = 64, inner size 48:
//
//   y = (swish(x @ w1) * (x @ v)) @ w2        swish(a) = a * sigmoid(a)
//
// x 64x64, w1/v 64x48, w2 48x64; written by examples/cusync/generate.py.
func.func @llama_mlp(%x: tensor<64x64xf32>, %w1: tensor<64x48xf32>, %v: tensor<64x48xf32>, %w2: tensor<48x64xf32>) -> tensor<64x64xf32> {
  %a = graph.dot %x, %w1 : (tensor<64x64xf32>, tensor<64x48xf32>) -> tensor<64x48xf32>
  %b = graph.dot %x, %v : (tensor<64x64xf32>, tensor<64x48xf32>) -> tensor<64x48xf32>
  %s = graph.sigmoid %a : tensor<64x48xf32>
  %sw = graph.mul %a, %s : tensor<64x48xf32>
  %g = graph.mul %sw, %b : tensor<64x48xf32>
  %y = graph.dot %g, %w2 : (tensor<64x48xf32>, tensor<48x64xf32>) -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}
