// RUN: fs-opt %s -t ptx | filecheck %s

// exp2 with the `afn` fast-math flag (approximate functions allowed) is the unit's
// ex2.approx.ftz.f32 alone (the attention kernel's exp(x - m), never of a positive
// argument); without it, exp2 keeps its range reduction (rint, the exponent scaled in
// two exact halves), so results below 2^-126 are not flushed.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry exp2_afn(
    // CHECK-NOT: cvt.rni
    // CHECK: ld.global.f32 %[[X:f[0-9]+]],
    // CHECK-NEXT: ex2.approx.ftz.f32 %[[Y:f[0-9]+]], %[[X]];
    // CHECK-NOT: cvt.rzi
    // CHECK-NOT: mul.rn.f32
    // CHECK: st.global.f32 [%{{.*}}], %[[Y]];
    gpu.func @exp2_afn(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.exp2 %a fastmath<afn> : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry exp2_exact(
    // CHECK: cvt.rni.f32.f32
    // CHECK: ex2.approx.ftz.f32
    // CHECK: cvt.rzi.s32.f32
    gpu.func @exp2_exact(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.exp2 %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
