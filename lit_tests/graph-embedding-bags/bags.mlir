// graph-embedding-bags: the bags of an unrolled EmbeddingBag (one chain per bag over
// a slice of the ids, stacked along dim 0) become one graph.segment_reduce over all
// bags, the chain computed once over all rows; the ONNX importer runs it after
// unrolling a Loop.
// RUN: fs-opt %s -p graph-embedding-bags | filecheck %s
// The rewritten IR must read back in.
// RUN: fs-opt %s -p graph-embedding-bags | fs-opt | filecheck %s

// TorchScript's form: each bag slices the ids and the per-sample weights, wraps
// negative ids, gathers, weighs and sums. The chain over all rows keeps every op.
// CHECK-LABEL: func.func @weighted_sum
// CHECK-NEXT:    %[[TABLE:.*]] = graph.constant
// CHECK-NEXT:    %[[ZERO:.*]] = graph.constant dense<0> : tensor<4xi64>
// CHECK-NEXT:    %[[NEG:.*]] = graph.compare lt %ids, %[[ZERO]] : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
// CHECK-NEXT:    %[[ROWS:.*]] = graph.constant dense<8> : tensor<4xi64>
// CHECK-NEXT:    %[[UP:.*]] = graph.add %ids, %[[ROWS]] : tensor<4xi64>
// CHECK-NEXT:    %[[WRAP:.*]] = graph.select %[[NEG]], %[[UP]], %ids
// CHECK-NEXT:    %[[E:.*]] = graph.gather %[[TABLE]], %[[WRAP]] : (tensor<8x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.reshape %w : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[WB:.*]] = graph.broadcast %[[W]] dims [0, 1] : (tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[E]], %[[WB]] : tensor<4x3xf32>
// CHECK-NEXT:    %[[OFF:.*]] = graph.constant dense<[0, 1]> : tensor<2xi64>
// CHECK-NEXT:    %[[BAGS:.*]] = graph.segment_reduce sum %[[M]], %[[OFF]] : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[BAGS]] : tensor<2x3xf32>
func.func @weighted_sum(%ids: tensor<4xi64>, %w: tensor<4xf32>) -> tensor<2x3xf32> {
  %table = graph.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0], [12.0, 13.0, 14.0], [15.0, 16.0, 17.0], [18.0, 19.0, 20.0], [21.0, 22.0, 23.0]]> : tensor<8x3xf32>
  %i0 = graph.slice %ids start [0] limit [1] strides [1] : (tensor<4xi64>) -> tensor<1xi64>
  %r0 = graph.constant dense<8> : tensor<1xi64>
  %z0 = graph.constant dense<0> : tensor<1xi64>
  %n0 = graph.compare lt %i0, %z0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi1>
  %u0 = graph.add %i0, %r0 : tensor<1xi64>
  %s0 = graph.select %n0, %u0, %i0 : (tensor<1xi1>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %e0 = graph.gather %table, %s0 : (tensor<8x3xf32>, tensor<1xi64>) -> tensor<1x3xf32>
  %w0 = graph.slice %w start [0] limit [1] strides [1] : (tensor<4xf32>) -> tensor<1xf32>
  %v0 = graph.reshape %w0 : (tensor<1xf32>) -> tensor<1x1xf32>
  %b0 = graph.broadcast %v0 dims [0, 1] : (tensor<1x1xf32>) -> tensor<1x3xf32>
  %m0 = graph.mul %e0, %b0 : tensor<1x3xf32>
  %t0 = graph.reduce sum %m0 dims [0] : (tensor<1x3xf32>) -> tensor<3xf32>
  %i1 = graph.slice %ids start [1] limit [4] strides [1] : (tensor<4xi64>) -> tensor<3xi64>
  %r1 = graph.constant dense<8> : tensor<3xi64>
  %z1 = graph.constant dense<0> : tensor<3xi64>
  %n1 = graph.compare lt %i1, %z1 : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %u1 = graph.add %i1, %r1 : tensor<3xi64>
  %s1 = graph.select %n1, %u1, %i1 : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %e1 = graph.gather %table, %s1 : (tensor<8x3xf32>, tensor<3xi64>) -> tensor<3x3xf32>
  %w1 = graph.slice %w start [1] limit [4] strides [1] : (tensor<4xf32>) -> tensor<3xf32>
  %v1 = graph.reshape %w1 : (tensor<3xf32>) -> tensor<3x1xf32>
  %b1 = graph.broadcast %v1 dims [0, 1] : (tensor<3x1xf32>) -> tensor<3x3xf32>
  %m1 = graph.mul %e1, %b1 : tensor<3x3xf32>
  %t1 = graph.reduce sum %m1 dims [0] : (tensor<3x3xf32>) -> tensor<3xf32>
  %o0 = graph.reshape %t0 : (tensor<3xf32>) -> tensor<1x3xf32>
  %o1 = graph.reshape %t1 : (tensor<3xf32>) -> tensor<1x3xf32>
  %bags = graph.concat %o0, %o1 dim 0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  func.return %bags : tensor<2x3xf32>
}

