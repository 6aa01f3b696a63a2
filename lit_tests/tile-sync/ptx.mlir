// The PTX of tile synchronisation (cuSync's CuStage): a tile from a global atomic counter
// passed to the block through shared memory; `post` = barrier, then one thread's GPU-scope
// fence and release reduction; `wait` = one thread spinning on an acquire load, then a
// barrier. The printed module assembles with ptxas for sm_80 and sm_90 (tests/ptx).
// RUN: fs-opt %s -t ptx | filecheck %s

// CHECK-LABEL: .visible .entry stage(
// CHECK: .shared .align 4 .b32 stage_tile{{[0-9]+}}[1];
// CHECK: mad.lo.u32 %[[T1:r[0-9]+]], %{{r[0-9]+}}, %{{r[0-9]+}}, %{{r[0-9]+}};
// CHECK-NEXT: mad.lo.u32 %[[TID:r[0-9]+]], %[[T1]], %{{r[0-9]+}}, %{{r[0-9]+}};
// CHECK-NEXT: setp.eq.u32 %[[FIRST:p[0-9]+]], %[[TID]], 0;
// CHECK-NEXT: mov.u64 %[[SLOT:rd[0-9]+]], stage_tile{{[0-9]+}};
// CHECK-NEXT: @%[[FIRST]] atom.global.add.u32 %[[TAKEN:r[0-9]+]], [%[[COUNTER:rd[0-9]+]]], 1;
// CHECK-NEXT: @%[[FIRST]] st.shared.u32 [%[[SLOT]]], %[[TAKEN]];
// CHECK-NEXT: bar.sync 0;
// CHECK-NEXT: ld.shared.u32 %[[TILE:r[0-9]+]], [%[[SLOT]]];

// The wait: thread 0 spins, the block waits at the barrier.
// CHECK: setp.eq.u32 %[[W0:p[0-9]+]], %{{r[0-9]+}}, 0;
// CHECK-NEXT: @!%[[W0]] bra $[[DONE:L__stage_[0-9]+]];
// CHECK-NEXT: $[[SPIN:L__stage_[0-9]+]]:
// CHECK-NEXT: ld.acquire.gpu.global.u32 %[[SEEN:r[0-9]+]], [%[[SEM:rd[0-9]+]]];
// CHECK-NEXT: setp.lt.u32 %[[WAITING:p[0-9]+]], %[[SEEN]], 2;
// CHECK-NEXT: @%[[WAITING]] bra $[[SPIN]];
// CHECK-NEXT: $[[DONE]]:
// CHECK-NEXT: bar.sync 0;

// The post: every thread's stores precede the barrier; thread 0 releases them.
// CHECK: st.global.f32
// CHECK: setp.eq.u32 %[[P0:p[0-9]+]], %{{r[0-9]+}}, 0;
// CHECK-NEXT: bar.sync 0;
// CHECK-NEXT: @%[[P0]] fence.acq_rel.gpu;
// CHECK-NEXT: @%[[P0]] red.release.gpu.global.add.u32 [%{{rd[0-9]+}}], 1;
// CHECK-NEXT: ret;

// The wait-kernel: one thread, one wait.
// CHECK-LABEL: .visible .entry stage_wait(
// CHECK: .maxntid 1, 1, 1
// CHECK: ld.acquire.gpu.global.u32
// CHECK: bar.sync 0;
// CHECK-NEXT: ret;

// A kernel with shared arrays takes the ticket through the first one's first word (tiles
// filling the 48 KB of static shared memory leave no room for a word of its own); a
// second barrier keeps the array's first writes after every thread has read it.
// CHECK-LABEL: .visible .entry staged(
// CHECK: .shared .align 16 .b8 [[TILES:staged_smem[0-9]+]][49152];
// CHECK-NOT: .b32 staged_tile
// CHECK: setp.eq.u32 %[[FIRST2:p[0-9]+]], %{{r[0-9]+}}, 0;
// CHECK-NEXT: mov.u64 %[[SLOT2:rd[0-9]+]], [[TILES]];
// CHECK-NEXT: @%[[FIRST2]] atom.global.add.u32 %[[TAKEN2:r[0-9]+]], [%{{rd[0-9]+}}], 1;
// CHECK-NEXT: @%[[FIRST2]] st.shared.u32 [%[[SLOT2]]], %[[TAKEN2]];
// CHECK-NEXT: bar.sync 0;
// CHECK-NEXT: ld.shared.u32 %{{r[0-9]+}}, [%[[SLOT2]]];
// CHECK-NEXT: bar.sync 0;
// CHECK: st.shared.f32

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @stage(%x: memref<?xf32>, %y: memref<?xf32>, %counter: memref<?xi32>, %sems_in: memref<?xi32>, %sems_out: memref<?xi32>) kernel attributes {gpu.known_block_size = array<i32: 64, 1, 1>} {
      %t = gpu.next_tile %counter : memref<?xi32>
      %ready = arith.constant 2 : i32
      gpu.sem_wait %sems_in[%t], %ready : memref<?xi32>
      %tid = gpu.thread_id x
      %c64 = arith.constant 64 : index
      %base = arith.muli %t, %c64 : index
      %i = arith.addi %base, %tid : index
      %v = memref.load %x[%i] : memref<?xf32>
      memref.store %v, %y[%i] : memref<?xf32>
      %one = arith.constant 1 : i32
      gpu.sem_post %sems_out[%t], %one : memref<?xi32>
      gpu.return
    }
    gpu.func @stage_wait(%starts: memref<?xi32>) kernel attributes {gpu.known_block_size = array<i32: 1, 1, 1>} {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1 : i32
      gpu.sem_wait %starts[%c0], %one : memref<?xi32>
      gpu.return
    }
    gpu.func @staged(%x: memref<?xf32>, %counter: memref<?xi32>) workgroup(%tiles : memref<12288xf32, 3>) kernel attributes {gpu.known_block_size = array<i32: 64, 1, 1>} {
      %t = gpu.next_tile %counter : memref<?xi32>
      %tid = gpu.thread_id x
      %c64 = arith.constant 64 : index
      %base = arith.muli %t, %c64 : index
      %i = arith.addi %base, %tid : index
      %v = memref.load %x[%i] : memref<?xf32>
      memref.store %v, %tiles[%tid] : memref<12288xf32, 3>
      gpu.return
    }
  }
}
