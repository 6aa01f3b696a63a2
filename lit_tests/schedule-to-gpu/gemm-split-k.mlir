// Split-K (`split_k = S`, fsir/lowering/split_k.py): S blocks per output tile, each
// taking its tile and slice from a ticket (`gpu.next_tile`), reducing its slice of the
// k-steps, then adding its sums in k order: wait for the tile's semaphore to reach the
// slice, add to the tile's running sums (slice 0 adds to nothing), store them back and
// post, or (the last slice) store the output and reset the semaphore; the block with
// the last ticket resets the counter. A kernel with one f32 output keeps the running
// sums in the output itself (serial split-K: no workspace); a 16-bit output keeps them
// in an f32 workspace. The host allocates the semaphores (zeroed once) and the
// workspace.
// RUN: fs-opt %s -p 'stitch-codegen{gemm="16x16x8/2x2/s4"},schedule-to-gpu' | filecheck %s
// RUN: fs-opt %s -p 'stitch-codegen{gemm="16x16x8/2x2/s4"},schedule-to-gpu' | filecheck %s --check-prefix=WS
// RUN: fs-opt %s -p 'stitch-codegen{gemm="16x16x8/2x2/s4"},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=PTX
// RUN: fs-opt %s -p 'stitch-codegen{gemm="16x16x8/2x2/s3"},schedule-to-gpu' | filecheck %s --check-prefix=UNEVEN
// RUN: fs-opt %s -p 'stitch-codegen{precision=tf32 gemm="32x32x32/16x16/tf32/s2"},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=TC

