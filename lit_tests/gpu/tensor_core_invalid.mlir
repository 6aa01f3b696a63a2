// RUN: fs-opt %s --split-input-file --verify-diagnostics

gpu.module @kernels {
  gpu.func @k(%a: memref<?xf16>) workgroup(%t : memref<256xf16, 3>) kernel {
    %i = gpu.thread_id x
    // expected-error @+1 {{gpu.cp_async copies into shared memory (address space 3), got memref<?xf16>}}
    gpu.cp_async %a[%i], %a[%i], 16 : memref<?xf16>, memref<?xf16>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%a: memref<?xf16>) workgroup(%t : memref<256xf16, 3>) kernel {
    %i = gpu.thread_id x
    // expected-error @+1 {{gpu.cp_async copies 4, 8 or 16 bytes, got 12}}
    gpu.cp_async %t[%i], %a[%i], 12 : memref<256xf16, 3>, memref<?xf16>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%a: memref<?xf32>) workgroup(%t : memref<256xf16, 3>) kernel {
    %i = gpu.thread_id x
    // expected-error @+1 {{gpu.cp_async needs one element type, got f16 and f32}}
    gpu.cp_async %t[%i], %a[%i], 16 : memref<256xf16, 3>, memref<?xf32>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k() workgroup(%t : memref<256xf32, 3>) kernel {
    %i = gpu.thread_id x
    // expected-error @+1 {{gpu.ldmatrix moves 16-bit elements, got f32}}
    %r = gpu.ldmatrix %t[%i] trans : memref<256xf32, 3> -> i32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k() workgroup(%t : memref<256xf64, 3>) kernel {
    %i = gpu.thread_id x
    // expected-error @+1 {{gpu.ldmatrix moves 16 or 32-bit elements, got f64}}
    %r = gpu.ldmatrix %t[%i] : memref<256xf64, 3> -> i32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k() workgroup(%t : memref<256xf16, 3>) kernel {
    %i = gpu.thread_id x
    // expected-error @+1 {{gpu.ldmatrix loads 1, 2 or 4 matrices, got 3}}
    %r:3 = gpu.ldmatrix %t[%i] : memref<256xf16, 3> -> i32, i32, i32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%x: i32, %c: f32) kernel {
    // expected-error @+1 {{gpu.mma_sync f16 takes 4 A, 2 B and 4 C registers per lane and gives 4 D, got 2, 2, 4 and 4}}
    %d:4 = gpu.mma_sync f16 [%x, %x] [%x, %x] [%c, %c, %c, %c]
    gpu.return
  }
}
