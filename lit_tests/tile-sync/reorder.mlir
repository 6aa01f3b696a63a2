// cuSync's R (§IV-C): the consumer GEMM of Fig. 4a issues its first k-step's loads of B
// (weights d: nothing to wait for) before it waits on the producer's semaphores, then
// loads A (the producer's c). With reorder=false the waits come first.
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync{policy=tile},schedule-to-gpu' -t ptx | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync{policy=tile reorder=false},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=NOR
// The tensor-core GEMM stages its first k-step with cp.async: B's copies, the wait, A's copies, one group.
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{precision=tf32},tile-sync{policy=tile},schedule-to-gpu' | filecheck %s --check-prefix=TC
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{precision=tf32},tile-sync{policy=tile},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=TCPTX

// In the k-loop: B's element, then (first step only) thread 0 spins and the block meets
// at the barrier, then A's element, both to shared memory, then the k-step's barrier.
// CHECK-LABEL: .visible .entry fig4a_k1(
// CHECK: ld.global.f32 %[[B:f[0-9]+]], [%{{rd[0-9]+}}];
// CHECK-NEXT: setp.eq.s64 %[[FIRST:p[0-9]+]], %{{rd[0-9]+}}, 0;
// CHECK-NEXT: @!%[[FIRST]] bra
// CHECK: ld.acquire.gpu.global.u32
// CHECK: bar.sync 0;
// CHECK: ld.global.f32 %[[A:f[0-9]+]], [%{{rd[0-9]+}}];
// CHECK: st.shared.f32 [%{{rd[0-9]+}}], %[[A]];
// CHECK: st.shared.f32 [%{{rd[0-9]+}}], %[[B]];
// CHECK-NEXT: bar.sync 0;

// NOR-LABEL: .visible .entry fig4a_k1(
// NOR-NOT: ld.global
// NOR: ld.acquire.gpu.global.u32
// NOR: ld.global.f32

// TC-LABEL: gpu.func @fig4a_k1(
// TC-SAME: %[[C:c]]: memref<?xf32>, %[[D:d]]: memref<?xf32>, %e: memref<?xf32>
// TC-NOT: %[[C]][
// TC: gpu.cp_async %{{.*}}, %[[D]][
// TC: gpu.cp_async %{{.*}}, %[[D]][
// TC-NOT: %[[C]][
// TC: gpu.sem_wait
// TC-NEXT: gpu.cp_async %{{.*}}, %[[C]][
// TC-NOT: %[[D]][
// TC: gpu.cp_async %{{.*}}, %[[C]][
// TC-NEXT: gpu.cp_async_commit_group

// TCPTX-LABEL: .visible .entry fig4a_k1(
// TCPTX-COUNT-2: cp.async.cg.shared.global [%{{rd[0-9]+}}], [%{{rd[0-9]+}}], 16, %{{r[0-9]+}};
// TCPTX-NOT: cp.async
// TCPTX: ld.acquire.gpu.global.u32
// TCPTX-NOT: cp.async
// TCPTX: bar.sync 0;
// TCPTX: cp.async.cg.shared.global [%{{rd[0-9]+}}], [%{{rd[0-9]+}}], 16;
// TCPTX: cp.async.cg.shared.global [%{{rd[0-9]+}}], [%{{rd[0-9]+}}], 16;
// TCPTX-NEXT: cp.async.commit_group;

func.func @fig4a(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>, %d: tensor<32x48xf32>) -> tensor<32x48xf32> {
  %c = graph.dot %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = graph.dot %c, %d : (tensor<32x32xf32>, tensor<32x48xf32>) -> tensor<32x48xf32>
  func.return %e : tensor<32x48xf32>
}
