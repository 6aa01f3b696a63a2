// A loop kernel: thread i computes element i; producers are inlined by index
// propagation (broadcast drops the dim, transpose permutes); f16 loads widen to f32 and
// results narrow before the store; splat constants are immediates.
// RUN: fs-opt %s -p stitch-codegen,schedule-to-gpu | filecheck %s

// CHECK-LABEL: gpu.func @f_k0(
// CHECK-SAME: %[[A:.*]]: memref<?xf16>, %[[V:.*]]: memref<?xf16>, %[[OUT:.*]]: memref<?xf16>) kernel attributes {gpu.known_block_size = array<i32: 256, 1, 1>} {
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[I:.*]] = arith.addi %{{.*}}, %[[TID]] : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[I]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-DAG: %[[COL:.*]] = arith.remui %[[I]], %{{.*}} : index
// CHECK-DAG: %[[ROW:.*]] = arith.divui %[[I]], %{{.*}} : index
// CHECK: %[[T:.*]] = arith.addi %{{.*}}, %[[ROW]] : index
// CHECK: %[[X:.*]] = memref.load %[[A]][%[[T]]] : memref<?xf16>
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK: %[[Y:.*]] = memref.load %[[V]][%[[COL]]] : memref<?xf16>
// CHECK: arith.addf
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: arith.mulf
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK-NEXT: memref.store %[[R]], %[[OUT]][%[[I]]] : memref<?xf16>
// CHECK: gpu.return
func.func @f(%a: tensor<37x3xf16>, %v: tensor<37xf16>) -> tensor<3x37xf16> {
  %y = stitch.fusion (%a, %v) : (tensor<37x3xf16>, tensor<37xf16>) -> tensor<3x37xf16> {
  ^bb0(%x: tensor<37x3xf16>, %w: tensor<37xf16>):
    %t = graph.transpose %x perm [1, 0] : (tensor<37x3xf16>) -> tensor<3x37xf16>
    %b = graph.broadcast %w dims [1] : (tensor<37xf16>) -> tensor<3x37xf16>
    %s = graph.add %t, %b : tensor<3x37xf16>
    %h = graph.constant dense<0.5> : tensor<3x37xf16>
    %m = graph.mul %s, %h : tensor<3x37xf16>
    stitch.yield %m : tensor<3x37xf16>
  }
  func.return %y : tensor<3x37xf16>
}
