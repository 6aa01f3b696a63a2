// RUN: fs-opt %s -t ptx | filecheck %s

// One warp per row: each lane sums a strided slice of the row, then a butterfly
// reduction with gpu.shuffle xor; lane 0 writes the row sum.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry warp_sum(
    // CHECK: .maxntid 32, 1, 1
    gpu.func @warp_sum(%x: memref<?xf32>, %out: memref<?xf32>, %cols: index) kernel attributes {gpu.known_block_size = array<i32: 32, 1, 1>} {
      %row = gpu.block_id x
      %lane = gpu.lane_id
      // CHECK: mov.u32 %{{r[0-9]+}}, %laneid;
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0.0 : f32
      %base = arith.muli %row, %cols : index
      %acc = scf.for %j = %lane to %cols step %c32 iter_args(%a = %zero) -> (f32) {
        %idx = arith.addi %base, %j : index
        %v = memref.load %x[%idx] : memref<?xf32>
        %s = arith.addf %a, %v : f32
        scf.yield %s : f32
      }
      %w = arith.constant 32 : i32
      %o16 = arith.constant 16 : i32
      %o8 = arith.constant 8 : i32
      %o4 = arith.constant 4 : i32
      %o2 = arith.constant 2 : i32
      %o1 = arith.constant 1 : i32
      // CHECK: shfl.sync.bfly.b32 %[[S16:f[0-9]+]], %[[ACC:f[0-9]+]], 16, 31, -1;
      // CHECK-NEXT: add.rn.f32 %[[A16:f[0-9]+]], %[[ACC]], %[[S16]];
      // CHECK-NEXT: shfl.sync.bfly.b32 %[[S8:f[0-9]+]], %[[A16]], 8, 31, -1;
      // CHECK: shfl.sync.bfly.b32 %{{f[0-9]+}}, %{{f[0-9]+}}, 4, 31, -1;
      // CHECK: shfl.sync.bfly.b32 %{{f[0-9]+}}, %{{f[0-9]+}}, 2, 31, -1;
      // CHECK: shfl.sync.bfly.b32 %{{f[0-9]+}}, %{{f[0-9]+}}, 1, 31, -1;
      %r16, %v16 = gpu.shuffle xor %acc, %o16, %w : f32
      %a16 = arith.addf %acc, %r16 : f32
      %r8, %v8 = gpu.shuffle xor %a16, %o8, %w : f32
      %a8 = arith.addf %a16, %r8 : f32
      %r4, %v4 = gpu.shuffle xor %a8, %o4, %w : f32
      %a4 = arith.addf %a8, %r4 : f32
      %r2, %v2 = gpu.shuffle xor %a4, %o2, %w : f32
      %a2 = arith.addf %a4, %r2 : f32
      %r1, %v1 = gpu.shuffle xor %a2, %o1, %w : f32
      %a1 = arith.addf %a2, %r1 : f32
      %first = arith.cmpi eq, %lane, %c0 : index
      scf.if %first {
        memref.store %a1, %out[%row] : memref<?xf32>
      }
      gpu.return
    }

    // gpu.subgroup_reduce: a butterfly over the warp or over clusters of lanes.
    // CHECK-LABEL: .visible .entry reduce_ops(
    // CHECK: shfl.sync.bfly.b32 %[[O:f[0-9]+]], %[[V:f[0-9]+]], 16, 31, -1;
    // CHECK-NEXT: add.rn.f32 %{{f[0-9]+}}, %[[V]], %[[O]];
    // CHECK-COUNT-4: shfl.sync.bfly.b32
    // CHECK: shfl.sync.bfly.b32 %{{f[0-9]+}}, %[[V]], 4, 31, -1;
    // CHECK-NEXT: max.NaN.f32
    // CHECK: shfl.sync.bfly.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 2, 31, -1;
    // CHECK-NEXT: min.u32
    gpu.func @reduce_ops(%x: memref<?xf32>, %k: memref<?xi32>, %out: memref<?xf32>, %kout: memref<?xi32>) kernel {
      %lane = gpu.lane_id
      %v = memref.load %x[%lane] : memref<?xf32>
      %s = gpu.subgroup_reduce add %v : (f32) -> f32
      %m = gpu.subgroup_reduce maximumf %v uniform cluster(size = 8) : (f32) -> f32
      %i = memref.load %k[%lane] : memref<?xi32>
      %j = gpu.subgroup_reduce minui %i cluster(size = 4) : (i32) -> i32
      %c32 = arith.constant 32 : index
      %l2 = arith.addi %lane, %c32 : index
      memref.store %s, %out[%lane] : memref<?xf32>
      memref.store %m, %out[%l2] : memref<?xf32>
      memref.store %j, %kout[%lane] : memref<?xi32>
      gpu.return
    }

    // The other modes, a 16-lane segment width, the valid predicate, and i32 values.
    // CHECK-LABEL: .visible .entry modes(
    gpu.func @modes(%x: memref<?xi32>, %w: i32) kernel {
      %lane = gpu.lane_id
      %v = memref.load %x[%lane] : memref<?xi32>
      %c1 = arith.constant 1 : i32
      %c16 = arith.constant 16 : i32
      // CHECK: shfl.sync.up.b32 %{{r[0-9]+}}|%[[VALID:p[0-9]+]], %{{r[0-9]+}}, 1, 4096, -1;
      %u, %uv = gpu.shuffle up %v, %c1, %c16 : i32
      %u2 = arith.select %uv, %u, %v : i32
      // CHECK: shfl.sync.down.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 1, 4127, -1;
      %d, %dv = gpu.shuffle down %u2, %c1, %c16 : i32
      // dynamic width: the clamp operand is computed
      // CHECK: sub.s32 %[[T1:r[0-9]+]], 32, %[[W:r[0-9]+]];
      // CHECK-NEXT: shl.b32 %[[T2:r[0-9]+]], %[[T1]], 8;
      // CHECK-NEXT: or.b32 %[[C:r[0-9]+]], %[[T2]], 31;
      // CHECK-NEXT: shfl.sync.idx.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 1, %[[C]], -1;
      %i, %iv = gpu.shuffle idx %d, %c1, %w : i32
      memref.store %i, %x[%lane] : memref<?xi32>
      gpu.return
    }
  }
}
