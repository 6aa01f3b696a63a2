// The columns mapping: one kernel for all embedding columns of a concat. Each column
// is a group kept in registers (thread composition with one lane per (row, element),
// warp composition when lanes split the bag: the latency-evaluator gives the 40-long
// bag a whole warp, the 2-long one 2 lanes); the root group is the concat with the
// columns' tail ops (the mean's scale); the kernel's parameters carry the prefix sums
// of the warps each concat operand owns (the dense operand, copied, owns one), their
// lanes and the elements a thread takes (`vectors`).
// With 8 rows the kernel is latency-bound and a thread takes one embedding element;
// `vector=4` makes the columns whose dim 4 divides take 4 (the dense copy keeps 1).
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen{vector=4}' | filecheck %s --check-prefix=VEC

// CHECK-LABEL: func.func @cols
// CHECK:       schedule.kernel @cols_k0 columns<rows_per_tile = 8, warps = [0, 1, 33, 37, 69], lanes = [1, 8, 2, 32], vectors = [1, 1, 1, 1]> grid [9, 1, 1] block [256, 1, 1]
// CHECK:         %[[R0:.*]] = schedule.group warp -> reg : tensor<8x16xf32> {
// CHECK:           graph.reduce sum
// CHECK:         %[[R1:.*]] = schedule.group warp -> reg : tensor<8x8xf32> {
// CHECK:           graph.reduce max
// CHECK:         %[[R2:.*]] = schedule.group warp -> reg : tensor<8x4xf32> {
// CHECK:           graph.reduce sum
// CHECK:         schedule.group thread -> global : tensor<8x31xf32> {
// CHECK:           %[[A:.*]] = graph.mul %[[R2]], %{{.*}} : tensor<8x4xf32>
// CHECK-NEXT:      graph.concat %{{.*}}, %[[R0]], %[[R1]], %[[A]] dim 1
// CHECK:       schedule.kernel @cols_k1 gemm

// VEC: schedule.kernel @cols_k0 columns<rows_per_tile = 8, warps = [0, 1, 9, 10, 18], lanes = [1, 8, 2, 32], vectors = [1, 4, 4, 4]> grid [3, 1, 1]
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
