// A RECom-like model: 8 embedding columns + 13 dense features -> concat [8 x 325] -> MLP 325-64-1 (examples/recom/generate.py)
func.func @recom(%dense: tensor<8x13xf32>, %ids0: tensor<48xi32>, %off0: tensor<8xi32>, %t0: tensor<17x16xf32>, %ids1: tensor<8x19xi32>, %t1: tensor<40x32xf32>, %w1: tensor<8x19xf32>, %ids2: tensor<8x6xi32>, %t2: tensor<52x64xf32>, %ids3: tensor<8x1xi32>, %t3: tensor<17x64xf32>, %ids4: tensor<8x11xi32>, %t4: tensor<12x64xf32>, %w4: tensor<8x11xf32>, %ids5: tensor<40xi32>, %off5: tensor<8xi32>, %t5: tensor<73x32xf32>, %ids6: tensor<8x7xi32>, %t6: tensor<53x8xf32>, %w6: tensor<8x7xf32>, %ids7: tensor<216xi32>, %off7: tensor<8xi32>, %t7: tensor<16x32xf32>, %mlp_w1: tensor<325x64xf32>, %mlp_b1: tensor<64xf32>, %mlp_w2: tensor<64x1xf32>, %mlp_b2: tensor<1xf32>) -> (tensor<8x1xf32>, tensor<8x325xf32>) {
  %e0 = graph.gather %t0, %ids0 : (tensor<17x16xf32>, tensor<48xi32>) -> tensor<48x16xf32>
  %r0 = graph.segment_reduce max %e0, %off0 : (tensor<48x16xf32>, tensor<8xi32>) -> tensor<8x16xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<40x32xf32>, tensor<8x19xi32>) -> tensor<8x19x32xf32>
  %wb1 = graph.broadcast %w1 dims [0, 1] : (tensor<8x19xf32>) -> tensor<8x19x32xf32>
  %we1 = graph.mul %e1, %wb1 : tensor<8x19x32xf32>
  %r1 = graph.reduce sum %we1 dims [1] : (tensor<8x19x32xf32>) -> tensor<8x32xf32>
  %s1 = graph.constant dense<0.05263157894736842> : tensor<8x32xf32>
  %a1 = graph.mul %r1, %s1 : tensor<8x32xf32>
  %e2 = graph.gather %t2, %ids2 : (tensor<52x64xf32>, tensor<8x6xi32>) -> tensor<8x6x64xf32>
  %r2 = graph.reduce sum %e2 dims [1] : (tensor<8x6x64xf32>) -> tensor<8x64xf32>
  %s2 = graph.constant dense<0.16666666666666666> : tensor<8x64xf32>
  %a2 = graph.mul %r2, %s2 : tensor<8x64xf32>
  %e3 = graph.gather %t3, %ids3 : (tensor<17x64xf32>, tensor<8x1xi32>) -> tensor<8x1x64xf32>
  %r3 = graph.reduce sum %e3 dims [1] : (tensor<8x1x64xf32>) -> tensor<8x64xf32>
  %s3 = graph.constant dense<1.0> : tensor<8x64xf32>
  %a3 = graph.mul %r3, %s3 : tensor<8x64xf32>
  %e4 = graph.gather %t4, %ids4 : (tensor<12x64xf32>, tensor<8x11xi32>) -> tensor<8x11x64xf32>
  %wb4 = graph.broadcast %w4 dims [0, 1] : (tensor<8x11xf32>) -> tensor<8x11x64xf32>
  %we4 = graph.mul %e4, %wb4 : tensor<8x11x64xf32>
  %r4 = graph.reduce sum %we4 dims [1] : (tensor<8x11x64xf32>) -> tensor<8x64xf32>
  %e5 = graph.gather %t5, %ids5 : (tensor<73x32xf32>, tensor<40xi32>) -> tensor<40x32xf32>
  %r5 = graph.segment_reduce max %e5, %off5 : (tensor<40x32xf32>, tensor<8xi32>) -> tensor<8x32xf32>
  %m6 = graph.constant dense<53> : tensor<8x7xi32>
  %h6 = graph.rem %ids6, %m6 : tensor<8x7xi32>
  %e6 = graph.gather %t6, %h6 : (tensor<53x8xf32>, tensor<8x7xi32>) -> tensor<8x7x8xf32>
  %wb6 = graph.broadcast %w6 dims [0, 1] : (tensor<8x7xf32>) -> tensor<8x7x8xf32>
  %we6 = graph.mul %e6, %wb6 : tensor<8x7x8xf32>
  %r6 = graph.reduce sum %we6 dims [1] : (tensor<8x7x8xf32>) -> tensor<8x8xf32>
  %s6 = graph.constant dense<0.14285714285714285> : tensor<8x8xf32>
  %a6 = graph.mul %r6, %s6 : tensor<8x8xf32>
  %e7 = graph.gather %t7, %ids7 : (tensor<16x32xf32>, tensor<216xi32>) -> tensor<216x32xf32>
  %r7 = graph.segment_reduce max %e7, %off7 : (tensor<216x32xf32>, tensor<8xi32>) -> tensor<8x32xf32>
  %x = graph.concat %dense, %r0, %a1, %a2, %a3, %r4, %r5, %a6, %r7 dim 1 : (tensor<8x13xf32>, tensor<8x16xf32>, tensor<8x32xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x32xf32>, tensor<8x8xf32>, tensor<8x32xf32>) -> tensor<8x325xf32>
  %d1 = graph.dot %x, %mlp_w1 : (tensor<8x325xf32>, tensor<325x64xf32>) -> tensor<8x64xf32>
  %bb1 = graph.broadcast %mlp_b1 dims [1] : (tensor<64xf32>) -> tensor<8x64xf32>
  %z1 = graph.add %d1, %bb1 : tensor<8x64xf32>
  %zero = graph.constant dense<0.0> : tensor<8x64xf32>
  %relu = graph.max %z1, %zero : tensor<8x64xf32>
  %d2 = graph.dot %relu, %mlp_w2 : (tensor<8x64xf32>, tensor<64x1xf32>) -> tensor<8x1xf32>
  %bb2 = graph.broadcast %mlp_b2 dims [1] : (tensor<1xf32>) -> tensor<8x1xf32>
  %z2 = graph.add %d2, %bb2 : tensor<8x1xf32>
  %y = graph.sigmoid %z2 : tensor<8x1xf32>
  func.return %y, %x : tensor<8x1xf32>, tensor<8x325xf32>
}
