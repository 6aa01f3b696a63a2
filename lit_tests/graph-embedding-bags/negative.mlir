// graph-embedding-bags leaves a concat of bag sums alone unless the structure matches
// exactly: contiguous bags from row 0 to the last row, one table, a mean's divisor
// equal to the row count, row-wise chains, splat constants.
// RUN: fs-opt %s -p graph-embedding-bags | filecheck %s

// A gap between the bags: row 2 belongs to none.
// CHECK-LABEL: func.func @gap
// CHECK-NOT:     graph.segment_reduce
// CHECK:         graph.concat
func.func @gap(%e: tensor<6x3xf32>) -> tensor<2x3xf32> {
  %e0 = graph.slice %e start [0, 0] limit [2, 3] strides [1, 1] : (tensor<6x3xf32>) -> tensor<2x3xf32>
  %t0 = graph.reduce sum %e0 dims [0] : (tensor<2x3xf32>) -> tensor<3xf32>
  %o0 = graph.reshape %t0 : (tensor<3xf32>) -> tensor<1x3xf32>
  %e1 = graph.slice %e start [3, 0] limit [6, 3] strides [1, 1] : (tensor<6x3xf32>) -> tensor<3x3xf32>
  %t1 = graph.reduce sum %e1 dims [0] : (tensor<3x3xf32>) -> tensor<3xf32>
  %o1 = graph.reshape %t1 : (tensor<3xf32>) -> tensor<1x3xf32>
  %bags = graph.concat %o0, %o1 dim 0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  func.return %bags : tensor<2x3xf32>
}

// The bags start at row 1.
// CHECK-LABEL: func.func @late_start
// CHECK-NOT:     graph.segment_reduce
// CHECK:         graph.concat
func.func @late_start(%e: tensor<6x3xf32>) -> tensor<2x3xf32> {
  %e0 = graph.slice %e start [1, 0] limit [3, 3] strides [1, 1] : (tensor<6x3xf32>) -> tensor<2x3xf32>
  %t0 = graph.reduce sum %e0 dims [0] : (tensor<2x3xf32>) -> tensor<3xf32>
  %o0 = graph.reshape %t0 : (tensor<3xf32>) -> tensor<1x3xf32>
  %e1 = graph.slice %e start [3, 0] limit [6, 3] strides [1, 1] : (tensor<6x3xf32>) -> tensor<3x3xf32>
  %t1 = graph.reduce sum %e1 dims [0] : (tensor<3x3xf32>) -> tensor<3xf32>
  %o1 = graph.reshape %t1 : (tensor<3xf32>) -> tensor<1x3xf32>
  %bags = graph.concat %o0, %o1 dim 0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  func.return %bags : tensor<2x3xf32>
}

