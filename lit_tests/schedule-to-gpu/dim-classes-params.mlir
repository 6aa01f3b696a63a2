// A kernel takes one `index` argument per symbol class of its operands' `?` dims: the
// sizes its own ops need equal (checked on the host before the launch) arrive once.
// Three columns of batch B concatenated are one kernel with one batch argument.
// RUN: fs-opt %s -p 'fusion-explore{mode=none},stitch-codegen,schedule-to-gpu' | filecheck %s

// CHECK-LABEL: func.func @three_columns(
// CHECK:       cf.assert
// CHECK:       cf.assert
// CHECK-NOT:   cf.assert
// CHECK:       gpu.launch_func @kernels::@three_columns_k0 {{.*}} args(%x_flat : memref<?xf32>, %y_flat : memref<?xf32>, %z_flat : memref<?xf32>, %c_flat : memref<?xf32>, %{{.*}} : index)
func.func @three_columns(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>, %z: tensor<?x4xf32>) -> tensor<?x12xf32> {
  %c = graph.concat %x, %y, %z dim 1 : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x12xf32>
  func.return %c : tensor<?x12xf32>
}

// A product's free dims stay separate arguments; its contracting dims are one (K).
// CHECK-LABEL: func.func @dot(
func.func @dot(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %d = graph.dot %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %d : tensor<?x?xf32>
}

// CHECK-LABEL: gpu.func @three_columns_k0(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>, %c: memref<?xf32>, %x_d0: index)
// CHECK-NOT:   _d0: index
// CHECK:       arith.muli %x_d0
// CHECK-LABEL: gpu.func @dot_k0(%a: memref<?xf32>, %b: memref<?xf32>, %{{.*}}: memref<?xf32>, %a_d0: index, %a_d1: index, %b_d1: index)
