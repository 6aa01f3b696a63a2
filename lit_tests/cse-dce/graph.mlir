// xDSL's cse and dce work on graph ops: they are Pure, and their properties (compare
// direction, reduction kind and dims, perm, slice bounds, constant value) are part of
// what makes two ops the same.
// RUN: fs-opt %s --split-input-file -p cse | filecheck %s --check-prefix=CSE
// RUN: fs-opt %s --split-input-file -p dce | filecheck %s --check-prefix=DCE

// CSE-LABEL: func.func @same_ops
// CSE-SAME:    (%[[X:.*]]: tensor<4x8xf32>)
// CSE-NEXT:    %[[E:.*]] = graph.exp %[[X]] : tensor<4x8xf32>
// CSE-NEXT:    %[[A:.*]] = graph.add %[[E]], %[[E]] : tensor<4x8xf32>
// CSE-NEXT:    func.return %[[A]], %[[A]]
func.func @same_ops(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e1 = graph.exp %x : tensor<4x8xf32>
  %e2 = graph.exp %x : tensor<4x8xf32>
  %a1 = graph.add %e1, %e2 : tensor<4x8xf32>
  %a2 = graph.add %e2, %e1 : tensor<4x8xf32>
  func.return %a1, %a2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Equal constants merge; different values do not.
// CSE-LABEL: func.func @constants
// CSE-NEXT:    %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<4xf32>
// CSE-NEXT:    %[[TWO:.*]] = graph.constant dense<2.000000e+00> : tensor<4xf32>
// CSE-NEXT:    func.return %[[ONE]], %[[ONE]], %[[TWO]]
func.func @constants() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = graph.constant dense<1.0> : tensor<4xf32>
  %b = graph.constant dense<1.0> : tensor<4xf32>
  %c = graph.constant dense<2.0> : tensor<4xf32>
  func.return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Same operands but different properties or result types: all kept.
// CSE-LABEL: func.func @different_properties
// CSE-NEXT:    graph.compare lt
// CSE-NEXT:    graph.compare gt
// CSE-NEXT:    graph.reduce sum %{{.*}} dims [0]
// CSE-NEXT:    graph.reduce max %{{.*}} dims [0]
// CSE-NEXT:    graph.reduce sum %{{.*}} dims [1]
// CSE-NEXT:    graph.transpose %{{.*}} perm [1, 0]
// CSE-NEXT:    graph.slice %{{.*}} start [0, 0] limit [2, 2]
// CSE-NEXT:    graph.slice %{{.*}} start [1, 0] limit [3, 2]
// CSE-NEXT:    graph.convert %{{.*}} -> tensor<2x2xf16>
// CSE-NEXT:    graph.convert %{{.*}} -> tensor<2x2xbf16>
// CSE-NEXT:    func.return
func.func @different_properties(%x: tensor<3x2xf32>, %y: tensor<3x2xf32>, %s: tensor<2x2xf32>) -> (tensor<3x2xi1>, tensor<3x2xi1>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf16>, tensor<2x2xbf16>) {
  %lt = graph.compare lt %x, %y : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xi1>
  %gt = graph.compare gt %x, %y : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xi1>
  %r0 = graph.reduce sum %x dims [0] : (tensor<3x2xf32>) -> tensor<2xf32>
  %m0 = graph.reduce max %x dims [0] : (tensor<3x2xf32>) -> tensor<2xf32>
  %r1 = graph.reduce sum %x dims [1] : (tensor<3x2xf32>) -> tensor<3xf32>
  %t = graph.transpose %x perm [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %s0 = graph.slice %x start [0, 0] limit [2, 2] strides [1, 1] : (tensor<3x2xf32>) -> tensor<2x2xf32>
  %s1 = graph.slice %x start [1, 0] limit [3, 2] strides [1, 1] : (tensor<3x2xf32>) -> tensor<2x2xf32>
  %h = graph.convert %s : (tensor<2x2xf32>) -> tensor<2x2xf16>
  %b = graph.convert %s : (tensor<2x2xf32>) -> tensor<2x2xbf16>
  func.return %lt, %gt, %r0, %m0, %r1, %t, %s0, %s1, %h, %b : tensor<3x2xi1>, tensor<3x2xi1>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf16>, tensor<2x2xbf16>
}

// -----

// CSE leaves the order of operands alone (sub is not commutative).
// CSE-LABEL: func.func @operand_order
// CSE-NEXT:    graph.sub %[[A:.*]], %[[B:.*]] :
// CSE-NEXT:    graph.sub %[[B]], %[[A]] :
func.func @operand_order(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %x = graph.sub %a, %b : tensor<4xf32>
  %y = graph.sub %b, %a : tensor<4xf32>
  func.return %x, %y : tensor<4xf32>, tensor<4xf32>
}

// -----

// DCE erases whole unused chains, keeps everything a result depends on.
// DCE-LABEL: func.func @dead_chain
// DCE-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[IDS:.*]]: tensor<3xi32>)
// DCE-NEXT:    %[[E:.*]] = graph.exp %[[X]]
// DCE-NEXT:    %[[R:.*]] = graph.reduce sum %[[E]] dims [1]
// DCE-NEXT:    func.return %[[R]]
func.func @dead_chain(%x: tensor<4x8xf32>, %ids: tensor<3xi32>) -> tensor<4xf32> {
  %e = graph.exp %x : tensor<4x8xf32>
  %unused_t = graph.transpose %e perm [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %unused_d = graph.dot %x, %unused_t : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %unused_g = graph.gather %unused_d, %ids : (tensor<4x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  %unused_i = graph.iota dim 0 : tensor<8xi32>
  %unused_c = graph.constant dense<1.0> : tensor<4xf32>
  %r = graph.reduce sum %e dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// DCE-LABEL: func.func @all_used
// DCE-NEXT:    graph.exp
// DCE-NEXT:    graph.neg
// DCE-NEXT:    graph.add
// DCE-NEXT:    func.return
func.func @all_used(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = graph.exp %x : tensor<4xf32>
  %n = graph.neg %x : tensor<4xf32>
  %a = graph.add %e, %n : tensor<4xf32>
  func.return %a : tensor<4xf32>
}
