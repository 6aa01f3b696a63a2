// graph.dot becomes a tiled shared-memory GEMM; light producers are inlined into the
// tile loads.
// RUN: fs-opt %s -p stitch-codegen | filecheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: schedule.kernel @matmul_k0 gemm {tile_m = 16 : i64, tile_n = 16 : i64, tile_k = 16 : i64} grid [3, 2, 2] block [256, 1, 1]
// CHECK-NEXT: ^{{.*}}(%[[A:.*]]: tensor<2x20x40xf32>, %[[B:.*]]: tensor<40x33xf32>):
// CHECK-NEXT: schedule.shared @a_tile : memref<256xf32, 3 : i64>
// CHECK-NEXT: schedule.shared @b_tile : memref<256xf32, 3 : i64>
// CHECK-NEXT: schedule.group block -> global : tensor<2x20x33xf32> {
// CHECK-NEXT: %[[T:.*]] = graph.tanh %[[A]]
// CHECK-NEXT: graph.dot %[[T]], %[[B]]
func.func @matmul(%a: tensor<2x20x40xf32>, %b: tensor<40x33xf32>) -> tensor<2x20x33xf32> {
  %y = stitch.fusion (%a, %b) : (tensor<2x20x40xf32>, tensor<40x33xf32>) -> tensor<2x20x33xf32> {
  ^bb0(%x: tensor<2x20x40xf32>, %w: tensor<40x33xf32>):
    %t = graph.tanh %x : tensor<2x20x40xf32>
    %d = graph.dot %t, %w : (tensor<2x20x40xf32>, tensor<40x33xf32>) -> tensor<2x20x33xf32>
    stitch.yield %d : tensor<2x20x33xf32>
  }
  func.return %y : tensor<2x20x33xf32>
}
