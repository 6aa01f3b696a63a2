// Scatter and sort are computed per result element by loops: a scatter element starts
// from the operand's element and visits every update in order, combining those whose
// index vector names its row; a sort element picks the value whose stable rank (an inner
// loop counting the keys before it) is its position.
// RUN: fs-opt %s -p stitch-codegen,schedule-to-gpu | filecheck %s

// CHECK-LABEL: gpu.func @scatter_k0(
// CHECK-SAME: %[[X:.*]]: memref<?xf32>, %[[I:.*]]: memref<?xi32>, %[[U:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?xf32>)
// CHECK-DAG: %[[COL:.*]] = arith.remui %[[E:.*]], %{{.*}} : index
// CHECK-DAG: %[[ROW:.*]] = arith.divui %[[E]], %{{.*}} : index
// CHECK: %[[START:.*]] = memref.load %[[X]][%[[E]]] : memref<?xf32>
// CHECK: %[[R:.*]] = scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[START]]) -> (f32) {
// CHECK-NEXT: %[[ID:.*]] = memref.load %[[I]][%[[B]]] : memref<?xi32>
// CHECK-NEXT: %[[IDX:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT: %[[HIT:.*]] = arith.cmpi eq, %[[IDX]], %[[ROW]] : index
// CHECK: %[[UPD:.*]] = memref.load %[[U]][%{{.*}}] : memref<?xf32>
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[ACC]], %[[UPD]] : f32
// CHECK-NEXT: %[[NEW:.*]] = arith.select %[[HIT]], %[[SUM]], %[[ACC]] : f32
// CHECK-NEXT: scf.yield %[[NEW]] : f32
// CHECK: memref.store %[[R]], %[[OUT]][%[[E]]] : memref<?xf32>
func.func @scatter(%x: tensor<8x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>) -> tensor<8x4xf32> {
  %y = stitch.fusion (%x, %i, %u) : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>, %b: tensor<3x1xi32>, %c: tensor<3x4xf32>):
    %r = graph.scatter add %a, %b, %c dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
    stitch.yield %r : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// CHECK-LABEL: gpu.func @sort_k0(
// CHECK-SAME: %[[K:.*]]: memref<?xi32>, %[[V:.*]]: memref<?xf32>, %[[SOUT:.*]]: memref<?xf32>)
// CHECK: %[[POS:.*]] = arith.remui %[[SE:.*]], %{{.*}} : index
// CHECK: %[[PICK:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CUR:.*]] = %{{.*}}) -> (f32) {
// CHECK: %[[KJ:.*]] = memref.load %[[K]]
// CHECK: %[[RANK:.*]] = scf.for %[[II:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CNT:.*]] = %{{.*}}) -> (index) {
// CHECK: %[[KI:.*]] = memref.load %[[K]]
// CHECK: arith.cmpi sgt, %[[KI]], %[[KJ]] : i32
// CHECK: arith.cmpi slt, %[[II]], %[[J]] : index
// CHECK: scf.yield %{{.*}} : index
// CHECK: %[[AT:.*]] = arith.cmpi eq, %[[RANK]], %[[POS]] : index
// CHECK: %[[VJ:.*]] = memref.load %[[V]]
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[AT]], %[[VJ]], %[[CUR]] : f32
// CHECK-NEXT: scf.yield %[[SEL]] : f32
// CHECK: memref.store %[[PICK]], %[[SOUT]][%[[SE]]] : memref<?xf32>
func.func @sort(%k: tensor<3x10xi32>, %v: tensor<3x10xf32>) -> tensor<3x10xf32> {
  %y = stitch.fusion (%k, %v) : (tensor<3x10xi32>, tensor<3x10xf32>) -> tensor<3x10xf32> {
  ^bb0(%a: tensor<3x10xi32>, %b: tensor<3x10xf32>):
    %s = graph.sort descending %a, %b dim 1 : (tensor<3x10xi32>, tensor<3x10xf32>) -> tensor<3x10xf32>
    stitch.yield %s : tensor<3x10xf32>
  }
  func.return %y : tensor<3x10xf32>
}
