// graph.reduce_window and graph.pad reject malformed windows and paddings.
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape 4x3 does not match the expected 4x4}}
  %y = graph.reduce_window max %x window [1, 2] strides [1, 2] dilations [1, 1] low [0, 0] high [0, 0] : (tensor<4x8xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{window has 1 entries but the operand has rank 2}}
  %y = graph.reduce_window max %x window [2] strides [1, 2] dilations [1, 1] low [0, 0] high [0, 0] : (tensor<4x8xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{window 2, stride 0 and dilation 1 of dim 1 must be positive}}
  %y = graph.reduce_window sum %x window [1, 2] strides [1, 0] dilations [1, 1] low [0, 0] high [0, 0] : (tensor<4x8xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{the window of dim 1 (10 positions) is larger than the padded operand (9)}}
  %y = graph.reduce_window sum %x window [1, 4] strides [1, 1] dilations [1, 3] low [0, 1] high [0, 0] : (tensor<4x8xf32>) -> tensor<4x1xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xi1>) {
  // expected-error @+1 {{cannot reduce i1 tensors (convert them first)}}
  %y = graph.reduce_window max %x window [1, 2] strides [1, 2] dilations [1, 1] low [0, 0] high [0, 0] : (tensor<4x8xi1>) -> tensor<4x4xi1>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{Expected one of 'max', 'min', 'prod', 'sum'}}
  %y = graph.reduce_window mean %x window [1, 2] strides [1, 2] dilations [1, 1] low [0, 0] high [0, 0] : (tensor<4x8xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{the padding value operand is required in constant mode and only there}}
  %y = graph.pad constant %x low [0, 1] high [0, 1] interior [0, 0] : (tensor<4x8xf32>) -> tensor<4x10xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %v: tensor<f16>) {
  // expected-error @+1 {{the padding value must be a tensor<f32>, got tensor<f16>}}
  %y = graph.pad constant %x, %v low [0, 1] high [0, 1] interior [0, 0] : (tensor<4x8xf32>, tensor<f16>) -> tensor<4x10xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{interior and negative padding need constant mode, not reflect}}
  %y = graph.pad reflect %x low [0, -1] high [0, 1] interior [0, 0] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{padding -6, -3 of dim 1 removes more than its 8 elements}}
  %y = graph.pad constant %x, %v low [0, -6] high [0, -3] interior [0, 0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x0xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape 4x9 does not match the expected 4x10}}
  %y = graph.pad edge %x low [0, 1] high [0, 1] interior [0, 0] : (tensor<4x8xf32>) -> tensor<4x9xf32>
  func.return
}
