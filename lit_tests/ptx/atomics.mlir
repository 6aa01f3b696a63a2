// RUN: fs-opt %s -t ptx | filecheck %s

// memref.atomic_rmw (generic syntax in xDSL; `kind` is MLIR's AtomicRMWKind number:
// 0 addf, 1 addi, 2 assign, 4 maxs, 5 maxu, 7 mins, 8 minu, 11 ori, 12 andi).
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Column sums: every thread adds its element into out[col].
    // CHECK-LABEL: .visible .entry col_sum(
    gpu.func @col_sum(%x: memref<?x64xf32>, %out: memref<64xf32>, %hist: memref<16xi32>) workgroup(%s : memref<1xi32, 3>) kernel {
      %r = gpu.block_id x
      %c = gpu.thread_id x
      %v = memref.load %x[%r, %c] : memref<?x64xf32>
      // CHECK: atom.global.add.f32 %{{f[0-9]+}}, [%{{rd[0-9]+}}], %{{f[0-9]+}};
      %old = "memref.atomic_rmw"(%v, %out, %c) <{kind = 0 : i64}> : (f32, memref<64xf32>, index) -> f32
      %one = arith.constant 1 : i32
      %c15 = arith.constant 15 : index
      %b = arith.andi %c, %c15 : index
      // CHECK: atom.global.add.u32 %{{r[0-9]+}}, [%{{rd[0-9]+}}], %{{r[0-9]+}};
      %h = "memref.atomic_rmw"(%one, %hist, %b) <{kind = 1 : i64}> : (i32, memref<16xi32>, index) -> i32
      %c0 = arith.constant 0 : index
      %ci = arith.index_cast %c : index to i32
      // CHECK: atom.shared.max.s32 %{{r[0-9]+}}, [%{{rd[0-9]+}}], %{{r[0-9]+}};
      %m = "memref.atomic_rmw"(%ci, %s, %c0) <{kind = 4 : i64}> : (i32, memref<1xi32, 3>, index) -> i32
      gpu.return
    }
  }
}
