// Argument dims the source names by one symbol (`#graph.dims`, ONNX dim_params) are one
// size even where no op relates them: the host checks each against the first dim of its
// symbol once, on entry, and every kernel reading them takes one size argument.
// RUN: fs-opt %s -p fusion-explore,stitch-codegen,schedule-to-gpu | filecheck %s

// CHECK-LABEL: func.func @two_columns(
// CHECK:         %[[A0:.*]] = memref.dim %a
// CHECK:         %[[B0:.*]] = memref.dim %b
// CHECK:         %[[EQ:.*]] = arith.cmpi eq, %[[A0]], %[[B0]] : index
// CHECK:         cf.assert %[[EQ]], "@two_columns: dim 0 of %a and dim 0 of %b are both 'B' but differ at run time"
// CHECK-NOT:     cf.assert
// CHECK:         gpu.launch_func @kernels::@two_columns_k0 {{.*}} args(%a_flat : memref<?xf32>, %b_flat : memref<?xf32>, %{{.*}} : memref<?xf32>, %{{.*}} : memref<?xf32>, %[[A0]] : index)
func.func @two_columns(%a: tensor<?x4xf32> {graph.dims = #graph.dims<[B, 4]>},
                       %b: tensor<?x8xf32> {graph.dims = #graph.dims<[B, 8]>}) -> (tensor<?xf32>, tensor<?xf32>) {
  %ra = graph.reduce sum %a dims [1] : (tensor<?x4xf32>) -> tensor<?xf32>
  %rb = graph.reduce max %b dims [1] : (tensor<?x8xf32>) -> tensor<?xf32>
  func.return %ra, %rb : tensor<?xf32>, tensor<?xf32>
}

// Undeclared dims stay separate sizes: no check, one size argument each.
// CHECK-LABEL: func.func @unnamed(
// CHECK-NOT:     cf.assert
// CHECK:         gpu.launch_func @kernels::@unnamed_k0 {{.*}} args({{.*}}, %{{.*}} : index, %{{.*}} : index)
func.func @unnamed(%a: tensor<?x4xf32>, %b: tensor<?x8xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %ra = graph.reduce sum %a dims [1] : (tensor<?x4xf32>) -> tensor<?xf32>
  %rb = graph.reduce max %b dims [1] : (tensor<?x8xf32>) -> tensor<?xf32>
  func.return %ra, %rb : tensor<?xf32>, tensor<?xf32>
}

// CHECK-LABEL: gpu.func @two_columns_k0(%a: memref<?xf32>, %b: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %a_d0: index)
// CHECK-NOT:   %b_d0: index
// CHECK-LABEL: gpu.func @unnamed_k0(%a: memref<?xf32>, %b: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %a_d0: index, %b_d0: index)
