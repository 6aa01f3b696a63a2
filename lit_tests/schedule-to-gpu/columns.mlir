// A columns kernel as SIMT code: the warp's index in the grid is compared with the
// prefix sums of the operands' warps in a balanced tree (4 operands: 2 levels), each
// leaf is one operand's code for the batch tile of block_id.y: the bag loop with the
// operand's lanes as its stride, a butterfly of log2(lanes) shuffles, lane 0 storing
// the element at its offset in the concat (the dense operand: a copy).
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen,schedule-to-gpu' | filecheck %s
// With 4 elements per thread, a table row's 4 elements are one vector load:
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{vector=4},schedule-to-gpu' | filecheck %s --check-prefix=VEC

// CHECK-LABEL: gpu.func @cols_k0(
// CHECK:       %[[TID:.*]] = gpu.thread_id x
// CHECK:       %[[BX:.*]] = gpu.block_id x
// CHECK:       %[[WARP:.*]] = arith.addi
// CHECK:       gpu.block_id y
// CHECK:       %[[C2:.*]] = arith.cmpi slt, %[[WARP]], %{{.*}} : index
// CHECK-NEXT:  scf.if %[[C2]] {
// CHECK:         %[[C1:.*]] = arith.cmpi slt, %[[WARP]], %{{.*}} : index
// CHECK-NEXT:    scf.if %[[C1]] {
// the dense operand: a copy
// CHECK:           memref.load %dense
// CHECK:           memref.store %{{.*}}, %x
// CHECK:         } else {
// the hashed column, 8 lanes: the bag loop (stride 8) hashing and gathering, 3 shuffles
// CHECK:           scf.for
// CHECK:             memref.load %ids0
// CHECK:             arith.remsi
// CHECK:             memref.load %t0
// CHECK-COUNT-3:   gpu.shuffle xor
// CHECK-NOT:       gpu.shuffle
// CHECK:           memref.store %{{.*}}, %x
// CHECK:       } else {
// CHECK:         scf.if
// the weighted max column, 2 lanes: 1 shuffle
// CHECK:           memref.load %w1
// CHECK-COUNT-1:   gpu.shuffle xor
// CHECK-NOT:       gpu.shuffle
// CHECK:           memref.store %{{.*}}, %x
// CHECK:         } else {
// the mean column, 32 lanes: 5 shuffles
// CHECK-COUNT-5:   gpu.shuffle xor
// CHECK-NOT:       gpu.shuffle
// CHECK:           arith.mulf
// CHECK:           memref.store %{{.*}}, %x
// CHECK:       gpu.return

// VEC-LABEL: gpu.func @cols_k0(
// VEC:       scf.for
// VEC:         memref.load %ids0
// VEC:         gpu.load_vector %t0[%{{.*}}] : memref<?xf32> -> f32, f32, f32, f32
// VEC:       scf.for
// VEC:         memref.load %ids1
// VEC:         gpu.load_vector %t1[%{{.*}}] : memref<?xf32> -> f32, f32, f32, f32
// VEC:       scf.for
// VEC:         gpu.load_vector %t2
func.func @cols(%dense: tensor<8x3xf32>, %ids0: tensor<8x5xi32>, %t0: tensor<100x16xf32>, %ids1: tensor<8x2xi32>, %t1: tensor<30x8xf32>, %w1: tensor<8x2xf32>, %ids2: tensor<8x40xi32>, %t2: tensor<50x4xf32>, %w: tensor<31x2xf32>) -> tensor<8x2xf32> {
  %m0 = graph.constant dense<100> : tensor<8x5xi32>
  %h0 = graph.rem %ids0, %m0 : tensor<8x5xi32>
  %e0 = graph.gather %t0, %h0 : (tensor<100x16xf32>, tensor<8x5xi32>) -> tensor<8x5x16xf32>
  %r0 = graph.reduce sum %e0 dims [1] : (tensor<8x5x16xf32>) -> tensor<8x16xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<30x8xf32>, tensor<8x2xi32>) -> tensor<8x2x8xf32>
  %wb1 = graph.broadcast %w1 dims [0, 1] : (tensor<8x2xf32>) -> tensor<8x2x8xf32>
  %we1 = graph.mul %e1, %wb1 : tensor<8x2x8xf32>
  %r1 = graph.reduce max %we1 dims [1] : (tensor<8x2x8xf32>) -> tensor<8x8xf32>
  %e2 = graph.gather %t2, %ids2 : (tensor<50x4xf32>, tensor<8x40xi32>) -> tensor<8x40x4xf32>
  %r2 = graph.reduce sum %e2 dims [1] : (tensor<8x40x4xf32>) -> tensor<8x4xf32>
  %s2 = graph.constant dense<0.025> : tensor<8x4xf32>
  %a2 = graph.mul %r2, %s2 : tensor<8x4xf32>
  %x = graph.concat %dense, %r0, %r1, %a2 dim 1 : (tensor<8x3xf32>, tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x31xf32>
  %y = graph.dot %x, %w : (tensor<8x31xf32>, tensor<31x2xf32>) -> tensor<8x2xf32>
  func.return %y : tensor<8x2xf32>
}
