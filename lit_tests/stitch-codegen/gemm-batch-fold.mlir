// A batch of matrices times one matrix ([B, M, K] x [K, N]) is one (B x M) x K product:
// the batch's rows are consecutive in the row-major lhs and result, so block tiles span
// them (grid y covers B x M rows, grid z only the split) and the rhs is read once per
// row tile. A's row m is loaded at m x K (no division by M in the k-loop).
// A batched rhs, or an A computed in the kernel, keeps the batch on grid z.
// RUN: fs-opt %s -p 'stitch-codegen{gemm="32x32x16/4x4"}' | filecheck %s
// RUN: fs-opt %s -p 'stitch-codegen{gemm="32x32x16/4x4"},schedule-to-gpu' | filecheck %s --check-prefix=GPU

// 144 rows in tiles of 32: the third tile holds rows 64-95 of both batches.
// CHECK-LABEL: func.func @folded
// CHECK: schedule.kernel @folded_k0 gemm<tile = 32x32x16, thread = 4x4> grid [3, 5, 1] block [64, 1, 1]
// GPU-LABEL: gpu.func @folded_k0
// GPU: scf.for
// GPU-NOT: arith.constant 72 : index
// GPU: memref.load %a[%{{.*}}] : memref<?xf32>
// GPU: gpu.return
func.func @folded(%a: tensor<2x72x64xf32>, %w: tensor<64x96xf32>) -> tensor<2x72x96xf32> {
  %d = graph.dot %a, %w : (tensor<2x72x64xf32>, tensor<64x96xf32>) -> tensor<2x72x96xf32>
  func.return %d : tensor<2x72x96xf32>
}

// CHECK-LABEL: func.func @batched_rhs
// CHECK: schedule.kernel @batched_rhs_k0 gemm<tile = 32x32x16, thread = 4x4> grid [3, 3, 2] block [64, 1, 1]
func.func @batched_rhs(%a: tensor<2x72x64xf32>, %w: tensor<2x64x96xf32>) -> tensor<2x72x96xf32> {
  %d = graph.dot %a, %w : (tensor<2x72x64xf32>, tensor<2x64x96xf32>) -> tensor<2x72x96xf32>
  func.return %d : tensor<2x72x96xf32>
}

// CHECK-LABEL: func.func @computed_a
// CHECK: schedule.kernel @computed_a_k0 gemm<tile = 32x32x16, thread = 4x4> grid [3, 3, 2] block [64, 1, 1]
// CHECK: graph.tanh
func.func @computed_a(%a: tensor<2x72x64xf32>, %w: tensor<64x96xf32>) -> tensor<2x72x96xf32> {
  %y = stitch.fusion (%a, %w) : (tensor<2x72x64xf32>, tensor<64x96xf32>) -> tensor<2x72x96xf32> {
  ^bb0(%x: tensor<2x72x64xf32>, %v: tensor<64x96xf32>):
    %t = graph.tanh %x : tensor<2x72x64xf32>
    %d = graph.dot %t, %v : (tensor<2x72x64xf32>, tensor<64x96xf32>) -> tensor<2x72x96xf32>
    stitch.yield %d : tensor<2x72x96xf32>
  }
  func.return %y : tensor<2x72x96xf32>
}
