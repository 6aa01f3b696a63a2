// RUN: fs-opt %s -t ptx | filecheck %s
// A kernel taking its buffers through an address table (fsir/lowering/param_table.py):
// one .param for the table; each buffer's address is loaded from it (non-coherent: the
// table is read-only) where the kernel first needs the buffer, then made a global
// address as a parameter's would be.

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry copy(
    // CHECK-NEXT:  .param .u64 copy_param_0,
    // CHECK-NEXT:  .param .u64 copy_param_1
    // CHECK-NEXT:  )
    // CHECK:       ld.param.u64 %[[RAW:rd[0-9]+]], [copy_param_0];
    // CHECK:       cvta.to.global.u64 %[[T:rd[0-9]+]], %[[RAW]];
    // CHECK:       @{{.*}} bra
    // CHECK:       ld.global.nc.u64 %[[X:rd[0-9]+]], [%[[T]]+8];
    // CHECK-NEXT:  cvta.to.global.u64 %[[XG:rd[0-9]+]], %[[X]];
    // CHECK:       ld.global.nc.u64 %[[Y:rd[0-9]+]], [%[[T]]+16];
    // CHECK-NEXT:  cvta.to.global.u64 %[[YG:rd[0-9]+]], %[[Y]];
    // CHECK:       ld.global.f32 %{{f[0-9]+}}, [%{{rd[0-9]+}}];
    // CHECK:       st.global.f32
    gpu.func @copy(%table: memref<3xi64>, %n: index) kernel {
      %i = gpu.thread_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = gpu.table_buffer %table 1 : memref<3xi64> -> memref<?xf32>
        %y = gpu.table_buffer %table 2 : memref<3xi64> -> memref<?xf32>
        %v = memref.load %x[%i] : memref<?xf32>
        memref.store %v, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
