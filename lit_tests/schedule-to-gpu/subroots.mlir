// An expensive elementwise sub-root kept in shared rows (FusionStitching §4.1, §4.4) on
// the gpu IR of a softmax whose 3000-element rows each take a 256-thread block that
// loops over them: after the max, exp's group stores exp(x - max) to the block's row
// buffer at [local_row * 3000 + column], a barrier publishes it, and the sum and the
// output load it from there (x is read from global memory twice, not three times;
// exp runs once per element).
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{rows=block subroots=all},schedule-to-gpu' | filecheck %s

// CHECK-LABEL: gpu.func @softmax_k0(
// CHECK-SAME:  %[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>) workgroup({{.*}}, %[[ROWS:.*]] : memref<3000xf32, 3 : i64>)
// CHECK:       %[[LANE:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// CHECK:       scf.for
// CHECK:       memref.load %[[X]]
// CHECK:       gpu.barrier
// CHECK:       gpu.barrier
// CHECK:       %[[MAX:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<1xf32, 3 : i64>
// CHECK:       %[[BASE:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:  scf.for %[[C:.*]] = %[[LANE]] to
// CHECK:       memref.load %[[X]]
// CHECK-NEXT:  %[[D:.*]] = arith.subf %{{.*}}, %[[MAX]] : f32
// CHECK-NEXT:  %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:  %[[AT:.*]] = arith.addi %[[BASE]], %[[C]] : index
// CHECK-NEXT:  memref.store %[[E]], %[[ROWS]][%[[AT]]] : memref<3000xf32, 3 : i64>
// CHECK:       gpu.barrier
// CHECK:       scf.for
// CHECK-NOT:   memref.load %[[X]]
// CHECK-NOT:   math.exp
// CHECK:       memref.load %[[ROWS]]
// CHECK-NEXT:  arith.addf
// CHECK:       gpu.barrier
// CHECK:       gpu.barrier
// CHECK:       scf.for
// CHECK-NOT:   memref.load %[[X]]
// CHECK-NOT:   math.exp
// CHECK:       %[[EV:.*]] = memref.load %[[ROWS]]
// CHECK-NEXT:  %[[P:.*]] = arith.divf %[[EV]], %{{.*}} : f32
// CHECK:       memref.store %[[P]], %[[Y]]
// CHECK-NOT:   memref.load %[[X]]
// CHECK:       gpu.return
func.func @softmax(%x: tensor<2x3000xf32>) -> tensor<2x3000xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %mb = graph.broadcast %m dims [0] : (tensor<2xf32>) -> tensor<2x3000xf32>
  %d = graph.sub %x, %mb : tensor<2x3000xf32>
  %e = graph.exp %d : tensor<2x3000xf32>
  %s = graph.reduce sum %e dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %sb = graph.broadcast %s dims [0] : (tensor<2xf32>) -> tensor<2x3000xf32>
  %y = graph.div %e, %sb : tensor<2x3000xf32>
  func.return %y : tensor<2x3000xf32>
}
