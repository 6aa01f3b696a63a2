// graph-canonicalize folds a per-output-channel constant scale after a conv (an
// imported BatchNormalization) into the conv's weights; the per-channel add after it
// stays, as the conv kernel's bias epilogue.
// RUN: fs-opt %s --split-input-file -p graph-canonicalize | filecheck %s

// CHECK-LABEL: func.func @batchnorm
// CHECK-SAME:    (%[[X:.*]]: tensor<1x2x24x24xf32>)
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[}}[{{\[}}[5.000000e-01]]], {{\[}}[{{\[}}-3.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv %[[X]], %[[W]] strides [1, 1] {{.*}} groups 2
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[CB:.*]] = graph.broadcast %[[C]] dims [1]
// CHECK-NEXT:    %[[O:.*]] = graph.add %[[Y]], %[[CB]]
// CHECK-NEXT:    func.return %[[O]]
func.func @batchnorm(%x: tensor<1x2x24x24xf32>) -> tensor<1x2x24x24xf32> {
  %w = graph.constant dense<[[[[1.0]]], [[[1.5]]]]> : tensor<2x1x1x1xf32>
  %y = graph.conv %x, %w strides [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 2 : (tensor<1x2x24x24xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x24x24xf32>
  %s = graph.constant dense<[0.5, -2.0]> : tensor<2xf32>
  %sb = graph.broadcast %s dims [1] : (tensor<2xf32>) -> tensor<1x2x24x24xf32>
  %z = graph.mul %sb, %y : tensor<1x2x24x24xf32>
  %c = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %cb = graph.broadcast %c dims [1] : (tensor<2xf32>) -> tensor<1x2x24x24xf32>
  %o = graph.add %z, %cb : tensor<1x2x24x24xf32>
  func.return %o : tensor<1x2x24x24xf32>
}

// -----

// A conv bias before the scale is scaled with it: (conv + b) * s = conv' + b * s.
// CHECK-LABEL: func.func @bias_then_scale
// CHECK-SAME:    (%[[X:.*]]: tensor<1x2x24x24xf32>)
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[}}[{{\[}}[2.000000e+00]]], {{\[}}[{{\[}}-3.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv %[[X]], %[[W]]
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[6.000000e+00, -8.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[BB:.*]] = graph.broadcast %[[B]] dims [1]
// CHECK-NEXT:    %[[O:.*]] = graph.add %[[Y]], %[[BB]]
// CHECK-NEXT:    func.return %[[O]]
func.func @bias_then_scale(%x: tensor<1x2x24x24xf32>) -> tensor<1x2x24x24xf32> {
  %w = graph.constant dense<[[[[1.0]]], [[[1.5]]]]> : tensor<2x1x1x1xf32>
  %y = graph.conv %x, %w strides [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 2 : (tensor<1x2x24x24xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x24x24xf32>
  %b = graph.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %bb = graph.broadcast %b dims [1] : (tensor<2xf32>) -> tensor<1x2x24x24xf32>
  %yb = graph.add %y, %bb : tensor<1x2x24x24xf32>
  %s = graph.constant dense<[2.0, -2.0]> : tensor<2xf32>
  %sb = graph.broadcast %s dims [1] : (tensor<2xf32>) -> tensor<1x2x24x24xf32>
  %z = graph.mul %yb, %sb : tensor<1x2x24x24xf32>
  func.return %z : tensor<1x2x24x24xf32>
}

// -----

// The conv's result is read twice: its weights stay, and so does the multiply.
// CHECK-LABEL: func.func @conv_read_twice
// CHECK:         %[[Y:.*]] = graph.conv
// CHECK:         %[[Z:.*]] = graph.mul %[[Y]], %{{.*}}
// CHECK:         func.return %[[Z]], %[[Y]]
func.func @conv_read_twice(%x: tensor<1x2x24x24xf32>) -> (tensor<1x2x24x24xf32>, tensor<1x2x24x24xf32>) {
  %w = graph.constant dense<[[[[1.0]]], [[[1.5]]]]> : tensor<2x1x1x1xf32>
  %y = graph.conv %x, %w strides [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 2 : (tensor<1x2x24x24xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x24x24xf32>
  %s = graph.constant dense<[0.5, -2.0]> : tensor<2xf32>
  %sb = graph.broadcast %s dims [1] : (tensor<2xf32>) -> tensor<1x2x24x24xf32>
  %z = graph.mul %y, %sb : tensor<1x2x24x24xf32>
  func.return %z, %y : tensor<1x2x24x24xf32>, tensor<1x2x24x24xf32>
}

// -----

// A scale that varies along the spatial dims is not per channel.
// CHECK-LABEL: func.func @not_per_channel
// CHECK:         graph.conv
// CHECK:         graph.mul
func.func @not_per_channel(%x: tensor<1x2x24x24xf32>) -> tensor<1x2x24x24xf32> {
  %w = graph.constant dense<[[[[1.0]]], [[[1.5]]]]> : tensor<2x1x1x1xf32>
  %y = graph.conv %x, %w strides [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 2 : (tensor<1x2x24x24xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x24x24xf32>
  %s = graph.iota dim 3 : tensor<1x2x24x24xf32>
  %z = graph.mul %y, %s : tensor<1x2x24x24xf32>
  func.return %z : tensor<1x2x24x24xf32>
}
