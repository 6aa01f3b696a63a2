// graph-canonicalize removes pads and windows that change nothing, and folds a
// constant pad holding the reduction's identity into the window reduction it feeds.
// RUN: fs-opt %s --split-input-file -p graph-canonicalize | filecheck %s

// (max pools take -inf padding, which xDSL's text form cannot carry: see
// tests/frontend/test_frontend_onnx_window.py for Pad then MaxPool)
// CHECK-LABEL: func.func @pad_then_prod_window
// CHECK-SAME:    (%[[X:.*]]: tensor<1x2x6x6xf32>)
// CHECK-NEXT:    %[[P:.*]] = graph.reduce_window prod %[[X]] window [1, 1, 3, 3] strides [1, 1, 2, 2] dilations [1, 1, 1, 1] low [0, 0, 1, 1] high [0, 0, 2, 1] : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x3xf32>
// CHECK-NEXT:    func.return %[[P]]
func.func @pad_then_prod_window(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x3xf32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %p = graph.pad constant %x, %one low [0, 0, 1, 1] high [0, 0, 1, 1] interior [0, 0, 0, 0] : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %m = graph.reduce_window prod %p window [1, 1, 3, 3] strides [1, 1, 2, 2] dilations [1, 1, 1, 1] low [0, 0, 0, 0] high [0, 0, 1, 0] : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x3xf32>
  func.return %m : tensor<1x2x4x3xf32>
}

// -----

// Zero padding is a sum's identity, not a max's: only the sum absorbs it.
// CHECK-LABEL: func.func @zero_pad
// CHECK-SAME:    (%[[X:.*]]: tensor<4x6xf32>)
// CHECK:         %[[P:.*]] = graph.pad constant %[[X]]
// CHECK-DAG:     graph.reduce_window sum %[[X]] window [1, 2] strides [1, 2] dilations [1, 1] low [0, 1] high [0, 1]
// CHECK-DAG:     graph.reduce_window max %[[P]] window [1, 2]
func.func @zero_pad(%x: tensor<4x6xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %p = graph.pad constant %x, %zero low [0, 1] high [0, 1] interior [0, 0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4x8xf32>
  %s = graph.reduce_window sum %p window [1, 2] strides [1, 2] dilations [1, 1] low [0, 0] high [0, 0] : (tensor<4x8xf32>) -> tensor<4x4xf32>
  %m = graph.reduce_window max %p window [1, 2] strides [1, 2] dilations [1, 1] low [0, 0] high [0, 0] : (tensor<4x8xf32>) -> tensor<4x4xf32>
  func.return %s, %m : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @identities
// CHECK-SAME:    (%[[X:.*]]: tensor<4x6xf32>)
// CHECK-NEXT:    func.return %[[X]], %[[X]]
func.func @identities(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %p = graph.pad edge %x low [0, 0] high [0, 0] interior [0, 0] : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %w = graph.reduce_window max %x window [1, 1] strides [1, 1] dilations [1, 3] low [0, 0] high [0, 0] : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return %p, %w : tensor<4x6xf32>, tensor<4x6xf32>
}
