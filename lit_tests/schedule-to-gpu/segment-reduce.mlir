// An embedding bag with offsets (gather, then graph.segment_reduce) is one `segments`
// kernel whose schedule the row rules and the latency-evaluator choose: here a warp's
// share per segment, runs of 2 elements (vector loads of the table row) with 4 lanes
// splitting the bag, combined by shuffles; lane 0 stores the run (a vector store). The
// segment's bounds come from the offsets, clamped into the ids (the next start only
// where a next segment exists); a thread past the last segment loads no offset.
// RUN: fs-opt %s --split-input-file -p fusion-explore,stitch-codegen | filecheck %s --check-prefix=SCHED
// RUN: fs-opt %s --split-input-file -p fusion-explore,stitch-codegen,schedule-to-gpu | filecheck %s

// SCHED-LABEL: func.func @bag(
// SCHED:         schedule.kernel @bag_k0 segments<elements = 2, lanes = 4, vector_width = 2>
// SCHED-SAME:      config = "segments/warp/e2/l4/v2"
// SCHED:         schedule.group warp -> global

// CHECK-LABEL: gpu.func @bag_k0
// CHECK-SAME:    (%[[T:.*]]: memref<?xf32>, %[[IDS:.*]]: memref<?xi32>, %[[OFF:.*]]: memref<?xi32>, %[[OUT:.*]]: memref<?xf32>, %[[N:.*]]: index, %[[S:.*]]: index)
// CHECK:         %[[TID:.*]] = gpu.thread_id x
// CHECK:         %[[LOCAL:.*]] = arith.divui %[[TID]], %[[C32:.*]] : index
// CHECK:         %[[U:.*]] = arith.remui %[[TID]], %[[C32]] : index
// CHECK:         %[[RUNI:.*]] = arith.divui %[[U]], %[[C4:.*]] : index
// CHECK:         %[[LANE:.*]] = arith.remui %[[U]], %[[C4]] : index
// CHECK:         %[[SEG:.*]] = arith.addi %{{.*}}, %[[LOCAL]] : index
// CHECK:         %[[VALID:.*]] = arith.cmpi slt, %[[SEG]], %[[S]] : index
// CHECK:         %[[D0:.*]] = arith.muli %[[RUNI]], %{{.*}} : index
// CHECK:         %[[LO:.*]] = scf.if %[[VALID]] -> (index) {
// CHECK:           memref.load %[[OFF]][%[[SEG]]]
// CHECK:           arith.maxsi
// CHECK:           arith.minsi %{{.*}}, %[[N]]
// CHECK:         } else {
// CHECK-NEXT:      scf.yield %[[N]] : index
// CHECK:         %[[NEXT:.*]] = arith.addi %[[SEG]]
// CHECK:         %[[HI:.*]] = scf.if %{{.*}} -> (index) {
// CHECK:           memref.load %[[OFF]][%[[NEXT]]]
// CHECK:         } else {
// CHECK-NEXT:      scf.yield %[[N]] : index
// CHECK:         %[[FIRST:.*]] = arith.addi %[[LO]], %[[LANE]] : index
// CHECK:         %[[A:.*]], %[[B:.*]] = scf.for %[[J:.*]] = %[[FIRST]] to %[[HI]] step %[[C4]] iter_args(%[[X:.*]] = %{{.*}}, %[[Y:.*]] = %{{.*}}) -> (f32, f32) {
// CHECK:           memref.load %[[IDS]][%[[J]]]
// CHECK:           %[[E0:.*]], %[[E1:.*]] = gpu.load_vector %[[T]][%{{.*}}] : memref<?xf32> -> f32, f32
// CHECK:           arith.addf %[[X]], %[[E0]] : f32
// CHECK:           arith.addf %[[Y]], %[[E1]] : f32
// CHECK:         gpu.shuffle xor %[[A]]
// CHECK:         gpu.shuffle xor
// CHECK:         gpu.shuffle xor %[[B]]
// CHECK:         gpu.shuffle xor
// CHECK-NOT:     gpu.barrier
// CHECK:         %[[LANE0:.*]] = arith.cmpi eq, %[[LANE]], %{{.*}} : index
// CHECK:         %[[STORE:.*]] = arith.andi %[[VALID]], %[[LANE0]] : i1
// CHECK:         scf.if %[[STORE]] {
// CHECK:           gpu.store_vector %{{.*}}, %{{.*}}, %[[OUT]]
func.func @bag(%t: tensor<100x16xf32>, %ids: tensor<?xi32>, %offsets: tensor<?xi32>) -> tensor<?x16xf32> {
  %rows = graph.gather %t, %ids : (tensor<100x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  %bags = graph.segment_reduce sum %rows, %offsets : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  func.return %bags : tensor<?x16xf32>
}

// -----

// max and min give 0 for an empty segment (not the identity); mean divides by the
// row count, at least 1. Both after the lanes' combine.
// RUN: fs-opt %s --split-input-file -p fusion-explore,stitch-codegen,schedule-to-gpu | filecheck %s --check-prefix=KINDS
// KINDS-LABEL: gpu.func @bag_max_k0
// KINDS:         %[[LO:.*]] = scf.if
// KINDS:         %[[HI:.*]] = scf.if
// KINDS:         scf.for
// KINDS:           arith.maximumf
// KINDS:         gpu.shuffle xor
// KINDS:         %[[NE:.*]] = arith.cmpi slt, %[[LO]], %[[HI]] : index
// KINDS:         arith.select %[[NE]], %{{.*}}, %{{.*}} : f32
func.func @bag_max(%rows: tensor<?x16xf32>, %offsets: tensor<?xi32>) -> tensor<?x16xf32> {
  %bags = graph.segment_reduce max %rows, %offsets : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  func.return %bags : tensor<?x16xf32>
}

// -----

// KINDS-LABEL: gpu.func @bag_mean_k0
// KINDS:         %[[LO:.*]] = scf.if
// KINDS:         %[[HI:.*]] = scf.if
// KINDS:         scf.for
// KINDS:         gpu.shuffle xor
// KINDS:         %[[LEN:.*]] = arith.subi %[[HI]], %[[LO]] : index
// KINDS:         %[[CNT:.*]] = arith.maxsi %[[LEN]]
// KINDS:         arith.divf
func.func @bag_mean(%rows: tensor<?x16xf32>, %offsets: tensor<?xi32>) -> tensor<?x16xf32> {
  %bags = graph.segment_reduce mean %rows, %offsets : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  func.return %bags : tensor<?x16xf32>
}

// -----

// Forced schedules. A thread per segment: the whole row's 16 accumulators in one
// thread (four vector loads a row), no combine.
// RUN: fs-opt %s --split-input-file -p 'fusion-explore,stitch-codegen{rows=thread},schedule-to-gpu' | filecheck %s --check-prefix=THREAD
// THREAD-LABEL: gpu.func @forced_k0
// THREAD-NOT:     workgroup
// THREAD:         scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// THREAD-COUNT-4:   gpu.load_vector
// THREAD-NOT:     gpu.shuffle
// THREAD-NOT:     gpu.barrier
// THREAD:         gpu.return

// A block per segment: runs of 4 elements with 64 lanes each, so a run's partials
// leave their warps through shared memory (a slot per warp and element), and after
// the barrier the run's first lane combines its two warps.
// RUN: fs-opt %s --split-input-file -p 'fusion-explore,stitch-codegen{rows=block}' | filecheck %s --check-prefix=BLOCKS
// RUN: fs-opt %s --split-input-file -p 'fusion-explore,stitch-codegen{rows=block},schedule-to-gpu' | filecheck %s --check-prefix=BLOCK
// BLOCKS:       schedule.kernel @forced_k0 segments<elements = 4, lanes = 64, vector_width = 4>
// BLOCKS:         schedule.shared @partials_f32 : memref<32xf32, 3 : i64>
// BLOCKS:         schedule.group block -> global
// BLOCK-LABEL: gpu.func @forced_k0
// BLOCK-SAME:    workgroup(%[[P:.*]] : memref<32xf32, 3 : i64>)
// BLOCK:         scf.for {{.*}} -> (f32, f32, f32, f32) {
// BLOCK:           gpu.load_vector
// BLOCK-COUNT-20: gpu.shuffle xor
// BLOCK:         scf.if
// BLOCK-COUNT-4:   memref.store %{{.*}}, %[[P]]
// BLOCK:         gpu.barrier
// BLOCK:         scf.if
// BLOCK:           memref.load %[[P]]
func.func @forced(%rows: tensor<?x16xf32>, %offsets: tensor<?xi32>) -> tensor<?x16xf32> {
  %bags = graph.segment_reduce sum %rows, %offsets : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  func.return %bags : tensor<?x16xf32>
}
