// GPT-3 MLP (cuSync Fig. 2a), one of 8 model-parallel GPUs: B·S = 64 tokens, H = 96:
//
//   y = GeLU(x @ w1) @ w2        (GeLU in its exact erf form)
//
// x 64x96, w1 96x48, w2 48x96; written by examples/cusync/generate.py.
func.func @gpt3_mlp(%x: tensor<64x96xf32>, %w1: tensor<96x48xf32>, %w2: tensor<48x96xf32>) -> tensor<64x96xf32> {
  %h = graph.dot %x, %w1 : (tensor<64x96xf32>, tensor<96x48xf32>) -> tensor<64x48xf32>
  %half = graph.constant dense<5.000000e-01> : tensor<64x48xf32>
  %one = graph.constant dense<1.000000e+00> : tensor<64x48xf32>
  %inv_sqrt2 = graph.constant dense<0.707106769> : tensor<64x48xf32>
  %hs = graph.mul %h, %inv_sqrt2 : tensor<64x48xf32>
  %erf = graph.erf %hs : tensor<64x48xf32>
  %erf1 = graph.add %erf, %one : tensor<64x48xf32>
  %hh = graph.mul %h, %half : tensor<64x48xf32>
  %g = graph.mul %hh, %erf1 : tensor<64x48xf32>
  %y = graph.dot %g, %w2 : (tensor<64x48xf32>, tensor<48x96xf32>) -> tensor<64x96xf32>
  func.return %y : tensor<64x96xf32>
}
