// graph.segment_reduce's verifier: integer rank-1 offsets, float data for a mean, and
// the result shape [segments, data dims after the first].
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%d: tensor<8x4xf32>, %o: tensor<3xf32>) {
  // expected-error @+1 {{offsets must be i32 or i64, got f32}}
  %s = graph.segment_reduce sum %d, %o : (tensor<8x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @f(%d: tensor<8x4xf32>, %o: tensor<3x1xi32>) {
  // expected-error @+1 {{offsets must have rank 1, got 3x1}}
  %s = graph.segment_reduce sum %d, %o : (tensor<8x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @f(%d: tensor<8x4xi32>, %o: tensor<3xi32>) {
  // expected-error @+1 {{segment mean needs float data, got i32}}
  %s = graph.segment_reduce mean %d, %o : (tensor<8x4xi32>, tensor<3xi32>) -> tensor<3x4xi32>
  func.return
}

// -----

func.func @f(%d: tensor<8x4xf32>, %o: tensor<3xi32>) {
  // expected-error @+1 {{result shape 8x4 does not match the expected 3x4}}
  %s = graph.segment_reduce sum %d, %o : (tensor<8x4xf32>, tensor<3xi32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @f(%d: tensor<8x4xf32>, %o: tensor<3xi32>) {
  // expected-error @+1 {{Expected one of 'max', 'mean', 'min', 'sum'}}
  %s = graph.segment_reduce prod %d, %o : (tensor<8x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  func.return
}
