// The GEMM kernel: 16x16 output tiles; each k-step stages a zero-padded tile of each
// operand in shared memory between barriers, then accumulates.
// RUN: fs-opt %s -p stitch-codegen,schedule-to-gpu | filecheck %s

// CHECK-LABEL: func.func @mm
// CHECK: gpu.launch_func @kernels::@mm_k0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in
// CHECK-LABEL: gpu.func @mm_k0(
// CHECK-SAME: workgroup(%[[AT:.*]] : memref<256xf32, 3 : i64>, %[[BT:.*]] : memref<256xf32, 3 : i64>) kernel
// CHECK-DAG: gpu.block_id x
// CHECK-DAG: gpu.block_id y
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK: %[[AV:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: memref.store %[[AV]], %[[AT]]
// CHECK: %[[BV:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: memref.store %[[BV]], %[[BT]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.load %[[AT]]
// CHECK: memref.load %[[BT]]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %[[ACC]]
func.func @mm(%a: tensor<20x40xf32>, %b: tensor<40x33xf32>) -> tensor<20x33xf32> {
  %d = graph.dot %a, %b : (tensor<20x40xf32>, tensor<40x33xf32>) -> tensor<20x33xf32>
  func.return %d : tensor<20x33xf32>
}
