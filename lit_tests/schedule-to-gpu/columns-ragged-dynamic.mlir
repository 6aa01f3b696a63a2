// Ragged columns of one structure with a `?` batch (fsir/lowering/columns.py): each
// column's rows are a size of its own, known at run time. The columns still share one
// body: the host writes each column's rows (the `memref.dim` of its ids) into the first
// word of its row, and the kernel takes only the batch; the row's words are loaded once,
// before the bag loop.
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen,schedule-to-gpu' | filecheck %s

// CHECK-LABEL: func.func @shared_dynamic
// CHECK:       %[[N0:.*]] = memref.dim %ids0
// CHECK:       %[[B:.*]] = memref.dim %off0
// CHECK:       %[[N1:.*]] = memref.dim %ids1
// CHECK:       %[[T:.*]] = gpu.address_table values [%[[N0]], 100, 3, %[[N1]], 30, 11] %t0_flat, %ids0_flat, %off0_flat, %t1_flat, %ids1_flat, %off1_flat, %dense_flat, %x_flat
// CHECK:       gpu.launch_func @kernels::@shared_dynamic_k0 {{.*}} args(%[[T]] : memref<14xi64>, %[[B]] : index)

// CHECK-LABEL: gpu.func @shared_dynamic_k0(%table: memref<14xi64>, %off0_d0: index)
// (words 0 and 3 from the signature's size arguments 8 and 10, %ids0_d0 and %ids1_d0)
// CHECK-SAME:  gpu.table_sizes = array<i64: 0, 8, 3, 10>
// CHECK:       gpu.table_buffer %table 6 [%[[ROW:.*]]]
// CHECK-NEXT:  gpu.table_buffer %table 7 [%[[ROW]]]
// CHECK-NEXT:  %[[OFF:.*]] = gpu.table_buffer %table 8 [%[[ROW]]]
// CHECK-NEXT:  %[[ROWS64:.*]] = memref.load %table[%[[ROW]]] : memref<14xi64>
// CHECK-NEXT:  %[[ROWS:.*]] = arith.index_cast %[[ROWS64]] : i64 to index
// CHECK:       memref.load %[[OFF]]
// CHECK:       arith.minsi %{{.*}}, %[[ROWS]] : index
// CHECK:       scf.for
// CHECK-NOT:     memref.load %table
// CHECK:         scf.yield
// CHECK-NOT:   scf.for
// CHECK:       gpu.return
func.func @shared_dynamic(%dense: tensor<?x3xf32>, %ids0: tensor<?xi32>, %off0: tensor<?xi32>, %t0: tensor<100x8xf32>, %ids1: tensor<?xi32>, %off1: tensor<?xi32>, %t1: tensor<30x8xf32>, %w: tensor<19x2xf32>) -> tensor<?x2xf32> {
  %e0 = graph.gather %t0, %ids0 : (tensor<100x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %r0 = graph.segment_reduce sum %e0, %off0 : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<30x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %r1 = graph.segment_reduce sum %e1, %off1 : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %x = graph.concat %dense, %r0, %r1 dim 1 : (tensor<?x3xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x19xf32>
  %y = graph.dot %x, %w : (tensor<?x19xf32>, tensor<19x2xf32>) -> tensor<?x2xf32>
  func.return %y : tensor<?x2xf32>
}
