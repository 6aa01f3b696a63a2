// One BERT-base encoder layer (post-LayerNorm, as in the original BERT), batch B=2,
// sequence S=128, hidden H=768, 12 attention heads of 64, FFN width 3072, all f32:
//
//   q, k, v = x·Wq + bq, x·Wk + bk, x·Wv + bv            [B,S,H] -> [B,12,S,64] per head
//   p       = softmax(q·kᵀ / 8 + mask)                    mask: additive, [B,1,1,S]
//   attn    = (p·v as [B,S,H])·Wo + bo
//   h1      = LayerNorm(attn + x)                         eps 1e-5, γ/β
//   ffn     = GELU(h1·W1 + b1)·W2 + b2                    GELU in its erf form
//   y       = LayerNorm(ffn + h1)
//
// Weights are arguments (not constants) so fs-run can feed random or .npz values.
// Dots are compute-intensive (left to GEMM kernels); everything between them --
// bias adds, head reshapes/transposes, the masked softmax, residuals, LayerNorms and
// GELU -- is memory-intensive work for fusion. The measured peers launch 15-16
// kernels for this layer (docs/peers.md).
func.func @bert_layer(%x: tensor<2x128x768xf32>, %mask: tensor<2x1x1x128xf32>,
    %wq: tensor<768x768xf32>, %bq: tensor<768xf32>,
    %wk: tensor<768x768xf32>, %bk: tensor<768xf32>,
    %wv: tensor<768x768xf32>, %bv: tensor<768xf32>,
    %wo: tensor<768x768xf32>, %bo: tensor<768xf32>,
    %ln1_gamma: tensor<768xf32>, %ln1_beta: tensor<768xf32>,
    %w1: tensor<768x3072xf32>, %b1: tensor<3072xf32>,
    %w2: tensor<3072x768xf32>, %b2: tensor<768xf32>,
    %ln2_gamma: tensor<768xf32>, %ln2_beta: tensor<768xf32>) -> tensor<2x128x768xf32> {
  // ---- Q, K, V projections, split into heads: [B,S,H] -> [B,S,12,64] -> [B,12,S,64]
  %q_mm = graph.dot %x, %wq : (tensor<2x128x768xf32>, tensor<768x768xf32>) -> tensor<2x128x768xf32>
  %bq_b = graph.broadcast %bq dims [2] : (tensor<768xf32>) -> tensor<2x128x768xf32>
  %q = graph.add %q_mm, %bq_b : tensor<2x128x768xf32>
  %q_split = graph.reshape %q : (tensor<2x128x768xf32>) -> tensor<2x128x12x64xf32>
  %q_heads = graph.transpose %q_split perm [0, 2, 1, 3] : (tensor<2x128x12x64xf32>) -> tensor<2x12x128x64xf32>

  %k_mm = graph.dot %x, %wk : (tensor<2x128x768xf32>, tensor<768x768xf32>) -> tensor<2x128x768xf32>
  %bk_b = graph.broadcast %bk dims [2] : (tensor<768xf32>) -> tensor<2x128x768xf32>
  %k = graph.add %k_mm, %bk_b : tensor<2x128x768xf32>
  %k_split = graph.reshape %k : (tensor<2x128x768xf32>) -> tensor<2x128x12x64xf32>
  %k_heads = graph.transpose %k_split perm [0, 2, 1, 3] : (tensor<2x128x12x64xf32>) -> tensor<2x12x128x64xf32>

  %v_mm = graph.dot %x, %wv : (tensor<2x128x768xf32>, tensor<768x768xf32>) -> tensor<2x128x768xf32>
  %bv_b = graph.broadcast %bv dims [2] : (tensor<768xf32>) -> tensor<2x128x768xf32>
  %v = graph.add %v_mm, %bv_b : tensor<2x128x768xf32>
  %v_split = graph.reshape %v : (tensor<2x128x768xf32>) -> tensor<2x128x12x64xf32>
  %v_heads = graph.transpose %v_split perm [0, 2, 1, 3] : (tensor<2x128x12x64xf32>) -> tensor<2x12x128x64xf32>

  // ---- scores = q·kᵀ / sqrt(64) + mask
  %k_t = graph.transpose %k_heads perm [0, 1, 3, 2] : (tensor<2x12x128x64xf32>) -> tensor<2x12x64x128xf32>
  %qk = graph.dot %q_heads, %k_t : (tensor<2x12x128x64xf32>, tensor<2x12x64x128xf32>) -> tensor<2x12x128x128xf32>
  %inv_sqrt_d = graph.constant dense<1.250000e-01> : tensor<2x12x128x128xf32>
  %scores = graph.mul %qk, %inv_sqrt_d : tensor<2x12x128x128xf32>
  %mask_b = graph.broadcast %mask dims [0, 1, 2, 3] : (tensor<2x1x1x128xf32>) -> tensor<2x12x128x128xf32>
  %masked = graph.add %scores, %mask_b : tensor<2x12x128x128xf32>

  // ---- softmax over the keys (last dim), max-subtracted
  %s_max = graph.reduce max %masked dims [3] : (tensor<2x12x128x128xf32>) -> tensor<2x12x128xf32>
  %s_max_b = graph.broadcast %s_max dims [0, 1, 2] : (tensor<2x12x128xf32>) -> tensor<2x12x128x128xf32>
  %s_shifted = graph.sub %masked, %s_max_b : tensor<2x12x128x128xf32>
  %s_exp = graph.exp %s_shifted : tensor<2x12x128x128xf32>
  %s_sum = graph.reduce sum %s_exp dims [3] : (tensor<2x12x128x128xf32>) -> tensor<2x12x128xf32>
  %s_sum_b = graph.broadcast %s_sum dims [0, 1, 2] : (tensor<2x12x128xf32>) -> tensor<2x12x128x128xf32>
  %probs = graph.div %s_exp, %s_sum_b : tensor<2x12x128x128xf32>

  // ---- context = p·v, heads merged back: [B,12,S,64] -> [B,S,12,64] -> [B,S,H]
  %ctx_heads = graph.dot %probs, %v_heads : (tensor<2x12x128x128xf32>, tensor<2x12x128x64xf32>) -> tensor<2x12x128x64xf32>
  %ctx_t = graph.transpose %ctx_heads perm [0, 2, 1, 3] : (tensor<2x12x128x64xf32>) -> tensor<2x128x12x64xf32>
  %ctx = graph.reshape %ctx_t : (tensor<2x128x12x64xf32>) -> tensor<2x128x768xf32>

  // ---- output projection, residual, LayerNorm 1
  %o_mm = graph.dot %ctx, %wo : (tensor<2x128x768xf32>, tensor<768x768xf32>) -> tensor<2x128x768xf32>
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

  // ---- FFN: H -> 3072 with GELU (erf form) -> H
  %f1_mm = graph.dot %h1, %w1 : (tensor<2x128x768xf32>, tensor<768x3072xf32>) -> tensor<2x128x3072xf32>
  %b1_b = graph.broadcast %b1 dims [2] : (tensor<3072xf32>) -> tensor<2x128x3072xf32>
  %f1 = graph.add %f1_mm, %b1_b : tensor<2x128x3072xf32>
  %half = graph.constant dense<5.000000e-01> : tensor<2x128x3072xf32>
  %one = graph.constant dense<1.000000e+00> : tensor<2x128x3072xf32>
  %inv_sqrt2 = graph.constant dense<0.707106769> : tensor<2x128x3072xf32>
  %f1_scaled = graph.mul %f1, %inv_sqrt2 : tensor<2x128x3072xf32>
  %f1_erf = graph.erf %f1_scaled : tensor<2x128x3072xf32>
  %f1_one_plus_erf = graph.add %f1_erf, %one : tensor<2x128x3072xf32>
  %f1_half = graph.mul %f1, %half : tensor<2x128x3072xf32>
  %gelu = graph.mul %f1_half, %f1_one_plus_erf : tensor<2x128x3072xf32>
  %f2_mm = graph.dot %gelu, %w2 : (tensor<2x128x3072xf32>, tensor<3072x768xf32>) -> tensor<2x128x768xf32>
  %b2_b = graph.broadcast %b2 dims [2] : (tensor<768xf32>) -> tensor<2x128x768xf32>
  %ffn = graph.add %f2_mm, %b2_b : tensor<2x128x768xf32>
  %res2 = graph.add %ffn, %h1 : tensor<2x128x768xf32>

  // ---- LayerNorm 2
  %ln2_sum = graph.reduce sum %res2 dims [2] : (tensor<2x128x768xf32>) -> tensor<2x128xf32>
  %ln2_mean = graph.div %ln2_sum, %n : tensor<2x128xf32>
  %ln2_mean_b = graph.broadcast %ln2_mean dims [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x768xf32>
  %ln2_xc = graph.sub %res2, %ln2_mean_b : tensor<2x128x768xf32>
  %ln2_xc_sq = graph.mul %ln2_xc, %ln2_xc : tensor<2x128x768xf32>
  %ln2_sq_sum = graph.reduce sum %ln2_xc_sq dims [2] : (tensor<2x128x768xf32>) -> tensor<2x128xf32>
  %ln2_var = graph.div %ln2_sq_sum, %n : tensor<2x128xf32>
  %ln2_var_eps = graph.add %ln2_var, %eps : tensor<2x128xf32>
  %ln2_rstd = graph.rsqrt %ln2_var_eps : tensor<2x128xf32>
  %ln2_rstd_b = graph.broadcast %ln2_rstd dims [0, 1] : (tensor<2x128xf32>) -> tensor<2x128x768xf32>
  %ln2_xhat = graph.mul %ln2_xc, %ln2_rstd_b : tensor<2x128x768xf32>
  %ln2_gamma_b = graph.broadcast %ln2_gamma dims [2] : (tensor<768xf32>) -> tensor<2x128x768xf32>
  %ln2_beta_b = graph.broadcast %ln2_beta dims [2] : (tensor<768xf32>) -> tensor<2x128x768xf32>
  %ln2_scaled = graph.mul %ln2_xhat, %ln2_gamma_b : tensor<2x128x768xf32>
  %y = graph.add %ln2_scaled, %ln2_beta_b : tensor<2x128x768xf32>
  func.return %y : tensor<2x128x768xf32>
}
