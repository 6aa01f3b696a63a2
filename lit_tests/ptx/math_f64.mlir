// RUN: fs-opt %s -t ptx | filecheck %s

// f64 exp and log: range reduction and polynomials in f64 arithmetic, no approximate
// f32 unit (fsir/ptx/math_ops.py); accuracy measured in tests/ptx/test_ptx_accuracy_f64.py.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry exp(
    // CHECK: cvt.rni.f64.f64
    // CHECK: fma.rn.f64
    // CHECK: shl.b64
    // CHECK-NOT: .approx
    // CHECK: ret;
    gpu.func @exp(%x: memref<?xf64>, %y: memref<?xf64>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf64>
        %r = math.exp %a : f64
        memref.store %r, %y[%i] : memref<?xf64>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry exp2(
    // CHECK: cvt.rni.f64.f64
    // CHECK: fma.rn.f64
    // CHECK-NOT: .approx
    // CHECK: ret;
    gpu.func @exp2(%x: memref<?xf64>, %y: memref<?xf64>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf64>
        %r = math.exp2 %a : f64
        memref.store %r, %y[%i] : memref<?xf64>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry log(
    // CHECK: div.rn.f64
    // CHECK: fma.rn.f64
    // CHECK: setp.ltu.f64
    // CHECK-NOT: .approx
    // CHECK: ret;
    gpu.func @log(%x: memref<?xf64>, %y: memref<?xf64>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf64>
        %r = math.log %a : f64
        memref.store %r, %y[%i] : memref<?xf64>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry log2(
    // CHECK: div.rn.f64
    // CHECK-NOT: .approx
    // CHECK: ret;
    gpu.func @log2(%x: memref<?xf64>, %y: memref<?xf64>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf64>
        %r = math.log2 %a : f64
        memref.store %r, %y[%i] : memref<?xf64>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry log10(
    // CHECK: div.rn.f64
    // CHECK-NOT: .approx
    // CHECK: ret;
    gpu.func @log10(%x: memref<?xf64>, %y: memref<?xf64>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf64>
        %r = math.log10 %a : f64
        memref.store %r, %y[%i] : memref<?xf64>
      }
      gpu.return
    }
    // CHECK-LABEL: .visible .entry log1p(
    // CHECK: add.rn.f64
    // CHECK: div.rn.f64
    // CHECK-NOT: .approx
    // CHECK: ret;
    gpu.func @log1p(%x: memref<?xf64>, %y: memref<?xf64>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %a = memref.load %x[%i] : memref<?xf64>
        %r = math.log1p %a : f64
        memref.store %r, %y[%i] : memref<?xf64>
      }
      gpu.return
    }
  }
}
