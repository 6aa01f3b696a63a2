// graph.conv's verifier: located errors that say what is wrong.
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{the input has 4 channels but the weight expects 3 per group x 1 groups = 3}}
  %y = graph.conv %x, %w strides [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{6 output channels do not split into 4 groups}}
  %y = graph.conv %x, %w strides [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 4 : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{strides has 1 entries but the input has 2 spatial dims}}
  %y = graph.conv %x, %w strides [1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{dilation [0, 1] must be positive}}
  %y = graph.conv %x, %w strides [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [0, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @f(%x: tensor<1x3x1x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{spatial dim 0: the dilated kernel (3) is larger than the padded input}}
  %y = graph.conv %x, %w strides [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x3x1x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @f(%x: tensor<1x3x8x8xi32>, %w: tensor<6x3x3x3xi32>) {
  // expected-error @+1 {{conv operands must be floats, got i32}}
  %y = graph.conv %x, %w strides [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x3x8x8xi32>, tensor<6x3x3x3xi32>) -> tensor<1x6x6x6xi32>
  func.return
}

// -----

func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{result shape 1x6x8x8 does not match the expected 1x6x6x6}}
  %y = graph.conv %x, %w strides [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x8x8xf32>
  func.return
}
