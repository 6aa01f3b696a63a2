// RUN: fs-opt %s | fs-opt | filecheck %s
// Address tables (fsir/lowering/param_table.py): the host's table of buffer addresses
// and the kernel's view of one of them.

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @k(%t: memref<2xi64>, %n: index) kernel
    // CHECK-NEXT:  %[[X:.*]] = gpu.table_buffer %t 1 : memref<2xi64> -> memref<?xf32>
    gpu.func @k(%t: memref<2xi64>, %n: index) kernel {
      %x = gpu.table_buffer %t 1 : memref<2xi64> -> memref<?xf32>
      gpu.return
    }
    // A row picked at run time: entry 1 + %row of the table.
    // CHECK-LABEL: gpu.func @rows(%t: memref<5xi64>, %row: index) kernel
    // CHECK-NEXT:  %[[Y:.*]] = gpu.table_buffer %t 1 [%row] : memref<5xi64> -> memref<?xf32>
    gpu.func @rows(%t: memref<5xi64>, %row: index) kernel {
      %y = gpu.table_buffer %t 1 [%row] : memref<5xi64> -> memref<?xf32>
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @host
  func.func @host(%x: memref<?xf32>, %y: memref<?xi32>, %n: index) {
    %c1 = arith.constant 1 : index
    // CHECK: %[[T:.*]] = gpu.address_table %x, %y : memref<?xf32>, memref<?xi32> -> memref<2xi64>
    // CHECK: gpu.launch_func @kernels::@k {{.*}} args(%[[T]] : memref<2xi64>, %n : index)
    %t = gpu.address_table %x, %y : memref<?xf32>, memref<?xi32> -> memref<2xi64>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%t : memref<2xi64>, %n : index)
    // Immediate words first (a columns kernel's per-column rows), then the addresses.
    // CHECK: gpu.address_table values [16, 100] %x, %y : memref<?xf32>, memref<?xi32> -> memref<4xi64>
    %u = gpu.address_table values [16, 100] %x, %y : memref<?xf32>, memref<?xi32> -> memref<4xi64>
    // A word known at run time (a ragged column's row count): an index operand.
    // CHECK: gpu.address_table values [16, %n, 100, %n] %x : memref<?xf32> -> memref<5xi64>
    %v = gpu.address_table values [16, %n, 100, %n] %x : memref<?xf32> -> memref<5xi64>
    func.return
  }
}
