// RUN: fs-opt %s --split-input-file --verify-diagnostics

gpu.module @kernels {
  gpu.func @k(%v: f16) kernel {
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    // expected-error @+1 {{gpu.shuffle value must be a 32-bit type (f32 or i32), got f16}}
    %r, %ok = gpu.shuffle xor %v, %c1, %c32 : f16
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%v: f32) kernel {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : i32
    // expected-error @+1 {{operand is used with type i32, but has been previously used or defined with type index}}
    %r, %ok = gpu.shuffle xor %v, %c1, %c32 : f32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @+1 {{gpu.func workgroup attribution must be a statically shaped memref in address space 3, got memref<32xf32>}}
  gpu.func @k() workgroup(%buf : memref<32xf32>) kernel {
    gpu.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @+1 {{gpu.func workgroup attribution must be a statically shaped memref in address space 3, got memref<?xf32, 3 : i64>}}
  gpu.func @k() workgroup(%buf : memref<?xf32, 3>) kernel {
    gpu.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @+1 {{gpu.func kernel must not return values}}
  gpu.func @k(%x: f32) -> f32 kernel {
    gpu.return %x : f32
  }
}

// -----

gpu.module @kernels {
  gpu.func @f(%x: f32) -> f32 {
    // expected-error @+1 {{gpu.return operand types () do not match the gpu.func result types (f32)}}
    gpu.return
  }
}

// -----

builtin.module {
  // expected-error @+1 {{'gpu.func' expects parent op 'gpu.module'}}
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k() kernel {
    // expected-error @+1 {{gpu.dynamic_shared_memory must return memref<?xi8, 3>, got memref<?xf32, 3 : i64>}}
    %d = gpu.dynamic_shared_memory : memref<?xf32, 3>
    gpu.return
  }
}

// -----

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: memref<?xf32>, %n: index) kernel {
      gpu.return
    }
  }
  func.func @host(%x: memref<?xf32>, %n: i32) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{gpu.launch_func arguments (memref<?xf32>, i32) do not match the signature of @kernels::@k (memref<?xf32>, index)}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>, %n : i32)
    func.return
  }
}

// -----

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @helper() {
      gpu.return
    }
  }
  func.func @host() {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{gpu.launch_func: @kernels::@helper is not a kernel (missing 'kernel')}}
    gpu.launch_func @kernels::@helper blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    func.return
  }
}

// -----

builtin.module {
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  func.func @host() {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{gpu.launch_func expects the closest surrounding module to have the 'gpu.container_module' attribute}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    func.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k() kernel {
    // expected-error @+1 {{Expected `x`, `y`, or `z`}}
    %t = gpu.thread_id w
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%v: f32) kernel {
    %c1 = arith.constant 1 : i32
    // expected-error @+1 {{Expected `xor`, `up`, `down`, or `idx`}}
    %r, %ok = gpu.shuffle bfly %v, %c1, %c1 : f32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%v: f32) kernel {
    // expected-error @+1 {{gpu.subgroup_reduce xor is not defined on f32}}
    %r = gpu.subgroup_reduce xor %v : (f32) -> f32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%v: i32) kernel {
    // expected-error @+1 {{gpu.subgroup_reduce cluster size must be a power of two <= 32, got 6}}
    %r = gpu.subgroup_reduce add %v cluster(size = 6) : (i32) -> i32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%v: f64) kernel {
    // expected-error @+1 {{gpu.subgroup_reduce value must be f32 or i32, got f64}}
    %r = gpu.subgroup_reduce add %v : (f64) -> f64
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%a: memref<?xf32>, %i: index) kernel {
    // expected-error @+1 {{gpu.load_vector moves 2 or 4 elements, got 3}}
    %x, %y, %z = gpu.load_vector %a[%i] : memref<?xf32> -> f32, f32, f32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%a: memref<?xf64>, %i: index) kernel {
    // expected-error @+1 {{gpu.load_vector needs elements of 8 to 32 bits and at most 16 bytes in all, got 2 x f64}}
    %x, %y = gpu.load_vector %a[%i] : memref<?xf64> -> f64, f64
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%a: memref<?xf32>, %i: index) kernel {
    // expected-error @+1 {{gpu.load_vector elements must have the memref's element type f32, got f32, i32}}
    %x, %y = gpu.load_vector %a[%i] : memref<?xf32> -> f32, i32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%a: memref<?x4xf32>, %x: f32, %i: index) kernel {
    // expected-error @+1 {{gpu.store_vector needs 2 indices for memref<?x4xf32>, got 1}}
    gpu.store_vector %x, %x, %a[%i] : memref<?x4xf32>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%a: memref<?xi1>, %x: i1, %i: index) kernel {
    // expected-error @+1 {{gpu.store_vector needs elements of 8 to 32 bits and at most 16 bytes in all, got 2 x i1}}
    gpu.store_vector %x, %x, %a[%i] : memref<?xi1>
    gpu.return
  }
}
