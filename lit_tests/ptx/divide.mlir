// RUN: fs-opt %s -t ptx | filecheck %s

// Unsigned division and remainder by a constant are shifts, masks and multiplies
// (ptxas would call its 64-bit division routine for div.u64 even by an immediate);
// by a register, or on 8-bit integers, they stay div / rem.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry by_constants(
    gpu.func @by_constants(%x: memref<?xi64>, %n: index) kernel {
      %i = gpu.thread_id x
      %c32 = arith.constant 32 : index
      %c12 = arith.constant 12 : index
      %c7 = arith.constant 7 : index
      // CHECK: shr.u64 %{{rd[0-9]+}}, %[[I:rd[0-9]+]], 5;
      %0 = arith.divui %i, %c32 : index
      // CHECK: and.b64 %{{rd[0-9]+}}, %[[I]], 31;
      %1 = arith.remui %i, %c32 : index
      // a multiplier that fits 64 bits: 12 = 4 x 3, mulhi(n, ceil(2^67 / 12)) >> 3
      // CHECK: mul.hi.u64 %[[T:rd[0-9]+]], %[[I]], 0xaaaaaaaaaaaaaaab;
      // CHECK-NEXT: shr.u64 %{{rd[0-9]+}}, %[[T]], 3;
      %2 = arith.divui %i, %c12 : index
      // 7 needs 65 bits: (t + ((n - t) >> 1)) >> 2; the remainder is n - 7q
      // CHECK: mul.hi.u64 %[[T7:rd[0-9]+]], %[[I]], 0x2492492492492493;
      // CHECK-NEXT: sub.u64 %[[X:rd[0-9]+]], %[[I]], %[[T7]];
      // CHECK-NEXT: shr.u64 %[[X]], %[[X]], 1;
      // CHECK-NEXT: add.u64 %[[X]], %[[X]], %[[T7]];
      // CHECK-NEXT: shr.u64 %[[Q:rd[0-9]+]], %[[X]], 2;
      // CHECK-NEXT: mul.lo.u64 %[[P:rd[0-9]+]], %[[Q]], 7;
      // CHECK-NEXT: sub.u64 %{{rd[0-9]+}}, %[[I]], %[[P]];
      %3 = arith.remui %i, %c7 : index
      // CHECK: div.u64 %{{rd[0-9]+}}, %[[I]], %{{rd[0-9]+}};
      %4 = arith.divui %i, %n : index
      // CHECK-NOT: div.
      // CHECK-NOT: rem.
      %s0 = arith.addi %0, %1 : index
      %s1 = arith.addi %s0, %2 : index
      %s2 = arith.addi %s1, %3 : index
      %s3 = arith.addi %s2, %4 : index
      %v = arith.index_cast %s3 : index to i64
      memref.store %v, %x[%i] : memref<?xi64>
      gpu.return
    }

    // CHECK-LABEL: .visible .entry narrow(
    gpu.func @narrow(%x: memref<?xi32>, %y: memref<?xi8>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<?xi32>
      %b = memref.load %y[%i] : memref<?xi8>
      %c10 = arith.constant 10 : i32
      %c3 = arith.constant 3 : i8
      // CHECK: mul.hi.u32 %[[T:r[0-9]+]], %{{r[0-9]+}}, 0xcccccccd;
      // CHECK-NEXT: shr.u32 %{{r[0-9]+}}, %[[T]], 3;
      %q = arith.divui %a, %c10 : i32
      // CHECK: rem.u16
      %r = arith.remui %b, %c3 : i8
      memref.store %q, %x[%i] : memref<?xi32>
      memref.store %r, %y[%i] : memref<?xi8>
      gpu.return
    }

    // Signed division by a positive constant truncates: by 7 a signed multiply-high by
    // the negative magic 0x92492493, n added back, an arithmetic shift and n's sign bit
    // added; by 8, d - 1 added to a negative n before the arithmetic shift. floordivsi
    // adjusts the quotient from the remainder n - 7q; a negative divisor keeps div.
    // CHECK-LABEL: .visible .entry signed(
    gpu.func @signed(%x: memref<?xi32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<?xi32>
      %c7 = arith.constant 7 : i32
      %c8 = arith.constant 8 : i32
      %cm3 = arith.constant -3 : i32
      // CHECK: mul.hi.s32 %[[T:r[0-9]+]], %[[A:r[0-9]+]], -1840700269;
      // CHECK-NEXT: add.s32 %[[T]], %[[T]], %[[A]];
      // CHECK-NEXT: shr.s32 %[[T]], %[[T]], 2;
      // CHECK-NEXT: shr.u32 %[[S:r[0-9]+]], %[[A]], 31;
      // CHECK-NEXT: add.s32 %{{r[0-9]+}}, %[[T]], %[[S]];
      %q = arith.divsi %a, %c7 : i32
      // CHECK: shr.s32 %[[U:r[0-9]+]], %[[A]], 31;
      // CHECK-NEXT: shr.u32 %[[U]], %[[U]], 29;
      // CHECK-NEXT: add.s32 %[[U]], %[[A]], %[[U]];
      // CHECK-NEXT: shr.s32 %{{r[0-9]+}}, %[[U]], 3;
      %h = arith.divsi %a, %c8 : i32
      // CHECK: mul.hi.s32
      // CHECK: mul.lo.s32 %[[P:r[0-9]+]], %[[Q:r[0-9]+]], 7;
      // CHECK-NEXT: sub.s32 %[[R:r[0-9]+]], %[[A]], %[[P]];
      // CHECK-NEXT: setp.ne.s32 %{{p[0-9]+}}, %[[R]], 0;
      %f = arith.floordivsi %a, %c7 : i32
      // CHECK: div.s32 %{{r[0-9]+}}, %[[A]], -3;
      %n = arith.divsi %a, %cm3 : i32
      %s0 = arith.addi %q, %h : i32
      %s1 = arith.addi %s0, %f : i32
      %s2 = arith.addi %s1, %n : i32
      memref.store %s2, %x[%i] : memref<?xi32>
      gpu.return
    }
  }
}
