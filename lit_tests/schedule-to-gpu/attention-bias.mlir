// An attention kernel whose Q, K and V are slices of one projection plus a bias each,
// split into 2 heads of 32 (BERT's merged Q/K/V GEMM feeding attention, 64 threads of
// the tensor-core schedule). Each thread stages one column of the 32-wide tiles
// (64 threads, a multiple of 32: `tile_position`), and a bias is read at the column
// alone (h·32 + c, the reshape re-linearised per group of dims), so a thread loads its
// element of bq once, before the Q staging loop, and its elements of bk and bv once,
// before the key loop; inside the loops only the projection is loaded.
// RUN: fs-opt %s -p schedule-to-gpu | filecheck %s

// CHECK-LABEL: gpu.func @attn_k0(
// CHECK: memref.load %bq[%[[COL:[0-9]+]]]
// CHECK-NOT: memref.load %b{{[qkv]}}
// CHECK: scf.for
// CHECK-NOT: memref.load %b{{[qkv]}}
// CHECK: memref.load %qkv
// CHECK-NOT: memref.load %bq
// CHECK: memref.load %bk[%[[COL]]]
// CHECK-NEXT: memref.load %bv[%[[COL]]]
// CHECK-NOT: memref.load %b{{[qkv]}}
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: memref.load %b{{[qkv]}}
// CHECK: memref.load %qkv
// CHECK-NOT: memref.load %b{{[qkv]}}
// CHECK: gpu.return

builtin.module {
  func.func @attn(%qkv: tensor<1x32x192xf32>, %mask: tensor<1x1x1x32xf32>, %bq: tensor<64xf32>, %bk: tensor<64xf32>, %bv: tensor<64xf32>) -> tensor<1x2x32x32xf32> {
    %o = schedule.kernel @attn_k0 attention<block_q = 32, block_k = 32, warp_rows = 16, mma> grid [1, 2, 1] block [64, 1, 1] cost {warps = 4 : i64, global_bytes = 33664 : i64, smem_bytes = 13824 : i64, estimate_us = 2.426000e+00 : f64, registers = 96 : i64, occupancy = 20 : i64, waves = 1 : i64, candidates = 2 : i64, config = "attention/32x32/16rows/mma"} (%qkv, %bq, %bk, %bv, %mask) : (tensor<1x32x192xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<1x1x1x32xf32>) -> tensor<1x2x32x32xf32> {
    ^bb0(%qkv_1: tensor<1x32x192xf32>, %bq_1: tensor<64xf32>, %bk_1: tensor<64xf32>, %bv_1: tensor<64xf32>, %mask_1: tensor<1x1x1x32xf32>):
      schedule.shared @q_tile : memref<1152xf32, 3 : i64>
      schedule.shared @k_tile : memref<1152xi32, 3 : i64>
      schedule.shared @v_tile : memref<1152xi32, 3 : i64>
      %o_1 = schedule.group block -> global : tensor<1x2x32x32xf32> {
        %c = graph.constant dense<0.176776707> : tensor<1x2x32x32xf32>
        %q_mm = graph.slice %qkv_1 start [0, 0, 0] limit [1, 32, 64] strides [1, 1, 1] : (tensor<1x32x192xf32>) -> tensor<1x32x64xf32>
        %bq_b = graph.broadcast %bq_1 dims [2] : (tensor<64xf32>) -> tensor<1x32x64xf32>
        %q = graph.add %q_mm, %bq_b : tensor<1x32x64xf32>
        %q_s = graph.reshape %q : (tensor<1x32x64xf32>) -> tensor<1x32x2x32xf32>
        %q_h = graph.transpose %q_s perm [0, 2, 1, 3] : (tensor<1x32x2x32xf32>) -> tensor<1x2x32x32xf32>
        %k_mm = graph.slice %qkv_1 start [0, 0, 64] limit [1, 32, 128] strides [1, 1, 1] : (tensor<1x32x192xf32>) -> tensor<1x32x64xf32>
        %bk_b = graph.broadcast %bk_1 dims [2] : (tensor<64xf32>) -> tensor<1x32x64xf32>
        %k = graph.add %k_mm, %bk_b : tensor<1x32x64xf32>
        %k_s = graph.reshape %k : (tensor<1x32x64xf32>) -> tensor<1x32x2x32xf32>
        %k_h = graph.transpose %k_s perm [0, 2, 1, 3] : (tensor<1x32x2x32xf32>) -> tensor<1x2x32x32xf32>
        %v_mm = graph.slice %qkv_1 start [0, 0, 128] limit [1, 32, 192] strides [1, 1, 1] : (tensor<1x32x192xf32>) -> tensor<1x32x64xf32>
        %bv_b = graph.broadcast %bv_1 dims [2] : (tensor<64xf32>) -> tensor<1x32x64xf32>
        %v = graph.add %v_mm, %bv_b : tensor<1x32x64xf32>
        %v_s = graph.reshape %v : (tensor<1x32x64xf32>) -> tensor<1x32x2x32xf32>
        %v_h = graph.transpose %v_s perm [0, 2, 1, 3] : (tensor<1x32x2x32xf32>) -> tensor<1x2x32x32xf32>
        %kt = graph.transpose %k_h perm [0, 1, 3, 2] : (tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32>
        %qk = graph.dot %q_h, %kt : (tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32>
        %sc = graph.mul %qk, %c : tensor<1x2x32x32xf32>
        %mb = graph.broadcast %mask_1 dims [0, 1, 2, 3] : (tensor<1x1x1x32xf32>) -> tensor<1x2x32x32xf32>
        %x = graph.add %sc, %mb : tensor<1x2x32x32xf32>
        %mx = graph.reduce max %x dims [3] : (tensor<1x2x32x32xf32>) -> tensor<1x2x32xf32>
        %mxb = graph.broadcast %mx dims [0, 1, 2] : (tensor<1x2x32xf32>) -> tensor<1x2x32x32xf32>
        %sh = graph.sub %x, %mxb : tensor<1x2x32x32xf32>
        %e = graph.exp %sh : tensor<1x2x32x32xf32>
        %sm = graph.reduce sum %e dims [3] : (tensor<1x2x32x32xf32>) -> tensor<1x2x32xf32>
        %smb = graph.broadcast %sm dims [0, 1, 2] : (tensor<1x2x32xf32>) -> tensor<1x2x32x32xf32>
        %p = graph.div %e, %smb : tensor<1x2x32x32xf32>
        %o_2 = graph.dot %p, %v_h : (tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32>
        schedule.yield %o_2 : tensor<1x2x32x32xf32>
      }
      schedule.yield %o_1 : tensor<1x2x32x32xf32>
    }
    func.return %o : tensor<1x2x32x32xf32>
  }
}
