// Using a value that was never defined is reported at the use.
// RUN: not fs-opt %s 2>&1 | filecheck %s --strict-whitespace --match-full-lines

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.exp %z : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK:{{.*}}undefined-value.mlir:5:18: error: use of undefined value '%z'
// CHECK-NEXT:  %y = graph.exp %z : tensor<4xf32>
// CHECK-NEXT:                 ^
