// Bias add followed by GELU in its exact (erf) form, on a 256x3072 f32 activation
// (the shape of a BERT-base FFN's hidden layer for 256 tokens):
//
//   h = x + bias                            y = 0.5 * h * (1 + erf(h / sqrt(2)))
//
// A chain of light and expensive elementwise ops: one kernel, no reduction.
func.func @bias_gelu(%x: tensor<256x3072xf32>, %bias: tensor<3072xf32>) -> tensor<256x3072xf32> {
  %half = graph.constant dense<5.000000e-01> : tensor<256x3072xf32>
  %one = graph.constant dense<1.000000e+00> : tensor<256x3072xf32>
  %inv_sqrt2 = graph.constant dense<0.707106769> : tensor<256x3072xf32>
  %bias_b = graph.broadcast %bias dims [1] : (tensor<3072xf32>) -> tensor<256x3072xf32>
  %h = graph.add %x, %bias_b : tensor<256x3072xf32>
  %h_scaled = graph.mul %h, %inv_sqrt2 : tensor<256x3072xf32>
  %erf = graph.erf %h_scaled : tensor<256x3072xf32>
  %one_plus_erf = graph.add %erf, %one : tensor<256x3072xf32>
  %half_h = graph.mul %h, %half : tensor<256x3072xf32>
  %y = graph.mul %half_h, %one_plus_erf : tensor<256x3072xf32>
  func.return %y : tensor<256x3072xf32>
}
