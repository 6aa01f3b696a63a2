// The conv kernel: the tiled GEMM of gemm.mlir whose A tile is gathered from the input
// on the fly (no im2col buffer): row m is (batch, output position), column k (input
// channel, kernel position); each element's input coordinate is checked against the
// input with one unsigned compare per spatial dim (padding reads zero). Grid z is the
// feature group. The fused epilogue (bias add, ReLU) runs on the accumulator before
// the one store.
// RUN: fs-opt %s -p 'stitch-codegen{gemm="16x16x8"},schedule-to-gpu' | filecheck %s

// CHECK-LABEL: gpu.func @conv_relu_k0(
// CHECK-SAME: %[[X:[^:]*]]: memref<?xf32>, %[[W:[^:]*]]: memref<?xf32>, %[[B:[^:]*]]: memref<?xf32>, %[[R:[^:]*]]: memref<?xf32>) workgroup(%[[AT:.*]] : memref<128xf32, 3 : i64>, %[[BT:.*]] : memref<128xf32, 3 : i64>)
// CHECK: %[[G:.*]] = gpu.block_id z
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C:.*]] = %{{.*}}) -> (f32) {
// CHECK: arith.cmpi ult
// CHECK: arith.cmpi ult
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: memref.load %[[X]]
// CHECK: memref.store %{{.*}}, %[[AT]]
// CHECK: memref.load %[[W]]
// CHECK: memref.store %{{.*}}, %[[BT]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: math.fma
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: scf.if
// CHECK: %[[BIAS:.*]] = memref.load %[[B]]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[ACC]], %[[BIAS]] : f32
// CHECK-NEXT: %[[RELU:.*]] = arith.maximumf %[[SUM]], %{{.*}} : f32
// CHECK-NOT: memref.load
// CHECK: memref.store %[[RELU]], %[[R]]
// CHECK: gpu.return
func.func @conv_relu(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x6x6xf32> {
  %r = stitch.fusion (%x, %w, %b) : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32> {
  ^bb0(%xa: tensor<1x4x6x6xf32>, %wa: tensor<8x4x3x3xf32>, %ba: tensor<8xf32>):
    %y = graph.conv %xa, %wa strides [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
    %bb = graph.broadcast %ba dims [1] : (tensor<8xf32>) -> tensor<1x8x6x6xf32>
    %z = graph.add %y, %bb : tensor<1x8x6x6xf32>
    %c0 = graph.constant dense<0.0> : tensor<1x8x6x6xf32>
    %o = graph.max %z, %c0 : tensor<1x8x6x6xf32>
    stitch.yield %o : tensor<1x8x6x6xf32>
  }
  func.return %r : tensor<1x8x6x6xf32>
}
