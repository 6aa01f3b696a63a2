// Two stacked 3x3 convolutions (cuSync Fig. 5c, ResNet/VGG layers): N = 1, C = 8, 8x8:
//
//   y = conv3x3(conv3x3(x, w1), w2)        stride 1, padding 1, NCHW
//
// x 1x8x8x8, w1/w2 8x8x3x3; written by examples/cusync/generate.py.
func.func @conv2(%x: tensor<1x8x8x8xf32>, %w1: tensor<8x8x3x3xf32>, %w2: tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %h = graph.conv %x, %w1 strides [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  %y = graph.conv %h, %w2 strides [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %y : tensor<1x8x8x8xf32>
}
