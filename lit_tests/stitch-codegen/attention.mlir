// stitch-codegen gives an attention fusion the attention mapping, the configuration
// chosen by the latency-evaluator among the candidates: here the warp schedule, a warp
// per 2 query rows (block_q = 16 rows: 8 warps, 256 threads) per head, heads on grid y;
// in shared memory (f32) the block's Q rows (16 x 8), the key tile (32 keys, rows
// padded to 8 + 4), the value tile (32 x 8) and the rows' probabilities (16 x 32).
// RUN: fs-opt %s -p stitch-codegen | filecheck %s

// CHECK-LABEL: func.func @additive
// CHECK: %[[O:.*]] = schedule.kernel @additive_k0 attention<block_q = 16, block_k = 32, warp_rows = 2> grid [1, 2, 1] block [256, 1, 1] cost {{{.*}}candidates = 3 : i64, config = "attention/16x32/2rows", requested_bytes = {{[0-9]+}} : i64} (%k, %q, %mask, %v)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: schedule.shared @q_tile : memref<128xf32, 3 : i64>
// CHECK-NEXT: schedule.shared @k_tile : memref<384xf32, 3 : i64>
// CHECK-NEXT: schedule.shared @v_tile : memref<256xf32, 3 : i64>
// CHECK-NEXT: schedule.shared @p_tile : memref<512xf32, 3 : i64>
// CHECK-NEXT: %[[G:.*]] = schedule.group block -> global : tensor<1x2x16x8xf32> {
// CHECK: graph.dot
// CHECK: graph.dot
// CHECK: schedule.yield %[[G]]
// CHECK: func.return %[[O]]

// CHECK-LABEL: func.func @causal
// CHECK: schedule.kernel @causal_k0 attention<block_q = 16, block_k = 32, warp_rows = 2>
// CHECK: graph.iota

func.func @additive(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %mask: tensor<1x1x1x16xf32>) -> tensor<1x2x16x8xf32> {
  %o = stitch.fusion (%k, %q, %mask, %v) {pattern = 0 : i64, score = 1.201000e-05 : f64} : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x1x1x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  ^bb0(%k_1: tensor<1x2x16x8xf32>, %q_1: tensor<1x2x16x8xf32>, %mask_1: tensor<1x1x1x16xf32>, %v_1: tensor<1x2x16x8xf32>):
    %scale = graph.constant dense<0.353553414> : tensor<1x2x16x16xf32>
    %kt = graph.transpose %k_1 perm [0, 1, 3, 2] : (tensor<1x2x16x8xf32>) -> tensor<1x2x8x16xf32>
    %s = graph.dot %q_1, %kt : (tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x16x16xf32>
    %x0 = graph.mul %s, %scale : tensor<1x2x16x16xf32>
    %mb = graph.broadcast %mask_1 dims [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<1x2x16x16xf32>
    %x = graph.add %x0, %mb : tensor<1x2x16x16xf32>
    %mx = graph.reduce max %x dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
    %mxb = graph.broadcast %mx dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
    %sh = graph.sub %x, %mxb : tensor<1x2x16x16xf32>
    %e = graph.exp %sh : tensor<1x2x16x16xf32>
    %sum = graph.reduce sum %e dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
    %sumb = graph.broadcast %sum dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
    %p = graph.div %e, %sumb : tensor<1x2x16x16xf32>
    %o_1 = graph.dot %p, %v_1 : (tensor<1x2x16x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
    stitch.yield %o_1 : tensor<1x2x16x8xf32>
  }
  func.return %o : tensor<1x2x16x8xf32>
}
func.func @causal(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = stitch.fusion (%k, %q, %v) {pattern = 0 : i64, score = 1.601000e-05 : f64} : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  ^bb0(%k_1: tensor<1x2x16x8xf32>, %q_1: tensor<1x2x16x8xf32>, %v_1: tensor<1x2x16x8xf32>):
    %scale = graph.constant dense<0.353553414> : tensor<1x2x16x16xf32>
    %ninf = graph.constant dense<-1.000000e+30> : tensor<1x2x16x16xf32>
    %kt = graph.transpose %k_1 perm [0, 1, 3, 2] : (tensor<1x2x16x8xf32>) -> tensor<1x2x8x16xf32>
    %s = graph.dot %q_1, %kt : (tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x16x16xf32>
    %x0 = graph.mul %s, %scale : tensor<1x2x16x16xf32>
    %row = graph.iota dim 0 : tensor<16x16xi32>
    %col = graph.iota dim 1 : tensor<16x16xi32>
    %keep = graph.compare ge %row, %col : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %keep4 = graph.broadcast %keep dims [2, 3] : (tensor<16x16xi1>) -> tensor<1x2x16x16xi1>
    %ninf_t = graph.convert %ninf : (tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
    %x = graph.select %keep4, %x0, %ninf_t : (tensor<1x2x16x16xi1>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
    %mx = graph.reduce max %x dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
    %mxb = graph.broadcast %mx dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
    %sh = graph.sub %x, %mxb : tensor<1x2x16x16xf32>
    %e = graph.exp %sh : tensor<1x2x16x16xf32>
    %sum = graph.reduce sum %e dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16xf32>
    %sumb = graph.broadcast %sum dims [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>
    %p = graph.div %e, %sumb : tensor<1x2x16x16xf32>
    %o_1 = graph.dot %p, %v_1 : (tensor<1x2x16x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
    stitch.yield %o_1 : tensor<1x2x16x8xf32>
  }
  func.return %o : tensor<1x2x16x8xf32>
}
