// The attention kernel on the tensor cores (mma: a warp per 16 query rows; f32
// operands, so tf32 m16n8k8 mmas). The block's Q rows are staged once and, after a
// barrier, the lane's A fragments of Q (two head-dim steps of 8) are read and rounded
// once, before the key loop (held in registers: `q_in_registers`). Each step of the
// key loop (carrying the lane's two rows' running max and sum and its 4 output
// accumulators) stages the K and V tiles in loops, each element rounded to tf32 as it
// is stored (the K and V tiles hold i32 bit patterns); then S = Q·Kᵀ: per head-dim
// step each n-tile's K fragment (two loads, the operand registers themselves) feeds an
// mma with the held Q fragment, 8 mmas unrolled. The score chain, then per row a max over the lane's scores and the 4
// lanes of the row (2 xor shuffles); the output accumulators are rescaled and the
// probabilities, rounded in registers in the order (key 2t, row g + 8 key 2t, key
// 2t + 1, ...), are the A fragments of the P·V mmas. After the loop the rows' sums
// meet by 2 shuffles each; a lane divides and stores its accumulators.
// RUN: fs-opt %s -p schedule-to-gpu | filecheck %s

// CHECK-LABEL: gpu.func @attn_k0(
// CHECK-SAME: workgroup(%[[QT:.*]] : memref<320xf32, 3 : i64>, %[[KT:.*]] : memref<640xi32, 3 : i64>, %[[VT:.*]] : memref<384xi32, 3 : i64>) kernel attributes {gpu.known_block_size = array<i32: 32, 1, 1>}
// CHECK: memref.store %{{.*}}, %[[QT]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[QT]]
// CHECK: %[[A0:.*]] = gpu.round_tf32
// CHECK-NEXT: %[[A1:.*]] = gpu.round_tf32
// CHECK-NEXT: %[[A2:.*]] = gpu.round_tf32
// CHECK-NEXT: %[[A3:.*]] = gpu.round_tf32
// CHECK: memref.load %[[QT]]
// CHECK: %[[B0:.*]] = gpu.round_tf32
// CHECK-NEXT: %[[B1:.*]] = gpu.round_tf32
// CHECK-NEXT: %[[B2:.*]] = gpu.round_tf32
// CHECK-NEXT: %[[B3:.*]] = gpu.round_tf32
// CHECK: scf.for {{.*}} iter_args(%[[M0:[^ ]+]] = %{{[^,]+}}, %[[M1:[^ ]+]] = %{{[^,]+}}, %[[L0:[^ ]+]] = %{{[^,]+}}, %[[L1:[^ ]+]] = %{{[^,]+}}, %[[O0:[^ ]+]] = %{{[^,]+}}, %{{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: %[[KR:.*]] = gpu.round_tf32
// CHECK: memref.store %[[KR]], %[[KT]]
// CHECK: memref.store %{{.*}}, %[[VT]]
// CHECK: gpu.barrier
// CHECK-NOT: scf.for
// CHECK-NOT: gpu.round_tf32
// CHECK: %[[K0:.*]] = memref.load %[[KT]]
// CHECK-NEXT: %[[K1:.*]] = memref.load %[[KT]]
// CHECK-NEXT: gpu.mma_sync tf32 [%[[A0]], %[[A1]], %[[A2]], %[[A3]]] [%[[K0]], %[[K1]]]
// CHECK-COUNT-3: gpu.mma_sync tf32 [%[[A0]], %[[A1]], %[[A2]], %[[A3]]]
// CHECK-NOT: gpu.round_tf32
// CHECK: gpu.mma_sync tf32 [%[[B0]], %[[B1]], %[[B2]], %[[B3]]]
// CHECK-COUNT-3: gpu.mma_sync tf32 [%[[B0]], %[[B1]], %[[B2]], %[[B3]]]
// CHECK: memref.load %mask
// CHECK: gpu.shuffle xor
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: gpu.shuffle xor
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: %[[MNEW:.*]] = arith.maximumf %[[M0]]
// CHECK: math.fma %[[L0]]
// CHECK: math.fma %[[L1]]
// CHECK-NEXT: %[[R0:.*]] = arith.mulf %[[O0]]
// CHECK-COUNT-3: arith.mulf
// CHECK-NEXT: gpu.round_tf32
// CHECK-COUNT-3: gpu.round_tf32
// CHECK: memref.load %[[VT]]
// CHECK-NOT: gpu.round_tf32
// CHECK: gpu.mma_sync tf32 [{{.*}}] [{{.*}}] [%[[R0]],
// CHECK-COUNT-3: gpu.mma_sync tf32
// CHECK-NOT: gpu.mma_sync
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield %[[MNEW]]
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %o
// CHECK: gpu.return
func.func @attn(%q: tensor<1x2x20x16xf32>, %k: tensor<1x2x20x16xf32>, %v: tensor<1x2x20x8xf32>, %mask: tensor<1x1x1x20xf32>) -> tensor<1x2x20x8xf32> {
  %o = schedule.kernel @attn_k0 attention<block_q = 16, block_k = 32, warp_rows = 16, mma> grid [2, 2, 1] block [32, 1, 1] (%k, %q, %mask, %v) : (tensor<1x2x20x16xf32>, tensor<1x2x20x16xf32>, tensor<1x1x1x20xf32>, tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> {
  ^bb0(%k_1: tensor<1x2x20x16xf32>, %q_1: tensor<1x2x20x16xf32>, %mask_1: tensor<1x1x1x20xf32>, %v_1: tensor<1x2x20x8xf32>):
    schedule.shared @q_tile : memref<320xf32, 3 : i64>
    schedule.shared @k_tile : memref<640xi32, 3 : i64>
    schedule.shared @v_tile : memref<384xi32, 3 : i64>
    %o_1 = schedule.group block -> global : tensor<1x2x20x8xf32> {
      %scale = graph.constant dense<2.500000e-01> : tensor<1x2x20x20xf32>
      %kt = graph.transpose %k_1 perm [0, 1, 3, 2] : (tensor<1x2x20x16xf32>) -> tensor<1x2x16x20xf32>
      %s = graph.dot %q_1, %kt : (tensor<1x2x20x16xf32>, tensor<1x2x16x20xf32>) -> tensor<1x2x20x20xf32>
      %x0 = graph.mul %s, %scale : tensor<1x2x20x20xf32>
      %mb = graph.broadcast %mask_1 dims [0, 1, 2, 3] : (tensor<1x1x1x20xf32>) -> tensor<1x2x20x20xf32>
      %x = graph.add %x0, %mb : tensor<1x2x20x20xf32>
      %mx = graph.reduce max %x dims [3] : (tensor<1x2x20x20xf32>) -> tensor<1x2x20xf32>
      %mxb = graph.broadcast %mx dims [0, 1, 2] : (tensor<1x2x20xf32>) -> tensor<1x2x20x20xf32>
      %sh = graph.sub %x, %mxb : tensor<1x2x20x20xf32>
      %e = graph.exp %sh : tensor<1x2x20x20xf32>
      %sum = graph.reduce sum %e dims [3] : (tensor<1x2x20x20xf32>) -> tensor<1x2x20xf32>
      %sumb = graph.broadcast %sum dims [0, 1, 2] : (tensor<1x2x20xf32>) -> tensor<1x2x20x20xf32>
      %p = graph.div %e, %sumb : tensor<1x2x20x20xf32>
      %o_2 = graph.dot %p, %v_1 : (tensor<1x2x20x20xf32>, tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32>
      schedule.yield %o_2 : tensor<1x2x20x8xf32>
    }
    schedule.yield %o_1 : tensor<1x2x20x8xf32>
  }
  func.return %o : tensor<1x2x20x8xf32>
}