// 20x33 f32 outputs in 16x16 tiles: 3 x 2 tiles, grid z = 4 slices; 7 semaphore words
// (the counter and one per tile) and no workspace.
// CHECK-LABEL: func.func @mm
// CHECK: %[[SEMS:.*]] = memref.alloc() : memref<7xi32>
// CHECK-NOT: memref.alloc
// CHECK: %[[SF:.*]] = memref.reinterpret_cast %[[SEMS]]
// CHECK: gpu.memset %[[SF]]
// CHECK: gpu.launch_func @kernels::@mm_k0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args({{.*}}, %[[SF]] : memref<?xi32>)
// CHECK-LABEL: gpu.func @mm_k0(
// CHECK-SAME: %d: memref<?xf32>, %sems: memref<?xi32>)
// CHECK-NOT: gpu.block_id
// CHECK: %ticket = gpu.next_tile %sems
// CHECK: %[[TILE:.*]] = arith.divui %ticket, %[[S:.*]] : index
// CHECK: %[[SLICE:.*]] = arith.remui %ticket, %[[S]] : index
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[SLICE]], %{{.*}} : index
// CHECK: %[[NOTLAST:.*]] = arith.xori %[[LAST]]
// The 8 k-steps in 4 even slices: a static 2-step loop from the slice's start.
// CHECK: arith.constant 16 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-NOT: gpu.block_id
// The wait comes before the read-add-write of the running sums in the output.
// CHECK: %[[SEM:.*]] = arith.addi %[[TILE]], %{{.*}} : index
// CHECK: %[[WANT:.*]] = arith.index_cast %[[SLICE]] : index to i32
// CHECK: gpu.sem_wait %sems[%[[SEM]]], %[[WANT]]
// CHECK-NOT: memref.load %d
// The running sums of the thread's 2x2 elements, loaded from the output in one branch
// by slices after the first, each element guarded at the ragged edges.
// CHECK: %[[P0:.*]], %[[P1:.*]], %[[P2:.*]], %[[P3:.*]] = scf.if %{{.*}} -> (f32, f32, f32, f32) {
// CHECK-NEXT: scf.if %[[IN0:.*]] -> (f32) {
// CHECK-NEXT: memref.load %d[%[[AT:.*]]]
// CHECK-COUNT-3: memref.load %d
// CHECK: } else {
// CHECK: %[[SUM:.*]] = arith.addf %[[P0]], %{{.*}} : f32
// CHECK-COUNT-3: arith.addf
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK: memref.store %[[SUM]], %d[
// CHECK-COUNT-3: memref.store %{{.*}}, %d[
// CHECK: scf.if %[[NOTLAST]] {
// CHECK-NEXT: scf.if %[[IN0]] {
// CHECK-NEXT: memref.store %[[SUM]], %d[%[[AT]]]
// CHECK-COUNT-3: memref.store %{{.*}}, %d
// CHECK: arith.constant 1 : i32
// CHECK-NEXT: scf.if %[[NOTLAST]] {
// CHECK-NEXT: gpu.sem_post %sems[%[[SEM]]]
// CHECK: memref.store %{{.*}}, %sems[%[[SEM]]]
// CHECK: %[[END:.*]] = arith.constant 23 : index
// CHECK: arith.cmpi eq, %ticket, %[[END]]
// CHECK: memref.store %{{.*}}, %sems[%{{.*}}]
// CHECK: gpu.return

// An f16 output cannot hold the f32 running sums: 6 x 256 workspace floats, whole tiles
// (no edge guards), then the last slice's sums rounded to f16 in the output.
// WS-LABEL: func.func @half
// WS: %[[HSEMS:.*]] = memref.alloc() : memref<7xi32>
// WS: %[[HSF:.*]] = memref.reinterpret_cast %[[HSEMS]]
// WS: %[[WORK:.*]] = memref.alloc() : memref<1536xf32>
// WS: %[[WF:.*]] = memref.reinterpret_cast %[[WORK]]
// WS: gpu.launch_func @kernels::@half_k0 {{.*}} args({{.*}}, %[[HSF]] : memref<?xi32>, %[[WF]] : memref<?xf32>)
// WS-LABEL: gpu.func @half_k0(
// WS-SAME: %sems: memref<?xi32>, %workspace: memref<?xf32>)
// WS: gpu.sem_wait %sems
// WS: scf.if %{{.*}} -> (f32, f32, f32, f32) {
// WS-NEXT: memref.load %workspace[%[[WAT:.*]]]
// WS-COUNT-3: memref.load %workspace
// WS: } else {
// WS: scf.if %{{.*}} {
// WS: arith.truncf %{{.*}} : f32 to f16
// WS: memref.store %{{.*}}, %d[
// WS: memref.store %{{.*}}, %workspace[%[[WAT]]]
// WS: gpu.sem_post %sems
func.func @half(%a: tensor<20x64xf16>, %b: tensor<64x33xf16>) -> tensor<20x33xf16> {
  %d = graph.dot %a, %b : (tensor<20x64xf16>, tensor<64x33xf16>) -> tensor<20x33xf16>
  func.return %d : tensor<20x33xf16>
}

// PTX-LABEL: .entry mm_k0(
// PTX: atom.global.add.u32
// PTX: ld.acquire.gpu.global.u32
// PTX: fence.acq_rel.gpu
// PTX: red.release.gpu.global.add.u32

// 8 k-steps in 3 slices of 3, 3 and 2 (24 k each): the loop runs from the slice's start
// to its end, cut at K.
// UNEVEN-LABEL: gpu.func @mm_k0(
// UNEVEN: %ticket = gpu.next_tile %sems
// UNEVEN: %[[PER:.*]] = arith.constant 24 : index
// UNEVEN-NEXT: %[[LO:.*]] = arith.muli %{{.*}}, %[[PER]] : index
// UNEVEN-NEXT: %[[END:.*]] = arith.addi %[[LO]], %[[PER]] : index
// UNEVEN: %[[HI:.*]] = arith.minsi %[[END]], %{{.*}} : index
// UNEVEN: scf.for %{{.*}} = %[[LO]] to %[[HI]] step

// On the tensor cores: the slice's k-steps through the cp.async pipeline (@tc's rows
// are 16-byte aligned), then the same ticketed reduction of the mma accumulators.
// TC-LABEL: .entry mm_k0(
// TC: atom.global.add.u32
// TC: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TC: ld.acquire.gpu.global.u32
// TC: red.release.gpu.global.add.u32
func.func @mm(%a: tensor<20x64xf32>, %b: tensor<64x33xf32>) -> tensor<20x33xf32> {
  %d = graph.dot %a, %b : (tensor<20x64xf32>, tensor<64x33xf32>) -> tensor<20x33xf32>
  func.return %d : tensor<20x33xf32>
}

// TC-LABEL: .entry tc_k0(
// TC: atom.global.add.u32
// TC: cp.async.cg.shared.global
// TC: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TC: ld.acquire.gpu.global.u32
// TC: red.release.gpu.global.add.u32
func.func @tc(%a: tensor<32x128xf32>, %b: tensor<128x64xf32>) -> tensor<32x64xf32> {
  %d = graph.dot %a, %b : (tensor<32x128xf32>, tensor<128x64xf32>) -> tensor<32x64xf32>
  func.return %d : tensor<32x64xf32>
}
