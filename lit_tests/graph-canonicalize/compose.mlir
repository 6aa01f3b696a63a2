// graph-canonicalize composes chains of index ops and double negation.
// RUN: fs-opt %s --split-input-file -p graph-canonicalize | filecheck %s

// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME:    (%[[X:.*]]: tensor<4x6xf32>)
// CHECK-NEXT:    %[[R:.*]] = graph.reshape %[[X]] : (tensor<4x6xf32>) -> tensor<3x8xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @reshape_reshape(%x: tensor<4x6xf32>) -> tensor<3x8xf32> {
  %a = graph.reshape %x : (tensor<4x6xf32>) -> tensor<24xf32>
  %b = graph.reshape %a : (tensor<24xf32>) -> tensor<3x8xf32>
  func.return %b : tensor<3x8xf32>
}

// -----

// A reshape back to the original shape disappears entirely.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME:    (%[[X:.*]]: tensor<4x6xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @reshape_round_trip(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %a = graph.reshape %x : (tensor<4x6xf32>) -> tensor<24xf32>
  %b = graph.reshape %a : (tensor<24xf32>) -> tensor<4x6xf32>
  func.return %b : tensor<4x6xf32>
}

// -----

// result dim i of the outer transpose is dim p_in[p_out[i]] of x.
// CHECK-LABEL: func.func @transpose_transpose
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %[[X]] perm [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %a = graph.transpose %x perm [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %b = graph.transpose %a perm [1, 2, 0] : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  func.return %b : tensor<4x2x3xf32>
}

// -----

// Inverse transposes compose to the identity, which is then removed.
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %a = graph.transpose %x perm [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %b = graph.transpose %a perm [2, 0, 1] : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  func.return %b : tensor<2x3x4xf32>
}

// -----

// The inner op stays when it has another use.
// CHECK-LABEL: func.func @transpose_shared
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[A:.*]] = graph.transpose %[[X]] perm [1, 0]
// CHECK-NEXT:    func.return %[[X]], %[[A]]
func.func @transpose_shared(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %a = graph.transpose %x perm [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %b = graph.transpose %a perm [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
  func.return %b, %a : tensor<2x3xf32>, tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @double_negation
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT:    %[[N:.*]] = graph.neg %[[X]]
// CHECK-NEXT:    func.return %[[X]], %[[I]], %[[N]]
func.func @double_negation(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) {
  %a = graph.neg %x : tensor<4xf32>
  %b = graph.neg %a : tensor<4xf32>
  %c = graph.neg %i : tensor<4xi32>
  %d = graph.neg %c : tensor<4xi32>
  %e = graph.neg %b : tensor<4xf32>
  func.return %b, %d, %e : tensor<4xf32>, tensor<4xi32>, tensor<4xf32>
}

// -----

// neg of a function argument has no producer to look at (this used to crash).
// CHECK-LABEL: func.func @negate_argument
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[N:.*]] = graph.neg %[[X]] : tensor<4xf32>
// CHECK-NEXT:    func.return %[[N]]
func.func @negate_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = graph.neg %x : tensor<4xf32>
  func.return %n : tensor<4xf32>
}

// -----

// Dim groups hold for their own shapes only: reshapes with groups are neither composed
// nor dropped when the types agree ([B, 4, S] -> [B/4, 4, 4*S] is not the identity).
// CHECK-LABEL: func.func @grouped_reshapes
// CHECK-NEXT:    %[[A:.*]] = graph.reshape %x {groups = array<i64: 2, 1, 1, 2>}
// CHECK-NEXT:    %[[B:.*]] = graph.reshape %[[A]] {groups = array<i64: 1, 2, 2, 1>}
// CHECK-NEXT:    %[[C:.*]] = graph.reshape %[[B]] {groups = array<i64: 1, 2, 2, 1>}
// CHECK-NEXT:    func.return %[[C]]
func.func @grouped_reshapes(%x: tensor<?x4x?xf32>) -> tensor<?x4x?xf32> {
  %a = graph.reshape %x {groups = array<i64: 2, 1, 1, 2>} : (tensor<?x4x?xf32>) -> tensor<?x1x?xf32>
  %b = graph.reshape %a {groups = array<i64: 1, 2, 2, 1>} : (tensor<?x1x?xf32>) -> tensor<?x4x?xf32>
  %c = graph.reshape %b {groups = array<i64: 1, 2, 2, 1>} : (tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
  func.return %c : tensor<?x4x?xf32>
}
