// graph.conv: its syntax survives print -> parse -> print (custom and generic forms),
// and its shape rule rejects malformed convolutions with messages naming the problem.
// RUN: fs-opt %s --split-input-file | fs-opt --split-input-file | filecheck %s
// RUN: fs-opt %s --split-input-file --print-op-generic | fs-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @conv2d
// CHECK-SAME:  (%[[X:.*]]: tensor<2x4x9x9xf32>, %[[W:.*]]: tensor<6x2x3x3xf32>)
// CHECK-NEXT:  %[[Y:.*]] = graph.conv %[[X]], %[[W]] strides [2, 2] pad_low [1, 0] pad_high [1, 1] dilation [1, 2] lhs_dilation [1, 1] groups 2 : (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x5x3xf32>
// CHECK-NEXT:  func.return %[[Y]]
func.func @conv2d(%x: tensor<2x4x9x9xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x5x3xf32> {
  %y = graph.conv %x, %w strides [2, 2] pad_low [1, 0] pad_high [1, 1] dilation [1, 2] lhs_dilation [1, 1] groups 2 : (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x5x3xf32>
  func.return %y : tensor<2x6x5x3xf32>
}

// -----

// A `?` batch, a transposed 1-d convolution (input dilation), f16.
// CHECK-LABEL: func.func @conv1d_transposed
// CHECK-NEXT:  graph.conv %{{.*}}, %{{.*}} strides [1] pad_low [2] pad_high [3] dilation [1] lhs_dilation [2] groups 1 : (tensor<?x3x5xf16>, tensor<4x3x3xf16>) -> tensor<?x4x12xf16>
func.func @conv1d_transposed(%x: tensor<?x3x5xf16>, %w: tensor<4x3x3xf16>) -> tensor<?x4x12xf16> {
  %y = graph.conv %x, %w strides [1] pad_low [2] pad_high [3] dilation [1] lhs_dilation [2] groups 1 : (tensor<?x3x5xf16>, tensor<4x3x3xf16>) -> tensor<?x4x12xf16>
  func.return %y : tensor<?x4x12xf16>
}
