// A parse error points at the offending token: here the unknown compare direction.
// RUN: not fs-opt %s 2>&1 | filecheck %s --strict-whitespace --match-full-lines

func.func @f(%x: tensor<4xf32>) -> tensor<4xi1> {
  %c = graph.compare gte %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return %c : tensor<4xi1>
}

// CHECK:{{.*}}parse-error.mlir:5:22: error: Expected one of 'eq', 'ge', 'gt', 'le', 'lt', 'ne'{{.*}}
// CHECK-NEXT:  %c = graph.compare gte %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT:                     ^
