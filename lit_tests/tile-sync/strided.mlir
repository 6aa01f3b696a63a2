// StridedSync (cuSync §IV-B, attention): two heads' attention kernels read Q, K and V as
// column slices of one fused QKV GEMM (64x192 in 16x16 tiles: 12x4 tiles). Head h reads
// column tiles 2h, 2h+1 (Q), 4+2h, 5+2h (K), 8+2h, 9+2h (V) of every row: a stride of 4
// tiles. The producer's tiles whose columns are congruent modulo 4 share a semaphore
// (4 per row, ready at 3: a Q, a K and a V tile), so each attention tile waits on 2
// semaphores per row (8) where TileSync waits on 24.
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync{policy=strided}' | filecheck %s
// auto picks StridedSync for a strided dependency; tile keeps TileSync.
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync{policy=tile}' | filecheck %s --check-prefix=TILE
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync{policy=strided},schedule-to-gpu' | filecheck %s --check-prefix=GPU
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync{policy=strided},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=PTX
// The strided tile order (cuSyncGen's): row by row, a group's 3 tiles one after another;
// the attention kernels take theirs row by row.
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync{policy=strided tile-order=strided}' | filecheck %s --check-prefix=ORDERIR
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{gemm="16x16x16"},tile-sync{policy=strided tile-order=strided},schedule-to-gpu' | filecheck %s --check-prefix=ORDER

// CHECK-LABEL: func.func @heads
// CHECK: schedule.kernel @[[P:heads_k0]] gemm<tile = 16x16x16> grid [12, 4, 1]
// CHECK: schedule.stage @[[P]] pipeline 0 stream 0 priority 0 policy strided stride 4{{$}}
// CHECK: schedule.kernel @[[H0:heads_k1]] attention
// CHECK: schedule.stage @[[H0]] pipeline 0 stream 1 priority 1 policy tile{{$}}
// CHECK-NEXT: schedule.tile_dep @[[H0]] on @[[P]] operand 0 map affine_map<(d0, d1, d2, d3) -> (((d2 mod 2) + ((d2 floordiv 2) * 4)), d3)> extents [6, 4]
// CHECK: schedule.kernel @[[H1:heads_k2]] attention
// CHECK: schedule.stage @[[H1]] pipeline 0 stream 2 priority 2 policy tile{{$}}
// CHECK-NEXT: schedule.tile_dep @[[H1]] on @[[P]] operand 0 map affine_map<(d0, d1, d2, d3) -> ((((d2 mod 2) + 2) + ((d2 floordiv 2) * 4)), d3)> extents [6, 4]

// TILE: schedule.stage @heads_k0 pipeline 0 stream 0 priority 0 policy tile{{$}}

// 4 rows x 4 strided groups of semaphores.
// GPU-LABEL: func.func @heads(
// GPU: memref.alloc() : memref<16xi32>
// The producer tile (x, y) posts semaphore 4y + x mod 4.
// GPU-LABEL: gpu.func @heads_k0(
// GPU-NEXT: %[[X:.*]] = gpu.block_id x
// GPU-NEXT: %[[Y:.*]] = gpu.block_id y
// GPU: %[[FOUR:.*]] = arith.constant 4 : index
// GPU-NEXT: %[[ROW:.*]] = arith.muli %[[Y]], %[[FOUR]] : index
// GPU-NEXT: %[[COL:.*]] = arith.remui %[[X]], %[[FOUR]] : index
// GPU-NEXT: %[[SEM:.*]] = arith.addi %[[ROW]], %[[COL]] : index
// GPU: gpu.sem_post %{{.*}}[%[[SEM]]], %{{.*}} : memref<?xi32>
// GPU-NEXT: gpu.return
// Head 0 waits, for each row j, on the groups of its column tiles i < 2 (i = 2..5, K's
// and V's, name the same groups): semaphore 4j + (i mod 2 + (i div 2) 4) mod 4, ready at 3.
// GPU-LABEL: gpu.func @heads_k1(
// GPU: %[[READY:.*]] = arith.constant 3 : i32
// GPU: scf.for %[[J:.*]] = %{{.*}} to %[[ROWS:.*]] step
// GPU: scf.for %[[I:.*]] = %{{.*}} to %[[TWO:.*]] step
// GPU: gpu.sem_wait %{{.*}}[%{{.*}}], %[[READY]] : memref<?xi32>

