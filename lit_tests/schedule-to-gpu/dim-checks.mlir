// The host checks, before the launches that rely on them, that run-time sizes which
// must agree do agree: one `cf.assert` per distinct pair of sizes (the second add and
// the multiply reuse the first check), located at the op that needs it. A broadcast's
// `like` operand gives its `?` sizes; its operand dims are checked against them.
// RUN: fs-opt %s --split-input-file -p 'fusion-explore{mode=stitch},stitch-codegen,schedule-to-gpu' | filecheck %s
// RUN: fs-opt %s --split-input-file -p 'fusion-explore{mode=none},stitch-codegen,schedule-to-gpu' | filecheck %s --check-prefix=NONE

// CHECK-LABEL: func.func @add(
// CHECK-SAME:  %[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>)
// CHECK:       %[[DX:.*]] = memref.dim %[[X]]
// CHECK:       %[[DY:.*]] = memref.dim %[[Y]]
// CHECK:       %[[EQ:.*]] = arith.cmpi eq, %[[DX]], %[[DY]] : index
// CHECK-NEXT:  cf.assert %[[EQ]], "'graph.add' op: dim 0 of operands 0 and 1 differ at run time"
// CHECK-NOT:   cf.assert
// CHECK:       gpu.launch_func
// CHECK-NOT:   cf.assert
// CHECK:       func.return
// NONE-LABEL:  func.func @add(
// NONE-COUNT-1: cf.assert
// NONE-NOT:    cf.assert
// NONE:        func.return
func.func @add(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %a = graph.add %x, %y : tensor<?xf32>
  %b = graph.add %a, %y : tensor<?xf32>
  %c = graph.mul %b, %x : tensor<?xf32>
  func.return %c : tensor<?xf32>
}

// -----

// A `?` operand of a broadcast to a static dim is 1 or that size; with `like`, an
// operand dim has the `like` size.
// CHECK-LABEL: func.func @bcast(
// CHECK-SAME:  %[[V:.*]]: memref<?xf32>, %[[G:.*]]: memref<?xf32>, %[[X:.*]]: memref<?x?xf32>)
// CHECK-DAG:   %[[DV:.*]] = memref.dim %[[V]]
// CHECK-DAG:   %[[DG:.*]] = memref.dim %[[G]]
// CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:   %[[DX1:.*]] = memref.dim %[[X]], %[[C1]]
// CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
// CHECK:       %[[E8:.*]] = arith.cmpi eq, %[[DV]], %[[C8]] : index
// CHECK-NEXT:  %[[E1:.*]] = arith.cmpi eq, %[[DV]], %[[C1]] : index
// CHECK-NEXT:  %[[OK:.*]] = arith.ori %[[E8]], %[[E1]] : i1
// CHECK-NEXT:  cf.assert %[[OK]], "'graph.broadcast' op: operand dim 0 and result dim 1 differ at run time"
// CHECK-NEXT:  %[[EQ:.*]] = arith.cmpi eq, %[[DG]], %[[DX1]] : index
// CHECK-NEXT:  cf.assert %[[EQ]], "'graph.broadcast' op: operand dim 0 and result dim 1 differ at run time"
func.func @bcast(%v: tensor<?xf32>, %g: tensor<?xf32>, %x: tensor<?x?xf32>) -> (tensor<4x8xf32>, tensor<?x?xf32>) {
  %b = graph.broadcast %v dims [1] : (tensor<?xf32>) -> tensor<4x8xf32>
  %e = graph.exp %b : tensor<4x8xf32>
  %gb = graph.broadcast %g dims [1] like %x : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %y = graph.mul %x, %gb : tensor<?x?xf32>
  func.return %e, %y : tensor<4x8xf32>, tensor<?x?xf32>
}

// -----

// The contracting dims of a dot.
// CHECK-LABEL: func.func @dot(
// CHECK:       cf.assert %{{.*}}, "'graph.dot' op: the contracting dims of lhs and rhs differ at run time"
func.func @dot(%a: tensor<4x?xf32>, %b: tensor<?x8xf32>) -> tensor<4x8xf32> {
  %d = graph.dot %a, %b : (tensor<4x?xf32>, tensor<?x8xf32>) -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}
