// A scale that every element of the tile shares (a broadcast of a scalar computed in
// the kernel, as ONNX's expanded attention computes 1/sqrt(sqrt(head size)) and applies
// it to Q and K): it is computed once before the k-loop, for every thread, outside any
// row guard, and both operands' staging reads that one value. (Provided under a row
// guard, a thread whose last staged row lay beyond M scaled both operands by zero.)
// RUN: fs-opt %s -p 'stitch-codegen{gemm="16x16x16/1x1"},schedule-to-gpu' | filecheck %s
// RUN: fs-opt %s -p 'stitch-codegen{gemm="16x16x16/1x1"},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=PTX

// CHECK-LABEL: gpu.func @f_k0(
// CHECK-SAME: %[[S:[a-z]+]]: memref<?xf32>, %[[X:[a-z]+]]: memref<?xf32>, %[[W:[a-z]+]]: memref<?xf32>
// CHECK-NOT: scf.if
// CHECK: %[[SV:.*]] = memref.load %[[S]][%{{.*}}] : memref<?xf32>
// CHECK-NEXT: %[[R:.*]] = math.sqrt %[[SV]] : f32
// CHECK-NOT: memref.load %[[S]]
// CHECK: scf.for
// CHECK: %[[XV:.*]] = memref.load %[[X]]
// CHECK-NEXT: arith.mulf %[[XV]], %[[R]] : f32
// CHECK: %[[WV:.*]] = memref.load %[[W]]
// CHECK-NEXT: arith.mulf %[[WV]], %[[R]] : f32
// CHECK: gpu.barrier

// PTX-LABEL: .entry f_k0(
// PTX-NOT: @%p{{.*}} bra
// PTX: ld.global.f32 %[[SV:f[0-9]+]]
// PTX-NEXT: sqrt.rn.f32 %{{f[0-9]+}}, %[[SV]];
// PTX: $L__f_k0_1:
// PTX-NOT: sqrt
// PTX: ret;

func.func @f(%s: tensor<f32>, %x: tensor<3x4xf32>, %w: tensor<4x3xf32>) -> tensor<3x3xf32> {
  %y = stitch.fusion (%s, %x, %w) : (tensor<f32>, tensor<3x4xf32>, tensor<4x3xf32>) -> tensor<3x3xf32> {
  ^bb0(%sa: tensor<f32>, %xa: tensor<3x4xf32>, %wa: tensor<4x3xf32>):
    %r = graph.sqrt %sa : tensor<f32>
    %ra = graph.broadcast %r dims [] : (tensor<f32>) -> tensor<3x4xf32>
    %xs = graph.mul %xa, %ra : tensor<3x4xf32>
    %rb = graph.broadcast %r dims [] : (tensor<f32>) -> tensor<4x3xf32>
    %ws = graph.mul %wa, %rb : tensor<4x3xf32>
    %d = graph.dot %xs, %ws : (tensor<3x4xf32>, tensor<4x3xf32>) -> tensor<3x3xf32>
    stitch.yield %d : tensor<3x3xf32>
  }
  func.return %y : tensor<3x3xf32>
}
