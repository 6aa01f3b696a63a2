// Ragged columns (a gather, a segment_reduce over per-example offsets) in the columns
// kernel beside a fixed-length bag and a copied dense operand: each is a warp group of
// the one kernel with its lanes chosen by the segment row rules. A ragged leaf reads
// example b's offsets b and b + 1 (clamped into the ids), walks the segment's rows with
// the lanes as stride, combines the lanes by shuffles and applies the kind's fix-up
// (max: 0 for an empty bag; mean: a division by the row count) before lane 0 stores.
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen' | filecheck %s --check-prefix=SCHED
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen,schedule-to-gpu' | filecheck %s

// SCHED-LABEL: func.func @rag
// SCHED:       schedule.kernel @rag_k0 columns<rows_per_tile = 8, warps = [0, 1, 33, 41, 49], lanes = [1, 8, 4, 16], vectors = [1, 1, 1, 2]>
// SCHED:         schedule.group warp -> reg : tensor<8x16xf32> {
// SCHED:           graph.reduce sum
// SCHED:         %[[R1:.*]] = schedule.group warp -> reg : tensor<8x8xf32> {
// SCHED-NEXT:      graph.gather
// SCHED-NEXT:      graph.segment_reduce max
// SCHED:         %[[R2:.*]] = schedule.group warp -> reg : tensor<8x4xf32> {
// SCHED-NEXT:      graph.gather
// SCHED-NEXT:      graph.segment_reduce mean
// SCHED:         schedule.group thread -> global : tensor<8x31xf32> {
// SCHED-NEXT:      graph.concat %{{.*}}, %{{.*}}, %[[R1]], %[[R2]] dim 1
// SCHED:       schedule.kernel @rag_k1 gemm

// @shared's host code (checked here: the host functions come before the kernels)
// CHECK-LABEL: func.func @shared
// CHECK:       gpu.address_table values [24, 100, 3, 40, 30, 11] %t0_flat, %ids0_flat, %off0_flat, %t1_flat, %ids1_flat, %off1_flat

// CHECK-LABEL: gpu.func @rag_k0(
// the fixed-length bag: its loop over the bag, 8 lanes, 3 shuffles
// CHECK:       scf.for
// CHECK:         memref.load %ids0
// CHECK-COUNT-3: gpu.shuffle xor
// the ragged max column, 4 lanes: offsets b and b + 1 clamped into its 40 rows
// CHECK:       %[[START:.*]] = scf.if %{{.*}} -> (index) {
// CHECK-NEXT:    memref.load %off1
// CHECK:         arith.minsi %{{.*}}, %{{.*}} : index
// CHECK:       %[[END:.*]] = scf.if %{{.*}} -> (index) {
// CHECK-NEXT:    memref.load %off1
// CHECK:       %[[FIRST:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK:       %[[ACC:.*]] = scf.for %[[J:.*]] = %[[FIRST]] to %[[END]] step %{{.*}} iter_args
// CHECK-NEXT:    memref.load %ids1[%[[J]]]
// CHECK:         memref.load %t1
// CHECK:         arith.maximumf
// CHECK-COUNT-2: gpu.shuffle xor
// CHECK-NOT:     gpu.shuffle
// an empty bag gives 0
// CHECK:       %[[NONEMPTY:.*]] = arith.cmpi slt, %[[START]], %[[END]] : index
// CHECK:       %[[V:.*]] = arith.select %[[NONEMPTY]], %{{.*}}, %{{.*}} : f32
// CHECK:       scf.if
// CHECK:         memref.store %[[V]], %x
// the ragged mean column, 16 lanes over 2 elements each: 4 shuffles each, divided by the rows
// CHECK:       memref.load %off2
// CHECK:       scf.for {{.*}} -> (f32, f32)
// CHECK:         memref.load %ids2
// CHECK-COUNT-8: gpu.shuffle xor
// CHECK:       arith.divf
// CHECK:       arith.divf
// CHECK:       memref.store
// CHECK:       memref.store
// CHECK:       gpu.return
func.func @rag(%dense: tensor<8x3xf32>, %ids0: tensor<8x5xi32>, %t0: tensor<100x16xf32>, %ids1: tensor<40xi32>, %off1: tensor<8xi32>, %t1: tensor<30x8xf32>, %ids2: tensor<96xi32>, %off2: tensor<8xi32>, %t2: tensor<50x4xf32>, %w: tensor<31x2xf32>) -> tensor<8x2xf32> {
  %e0 = graph.gather %t0, %ids0 : (tensor<100x16xf32>, tensor<8x5xi32>) -> tensor<8x5x16xf32>
  %r0 = graph.reduce sum %e0 dims [1] : (tensor<8x5x16xf32>) -> tensor<8x16xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<30x8xf32>, tensor<40xi32>) -> tensor<40x8xf32>
  %r1 = graph.segment_reduce max %e1, %off1 : (tensor<40x8xf32>, tensor<8xi32>) -> tensor<8x8xf32>
  %e2 = graph.gather %t2, %ids2 : (tensor<50x4xf32>, tensor<96xi32>) -> tensor<96x4xf32>
  %r2 = graph.segment_reduce mean %e2, %off2 : (tensor<96x4xf32>, tensor<8xi32>) -> tensor<8x4xf32>
  %x = graph.concat %dense, %r0, %r1, %r2 dim 1 : (tensor<8x3xf32>, tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x31xf32>
  %y = graph.dot %x, %w : (tensor<8x31xf32>, tensor<31x2xf32>) -> tensor<8x2xf32>
  func.return %y : tensor<8x2xf32>
}

