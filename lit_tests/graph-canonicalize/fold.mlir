// graph-canonicalize folds ops whose operands are all constants, with the same numpy
// semantics as the reference interpreter, but only for small results (<= 1024 elements).
// RUN: fs-opt %s -p graph-canonicalize | filecheck %s
// The folded IR must read back in.
// RUN: fs-opt %s -p graph-canonicalize | fs-opt | filecheck %s

// CHECK-LABEL: func.func @fold_chain
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<{{\[\[}}2.250000e+00, 1.225000e+01], [6.250000e+00, 2.025000e+01]]> : tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[C]] : tensor<2x2xf32>
func.func @fold_chain() -> tensor<2x2xf32> {
  %a = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = graph.constant dense<0.5> : tensor<2x2xf32>
  %c = graph.add %a, %b : tensor<2x2xf32>
  %d = graph.mul %c, %c : tensor<2x2xf32>
  %t = graph.transpose %d perm [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %t : tensor<2x2xf32>
}

// f32 results are rounded to f32 (e = 2.71828198 in f32). log(-1) is NaN, and xDSL
// reads NaN constants back wrongly (hex as an integer), so non-finite results stay unfolded.
// CHECK-LABEL: func.func @fold_unary
// CHECK-NEXT:    %[[E:.*]] = graph.constant dense<[1.000000e+00, 2.71828198, 0.367879421]> : tensor<3xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.constant dense<-1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[L:.*]] = graph.log %[[M]] : tensor<f32>
// CHECK-NEXT:    %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[INF:.*]] = graph.div %[[M]], %[[Z]] : tensor<f32>
// CHECK-NEXT:    func.return %[[E]], %[[L]], %[[INF]]
func.func @fold_unary() -> (tensor<3xf32>, tensor<f32>, tensor<f32>) {
  %a = graph.constant dense<[0.0, 1.0, -1.0]> : tensor<3xf32>
  %e = graph.exp %a : tensor<3xf32>
  %m = graph.constant dense<-1.0> : tensor<f32>
  %l = graph.log %m : tensor<f32>
  %z = graph.constant dense<0.0> : tensor<f32>
  %inf = graph.div %m, %z : tensor<f32>
  func.return %e, %l, %inf : tensor<3xf32>, tensor<f32>, tensor<f32>
}

// Integer division truncates toward zero; rem takes the dividend's sign.
// CHECK-LABEL: func.func @fold_int
// CHECK-NEXT:    %[[D:.*]] = graph.constant dense<[3, -3, -3, 3]> : tensor<4xi32>
// CHECK-NEXT:    %[[R:.*]] = graph.constant dense<[1, -1, 1, -1]> : tensor<4xi32>
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<[false, true, false, true]> : tensor<4xi1>
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<0> : tensor<i32>
// CHECK-NEXT:    func.return %[[D]], %[[R]], %[[C]], %[[S]]
func.func @fold_int() -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<i32>) {
  %a = graph.constant dense<[7, -7, 7, -7]> : tensor<4xi32>
  %b = graph.constant dense<[2, 2, -2, -2]> : tensor<4xi32>
  %d = graph.div %a, %b : tensor<4xi32>
  %r = graph.rem %a, %b : tensor<4xi32>
  %c = graph.compare lt %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %s = graph.reduce sum %a dims [0] : (tensor<4xi32>) -> tensor<i32>
  func.return %d, %r, %c, %s : tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<i32>
}

// Index ops, convert (float -> int truncates) and gather fold too.
// CHECK-LABEL: func.func @fold_index
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    %[[CI:.*]] = graph.constant dense<[1, -2]> : tensor<2xi32>
// CHECK-NEXT:    %[[H:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf16>
// CHECK-NEXT:    %[[SL:.*]] = graph.constant dense<[2.000000e+00, 3.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    %[[G:.*]] = graph.constant dense<[3.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[B]], %[[CI]], %[[H]], %[[SL]], %[[G]], %[[R]]
func.func @fold_index() -> (tensor<2x3xf32>, tensor<2xi32>, tensor<3xf16>, tensor<4xf32>, tensor<2xf32>, tensor<2x3xf32>) {
  %v = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = graph.broadcast %v dims [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %i = graph.constant dense<[1.5, -2.7]> : tensor<2xf32>
  %ci = graph.convert %i : (tensor<2xf32>) -> tensor<2xi32>
  %h = graph.convert %v : (tensor<3xf32>) -> tensor<3xf16>
  %cat = graph.concat %v, %v dim 0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<6xf32>
  %sl = graph.slice %cat start [1] limit [5] strides [1] : (tensor<6xf32>) -> tensor<4xf32>
  %ids = graph.constant dense<[2, 0]> : tensor<2xi32>
  %g = graph.gather %v, %ids : (tensor<3xf32>, tensor<2xi32>) -> tensor<2xf32>
  %r = graph.reshape %cat : (tensor<6xf32>) -> tensor<2x3xf32>
  func.return %b, %ci, %h, %sl, %g, %r : tensor<2x3xf32>, tensor<2xi32>, tensor<3xf16>, tensor<4xf32>, tensor<2xf32>, tensor<2x3xf32>
}

// A splat result stays a splat: 1024 elements is the limit and still folds.
// CHECK-LABEL: func.func @fold_at_the_limit
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<2.000000e+00> : tensor<32x32xf32>
// CHECK-NEXT:    func.return %[[B]]
func.func @fold_at_the_limit() -> tensor<32x32xf32> {
  %c = graph.constant dense<2.0> : tensor<32xf32>
  %b = graph.broadcast %c dims [0] : (tensor<32xf32>) -> tensor<32x32xf32>
  func.return %b : tensor<32x32xf32>
}

// 1025 elements: too large to fold (it would bloat the IR and the PTX).
// CHECK-LABEL: func.func @no_fold_over_the_limit
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<2.000000e+00> : tensor<5xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.broadcast %[[C]] dims [0] : (tensor<5xf32>) -> tensor<5x205xf32>
// CHECK-NEXT:    %[[E:.*]] = graph.exp %[[B]] : tensor<5x205xf32>
// CHECK-NEXT:    func.return %[[E]]
func.func @no_fold_over_the_limit() -> tensor<5x205xf32> {
  %c = graph.constant dense<2.0> : tensor<5xf32>
  %b = graph.broadcast %c dims [0] : (tensor<5xf32>) -> tensor<5x205xf32>
  %e = graph.exp %b : tensor<5x205xf32>
  func.return %e : tensor<5x205xf32>
}

// CHECK-LABEL: func.func @no_fold_large_elementwise
// CHECK:         graph.add
func.func @no_fold_large_elementwise() -> tensor<64x64xf32> {
  %a = graph.constant dense<1.0> : tensor<64x64xf32>
  %s = graph.add %a, %a : tensor<64x64xf32>
  func.return %s : tensor<64x64xf32>
}

// A `?` result has no size to fold to; an argument operand is not a constant.
// CHECK-LABEL: func.func @no_fold_dynamic_or_non_constant
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.exp %[[C]] : (tensor<4xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[X]], %[[C]] : tensor<4xf32>
// CHECK-NEXT:    func.return %[[D]], %[[A]]
func.func @no_fold_dynamic_or_non_constant(%x: tensor<4xf32>) -> (tensor<?xf32>, tensor<4xf32>) {
  %c = graph.constant dense<1.0> : tensor<4xf32>
  %d = graph.exp %c : (tensor<4xf32>) -> tensor<?xf32>
  %a = graph.add %x, %c : tensor<4xf32>
  func.return %d, %a : tensor<?xf32>, tensor<4xf32>
}

// iota has no operands: it is a cheap index computation, not a constant to materialise.
// CHECK-LABEL: func.func @no_fold_iota
// CHECK-NEXT:    graph.iota dim 0 : tensor<8xi32>
func.func @no_fold_iota() -> tensor<8xi32> {
  %i = graph.iota dim 0 : tensor<8xi32>
  func.return %i : tensor<8xi32>
}

// Unused constants (left over after folding) are erased.
// CHECK-LABEL: func.func @dead_constants
// CHECK-NOT:     graph.constant
// CHECK:         func.return
func.func @dead_constants(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = graph.constant dense<1.0> : tensor<4xf32>
  func.return %x : tensor<4xf32>
}
