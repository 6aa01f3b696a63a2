// RUN: fs-opt %s -t ptx | filecheck %s

// Row sums: one thread per row, an scf.for carrying two accumulators (sum and max).
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry row_sum(
    gpu.func @row_sum(%x: memref<?x64xf32>, %out: memref<?x2xf32>, %rows: index) kernel {
      %r = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0.0 : f32
      %ninf = arith.constant 0xFF800000 : f32
      // CHECK: mov.f32 %[[ZERO:f[0-9]+]], 0f00000000;
      // CHECK: mov.f32 %[[NINF:f[0-9]+]], 0fFF800000;
      // CHECK: mov.b64 %[[IV:rd[0-9]+]], %{{rd[0-9]+}};
      // CHECK-NEXT: mov.f32 %[[SUM:f[0-9]+]], %[[ZERO]];
      // CHECK-NEXT: mov.f32 %[[MAX:f[0-9]+]], %[[NINF]];
      // CHECK-NEXT: $L__row_sum_[[HEAD:[0-9]+]]:
      // CHECK-NEXT: setp.ge.s64 %[[P:p[0-9]+]], %[[IV]], 64;
      // CHECK-NEXT: @%[[P]] bra $L__row_sum_[[EXIT:[0-9]+]];
      %s, %m = scf.for %j = %c0 to %c64 step %c1 iter_args(%acc = %zero, %mx = %ninf) -> (f32, f32) {
        // row-major: address = base + r*256 + j*4
        // CHECK: mul.lo.s64 %[[O1:rd[0-9]+]], %{{rd[0-9]+}}, 256;
        // CHECK-NEXT: mad.lo.s64 %[[O2:rd[0-9]+]], %[[IV]], 4, %[[O1]];
        // CHECK: ld.global.f32 %[[V:f[0-9]+]],
        %v = memref.load %x[%r, %j] : memref<?x64xf32>
        // CHECK-NEXT: add.rn.f32 %[[NS:f[0-9]+]], %[[SUM]], %[[V]];
        // CHECK-NEXT: max.NaN.f32 %[[NM:f[0-9]+]], %[[MAX]], %[[V]];
        %ns = arith.addf %acc, %v : f32
        %nm = arith.maximumf %mx, %v : f32
        // CHECK-NEXT: mov.f32 %[[SUM]], %[[NS]];
        // CHECK-NEXT: mov.f32 %[[MAX]], %[[NM]];
        // CHECK-NEXT: add.s64 %[[IV]], %[[IV]], 1;
        // CHECK-NEXT: bra $L__row_sum_[[HEAD]];
        // CHECK-NEXT: $L__row_sum_[[EXIT]]:
        scf.yield %ns, %nm : f32, f32
      }
      // CHECK: st.global.f32 [%{{rd[0-9]+}}], %[[SUM]];
      // CHECK: st.global.f32 [%{{rd[0-9]+}}+4], %[[MAX]];
      memref.store %s, %out[%r, %c0] : memref<?x2xf32>
      memref.store %m, %out[%r, %c1] : memref<?x2xf32>
      gpu.return
    }

    // Swapping iter_args needs a parallel copy through a temporary.
    // CHECK-LABEL: .visible .entry swap(
    gpu.func @swap(%out: memref<2xi32>, %n: i32) kernel {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %a, %b = scf.for %i = %c0 to %n step %c1 iter_args(%x = %c0, %y = %c1) -> (i32, i32) : i32 {
        // CHECK: setp.ge.s32
        // CHECK: mov.b32 %[[T:r[0-9]+]], %[[X:r[0-9]+]];
        // CHECK-NEXT: mov.b32 %[[X]], %[[Y:r[0-9]+]];
        // CHECK-NEXT: mov.b32 %[[Y]], %[[T]];
        // CHECK-NEXT: add.s32
        scf.yield %y, %x : i32, i32
      }
      %i0 = arith.constant 0 : index
      %i1 = arith.constant 1 : index
      memref.store %a, %out[%i0] : memref<2xi32>
      memref.store %b, %out[%i1] : memref<2xi32>
      gpu.return
    }
  }
}