// Each bag reads its own table.
// CHECK-LABEL: func.func @two_tables
// CHECK-NOT:     graph.segment_reduce
// CHECK:         graph.concat
func.func @two_tables(%a: tensor<8x3xf32>, %b: tensor<8x3xf32>, %ids: tensor<4xi64>) -> tensor<2x3xf32> {
  %i0 = graph.slice %ids start [0] limit [2] strides [1] : (tensor<4xi64>) -> tensor<2xi64>
  %e0 = graph.gather %a, %i0 : (tensor<8x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %t0 = graph.reduce sum %e0 dims [0] : (tensor<2x3xf32>) -> tensor<3xf32>
  %o0 = graph.reshape %t0 : (tensor<3xf32>) -> tensor<1x3xf32>
  %i1 = graph.slice %ids start [2] limit [4] strides [1] : (tensor<4xi64>) -> tensor<2xi64>
  %e1 = graph.gather %b, %i1 : (tensor<8x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %t1 = graph.reduce sum %e1 dims [0] : (tensor<2x3xf32>) -> tensor<3xf32>
  %o1 = graph.reshape %t1 : (tensor<3xf32>) -> tensor<1x3xf32>
  %bags = graph.concat %o0, %o1 dim 0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  func.return %bags : tensor<2x3xf32>
}

// A division that is not the bag's mean (by 3, the bags hold 2 rows), a mean next
// to a sum, and a max divided by the row count.
// CHECK-LABEL: func.func @not_a_mean
// CHECK-NOT:     graph.segment_reduce
// CHECK:         graph.concat
// CHECK-NOT:     graph.segment_reduce
// CHECK:         graph.concat
// CHECK-NOT:     graph.segment_reduce
// CHECK:         graph.concat
func.func @not_a_mean(%e: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %c = graph.constant dense<3.0> : tensor<3xf32>
  %two = graph.constant dense<2.0> : tensor<3xf32>
  %e0 = graph.slice %e start [0, 0] limit [2, 3] strides [1, 1] : (tensor<4x3xf32>) -> tensor<2x3xf32>
  %t0 = graph.reduce sum %e0 dims [0] : (tensor<2x3xf32>) -> tensor<3xf32>
  %d0 = graph.div %t0, %c : tensor<3xf32>
  %o0 = graph.reshape %d0 : (tensor<3xf32>) -> tensor<1x3xf32>
  %e1 = graph.slice %e start [2, 0] limit [4, 3] strides [1, 1] : (tensor<4x3xf32>) -> tensor<2x3xf32>
  %t1 = graph.reduce sum %e1 dims [0] : (tensor<2x3xf32>) -> tensor<3xf32>
  %d1 = graph.div %t1, %c : tensor<3xf32>
  %o1 = graph.reshape %d1 : (tensor<3xf32>) -> tensor<1x3xf32>
  %bags = graph.concat %o0, %o1 dim 0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %m0 = graph.div %t0, %two : tensor<3xf32>
  %p0 = graph.reshape %m0 : (tensor<3xf32>) -> tensor<1x3xf32>
  %p1 = graph.reshape %t1 : (tensor<3xf32>) -> tensor<1x3xf32>
  %mixed = graph.concat %p0, %p1 dim 0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %x0 = graph.reduce max %e0 dims [0] : (tensor<2x3xf32>) -> tensor<3xf32>
  %x1 = graph.reduce max %e1 dims [0] : (tensor<2x3xf32>) -> tensor<3xf32>
  %y0 = graph.div %x0, %two : tensor<3xf32>
  %y1 = graph.div %x1, %two : tensor<3xf32>
  %z0 = graph.reshape %y0 : (tensor<3xf32>) -> tensor<1x3xf32>
  %z1 = graph.reshape %y1 : (tensor<3xf32>) -> tensor<1x3xf32>
  %scaled_max = graph.concat %z0, %z1 dim 0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  func.return %bags, %mixed, %scaled_max : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// A chain that is not row-wise (a transpose mixes a bag's rows), a product (no
// segment reduction has it), and a constant that differs along the rows.
// CHECK-LABEL: func.func @not_row_wise
// CHECK-NOT:     graph.segment_reduce
// CHECK:         graph.concat
// CHECK-NOT:     graph.segment_reduce
// CHECK:         graph.concat
// CHECK-NOT:     graph.segment_reduce
// CHECK:         graph.concat
func.func @not_row_wise(%e: tensor<4x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %e0 = graph.slice %e start [0, 0] limit [2, 2] strides [1, 1] : (tensor<4x2xf32>) -> tensor<2x2xf32>
  %e1 = graph.slice %e start [2, 0] limit [4, 2] strides [1, 1] : (tensor<4x2xf32>) -> tensor<2x2xf32>
  %x0 = graph.transpose %e0 perm [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %x1 = graph.transpose %e1 perm [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %t0 = graph.reduce sum %x0 dims [0] : (tensor<2x2xf32>) -> tensor<2xf32>
  %t1 = graph.reduce sum %x1 dims [0] : (tensor<2x2xf32>) -> tensor<2xf32>
  %o0 = graph.reshape %t0 : (tensor<2xf32>) -> tensor<1x2xf32>
  %o1 = graph.reshape %t1 : (tensor<2xf32>) -> tensor<1x2xf32>
  %transposed = graph.concat %o0, %o1 dim 0 : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
  %a0 = graph.reduce prod %e0 dims [0] : (tensor<2x2xf32>) -> tensor<2xf32>
  %a1 = graph.reduce prod %e1 dims [0] : (tensor<2x2xf32>) -> tensor<2xf32>
  %q0 = graph.reshape %a0 : (tensor<2xf32>) -> tensor<1x2xf32>
  %q1 = graph.reshape %a1 : (tensor<2xf32>) -> tensor<1x2xf32>
  %products = graph.concat %q0, %q1 dim 0 : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
  %k = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %k0 = graph.mul %e0, %k : tensor<2x2xf32>
  %k1 = graph.mul %e1, %k : tensor<2x2xf32>
  %s0 = graph.reduce sum %k0 dims [0] : (tensor<2x2xf32>) -> tensor<2xf32>
  %s1 = graph.reduce sum %k1 dims [0] : (tensor<2x2xf32>) -> tensor<2xf32>
  %r0 = graph.reshape %s0 : (tensor<2xf32>) -> tensor<1x2xf32>
  %r1 = graph.reshape %s1 : (tensor<2xf32>) -> tensor<1x2xf32>
  %scaled = graph.concat %r0, %r1 dim 0 : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
  func.return %transposed, %products, %scaled : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
