// A verifier error names the file, line and column of the op, quotes the line and
// points at the op with a caret, and fs-opt exits with status 1.
// RUN: not fs-opt %s 2>&1 | filecheck %s --strict-whitespace --match-full-lines
// RUN: sh -c 'fs-opt "$0" 2>/dev/null; test $? -eq 1' %s

func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %r = graph.exp %x : tensor<4xi32>
  func.return %r : tensor<4xi32>
}

// CHECK:{{.*}}verify-error.mlir:[[# @LINE - 4]]:3: error: 'graph.exp' op does not accept element type i32 (float types only)
// CHECK-NEXT:  %r = graph.exp %x : tensor<4xi32>
// CHECK-NEXT:  ^
// CHECK-EMPTY:
