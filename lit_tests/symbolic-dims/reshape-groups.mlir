// A reshape with dim groups: each `?` result dim is its group's operand size over its
// static result dims, so merging a run-time dim with a static one gives a product and
// splitting it back divides it out (BLOOM's heads merged into the batch:
// [B, 4, S] -> [4*B, 1, S] -> [B, 4, S]; [B, S, 4] -> [B, 4*S]).
// RUN: fs-opt %s -p symbolic-dims | filecheck %s

// CHECK-LABEL: func.func @bloom
// CHECK:         graph.reshape %x {groups = array<i64: 2, 1, 1, 2>, graph.dims = #graph.dims<["4*B", 1, S]>}
// CHECK:         graph.reshape %m {groups = array<i64: 1, 2, 2, 1>, graph.dims = #graph.dims<[B, 4, S]>}
// CHECK:         graph.add %x, %b {graph.dims = #graph.dims<[B, 4, S]>}
func.func @bloom(%x: tensor<?x4x?xf32> {graph.dims = #graph.dims<[B, 4, S]>}) -> tensor<?x4x?xf32> {
  %m = graph.reshape %x {groups = array<i64: 2, 1, 1, 2>} : (tensor<?x4x?xf32>) -> tensor<?x1x?xf32>
  %b = graph.reshape %m {groups = array<i64: 1, 2, 2, 1>} : (tensor<?x1x?xf32>) -> tensor<?x4x?xf32>
  %s = graph.add %x, %b : tensor<?x4x?xf32>
  func.return %s : tensor<?x4x?xf32>
}

// CHECK-LABEL: func.func @flatten
// CHECK:         graph.reshape %x {groups = array<i64: 1, 1, 2, 1>, graph.dims = #graph.dims<[B, "4*S"]>}
func.func @flatten(%x: tensor<?x?x4xf32> {graph.dims = #graph.dims<[B, S, 4]>}) -> tensor<?x?xf32> {
  %m = graph.reshape %x {groups = array<i64: 1, 1, 2, 1>} : (tensor<?x?x4xf32>) -> tensor<?x?xf32>
  func.return %m : tensor<?x?xf32>
}
