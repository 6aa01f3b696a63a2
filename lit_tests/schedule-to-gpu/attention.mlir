// The attention kernel: a thread per query row (block_q = 32 rows of one head per
// block, heads on grid y). The block's Q rows are staged once in shared memory (rows
// padded by one); each step of the key loop stages a block_k x d tile of K and of V
// (zero past the 20 keys), computes the block_k dot products in a loop over the head
// dim, applies the score chain (scale, mask loaded per key) with -inf past the last
// key, and updates the running max m, the running sum l (l·α + Σ p, α = exp(m - m'),
// each exp(x - m') the unit's 2^((x - m')·log2e): math.exp2 with fast-math afn)
// and the output row (acc·α, then Σ p·V in a loop over the tile's keys, p read back
// from the thread's row of shared memory) -- the loop's iter_args; the row is divided
// by l and stored under the row guard. No score is stored to global memory.
// RUN: fs-opt %s -p schedule-to-gpu | filecheck %s

// CHECK-LABEL: gpu.func @attn_k0(
// CHECK-SAME: %[[K:[^:]+]]: memref<?xf32>, %[[Q:[^:]+]]: memref<?xf32>, %[[MASK:[^:]+]]: memref<?xf32>, %[[V:[^:]+]]: memref<?xf32>, %[[O:[^:]+]]: memref<?xf32>)
// CHECK-SAME: workgroup(%[[QT:.*]] : memref<160xf32, 3 : i64>, %[[KT:.*]] : memref<32xf32, 3 : i64>, %[[VT:.*]] : memref<16xf32, 3 : i64>, %[[PT:.*]] : memref<288xf32, 3 : i64>) kernel attributes {gpu.known_block_size = array<i32: 32, 1, 1>}
// CHECK-COUNT-4: memref.store %{{.*}}, %[[QT]]
// CHECK: %{{.*}}, %[[LSUM:[^,]+]], %[[OUT0:[^,]+]], %[[OUT1:[^ ]+]] = scf.for %[[K0:[^ ]+]] = %{{.*}} iter_args(%[[M:[^ ]+]] = %{{[^,]+}}, %[[L:[^ ]+]] = %{{[^,]+}}, %[[A0:[^ ]+]] = %{{[^,]+}}, %[[A1:[^ ]+]] = %{{[^)]+}}) -> (f32, f32, f32, f32) {
// CHECK: memref.load %[[K]]
// CHECK: memref.store %{{.*}}, %[[KT]]
// CHECK: memref.load %[[V]]
// CHECK: memref.store %{{.*}}, %[[VT]]
// CHECK: gpu.barrier
// CHECK-NEXT: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: %[[QD:.*]] = memref.load %[[QT]]
// CHECK-NEXT: memref.load %[[KT]]
// CHECK-NEXT: math.fma %[[QD]]
// CHECK-COUNT-7: math.fma %[[QD]]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK: arith.minsi %[[K0]]
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: memref.load %[[MASK]]
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.cmpi slt, %[[K0]]
// CHECK-NEXT: arith.select
// CHECK-NOT: memref.store
// CHECK-COUNT-6: arith.maximumf
// CHECK-NEXT: %[[TILEMAX:.*]] = arith.maximumf
// CHECK-NEXT: %[[MNEW:.*]] = arith.maximumf %[[M]], %[[TILEMAX]] : f32
// CHECK-NEXT: %[[NINF:.*]] = arith.cmpf oeq, %[[MNEW]]
// CHECK-NEXT: %[[SHIFT:.*]] = arith.select %[[NINF]], %{{.*}}, %[[MNEW]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[M]], %[[SHIFT]] : f32
// CHECK-NEXT: %[[DL:.*]] = arith.mulf %[[D]], %[[LOG2E:.*]] : f32
// CHECK-NEXT: %[[ALPHA:.*]] = math.exp2 %[[DL]] fastmath<afn> : f32
// CHECK-COUNT-8: math.exp2 %{{.*}} fastmath<afn>
// CHECK-COUNT-6: arith.addf
// CHECK-NEXT: %[[PSUM:.*]] = arith.addf
// CHECK-NEXT: %[[LNEW:.*]] = math.fma %[[L]], %[[ALPHA]], %[[PSUM]] : f32
// CHECK-COUNT-8: memref.store %{{.*}}, %[[PT]]
// CHECK-NEXT: %[[R0:.*]] = arith.mulf %[[A0]], %[[ALPHA]] : f32
// CHECK-NEXT: %[[R1:.*]] = arith.mulf %[[A1]], %[[ALPHA]] : f32
// CHECK-NEXT: %[[N0:[^,]+]], %[[N1:[^ ]+]] = scf.for %{{.*}} iter_args(%[[C0:[^ ]+]] = %[[R0]], %[[C1:[^ ]+]] = %[[R1]]) -> (f32, f32) {
// CHECK: %[[PJ:.*]] = memref.load %[[PT]]
// CHECK: memref.load %[[VT]]
// CHECK-NEXT: math.fma %[[PJ]], %{{.*}}, %[[C0]] : f32
// CHECK: memref.load %[[VT]]
// CHECK-NEXT: math.fma %[[PJ]], %{{.*}}, %[[C1]] : f32
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield %[[MNEW]], %[[LNEW]], %[[N0]], %[[N1]] : f32, f32, f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: scf.if
// CHECK-NEXT: arith.divf %[[OUT0]], %[[LSUM]] : f32
// CHECK: memref.store %{{.*}}, %[[O]]
// CHECK: arith.divf %[[OUT1]], %[[LSUM]] : f32
// CHECK: memref.store %{{.*}}, %[[O]]
// CHECK: gpu.return
func.func @attn(%q: tensor<1x2x20x4xf32>, %k: tensor<1x2x20x4xf32>, %v: tensor<1x2x20x2xf32>, %mask: tensor<1x1x1x20xf32>) -> tensor<1x2x20x2xf32> {
  %o = schedule.kernel @attn_k0 attention<block_q = 32, block_k = 8> grid [1, 2, 1] block [32, 1, 1] (%k, %q, %mask, %v) : (tensor<1x2x20x4xf32>, tensor<1x2x20x4xf32>, tensor<1x1x1x20xf32>, tensor<1x2x20x2xf32>) -> tensor<1x2x20x2xf32> {
  ^bb0(%k_1: tensor<1x2x20x4xf32>, %q_1: tensor<1x2x20x4xf32>, %mask_1: tensor<1x1x1x20xf32>, %v_1: tensor<1x2x20x2xf32>):
    schedule.shared @q_tile : memref<160xf32, 3 : i64>
    schedule.shared @k_tile : memref<32xf32, 3 : i64>
    schedule.shared @v_tile : memref<16xf32, 3 : i64>
    schedule.shared @p_tile : memref<288xf32, 3 : i64>
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
