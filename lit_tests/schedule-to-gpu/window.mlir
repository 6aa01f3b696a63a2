// A window reduction is computed per result element by the loop mapping: one serial
// scf.for per windowed dim carries the accumulator, positions in the padding are
// skipped by a guard (only on the sides where a window can reach it), and the operand
// is read from global memory. A constant pad clamps its position into the operand,
// loads there unguarded and selects the value outside; reflect folds the position
// back by its period.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{vector=1},schedule-to-gpu' | filecheck %s

// CHECK-LABEL: gpu.func @maxpool_k0
// CHECK-SAME:  (%[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>)
// CHECK:       %[[NEG_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK:       %[[H:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[NEG_INF]]) -> (f32) {
// CHECK:         %[[W:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC2:.*]] = %[[ACC]]) -> (f32) {
// CHECK:           %[[IN:.*]] = arith.andi
// CHECK:           %[[V:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK:             %[[L:.*]] = memref.load %[[X]][%{{.*}}] : memref<?xf32>
// CHECK-NEXT:        %[[M:.*]] = arith.maximumf %[[ACC2]], %[[L]] : f32
// CHECK-NEXT:        scf.yield %[[M]] : f32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[ACC2]] : f32
// CHECK:           scf.yield %[[V]] : f32
// CHECK:         scf.yield %[[W]] : f32
// CHECK:       %[[R:.*]] = arith.maximumf %[[H]], %{{.*}} : f32
// CHECK:       memref.store %[[R]], %[[Y]][%{{.*}}] : memref<?xf32>
func.func @maxpool(%x: tensor<2x9x10xf32>) -> tensor<2x5x5xf32> {
  %y = graph.reduce_window max %x window [1, 3, 3] strides [1, 2, 2] dilations [1, 1, 1] low [0, 1, 1] high [0, 1, 0] : (tensor<2x9x10xf32>) -> tensor<2x5x5xf32>
  %z = graph.constant dense<0.0> : tensor<2x5x5xf32>
  %r = graph.max %y, %z : tensor<2x5x5xf32>
  func.return %r : tensor<2x5x5xf32>
}

// No padding: no guard (but the thread's own, around everything).
// CHECK-LABEL: gpu.func @tiles_k0
// CHECK:       scf.for
// CHECK-NOT:   scf.if
// CHECK:       memref.load
// CHECK-NEXT:  arith.addf
// CHECK:       gpu.return
func.func @tiles(%x: tensor<8x16xf32>) -> tensor<8x8xf32> {
  %y = graph.reduce_window sum %x window [1, 2] strides [1, 2] dilations [1, 1] low [0, 0] high [0, 0] : (tensor<8x16xf32>) -> tensor<8x8xf32>
  func.return %y : tensor<8x8xf32>
}

// CHECK-LABEL: gpu.func @pad_k0
// CHECK-SAME:  (%[[X:.*]]: memref<?xf32>, %[[V:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>)
// CHECK:       scf.if
// CHECK-NOT:   scf.if
// CHECK:       %[[IN:.*]] = arith.andi
// CHECK:       %[[L:.*]] = memref.load %[[X]]
// CHECK-NEXT:  %[[P:.*]] = memref.load %[[V]]
// CHECK-NEXT:  %[[S:.*]] = arith.select %[[IN]], %[[L]], %[[P]] : f32
// CHECK-NEXT:  math.exp %[[S]] : f32
func.func @pad(%x: tensor<4x30xf32>, %v: tensor<f32>) -> tensor<4x32xf32> {
  %p = graph.pad constant %x, %v low [0, 1] high [0, 1] interior [0, 0] : (tensor<4x30xf32>, tensor<f32>) -> tensor<4x32xf32>
  %e = graph.exp %p : tensor<4x32xf32>
  func.return %e : tensor<4x32xf32>
}

// CHECK-LABEL: gpu.func @reflect_k0
// CHECK:       %[[PERIOD:.*]] = arith.constant 58 : index
// CHECK:       %[[Q:.*]] = arith.divui %{{.*}}, %[[PERIOD]] : index
// CHECK:       %[[MIRROR:.*]] = arith.subi %[[PERIOD]], %{{.*}} : index
// CHECK:       arith.select %{{.*}}, %{{.*}}, %[[MIRROR]] : index
// CHECK:       memref.load
func.func @reflect(%x: tensor<4x30xf32>) -> tensor<4x32xf32> {
  %p = graph.pad reflect %x low [0, 1] high [0, 1] interior [0, 0] : (tensor<4x30xf32>) -> tensor<4x32xf32>
  func.return %p : tensor<4x32xf32>
}