// The dynamo exporter's form: all ids gathered first, each bag a slice of the rows;
// a mean divides each bag's sum by its row count (a constant, or one folded from
// the offsets). The stack with a dense feature becomes a rank-2 concat and a reshape.
// CHECK-LABEL: func.func @mean_stacked
// CHECK-NEXT:    %[[E:.*]] = graph.gather %table, %ids : (tensor<8x3xf32>, tensor<6xi64>) -> tensor<6x3xf32>
// CHECK-NEXT:    %[[OFF:.*]] = graph.constant dense<[0, 2]> : tensor<2xi64>
// CHECK-NEXT:    %[[BAGS:.*]] = graph.segment_reduce mean %[[E]], %[[OFF]] : (tensor<6x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[CAT:.*]] = graph.concat %x, %[[BAGS]] dim 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:    %[[STACK:.*]] = graph.reshape %[[CAT]] : (tensor<2x6xf32>) -> tensor<2x2x3xf32>
// CHECK-NEXT:    func.return %[[STACK]] : tensor<2x2x3xf32>
func.func @mean_stacked(%table: tensor<8x3xf32>, %ids: tensor<6xi64>, %x: tensor<2x3xf32>) -> tensor<2x2x3xf32> {
  %e = graph.gather %table, %ids : (tensor<8x3xf32>, tensor<6xi64>) -> tensor<6x3xf32>
  %e0 = graph.slice %e start [0, 0] limit [2, 3] strides [1, 1] : (tensor<6x3xf32>) -> tensor<2x3xf32>
  %t0 = graph.reduce sum %e0 dims [0] : (tensor<2x3xf32>) -> tensor<3xf32>
  %c0 = graph.constant dense<2.0> : tensor<3xf32>
  %d0 = graph.div %t0, %c0 : tensor<3xf32>
  %o0 = graph.reshape %d0 : (tensor<3xf32>) -> tensor<1x3xf32>
  %e1 = graph.slice %e start [2, 0] limit [6, 3] strides [1, 1] : (tensor<6x3xf32>) -> tensor<4x3xf32>
  %t1 = graph.reduce sum %e1 dims [0] : (tensor<4x3xf32>) -> tensor<3xf32>
  %o1 = graph.reshape %t1 : (tensor<3xf32>) -> tensor<1x3xf32>
  %offs = graph.constant dense<[0, 2, 6]> : tensor<3xi64>
  %start = graph.slice %offs start [1] limit [2] strides [1] : (tensor<3xi64>) -> tensor<1xi64>
  %end = graph.constant dense<6> : tensor<1xi64>
  %n = graph.sub %end, %start : tensor<1xi64>
  %nf = graph.convert %n : (tensor<1xi64>) -> tensor<1xf32>
  %nb = graph.broadcast %nf dims [1] : (tensor<1xf32>) -> tensor<1x3xf32>
  %d1 = graph.div %o1, %nb : tensor<1x3xf32>
  %bags = graph.concat %o0, %d1 dim 0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %xs = graph.reshape %x : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
  %bs = graph.reshape %bags : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
  %stack = graph.concat %xs, %bs dim 1 : (tensor<2x1x3xf32>, tensor<2x1x3xf32>) -> tensor<2x2x3xf32>
  func.return %stack : tensor<2x2x3xf32>
}

// A max (as EmbeddingBag's mode="max"): a segment max over a shared gather's rows.
// CHECK-LABEL: func.func @max
// CHECK-NEXT:    %[[E:.*]] = graph.gather %table, %ids : (tensor<8x3xf16>, tensor<5xi64>) -> tensor<5x3xf16>
// CHECK-NEXT:    %[[OFF:.*]] = graph.constant dense<[0, 3]> : tensor<2xi64>
// CHECK-NEXT:    %[[BAGS:.*]] = graph.segment_reduce max %[[E]], %[[OFF]] : (tensor<5x3xf16>, tensor<2xi64>) -> tensor<2x3xf16>
// CHECK-NEXT:    func.return %[[BAGS]] : tensor<2x3xf16>
func.func @max(%table: tensor<8x3xf16>, %ids: tensor<5xi64>) -> tensor<2x3xf16> {
  %e = graph.gather %table, %ids : (tensor<8x3xf16>, tensor<5xi64>) -> tensor<5x3xf16>
  %e0 = graph.slice %e start [0, 0] limit [3, 3] strides [1, 1] : (tensor<5x3xf16>) -> tensor<3x3xf16>
  %t0 = graph.reduce max %e0 dims [0] : (tensor<3x3xf16>) -> tensor<3xf16>
  %o0 = graph.reshape %t0 : (tensor<3xf16>) -> tensor<1x3xf16>
  %e1 = graph.slice %e start [3, 0] limit [5, 3] strides [1, 1] : (tensor<5x3xf16>) -> tensor<2x3xf16>
  %t1 = graph.reduce max %e1 dims [0] : (tensor<2x3xf16>) -> tensor<3xf16>
  %o1 = graph.reshape %t1 : (tensor<3xf16>) -> tensor<1x3xf16>
  %bags = graph.concat %o0, %o1 dim 0 : (tensor<1x3xf16>, tensor<1x3xf16>) -> tensor<2x3xf16>
  func.return %bags : tensor<2x3xf16>
}
