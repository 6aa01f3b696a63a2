// A reshape with dim groups is a free view whose `?` sizes are computed from the
// operand's: [B, 4, S] -> [4*B, 1, S] views the buffer with sizes [B * 4, 1, S], and
// the next kernel takes 4*B as its batch size.
// RUN: fs-opt %s -p 'fusion-explore{mode=none},stitch-codegen,schedule-to-gpu' | filecheck %s

// CHECK-LABEL: func.func @bloom(
// CHECK:         %[[B:.*]] = memref.dim %x, %{{.*}} : memref<?x4x?xf32>
// CHECK:         %[[S:.*]] = memref.dim %x, %{{.*}} : memref<?x4x?xf32>
// CHECK:         %[[B4:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK:         gpu.launch_func @kernels::@bloom_k0
// CHECK:         %m = memref.reinterpret_cast %e to offset: [0], sizes: [%[[B4]], 1, %[[S]]], strides: [%[[S]], %[[S]], 1] : memref<?x4x?xf32> to memref<?x1x?xf32>
// CHECK:         gpu.launch_func @kernels::@bloom_k1 {{.*}} args(%m_flat : memref<?xf32>, %n_flat : memref<?xf32>, %[[B4]] : index, %[[S]] : index)
func.func @bloom(%x: tensor<?x4x?xf32>) -> tensor<?x1x?xf32> {
  %e = graph.exp %x : tensor<?x4x?xf32>
  %m = graph.reshape %e {groups = array<i64: 2, 1, 1, 2>} : (tensor<?x4x?xf32>) -> tensor<?x1x?xf32>
  %n = graph.neg %m : tensor<?x1x?xf32>
  func.return %n : tensor<?x1x?xf32>
}
