// RUN: fs-opt %s -t ptx | filecheck %s

// CHECK: .extern .shared .align 16 .b8 __fsir_dynamic_smem[];

// One block of 256 threads per row: warp shuffles, one partial per warp in shared
// memory, a barrier, then warp 0 reduces the 8 partials.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry block_sum(
    // CHECK: .shared .align 16 .b8 block_sum_smem0[32];
    gpu.func @block_sum(%x: memref<?xf32>, %out: memref<?xf32>, %cols: index) workgroup(%part : memref<8xf32, 3>) kernel attributes {gpu.known_block_size = array<i32: 256, 1, 1>} {
      // CHECK: mov.u64 %[[SMEM:rd[0-9]+]], block_sum_smem0;
      %row = gpu.block_id x
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %c8 = arith.constant 8 : index
      %c256 = arith.constant 256 : index
      %zero = arith.constant 0.0 : f32
      %base = arith.muli %row, %cols : index
      %acc = scf.for %j = %tid to %cols step %c256 iter_args(%a = %zero) -> (f32) {
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
      %lane = arith.remui %tid, %c32 : index
      %warp = arith.divui %tid, %c32 : index
      %lane0 = arith.cmpi eq, %lane, %c0 : index
      scf.if %lane0 {
        // CHECK: st.shared.f32 [%{{rd[0-9]+}}], %{{f[0-9]+}};
        memref.store %a1, %part[%warp] : memref<8xf32, 3>
      }
      // CHECK: bar.sync 0;
      gpu.barrier
      %warp0 = arith.cmpi eq, %warp, %c0 : index
      scf.if %warp0 {
        %inrange = arith.cmpi ult, %lane, %c8 : index
        %p = scf.if %inrange -> (f32) {
          // CHECK: ld.shared.f32
          %pv = memref.load %part[%lane] : memref<8xf32, 3>
          scf.yield %pv : f32
        } else {
          scf.yield %zero : f32
        }
        %q4, %qv4 = gpu.shuffle xor %p, %o4, %w : f32
        %b4 = arith.addf %p, %q4 : f32
        %q2, %qv2 = gpu.shuffle xor %b4, %o2, %w : f32
        %b2 = arith.addf %b4, %q2 : f32
        %q1, %qv1 = gpu.shuffle xor %b2, %o1, %w : f32
        %b1 = arith.addf %b2, %q1 : f32
        scf.if %lane0 {
          memref.store %b1, %out[%row] : memref<?xf32>
        }
      }
      gpu.return
    }

    // Dynamic shared memory carved with memref.view.
    // CHECK-LABEL: .visible .entry dyn_smem(
    // CHECK: mov.u64 %[[D:rd[0-9]+]], __fsir_dynamic_smem;
    // CHECK: add.s64 %[[V:rd[0-9]+]], %[[D]], 1024;
    // CHECK: st.shared.f32 [%{{rd[0-9]+}}],
    // CHECK: bar.sync 0;
    // CHECK: ld.shared.f32
    gpu.func @dyn_smem(%x: memref<?xf32>) kernel {
      %dyn = gpu.dynamic_shared_memory : memref<?xi8, 3>
      %off = arith.constant 1024 : index
      %buf = memref.view %dyn[%off][] : memref<?xi8, 3> to memref<256xf32, 3>
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<?xf32>
      memref.store %v, %buf[%t] : memref<256xf32, 3>
      gpu.barrier
      %c255 = arith.constant 255 : index
      %r = arith.subi %c255, %t : index
      %w = memref.load %buf[%r] : memref<256xf32, 3>
      memref.store %w, %x[%t] : memref<?xf32>
      gpu.return
    }
  }
}
