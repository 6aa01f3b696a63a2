// An embedding bag with offsets (gather, then graph.segment_reduce) is one loop kernel:
// each thread owns one element of one bag, loads its segment's bounds from the offsets
// (clamped into the ids; the next start only where a next segment exists) and loops
// over the segment's rows, loading each id and its table element in the loop.
// RUN: fs-opt %s --split-input-file -p fusion-explore,stitch-codegen,schedule-to-gpu | filecheck %s

// CHECK-LABEL: gpu.func @bag_k0
// CHECK-SAME:    (%[[T:.*]]: memref<?xf32>, %[[IDS:.*]]: memref<?xi32>, %[[OFF:.*]]: memref<?xi32>, %[[OUT:.*]]: memref<?xf32>, %[[N:.*]]: index, %[[S:.*]]: index)
// CHECK:         %[[COL:.*]] = arith.remui %{{.*}}, %[[C16:.*]] : index
// CHECK:         %[[SEG:.*]] = arith.divui
// CHECK:         %[[O0:.*]] = memref.load %[[OFF]][%[[SEG]]]
// CHECK:         %[[LO0:.*]] = arith.maxsi
// CHECK:         %[[LO:.*]] = arith.minsi %[[LO0]], %[[N]]
// CHECK:         %[[NEXT:.*]] = arith.addi %[[SEG]]
// CHECK:         %[[HAS:.*]] = arith.cmpi slt, %[[NEXT]], %[[S]]
// CHECK:         %[[HI:.*]] = scf.if %[[HAS]] -> (index) {
// CHECK:           memref.load %[[OFF]][%[[NEXT]]]
// CHECK:         } else {
// CHECK-NEXT:      scf.yield %[[N]] : index
// CHECK:         %[[ACC:.*]] = scf.for %[[J:.*]] = %[[LO]] to %[[HI]] step %{{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (f32) {
// CHECK:           memref.load %[[IDS]][%[[J]]]
// CHECK:           %[[X:.*]] = memref.load %[[T]]
// CHECK:           %[[SUM:.*]] = arith.addf %[[A]], %[[X]] : f32
// CHECK:           scf.yield %[[SUM]] : f32
// CHECK:         memref.store %[[ACC]], %[[OUT]]
func.func @bag(%t: tensor<100x16xf32>, %ids: tensor<?xi32>, %offsets: tensor<?xi32>) -> tensor<?x16xf32> {
  %rows = graph.gather %t, %ids : (tensor<100x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  %bags = graph.segment_reduce sum %rows, %offsets : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  func.return %bags : tensor<?x16xf32>
}

// -----

// max and min give 0 for an empty segment (not the identity); mean divides by the
// row count, at least 1.
// RUN: fs-opt %s --split-input-file -p fusion-explore,stitch-codegen,schedule-to-gpu | filecheck %s --check-prefix=KINDS
// KINDS-LABEL: gpu.func @bag_max_k0
// KINDS:         %[[LO:.*]] = arith.minsi
// KINDS:         %[[HI:.*]] = scf.if
// KINDS:         %[[ACC:.*]] = scf.for
// KINDS:           arith.maximumf
// KINDS:         %[[NE:.*]] = arith.cmpi slt, %[[LO]], %[[HI]] : index
// KINDS:         arith.select %[[NE]], %[[ACC]], %{{.*}} : f32
func.func @bag_max(%rows: tensor<?x16xf32>, %offsets: tensor<?xi32>) -> tensor<?x16xf32> {
  %bags = graph.segment_reduce max %rows, %offsets : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  func.return %bags : tensor<?x16xf32>
}

// -----

// KINDS-LABEL: gpu.func @bag_mean_k0
// KINDS:         %[[LO:.*]] = arith.minsi
// KINDS:         %[[HI:.*]] = scf.if
// KINDS:         %[[ACC:.*]] = scf.for
// KINDS:         %[[LEN:.*]] = arith.subi %[[HI]], %[[LO]] : index
// KINDS:         %[[CNT:.*]] = arith.maxsi %[[LEN]]
// KINDS:         arith.divf %[[ACC]]
func.func @bag_mean(%rows: tensor<?x16xf32>, %offsets: tensor<?xi32>) -> tensor<?x16xf32> {
  %bags = graph.segment_reduce mean %rows, %offsets : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  func.return %bags : tensor<?x16xf32>
}
