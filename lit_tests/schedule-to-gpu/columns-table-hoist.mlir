// A columns kernel whose buffers go through its address table (a cluster of two sums
// shares a body; the max column and the dense copy have their own): a lone column's
// table and ids addresses are loaded in the column's branch, before its bag loop, not
// once per bag element (the table does not change while the kernel runs).
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen,schedule-to-gpu' | filecheck %s

// CHECK-LABEL: gpu.func @hoist_k0(%table: memref<12xi64>)
// CHECK:       } else {
// the shared sums: their row's addresses, then the loop
// CHECK:         gpu.table_buffer %table 4 [%{{.*}}]
// CHECK:         scf.for
// CHECK-NOT:       gpu.table_buffer
// CHECK:           scf.yield
// CHECK:       } else {
// the max column: its addresses before its loop
// CHECK:         %[[T2:.*]] = gpu.table_buffer %table 8 : memref<12xi64> -> memref<?xf32>
// CHECK-NEXT:    %[[I2:.*]] = gpu.table_buffer %table 9 : memref<12xi64> -> memref<?xi32>
// CHECK-NEXT:    scf.for
// CHECK-NOT:       gpu.table_buffer
// CHECK:           memref.load %[[I2]]
// CHECK-NOT:       gpu.table_buffer
// CHECK:           memref.load %[[T2]]
// CHECK-NOT:       gpu.table_buffer
// CHECK:           scf.yield
func.func @hoist(%dense: tensor<8x3xf32>, %i0: tensor<8x3xi32>, %t0: tensor<100x8xf32>, %i1: tensor<8x3xi32>, %t1: tensor<50x8xf32>, %i2: tensor<8x4xi32>, %t2: tensor<30x8xf32>) -> tensor<8x27xf32> {
  %e0 = graph.gather %t0, %i0 : (tensor<100x8xf32>, tensor<8x3xi32>) -> tensor<8x3x8xf32>
  %r0 = graph.reduce sum %e0 dims [1] : (tensor<8x3x8xf32>) -> tensor<8x8xf32>
  %e1 = graph.gather %t1, %i1 : (tensor<50x8xf32>, tensor<8x3xi32>) -> tensor<8x3x8xf32>
  %r1 = graph.reduce sum %e1 dims [1] : (tensor<8x3x8xf32>) -> tensor<8x8xf32>
  %e2 = graph.gather %t2, %i2 : (tensor<30x8xf32>, tensor<8x4xi32>) -> tensor<8x4x8xf32>
  %r2 = graph.reduce max %e2 dims [1] : (tensor<8x4x8xf32>) -> tensor<8x8xf32>
  %x = graph.concat %dense, %r0, %r1, %r2 dim 1 : (tensor<8x3xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x27xf32>
  func.return %x : tensor<8x27xf32>
}
