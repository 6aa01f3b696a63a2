// A load hoisted out of a row loop stays under the loop's own condition: a thread
// past the last row runs its row loop zero times, and the id it would gather its row
// by lies past the end of `ids` (a `?` batch that the rows per block do not divide).
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{rows=warp},schedule-to-gpu' | filecheck %s

// CHECK-LABEL: gpu.func @f_k0(
// CHECK-SAME:  %[[TABLE:[^:]*]]: memref<?xf32>, %[[IDS:[^:]*]]: memref<?xi32>
// CHECK:       %[[ROW:.*]] = arith.addi
// CHECK:       %[[IN:.*]] = arith.cmpi slt, %[[ROW]], %{{.*}} : index
// CHECK:       %[[UB:.*]] = arith.select %[[IN]], %{{.*}}, %{{.*}} : index
// CHECK:       %[[RUNS:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB]] : index
// CHECK-NEXT:  %[[ID:.*]] = scf.if %[[RUNS]] -> (i32) {
// CHECK-NEXT:    %[[L:.*]] = memref.load %[[IDS]][%[[ROW]]] : memref<?xi32>
// CHECK-NEXT:    scf.yield %[[L]] : i32
// CHECK-NEXT:  } else {
// CHECK:       arith.index_cast %[[ID]] : i32 to index
// CHECK:       scf.for %{{.*}} = %[[LB]] to %[[UB]]
// CHECK-NOT:     memref.load %[[IDS]]
// CHECK:         memref.load %[[TABLE]]
func.func @f(%table: tensor<50x64xf32>, %ids: tensor<?xi32>) -> tensor<?xf32> {
  %e = graph.gather %table, %ids : (tensor<50x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %s = graph.reduce sum %e dims [1] : (tensor<?x64xf32>) -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}
