// RUN: fs-opt %s -t ptx --split-input-file --verify-diagnostics

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: memref<?xf64>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<?xf64>
      // expected-error @+1 {{PTX printer cannot lower 'math.tanh': f64 is not supported (f32, f16, bf16 are)}}
      %e = math.tanh %v : f64
      memref.store %e, %x[%c0] : memref<?xf64>
      gpu.return
    }
  }
}

// -----

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<?xf32>
      // expected-error @+1 {{PTX printer cannot lower 'math.atan' (in kernel @k)}}
      %e = math.atan %v : f32
      memref.store %e, %x[%c0] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{kernel argument 0 of @k memref<?x?xf32> has a dynamic inner dimension}}
    gpu.func @k(%x: memref<?x?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: memref<?xf32>, %w: i32) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<?xf32>
      %c3 = arith.constant 3 : i32
      %c1 = arith.constant 1 : i32
      // expected-error @+1 {{width must be a power of two <= 32, got 3}}
      %r, %ok = gpu.shuffle xor %v, %c1, %c3 : f32
      gpu.return
    }
  }
}

// -----

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{kernel name @has.dot is not a PTX identifier}}
    gpu.func @has.dot(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
