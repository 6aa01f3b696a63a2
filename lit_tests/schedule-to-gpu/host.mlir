// The host function: memrefs in and out, sizes from memref.dim, outputs allocated,
// buffers passed flat (reinterpret_cast views), non-splat constants as memref.globals,
// grids computed from dynamic sizes, free reshapes as views, launches in order.
// RUN: fs-opt %s -p 'fusion-explore{mode=none},stitch-codegen,schedule-to-gpu' | filecheck %s

// CHECK: builtin.module attributes {gpu.container_module} {
// CHECK-LABEL: func.func @host(
// CHECK-SAME: %[[X:.*]]: memref<?x6xf32>, %[[C:.*]]: memref<2x3xf32>) -> (memref<?x3xf32>, memref<2x3xf32>) {
// CHECK: %[[D0:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x6xf32>
// CHECK: %[[N:.*]] = arith.muli %[[D0]], %{{.*}} : index
// CHECK: %[[XF:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[N]]], strides: [1] : memref<?x6xf32> to memref<?xf32>
// CHECK: %[[E:.*]] = memref.alloc(%[[D0]]) : memref<?x6xf32>
// CHECK: %[[EF:.*]] = memref.reinterpret_cast %[[E]] to offset: [0], sizes: [%[[N]]], strides: [1] : memref<?x6xf32> to memref<?xf32>
// CHECK: %[[G:.*]] = arith.maxsi
// CHECK: gpu.launch_func @kernels::@host_k0 blocks in (%[[G]], %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%[[XF]] : memref<?xf32>, %[[EF]] : memref<?xf32>, %[[D0]] : index)
// CHECK: %[[R:.*]] = memref.reinterpret_cast %[[E]] to offset: [0], sizes: [%{{.*}}, 3], strides: [3, 1] : memref<?x6xf32> to memref<?x3xf32>
// CHECK: %[[M:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK: %[[K:.*]] = memref.get_global @host_cst0 : memref<2x3xf32>
// CHECK: gpu.launch_func @kernels::@host_k1
// CHECK-NEXT: func.return %[[R]], %[[M]] : memref<?x3xf32>, memref<2x3xf32>
// CHECK: "memref.global"() <{sym_name = "host_cst0"
// CHECK: gpu.module @kernels {
// CHECK: gpu.func @host_k0(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index) kernel
// CHECK: gpu.func @host_k1(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>) kernel
func.func @host(%x: tensor<?x6xf32>, %c: tensor<2x3xf32>) -> (tensor<?x3xf32>, tensor<2x3xf32>) {
  %k = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = graph.exp %x : tensor<?x6xf32>
  %r = graph.reshape %e : (tensor<?x6xf32>) -> tensor<?x3xf32>
  %m = graph.mul %c, %k : tensor<2x3xf32>
  func.return %r, %m : tensor<?x3xf32>, tensor<2x3xf32>
}
