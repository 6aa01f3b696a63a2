// Keeping the row on chip and computing once per thread (FusionStitching §4.5) on
// the gpu IR of a fused LayerNorm-like kernel (8192 rows of 256):
// - x is loaded once per row and element; the mean-subtracted value %[[XC]] feeds both
//   the variance reduction and the output (no second or third load of x);
// - the mean (divf) and 1/sqrt(var) are computed once per thread and row;
// - the block takes 8 rows in turn (row_steps), and gamma, whose index does not
//   depend on the row, is loaded once before that loop and reused for every row;
// - the element's index (%[[OFF]]) is computed once and serves the load and the store.
// (Scalar accesses, vector=1, keep the pattern readable; lit_tests/schedule-to-gpu/
// vector.mlir has the vector forms.)
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{vector=1},schedule-to-gpu' | filecheck %s

// CHECK-LABEL: gpu.func @layernorm_k0(
// CHECK-SAME:  %[[X:.*]]: memref<?xf32>, %[[G:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>)
// CHECK:       %[[LANE:.*]] = arith.remui
// CHECK:       %[[GV:.*]] = memref.load %[[G]][%[[LANE]]]
// CHECK-NEXT:  scf.for
// CHECK:       %[[OFF:.*]] = arith.addi %{{.*}}, %[[LANE]] : index
// CHECK-NEXT:  %[[XV:.*]] = memref.load %[[X]][%[[OFF]]]
// CHECK-NOT:   memref.load %[[X]]
// CHECK-NOT:   memref.load %[[G]]
// CHECK:       gpu.barrier
// CHECK:       gpu.barrier
// CHECK:       %[[MEAN:.*]] = arith.divf
// CHECK-NEXT:  %[[XC:.*]] = arith.subf %[[XV]], %[[MEAN]] : f32
// CHECK-NEXT:  arith.mulf %[[XC]], %[[XC]] : f32
// CHECK-NOT:   memref.load %[[X]]
// CHECK-NOT:   arith.subf
// CHECK:       gpu.barrier
// CHECK:       gpu.barrier
// CHECK:       %[[VAR:.*]] = arith.divf
// CHECK-NEXT:  %[[RSTD:.*]] = math.rsqrt %[[VAR]] : f32
// CHECK-NEXT:  %[[XHAT:.*]] = arith.mulf %[[XC]], %[[RSTD]] : f32
// CHECK-NEXT:  %[[OUT:.*]] = arith.mulf %[[XHAT]], %[[GV]] : f32
// CHECK-NOT:   memref.load %[[X]]
// CHECK:       memref.store %[[OUT]], %[[Y]][%[[OFF]]]
// CHECK:       gpu.return
func.func @layernorm(%x: tensor<8192x256xf32>, %gamma: tensor<256xf32>) -> tensor<8192x256xf32> {
  %n = graph.constant dense<2.560000e+02> : tensor<8192xf32>
  %sum = graph.reduce sum %x dims [1] : (tensor<8192x256xf32>) -> tensor<8192xf32>
  %mean = graph.div %sum, %n : tensor<8192xf32>
  %mean_b = graph.broadcast %mean dims [0] : (tensor<8192xf32>) -> tensor<8192x256xf32>
  %xc = graph.sub %x, %mean_b : tensor<8192x256xf32>
  %sq = graph.mul %xc, %xc : tensor<8192x256xf32>
  %ss = graph.reduce sum %sq dims [1] : (tensor<8192x256xf32>) -> tensor<8192xf32>
  %var = graph.div %ss, %n : tensor<8192xf32>
  %rstd = graph.rsqrt %var : tensor<8192xf32>
  %rstd_b = graph.broadcast %rstd dims [0] : (tensor<8192xf32>) -> tensor<8192x256xf32>
  %xhat = graph.mul %xc, %rstd_b : tensor<8192x256xf32>
  %gamma_b = graph.broadcast %gamma dims [1] : (tensor<256xf32>) -> tensor<8192x256xf32>
  %y = graph.mul %xhat, %gamma_b : tensor<8192x256xf32>
  func.return %y : tensor<8192x256xf32>
}
