// --verify-diagnostics fails (exit 1) when an expected error is not produced and when
// an error was not expected, and says which line each concerns.
// RUN: not fs-opt %s --split-input-file --verify-diagnostics 2>&1 >/dev/null | filecheck %s

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{never happens}}
  %r = graph.exp %x : tensor<4xf32>
  func.return
}

// CHECK: verify-diagnostics.mlir:6: error: expected error "never happens" on line 7 was not produced

// -----

func.func @g(%x: tensor<4xf32>) {
  %r = graph.reduce sum %x dims [3] : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// CHECK: verify-diagnostics.mlir:16:3: error: 'graph.reduce' op reduction dimension 3 is out of range for rank 1  [unexpected error]

// -----

// A message that only partly matches is not a match either.
func.func @h(%x: tensor<4xi32>) {
  // expected-error @+1 {{does not accept element type f32}}
  %r = graph.exp %x : tensor<4xi32>
  func.return
}

// CHECK: verify-diagnostics.mlir:26: error: expected error "does not accept element type f32" on line 27 was not produced
// CHECK: verify-diagnostics.mlir:27:3: error: 'graph.exp' op does not accept element type i32 (float types only)  [unexpected error]