// The r-th tile of row t div 12 is x = (r mod 3) * 4 + r div 3 (r = t mod 12).
// ORDERIR: schedule.stage @heads_k0 pipeline 0 stream 0 priority 0 policy strided stride 4 order strided{{$}}
// ORDERIR: schedule.stage @heads_k1 pipeline 0 stream 1 priority 1 policy tile order row_major{{$}}
// ORDER-LABEL: gpu.func @heads_k0(
// ORDER-NEXT: %[[T:.*]] = gpu.next_tile %{{.*}} : memref<?xi32>
// ORDER-NEXT: %[[C12:.*]] = arith.constant 12 : index
// ORDER-NEXT: %[[R:.*]] = arith.remui %[[T]], %[[C12]] : index
// ORDER-NEXT: %[[C3:.*]] = arith.constant 3 : index
// ORDER-NEXT: %[[M:.*]] = arith.remui %[[R]], %[[C3]] : index
// ORDER-NEXT: %[[C4:.*]] = arith.constant 4 : index
// ORDER-NEXT: %[[MS:.*]] = arith.muli %[[M]], %[[C4]] : index
// ORDER-NEXT: %[[G:.*]] = arith.divui %[[R]], %[[C3]] : index
// ORDER-NEXT: %[[X:.*]] = arith.addi %[[MS]], %[[G]] : index
// ORDER-NEXT: %[[Y:.*]] = arith.divui %[[T]], %[[C12]] : index

// PTX-LABEL: .visible .entry heads_k0(
// PTX: setp.eq.u32 %[[P0:p[0-9]+]], %{{r[0-9]+}}, 0;
// PTX-NEXT: bar.sync 0;
// PTX-NEXT: @%[[P0]] fence.acq_rel.gpu;
// PTX-NEXT: @%[[P0]] red.release.gpu.global.add.u32 [%{{rd[0-9]+}}], 1;
// PTX-LABEL: .visible .entry heads_k1(
// PTX: ld.acquire.gpu.global.u32 %[[SEEN:r[0-9]+]], [%{{rd[0-9]+}}];
// PTX-NEXT: setp.lt.u32 %{{p[0-9]+}}, %[[SEEN]], 3;
// PTX-LABEL: .visible .entry heads_k2(
// PTX: ld.acquire.gpu.global.u32 %[[SEEN2:r[0-9]+]], [%{{rd[0-9]+}}];
// PTX-NEXT: setp.lt.u32 %{{p[0-9]+}}, %[[SEEN2]], 3;

func.func @heads(%x: tensor<64x32xf32>, %wqkv: tensor<32x192xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>) {
  %xqkv = graph.dot %x, %wqkv : (tensor<64x32xf32>, tensor<32x192xf32>) -> tensor<64x192xf32>
  %q0 = graph.slice %xqkv start [0, 0] limit [64, 32] strides [1, 1] : (tensor<64x192xf32>) -> tensor<64x32xf32>
  %k0 = graph.slice %xqkv start [0, 64] limit [64, 96] strides [1, 1] : (tensor<64x192xf32>) -> tensor<64x32xf32>
  %v0 = graph.slice %xqkv start [0, 128] limit [64, 160] strides [1, 1] : (tensor<64x192xf32>) -> tensor<64x32xf32>
  %kt0 = graph.transpose %k0 perm [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %p0 = graph.dot %q0, %kt0 : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  %m0 = graph.reduce max %p0 dims [1] : (tensor<64x64xf32>) -> tensor<64xf32>
  %mb0 = graph.broadcast %m0 dims [0] : (tensor<64xf32>) -> tensor<64x64xf32>
  %d0 = graph.sub %p0, %mb0 : tensor<64x64xf32>
  %e0 = graph.exp %d0 : tensor<64x64xf32>
  %s0 = graph.reduce sum %e0 dims [1] : (tensor<64x64xf32>) -> tensor<64xf32>
  %sb0 = graph.broadcast %s0 dims [0] : (tensor<64xf32>) -> tensor<64x64xf32>
  %r0 = graph.div %e0, %sb0 : tensor<64x64xf32>
  %t0 = graph.dot %r0, %v0 : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %q1 = graph.slice %xqkv start [0, 32] limit [64, 64] strides [1, 1] : (tensor<64x192xf32>) -> tensor<64x32xf32>
  %k1 = graph.slice %xqkv start [0, 96] limit [64, 128] strides [1, 1] : (tensor<64x192xf32>) -> tensor<64x32xf32>
  %v1 = graph.slice %xqkv start [0, 160] limit [64, 192] strides [1, 1] : (tensor<64x192xf32>) -> tensor<64x32xf32>
  %kt1 = graph.transpose %k1 perm [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %p1 = graph.dot %q1, %kt1 : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  %m1 = graph.reduce max %p1 dims [1] : (tensor<64x64xf32>) -> tensor<64xf32>
  %mb1 = graph.broadcast %m1 dims [0] : (tensor<64xf32>) -> tensor<64x64xf32>
  %d1 = graph.sub %p1, %mb1 : tensor<64x64xf32>
  %e1 = graph.exp %d1 : tensor<64x64xf32>
  %s1 = graph.reduce sum %e1 dims [1] : (tensor<64x64xf32>) -> tensor<64xf32>
  %sb1 = graph.broadcast %s1 dims [0] : (tensor<64xf32>) -> tensor<64x64xf32>
  %r1 = graph.div %e1, %sb1 : tensor<64x64xf32>
  %t1 = graph.dot %r1, %v1 : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  func.return %t0, %t1 : tensor<64x32xf32>, tensor<64x32xf32>
}
