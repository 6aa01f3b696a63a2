// RUN: fs-opt %s -t ptx | filecheck %s

// One elementwise kernel per math op: y[i] = op(x[i]) (or op(x[i], z[i])).
// Accuracy bounds: fsir/ptx/math_ops.py; measured in tests/ptx/test_ptx_accuracy.py.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry exp(
    // CHECK: cvt.rni.f32.f32
    // CHECK: ex2.approx.ftz.f32
    gpu.func @exp(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.exp %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry exp2(
    // CHECK: ex2.approx.ftz.f32
    gpu.func @exp2(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.exp2 %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry log(
    // CHECK: lg2.approx.ftz.f32
    // CHECK: fma.rn.f32
    gpu.func @log(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.log %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry log2(
    // CHECK: lg2.approx.ftz.f32
    gpu.func @log2(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.log2 %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry log10(
    // CHECK: lg2.approx.ftz.f32
    gpu.func @log10(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.log10 %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry log1p(
    // CHECK: lg2.approx.ftz.f32
    gpu.func @log1p(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.log1p %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry tanh(
    // CHECK: ex2.approx.ftz.f32
    // CHECK: rcp.rn.f32
    // CHECK: copysign.f32
    gpu.func @tanh(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.tanh %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry erf(
    // CHECK: rcp.rn.f32
    // CHECK: ex2.approx.ftz.f32
    // CHECK: copysign.f32
    gpu.func @erf(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.erf %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry sqrt(
    // CHECK: sqrt.rn.f32
    gpu.func @sqrt(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.sqrt %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry rsqrt(
    // CHECK: sqrt.rn.f32
    // CHECK: rcp.rn.f32
    gpu.func @rsqrt(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.rsqrt %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry absf(
    // CHECK: abs.f32
    gpu.func @absf(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.absf %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry sin(
    // CHECK: sin.approx.f32
    gpu.func @sin(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.sin %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry cos(
    // CHECK: cos.approx.f32
    gpu.func @cos(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.cos %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry floor(
    // CHECK: cvt.rmi.f32.f32
    gpu.func @floor(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.floor %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry ceil(
    // CHECK: cvt.rpi.f32.f32
    gpu.func @ceil(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.ceil %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry trunc(
    // CHECK: cvt.rzi.f32.f32
    gpu.func @trunc(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.trunc %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry roundeven(
    // CHECK: cvt.rni.f32.f32
    gpu.func @roundeven(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.roundeven %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry round(
    // CHECK: cvt.rzi.f32.f32
    // CHECK: copysign.f32
    gpu.func @round(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %r = math.round %a : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry powf(
    // CHECK: lg2.approx.ftz.f32
    // CHECK: ex2.approx.ftz.f32
    // CHECK: setp.eq.or.f32
    gpu.func @powf(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %b = memref.load %z[%i] : memref<?xf32>
        %r = math.powf %a, %b : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry copysign(
    // CHECK: copysign.f32
    gpu.func @copysign(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %b = memref.load %z[%i] : memref<?xf32>
        %r = math.copysign %a, %b : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry divf(
    // CHECK: div.rn.f32
    gpu.func @divf(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf32>
        %b = memref.load %z[%i] : memref<?xf32>
        %r = arith.divf %a, %b : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
    // fma, and f16/bf16/f64 variants
    // CHECK-LABEL: .visible .entry fma(
    // CHECK: fma.rn.f32
    gpu.func @fma(%x: memref<?xf32>, %z: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %a = memref.load %x[%i] : memref<?xf32>
      %b = memref.load %z[%i] : memref<?xf32>
      %r = math.fma %a, %b, %a : f32
      memref.store %r, %y[%i] : memref<?xf32>
      gpu.return
    }
    // CHECK-LABEL: .visible .entry narrow_math(
    // CHECK: cvt.f32.f16
    // CHECK: ex2.approx.ftz.f32
    // CHECK: cvt.rn.f16.f32
    // CHECK: shl.b32
    // CHECK: cvt.rn.bf16.f32
    // CHECK: sqrt.rn.f64
    // CHECK-NEXT: rcp.rn.f64
    // CHECK: abs.s32
    // CHECK: popc.b32
    // CHECK: clz.b64
    gpu.func @narrow_math(%h: memref<?xf16>, %b: memref<?xbf16>, %d: memref<?xf64>, %k: memref<?xi32>, %l: memref<?xi64>) kernel {
      %i = gpu.global_id x
      %hv = memref.load %h[%i] : memref<?xf16>
      %he = math.exp %hv : f16
      memref.store %he, %h[%i] : memref<?xf16>
      %bv = memref.load %b[%i] : memref<?xbf16>
      %bt = math.tanh %bv : bf16
      memref.store %bt, %b[%i] : memref<?xbf16>
      %dv = memref.load %d[%i] : memref<?xf64>
      %dr = math.rsqrt %dv : f64
      %ds = math.sqrt %dr : f64
      %df = math.fma %ds, %dv, %dr : f64
      memref.store %df, %d[%i] : memref<?xf64>
      %kv = memref.load %k[%i] : memref<?xi32>
      %ka = math.absi %kv : i32
      %kp = math.ctpop %ka : i32
      memref.store %kp, %k[%i] : memref<?xi32>
      %lv = memref.load %l[%i] : memref<?xi64>
      %lz = math.ctlz %lv : i64
      memref.store %lz, %l[%i] : memref<?xi64>
      gpu.return
    }
  }
}
