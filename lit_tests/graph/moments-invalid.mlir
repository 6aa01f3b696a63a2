// graph.tile_moments needs a float tensor with a static last dim and a positive tile;
// graph.combine_moments needs the partials of `size` values in tiles of `tile`.
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%z: tensor<4x?xf32>) {
  // expected-error @+1 {{tile moments need a static last dim (the tiles' counts)}}
  %p = graph.tile_moments %z tile 32 : (tensor<4x?xf32>) -> tensor<4x?x2xf32>
  func.return
}

// -----

func.func @f(%z: tensor<4x64xi32>) {
  // expected-error @+1 {{moments are taken of float tensors, not of i32}}
  %p = graph.tile_moments %z tile 32 : (tensor<4x64xi32>) -> tensor<4x2x2xf32>
  func.return
}

// -----

func.func @f(%z: tensor<4x64xf32>) {
  // expected-error @+1 {{tile width 0 must be positive}}
  %p = graph.tile_moments %z tile 0 : (tensor<4x64xf32>) -> tensor<4x2x2xf32>
  func.return
}

// -----

func.func @f(%z: tensor<4x64xf32>) {
  // expected-error @+1 {{result shape 4x3x2 does not match the expected 4x2x2}}
  %p = graph.tile_moments %z tile 32 : (tensor<4x64xf32>) -> tensor<4x3x2xf32>
  func.return
}

// -----

func.func @f(%p: tensor<4x3x2xf32>) {
  // expected-error @+1 {{expected partial moments of shape [..., 2, 2] (64 values in tiles of 32), got 4x3x2}}
  %s = graph.combine_moments %p tile 32 size 64 : (tensor<4x3x2xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @f(%p: tensor<4x2x2xf16>) {
  // expected-error @+1 {{partial moments are f32 or f64, not f16}}
  %s = graph.combine_moments %p tile 32 size 64 : (tensor<4x2x2xf16>) -> tensor<4x2xf16>
  func.return
}
