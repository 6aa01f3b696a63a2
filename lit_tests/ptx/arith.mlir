// RUN: fs-opt %s -t ptx | filecheck %s

// Every arith op the printer supports, on the integer and float types it supports.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry ints32(
    gpu.func @ints32(%x: memref<?xi32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<?xi32>
      %c3 = arith.constant 3 : i32
      %m1 = arith.constant -1 : i32
      // CHECK: mov.s32 %{{r[0-9]+}}, -1;
      // CHECK: add.s32
      // CHECK: sub.s32
      // CHECK: mul.lo.s32
      // (divisions by a constant are multiplies: lit_tests/ptx/divide.mlir)
      // CHECK: mul.hi.s32
      // CHECK: mul.hi.u32
      // CHECK: mul.hi.s32
      // CHECK: mul.hi.u32
      %0 = arith.addi %a, %c3 : i32
      %1 = arith.subi %0, %m1 : i32
      %2 = arith.muli %1, %a : i32
      %3 = arith.divsi %2, %c3 : i32
      %4 = arith.divui %3, %c3 : i32
      %5 = arith.remsi %4, %c3 : i32
      %6 = arith.remui %5, %c3 : i32
      // CHECK: max.s32
      // CHECK: min.s32
      // CHECK: max.u32
      // CHECK: min.u32
      // CHECK: and.b32
      // CHECK: or.b32
      // CHECK: xor.b32
      // CHECK: shl.b32
      // CHECK: shr.s32
      // CHECK: shr.u32
      %7 = arith.maxsi %6, %a : i32
      %8 = arith.minsi %7, %a : i32
      %9 = arith.maxui %8, %a : i32
      %10 = arith.minui %9, %a : i32
      %11 = arith.andi %10, %a : i32
      %12 = arith.ori %11, %a : i32
      %13 = arith.xori %12, %a : i32
      %14 = arith.shli %13, %c3 : i32
      %15 = arith.shrsi %14, %c3 : i32
      %16 = arith.shrui %15, %c3 : i32
      // floordivsi: q - 1 when the remainder is nonzero and of the other sign (by a
      // constant: the truncated q by a multiply-high, r = n - 3q)
      // CHECK: mul.hi.s32 %[[T:r[0-9]+]], %[[N:r[0-9]+]], 1431655766;
      // CHECK-NEXT: shr.u32 %[[S:r[0-9]+]], %[[N]], 31;
      // CHECK-NEXT: add.s32 %[[Q:r[0-9]+]], %[[T]], %[[S]];
      // CHECK-NEXT: mul.lo.s32 %[[P:r[0-9]+]], %[[Q]], 3;
      // CHECK-NEXT: sub.s32 %[[R:r[0-9]+]], %[[N]], %[[P]];
      // CHECK-NEXT: setp.ne.s32 %[[NZ:p[0-9]+]], %[[R]], 0;
      // CHECK-NEXT: xor.b32
      // CHECK-NEXT: setp.lt.s32
      // CHECK-NEXT: and.pred
      // CHECK-NEXT: selp.s32 %[[ADJ:r[0-9]+]], -1, 0,
      // CHECK-NEXT: add.s32 %{{r[0-9]+}}, %[[Q]], %[[ADJ]];
      %17 = arith.floordivsi %16, %c3 : i32
      %18 = arith.ceildivsi %17, %c3 : i32
      %19 = arith.ceildivui %18, %c3 : i32
      // CHECK: setp.lt.s32
      // CHECK: setp.ge.u32
      %p = arith.cmpi slt, %19, %a : i32
      %q = arith.cmpi uge, %19, %a : i32
      %pq = arith.ori %p, %q : i1
      // CHECK: or.pred
      // CHECK: selp.b32
      %20 = arith.select %pq, %19, %a : i32
      memref.store %20, %x[%i] : memref<?xi32>
      gpu.return
    }

    // CHECK-LABEL: .visible .entry ints_other(
    gpu.func @ints_other(%x: memref<?xi64>, %y: memref<?xi16>, %z: memref<?xi8>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<?xi64>
      %b = memref.load %y[%i] : memref<?xi16>
      %c = memref.load %z[%i] : memref<?xi8>
      // 64-bit shifts take a 32-bit amount
      // CHECK: cvt.u32.u64 %[[AMT:r[0-9]+]],
      // CHECK-NEXT: shl.b64 %{{rd[0-9]+}}, %{{rd[0-9]+}}, %[[AMT]];
      %s = arith.shli %a, %a : i64
      // CHECK: mul.lo.s16
      %m = arith.muli %b, %b : i16
      // unsigned i8 ops see the zero-extended value
      // CHECK: and.b16 %[[Z1:rs[0-9]+]], %{{rs[0-9]+}}, 255;
      // CHECK-NEXT: and.b16 %[[Z2:rs[0-9]+]], %{{rs[0-9]+}}, 255;
      // CHECK-NEXT: div.u16 %[[D:rs[0-9]+]], %[[Z1]], %[[Z2]];
      // CHECK-NEXT: cvt.s16.s8 %[[D]], %[[D]];
      %d = arith.divui %c, %c : i8
      // CHECK: setp.lt.u16
      %lt = arith.cmpi ult, %c, %d : i8
      // extensions and truncations between all widths
      // CHECK: cvt.s64.s16
      %e1 = arith.extsi %b : i16 to i64
      // CHECK: cvt.u64.u16
      %e2 = arith.extui %b : i16 to i64
      // CHECK: cvt.u16.u64
      %t1 = arith.trunci %a : i64 to i8
      // CHECK: selp.s64 %{{rd[0-9]+}}, -1, 0,
      %e3 = arith.extsi %lt : i1 to i64
      // CHECK: selp.s64 %{{rd[0-9]+}}, 1, 0,
      %e4 = arith.extui %lt : i1 to i64
      // CHECK: and.b64
      // CHECK-NEXT: setp.ne.b64
      %t2 = arith.trunci %a : i64 to i1
      %ix = arith.index_cast %b : i16 to index
      %back = arith.index_cast %ix : index to i32
      %r0 = arith.addi %s, %e1 : i64
      %r1 = arith.addi %r0, %e2 : i64
      %r2 = arith.addi %r1, %e3 : i64
      %r3 = arith.addi %r2, %e4 : i64
      %r4 = arith.select %t2, %r3, %a : i64
      memref.store %r4, %x[%i] : memref<?xi64>
      memref.store %m, %y[%i] : memref<?xi16>
      %t3 = arith.addi %t1, %d : i8
      memref.store %t3, %z[%i] : memref<?xi8>
      %bx = arith.extsi %back : i32 to i64
      memref.store %bx, %x[%ix] : memref<?xi64>
      gpu.return
    }

    // CHECK-LABEL: .visible .entry floats(
    gpu.func @floats(%x: memref<?xf32>, %d: memref<?xf64>, %k: memref<?xi32>) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<?xf32>
      %b = memref.load %d[%i] : memref<?xf64>
      // CHECK: sub.rn.f32
      // CHECK: div.rn.f32
      // CHECK: neg.f32
      // CHECK: min.NaN.f32
      // CHECK: max.f32
      // CHECK: min.f32
      %0 = arith.subf %a, %a : f32
      %1 = arith.divf %0, %a : f32
      %2 = arith.negf %1 : f32
      %3 = arith.minimumf %2, %a : f32
      %4 = arith.maxnumf %3, %a : f32
      %5 = arith.minnumf %4, %a : f32
      // every cmpf predicate
      // CHECK: setp.eq.f32
      // CHECK: setp.gt.f32
      // CHECK: setp.ge.f32
      // CHECK: setp.lt.f32
      // CHECK: setp.le.f32
      // CHECK: setp.ne.f32
      // CHECK: setp.num.f32
      // CHECK: setp.equ.f32
      // CHECK: setp.gtu.f32
      // CHECK: setp.geu.f32
      // CHECK: setp.ltu.f32
      // CHECK: setp.leu.f32
      // CHECK: setp.neu.f32
      // CHECK: setp.nan.f32
      // CHECK: setp.ne.s32 %{{p[0-9]+}}, 0, 0;
      // CHECK: setp.eq.s32 %{{p[0-9]+}}, 0, 0;
      %p0 = arith.cmpf oeq, %5, %a : f32
      %p1 = arith.cmpf ogt, %5, %a : f32
      %p2 = arith.cmpf oge, %5, %a : f32
      %p3 = arith.cmpf olt, %5, %a : f32
      %p4 = arith.cmpf ole, %5, %a : f32
      %p5 = arith.cmpf one, %5, %a : f32
      %p6 = arith.cmpf ord, %5, %a : f32
      %p7 = arith.cmpf ueq, %5, %a : f32
      %p8 = arith.cmpf ugt, %5, %a : f32
      %p9 = arith.cmpf uge, %5, %a : f32
      %p10 = arith.cmpf ult, %5, %a : f32
      %p11 = arith.cmpf ule, %5, %a : f32
      %p12 = arith.cmpf une, %5, %a : f32
      %p13 = arith.cmpf uno, %5, %a : f32
      %p14 = arith.cmpf false, %5, %a : f32
      %p15 = arith.cmpf true, %5, %a : f32
      %q0 = arith.andi %p0, %p1 : i1
      %q1 = arith.ori %q0, %p2 : i1
      %q2 = arith.xori %q1, %p3 : i1
      %q3 = arith.andi %q2, %p4 : i1
      %q4 = arith.ori %q3, %p5 : i1
      %q5 = arith.xori %q4, %p6 : i1
      %q6 = arith.andi %q5, %p7 : i1
      %q7 = arith.ori %q6, %p8 : i1
      %q8 = arith.xori %q7, %p9 : i1
      %q9 = arith.andi %q8, %p10 : i1
      %q10 = arith.ori %q9, %p11 : i1
      %q11 = arith.xori %q10, %p12 : i1
      %q12 = arith.andi %q11, %p13 : i1
      %q13 = arith.ori %q12, %p14 : i1
      %q14 = arith.andi %q13, %p15 : i1
      // CHECK: @%[[C:p[0-9]+]] mov.pred %[[S:p[0-9]+]],
      // CHECK-NEXT: @!%[[C]] mov.pred %[[S]],
      %q15 = arith.select %q14, %p0, %p1 : i1
      %6 = arith.select %q15, %5, %a : f32
      // conversions
      // CHECK: cvt.rzi.s32.f32
      // CHECK: cvt.rzi.u32.f32
      // CHECK: cvt.rn.f32.s32
      // CHECK: cvt.rn.f32.u32
      // CHECK: mov.b32 %{{r[0-9]+}}, %{{f[0-9]+}};
      // CHECK: mov.b32 %{{f[0-9]+}}, %{{r[0-9]+}};
      %7 = arith.fptosi %6 : f32 to i32
      %8 = arith.fptoui %6 : f32 to i32
      %9 = arith.sitofp %7 : i32 to f32
      %10 = arith.uitofp %8 : i32 to f32
      %11 = arith.bitcast %10 : f32 to i32
      %12 = arith.bitcast %11 : i32 to f32
      memref.store %12, %x[%i] : memref<?xf32>
      // f64
      // CHECK: cvt.f64.f32
      // CHECK: add.rn.f64
      // CHECK: max.f64
      // CHECK-NEXT: add.rn.f64
      // CHECK-NEXT: setp.nan.f64
      // CHECK-NEXT: selp.f64
      // CHECK: cvt.rn.f32.f64
      %13 = arith.extf %12 : f32 to f64
      %14 = arith.addf %13, %b : f64
      %15 = arith.maximumf %14, %b : f64
      %16 = arith.truncf %15 : f64 to f32
      %c1 = arith.constant 1.5 : f64
      // CHECK: mov.f64 %{{fd[0-9]+}}, 0d3FF8000000000000;
      %17 = arith.mulf %15, %c1 : f64
      memref.store %17, %d[%i] : memref<?xf64>
      memref.store %16, %x[%i] : memref<?xf32>
      memref.store %11, %k[%i] : memref<?xi32>
      gpu.return
    }
  }
}
