// The attention kernel's warp schedule (warp_rows = 2: a warp per 2 query rows,
// block_q = 4 rows, so 2 warps; 20 keys, ragged against the 32-key tile). The block's
// Q rows are staged once; each step of the key loop stages the K tile (rows padded to
// 4 + 4 floats, 16-byte aligned), the V tile (zero past the 20 keys), then lane l
// computes the dot products of its key k0 + l with the warp's 2 rows (4-wide loads of
// its K row and of each Q row: a broadcast), the score chain (scale, mask, -inf past
// the last key), per row a butterfly of 5 xor shuffles for the tile's max, the
// rescale α = exp(m - m') and its probability (the unit's 2^((x - m')·log2e): exp2
// with fast-math afn), stored to the rows' probabilities in
// shared memory; after a barrier P·V runs over the tile's keys 4 at a time (4-wide
// probability loads, the lane's value column). The lanes' partial row sums meet in a
// sum butterfly after the loop; a lane stores its column of each row.
// RUN: fs-opt %s -p schedule-to-gpu | filecheck %s

// CHECK-LABEL: gpu.func @attn_k0(
// CHECK-SAME: %[[K:[^:]+]]: memref<?xf32>, %[[Q:[^:]+]]: memref<?xf32>, %[[MASK:[^:]+]]: memref<?xf32>, %[[V:[^:]+]]: memref<?xf32>, %[[O:[^:]+]]: memref<?xf32>)
// CHECK-SAME: workgroup(%[[QT:.*]] : memref<16xf32, 3 : i64>, %[[KT:.*]] : memref<256xf32, 3 : i64>, %[[VT:.*]] : memref<64xf32, 3 : i64>, %[[PT:.*]] : memref<128xf32, 3 : i64>) kernel attributes {gpu.known_block_size = array<i32: 64, 1, 1>}
// CHECK: memref.load %[[Q]]
// CHECK-NEXT: memref.store %{{.*}}, %[[QT]]
// CHECK: scf.for %[[K0:[^ ]+]] = {{.*}} iter_args(%[[M0:[^ ]+]] = %{{[^,]+}}, %[[M1:[^ ]+]] = %{{[^,]+}}, %[[L0:[^ ]+]] = %{{[^,]+}}, %[[L1:[^ ]+]] = %{{[^,]+}}, %[[A0:[^ ]+]] = %{{[^,]+}}, %[[A1:[^ ]+]] = %{{[^)]+}}) -> (f32, f32, f32, f32, f32, f32) {
// CHECK: memref.load %[[K]]
// CHECK: memref.store %{{.*}}, %[[KT]]
// CHECK: memref.load %[[V]]
// CHECK: memref.store %{{.*}}, %[[VT]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[D0:[^,]+]], %[[D1:[^ ]+]] = scf.for
// CHECK: %[[KV:[^,]+]], %{{.*}} = gpu.load_vector %[[KT]]
// CHECK: gpu.load_vector %[[QT]]
// CHECK-NEXT: math.fma %{{.*}}, %[[KV]]
// CHECK-COUNT-3: math.fma
// CHECK: gpu.load_vector %[[QT]]
// CHECK-NEXT: math.fma %{{.*}}, %[[KV]]
// CHECK-COUNT-3: math.fma
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK: arith.mulf %[[D0]]
// CHECK: memref.load %[[MASK]]
// CHECK: %[[X0:.*]] = arith.select
// CHECK-NEXT: gpu.shuffle xor %[[X0]]
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK-NEXT: %[[TMAX:.*]] = arith.maximumf
// CHECK-NEXT: %[[MNEW:.*]] = arith.maximumf %[[M0]], %[[TMAX]] : f32
// CHECK-NEXT: arith.cmpf oeq, %[[MNEW]]
// CHECK-NEXT: %[[SHIFT:.*]] = arith.select
// CHECK-NEXT: arith.subf %[[M0]], %[[SHIFT]]
// CHECK-NEXT: %[[ALPHA:.*]] = math.exp %{{.*}} : f32
// CHECK-NEXT: %[[SH0:.*]] = arith.subf %[[X0]], %[[SHIFT]]
// CHECK-NEXT: %[[SL0:.*]] = arith.mulf %[[SH0]], %{{.*}} : f32
// CHECK-NEXT: %[[P0:.*]] = math.exp2 %[[SL0]] fastmath<afn> : f32
// CHECK-NEXT: memref.store %[[P0]], %[[PT]]
// CHECK-NEXT: math.fma %[[L0]], %[[ALPHA]], %[[P0]] : f32
// CHECK: arith.mulf %[[D1]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.store %{{.*}}, %[[PT]]
// CHECK: arith.mulf %[[A0]], %[[ALPHA]] : f32
// CHECK-NEXT: arith.mulf %[[A1]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK: %[[PJ:[^,]+]], %{{.*}} = gpu.load_vector %[[PT]]
// CHECK: gpu.load_vector %[[PT]]
// CHECK: %[[VJ:.*]] = memref.load %[[VT]]
// CHECK-NEXT: math.fma %[[PJ]], %[[VJ]]
// CHECK-NEXT: math.fma
// CHECK-COUNT-3: memref.load %[[VT]]
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: scf.if
// CHECK-NEXT: arith.divf
// CHECK: memref.store %{{.*}}, %[[O]]
// CHECK: scf.if
// CHECK-NEXT: arith.divf
// CHECK: memref.store %{{.*}}, %[[O]]
// CHECK: gpu.return
func.func @attn(%q: tensor<1x2x20x4xf32>, %k: tensor<1x2x20x4xf32>, %v: tensor<1x2x20x2xf32>, %mask: tensor<1x1x1x20xf32>) -> tensor<1x2x20x2xf32> {
  %o = schedule.kernel @attn_k0 attention<block_q = 4, block_k = 32, warp_rows = 2> grid [5, 2, 1] block [64, 1, 1] (%k, %q, %mask, %v) : (tensor<1x2x20x4xf32>, tensor<1x2x20x4xf32>, tensor<1x1x1x20xf32>, tensor<1x2x20x2xf32>) -> tensor<1x2x20x2xf32> {
  ^bb0(%k_1: tensor<1x2x20x4xf32>, %q_1: tensor<1x2x20x4xf32>, %mask_1: tensor<1x1x1x20xf32>, %v_1: tensor<1x2x20x2xf32>):
    schedule.shared @q_tile : memref<16xf32, 3 : i64>
    schedule.shared @k_tile : memref<256xf32, 3 : i64>
    schedule.shared @v_tile : memref<64xf32, 3 : i64>
    schedule.shared @p_tile : memref<128xf32, 3 : i64>
    %o_1 = schedule.group block -> global : tensor<1x2x20x2xf32> {
      %scale = graph.constant dense<5.000000e-01> : tensor<1x2x20x20xf32>
      %kt = graph.transpose %k_1 perm [0, 1, 3, 2] : (tensor<1x2x20x4xf32>) -> tensor<1x2x4x20xf32>
      %s = graph.dot %q_1, %kt : (tensor<1x2x20x4xf32>, tensor<1x2x4x20xf32>) -> tensor<1x2x20x20xf32>
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
      %o_2 = graph.dot %p, %v_1 : (tensor<1x2x20x20xf32>, tensor<1x2x20x2xf32>) -> tensor<1x2x20x2xf32>
      schedule.yield %o_2 : tensor<1x2x20x2xf32>
    }
    schedule.yield %o_1 : tensor<1x2x20x2xf32>
  }
  func.return %o : tensor<1x2x20x2xf32>
}