// Two ragged sums of one structure share one code body: each column's ids, offsets
// and table from its row of the address table, whose words give its rows (24, 40: the
// offsets' clamp, one word for the ids' and the gather's rows), its table's rows and
// its offset in the concat.
// SCHED-LABEL: func.func @shared
// SCHED:       schedule.kernel @shared_k0 columns<{{.*}}, clusters = [0, 1, 1]>

// CHECK-LABEL: gpu.func @shared_k0(
// CHECK:       %[[T:.*]] = gpu.table_buffer %table 6 [%[[ROW:.*]]] : memref<14xi64> -> memref<?xf32>
// CHECK-NEXT:  %[[IDS:.*]] = gpu.table_buffer %table 7 [%[[ROW]]] : memref<14xi64> -> memref<?xi32>
// CHECK-NEXT:  %[[OFF:.*]] = gpu.table_buffer %table 8 [%[[ROW]]] : memref<14xi64> -> memref<?xi32>
// CHECK:       memref.load %[[OFF]]
// CHECK:       memref.load %[[OFF]]
// CHECK:       scf.for
// CHECK-NEXT:    memref.load %[[IDS]]
// CHECK:         memref.load %[[T]]
// CHECK-NOT:   scf.for
// CHECK:       gpu.return
func.func @shared(%dense: tensor<8x3xf32>, %ids0: tensor<24xi32>, %off0: tensor<8xi32>, %t0: tensor<100x8xf32>, %ids1: tensor<40xi32>, %off1: tensor<8xi32>, %t1: tensor<30x8xf32>, %w: tensor<19x2xf32>) -> tensor<8x2xf32> {
  %e0 = graph.gather %t0, %ids0 : (tensor<100x8xf32>, tensor<24xi32>) -> tensor<24x8xf32>
  %r0 = graph.segment_reduce sum %e0, %off0 : (tensor<24x8xf32>, tensor<8xi32>) -> tensor<8x8xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<30x8xf32>, tensor<40xi32>) -> tensor<40x8xf32>
  %r1 = graph.segment_reduce sum %e1, %off1 : (tensor<40x8xf32>, tensor<8xi32>) -> tensor<8x8xf32>
  %x = graph.concat %dense, %r0, %r1 dim 1 : (tensor<8x3xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x19xf32>
  %y = graph.dot %x, %w : (tensor<8x19xf32>, tensor<19x2xf32>) -> tensor<8x2xf32>
  func.return %y : tensor<8x2xf32>
}
