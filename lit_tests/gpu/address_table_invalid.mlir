// RUN: fs-opt %s --split-input-file --verify-diagnostics

gpu.module @kernels {
  gpu.func @k(%t: memref<2xi64>) kernel {
    // expected-error @+1 {{gpu.table_buffer index 2 is outside the table memref<2xi64>}}
    %x = gpu.table_buffer %t 2 : memref<2xi64> -> memref<?xf32>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%t: memref<2xi32>) kernel {
    // expected-error @+1 {{gpu.table_buffer reads a 1-D i64 address table, got memref<2xi32>}}
    %x = gpu.table_buffer %t 0 : memref<2xi32> -> memref<?xf32>
    gpu.return
  }
}

// -----

func.func @host(%x: memref<?xf32>) {
  // expected-error @+1 {{gpu.address_table of 1 buffers returns memref<1xi64>, got memref<2xi64>}}
  %t = gpu.address_table %x : memref<?xf32> -> memref<2xi64>
  func.return
}

// -----

func.func @host(%x: memref<?xf32>) {
  // expected-error @+1 {{gpu.address_table of 2 values and 1 buffers returns memref<3xi64>, got memref<1xi64>}}
  %t = gpu.address_table values [7, 9] %x : memref<?xf32> -> memref<1xi64>
  func.return
}
