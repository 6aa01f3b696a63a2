// A reshape keeps its operand's `?` dims where both shapes have them in the same
// number and order and the static dims around them hold as many elements (GQA's
// key/value heads repeated then merged: [B, 2, 2, S, 16] -> [B, 4, S, 16]).
// RUN: fs-opt %s -p symbolic-dims | filecheck %s

// CHECK-LABEL: func.func @gqa
// CHECK:         graph.reshape %x {graph.dims = #graph.dims<[B, 4, S, 16]>}
// CHECK:         graph.reshape %y {graph.dims = #graph.dims<[B, S, 2, 8]>}
func.func @gqa(%x: tensor<?x2x2x?x16xf32> {graph.dims = #graph.dims<[B, 2, 2, S, 16]>}, %y: tensor<?x1x?x16xf32> {graph.dims = #graph.dims<[B, 1, S, 16]>}) -> (tensor<?x4x?x16xf32>, tensor<?x?x2x8xf32>) {
  %m = graph.reshape %x : (tensor<?x2x2x?x16xf32>) -> tensor<?x4x?x16xf32>
  %n = graph.reshape %y : (tensor<?x1x?x16xf32>) -> tensor<?x?x2x8xf32>
  func.return %m, %n : tensor<?x4x?x16xf32>, tensor<?x?x2x8xf32>
}
