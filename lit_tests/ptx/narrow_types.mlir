// RUN: fs-opt %s -t ptx | filecheck %s

// f16, bf16, i1 and i8 in memory and registers.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry halfs(
    gpu.func @halfs(%h: memref<?xf16>, %b: memref<?xbf16>, %o: memref<?xf32>) kernel {
      %i = gpu.thread_id x
      // CHECK: ld.global.b16 %[[H:rs[0-9]+]],
      // CHECK: ld.global.b16 %[[B:rs[0-9]+]],
      %hv = memref.load %h[%i] : memref<?xf16>
      %bv = memref.load %b[%i] : memref<?xbf16>
      // f16 widens with cvt, bf16 with a 16-bit shift (no cvt.f32.bf16 on sm_80)
      // CHECK: cvt.f32.f16 %[[HF:f[0-9]+]], %[[H]];
      // CHECK: cvt.u32.u16 %[[W:r[0-9]+]], %[[B]];
      // CHECK-NEXT: shl.b32 %[[S:r[0-9]+]], %[[W]], 16;
      // CHECK-NEXT: mov.b32 %[[BF:f[0-9]+]], %[[S]];
      %hf = arith.extf %hv : f16 to f32
      %bf = arith.extf %bv : bf16 to f32
      %s = arith.addf %hf, %bf : f32
      memref.store %s, %o[%i] : memref<?xf32>
      // half arithmetic goes through f32 and rounds back
      // CHECK: st.global.f32
      // CHECK: add.rn.f32 %[[T:f[0-9]+]],
      // CHECK-NEXT: cvt.rn.f16.f32 %[[HS:rs[0-9]+]], %[[T]];
      %hs = arith.addf %hv, %hv : f16
      // CHECK: st.global.b16 [%{{rd[0-9]+}}], %[[HS]];
      memref.store %hs, %h[%i] : memref<?xf16>
      // CHECK: mul.rn.f32 %[[T2:f[0-9]+]],
      // CHECK-NEXT: cvt.rn.bf16.f32 %[[BS:rs[0-9]+]], %[[T2]];
      %bs = arith.mulf %bv, %bv : bf16
      memref.store %bs, %b[%i] : memref<?xbf16>
      %bt = arith.truncf %s : f32 to bf16
      // CHECK: mov.b16 %{{rs[0-9]+}}, 0x3C00;
      // CHECK: mov.b16 %{{rs[0-9]+}}, 0x3F80;
      %one_h = arith.constant 1.0 : f16
      %one_b = arith.constant 1.0 : bf16
      %hn = arith.negf %hv : f16
      // CHECK: xor.b16 %{{rs[0-9]+}}, %[[H]], 0x8000;
      %hm = arith.maximumf %hn, %one_h : f16
      memref.store %hm, %h[%i] : memref<?xf16>
      %bm = arith.minnumf %bt, %one_b : bf16
      memref.store %bm, %b[%i] : memref<?xbf16>
      gpu.return
    }

    // CHECK-LABEL: .visible .entry bools(
    gpu.func @bools(%m: memref<?xi1>, %x: memref<?xf32>, %c: memref<?xi8>) kernel {
      %i = gpu.thread_id x
      // i1 is one byte in memory and a predicate in registers
      // CHECK: ld.global.u8 %[[BYTE:rs[0-9]+]],
      // CHECK-NEXT: setp.ne.s16 %[[P:p[0-9]+]], %[[BYTE]], 0;
      %mv = memref.load %m[%i] : memref<?xi1>
      %v = memref.load %x[%i] : memref<?xf32>
      %zero = arith.constant 0.0 : f32
      %r = arith.select %mv, %v, %zero : f32
      memref.store %r, %x[%i] : memref<?xf32>
      %pos = arith.cmpf ogt, %v, %zero : f32
      %both = arith.andi %pos, %mv : i1
      %not = arith.xori %both, %mv : i1
      // CHECK: selp.u16 %[[OUT:rs[0-9]+]], 1, 0, %{{p[0-9]+}};
      // CHECK-NEXT: st.global.u8 [%{{rd[0-9]+}}], %[[OUT]];
      memref.store %not, %m[%i] : memref<?xi1>
      // i8: sign-extending loads, wrapping arithmetic re-normalised
      // CHECK: ld.global.s8 %[[C:rs[0-9]+]],
      // CHECK: add.s16 %[[CS:rs[0-9]+]], %[[C]], %[[C]];
      // CHECK-NEXT: cvt.s16.s8 %[[CS]], %[[CS]];
      // CHECK: st.global.b8 [%{{rd[0-9]+}}], %[[CS]];
      %cv = memref.load %c[%i] : memref<?xi8>
      %cs = arith.addi %cv, %cv : i8
      memref.store %cs, %c[%i] : memref<?xi8>
      %cw = arith.extui %cv : i8 to i32
      %cf = arith.sitofp %cw : i32 to f32
      memref.store %cf, %x[%i] : memref<?xf32>
      gpu.return
    }

    // CHECK-LABEL: .visible .entry scalars(
    // CHECK-NEXT: .param .u64 scalars_param_0,
    // CHECK-NEXT: .param .f32 scalars_param_1,
    // CHECK-NEXT: .param .b16 scalars_param_2,
    // CHECK-NEXT: .param .b16 scalars_param_3,
    // CHECK-NEXT: .param .u8 scalars_param_4,
    // CHECK-NEXT: .param .s8 scalars_param_5,
    // CHECK-NEXT: .param .b32 scalars_param_6,
    // CHECK-NEXT: .param .b64 scalars_param_7,
    // CHECK-NEXT: .param .u64 scalars_param_8,
    // CHECK-NEXT: .param .f64 scalars_param_9
    gpu.func @scalars(%o: memref<?xf32>, %a: f32, %b: f16, %c: bf16, %d: i1, %e: i8, %f: i32, %g: i64, %h: index, %k: f64) kernel {
      %bf = arith.extf %b : f16 to f32
      %cf = arith.extf %c : bf16 to f32
      %s = arith.addf %a, %bf : f32
      %s2 = arith.addf %s, %cf : f32
      %z = arith.constant 0.0 : f32
      %s3 = arith.select %d, %s2, %z : f32
      %ef = arith.sitofp %e : i8 to f32
      %ff = arith.sitofp %f : i32 to f32
      %gf = arith.sitofp %g : i64 to f32
      %kf = arith.truncf %k : f64 to f32
      %t = arith.addf %s3, %ef : f32
      %t2 = arith.addf %t, %ff : f32
      %t3 = arith.addf %t2, %gf : f32
      %t4 = arith.addf %t3, %kf : f32
      memref.store %t4, %o[%h] : memref<?xf32>
      gpu.return
    }
  }
}
