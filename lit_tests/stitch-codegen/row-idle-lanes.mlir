// Register slots never leave a block's lanes past the row's end when a block size
// without them exists. Bias + residual + LayerNorm over 256 rows of 768 (BERT's): 512
// threads with one slot of 2 (or two of 1) cover 1024 columns, and the 128 lanes past
// 768 would load a clamped element of every input and discard it (a third more
// requested bytes, which the latency model does not see). Of the block sizes, register
// slots are offered only at those clamping the fewest elements for their vector width:
// 128 and 256 threads here, so 8 candidates rather than 10, and the evaluator keeps
// 256 threads of 3 slots (768 = 3 x 256). Forced to V = 2, 128 threads of 3 slots.
// (tests/codegen/test_stitch_onchip.py measures the requested loads on the simulator.)
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch gpu=A100},stitch-codegen{gpu=A100}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch gpu=A100},stitch-codegen{gpu=A100 vector=2}' | filecheck %s --check-prefix=V2

// CHECK-LABEL: func.func @ln
// CHECK:       schedule.kernel @ln_k0 row<threads_per_row = 256, rows_per_block = 1, elements_per_thread = 3> grid [256, 1, 1] block [256, 1, 1]
// CHECK-SAME:  candidates = 8 : i64, config = "block/256/reg3"
// V2-LABEL:    func.func @ln
// V2:          schedule.kernel @ln_k0 row<threads_per_row = 128, rows_per_block = 1, elements_per_thread = 6, vector_width = 2> grid [256, 1, 1] block [128, 1, 1]
// V2-SAME:     config = "block/128/reg3/v2"
func.func @ln(%o_mm: tensor<2x128x768xf32>, %bo: tensor<768xf32>, %x: tensor<2x128x768xf32>, %ln1_gamma: tensor<768xf32>, %ln1_beta: tensor<768xf32>) -> tensor<2x128x768xf32> {
  %bo_b = graph.broadcast %bo dims [2] : (tensor<768xf32>) -> tensor<2x128x768xf32>
  %attn = graph.add %o_mm, %bo_b : tensor<2x128x768xf32>
  %res1 = graph.add %attn, %x : tensor<2x128x768xf32>
  %n = graph.constant dense<7.680000e+02> : tensor<2x128xf32>
  %eps = graph.constant dense<1.000000e-05> : tensor<2x128xf32>
  %ln1_sum = graph.reduce sum %res1 dims [2] : (tensor<2x128x768xf32>) -> tensor<2x128xf32>
  %ln1_mean = graph.div %ln1_sum, %n : tensor<2x128xf32>
  %ln1_mean_b = graph.broadcast %ln1_mean dims [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x768xf32>
  %ln1_xc = graph.sub %res1, %ln1_mean_b : tensor<2x128x768xf32>
  %ln1_xc_sq = graph.mul %ln1_xc, %ln1_xc : tensor<2x128x768xf32>
  %ln1_sq_sum = graph.reduce sum %ln1_xc_sq dims [2] : (tensor<2x128x768xf32>) -> tensor<2x128xf32>
  %ln1_var = graph.div %ln1_sq_sum, %n : tensor<2x128xf32>
  %ln1_var_eps = graph.add %ln1_var, %eps : tensor<2x128xf32>
  %ln1_rstd = graph.rsqrt %ln1_var_eps : tensor<2x128xf32>
  %ln1_rstd_b = graph.broadcast %ln1_rstd dims [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x768xf32>
  %ln1_xhat = graph.mul %ln1_xc, %ln1_rstd_b : tensor<2x128x768xf32>
  %ln1_gamma_b = graph.broadcast %ln1_gamma dims [2] : (tensor<768xf32>) -> tensor<2x128x768xf32>
  %ln1_beta_b = graph.broadcast %ln1_beta dims [2] : (tensor<768xf32>) -> tensor<2x128x768xf32>
  %ln1_scaled = graph.mul %ln1_xhat, %ln1_gamma_b : tensor<2x128x768xf32>
  %h1 = graph.add %ln1_scaled, %ln1_beta_b : tensor<2x128x768xf32>
  func.return %h1 : tensor<2x128x768xf32>
}
