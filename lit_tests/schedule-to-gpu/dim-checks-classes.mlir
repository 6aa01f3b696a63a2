// Sizes checked equal form classes: once x = y and y = z are checked, x = z is implied
// and not checked again, so three batch sizes that the ops tie together cost two
// checks (a class of n sizes, n - 1), whichever ops rely on them.
// RUN: fs-opt %s -p 'fusion-explore{mode=none},stitch-codegen,schedule-to-gpu' | filecheck %s

// CHECK-LABEL: func.func @three_columns(
// CHECK-SAME:  %[[X:.*]]: memref<?x4xf32>, %[[Y:.*]]: memref<?x4xf32>, %[[Z:.*]]: memref<?x4xf32>)
// CHECK:       %[[DX:.*]] = memref.dim %[[X]]
// CHECK:       %[[DY:.*]] = memref.dim %[[Y]]
// CHECK:       %[[DZ:.*]] = memref.dim %[[Z]]
// CHECK:       %[[E1:.*]] = arith.cmpi eq, %[[DX]], %[[DY]] : index
// CHECK-NEXT:  cf.assert %[[E1]], "'graph.add' op: dim 0 of operands 0 and 1 differ at run time"
// CHECK:       %[[E2:.*]] = arith.cmpi eq, %[[DY]], %[[DZ]] : index
// CHECK-NEXT:  cf.assert %[[E2]], "'graph.mul' op: dim 0 of operands 0 and 1 differ at run time"
// CHECK-NOT:   cf.assert
// CHECK:       func.return
func.func @three_columns(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>, %z: tensor<?x4xf32>) -> tensor<?x12xf32> {
  %a = graph.add %x, %y : tensor<?x4xf32>
  %b = graph.mul %y, %z : tensor<?x4xf32>
  %c = graph.sub %x, %z : tensor<?x4xf32>
  %d = graph.concat %a, %b, %c dim 1 : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x12xf32>
  func.return %d : tensor<?x12xf32>
}
