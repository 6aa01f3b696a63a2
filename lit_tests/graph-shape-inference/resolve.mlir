// graph-shape-inference replaces `?` dims by the sizes the function's inputs imply,
// op by op in order, and refines the function's result types to match.
// RUN: fs-opt %s --split-input-file -p graph-shape-inference | filecheck %s
// Running it twice changes nothing more.
// RUN: fs-opt %s --split-input-file -p graph-shape-inference,graph-shape-inference | filecheck %s

// CHECK-LABEL: func.func @elementwise_chain
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[E:.*]] = graph.exp %[[X]] : tensor<4x8xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.neg %[[E]] : tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[N]] : tensor<4x8xf32>
func.func @elementwise_chain(%x: tensor<4x8xf32>) -> tensor<?x?xf32> {
  %e = graph.exp %x : (tensor<4x8xf32>) -> tensor<?x?xf32>
  %n = graph.neg %e : tensor<?x?xf32>
  func.return %n : tensor<?x?xf32>
}

// -----

// Each operand contributes the dims it knows.
// CHECK-LABEL: func.func @join_operands
// CHECK-SAME:    (%[[X:.*]]: tensor<?x8xf32>, %[[Y:.*]]: tensor<4x?xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf32>)
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[X]], %[[Y]] : (tensor<?x8xf32>, tensor<4x?xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.compare lt %[[X]], %[[Y]] : (tensor<?x8xf32>, tensor<4x?xf32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %[[S:.*]] = graph.select %[[C]], %[[X]], %[[Y]] : (tensor<4x8xi1>, tensor<?x8xf32>, tensor<4x?xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[A]], %[[C]], %[[S]] : tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf32>
func.func @join_operands(%x: tensor<?x8xf32>, %y: tensor<4x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xi1>, tensor<?x?xf32>) {
  %a = graph.add %x, %y : (tensor<?x8xf32>, tensor<4x?xf32>) -> tensor<?x?xf32>
  %c = graph.compare lt %x, %y : (tensor<?x8xf32>, tensor<4x?xf32>) -> tensor<?x?xi1>
  %s = graph.select %c, %x, %y : (tensor<?x?xi1>, tensor<?x8xf32>, tensor<4x?xf32>) -> tensor<?x?xf32>
  func.return %a, %c, %s : tensor<?x?xf32>, tensor<?x?xi1>, tensor<?x?xf32>
}

// -----

// A broadcast result dim mapped from a known operand dim resolves; a new dim cannot.
// CHECK-LABEL: func.func @broadcast
// CHECK-NEXT:    graph.broadcast %{{.*}} dims [0] : (tensor<4xf32>) -> tensor<4x?xf32>
// CHECK-NEXT:    graph.broadcast %{{.*}} dims [0, 1] : (tensor<4x1xf32>) -> tensor<4x?xf32>
// CHECK-NEXT:    func.return {{.*}} : tensor<4x?xf32>, tensor<4x?xf32>
func.func @broadcast(%v: tensor<4xf32>, %w: tensor<4x1xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %b = graph.broadcast %v dims [0] : (tensor<4xf32>) -> tensor<?x?xf32>
  %c = graph.broadcast %w dims [0, 1] : (tensor<4x1xf32>) -> tensor<?x?xf32>
  func.return %b, %c : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// One `?` in a reshape result follows from the element count; two do not.
// CHECK-LABEL: func.func @reshape
// CHECK-NEXT:    graph.reshape %{{.*}} : (tensor<4x8xf32>) -> tensor<16x2xf32>
// CHECK-NEXT:    graph.reshape %{{.*}} : (tensor<4x8xf32>) -> tensor<?x?xf32>
func.func @reshape(%x: tensor<4x8xf32>) -> (tensor<?x2xf32>, tensor<?x?xf32>) {
  %a = graph.reshape %x : (tensor<4x8xf32>) -> tensor<?x2xf32>
  %b = graph.reshape %x : (tensor<4x8xf32>) -> tensor<?x?xf32>
  func.return %a, %b : tensor<?x2xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_transpose_slice
// CHECK-NEXT:    %[[R:.*]] = graph.reduce sum %{{.*}} dims [1] : (tensor<4x8x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %[[R]] perm [1, 0] : (tensor<4x2xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.slice %[[T]] start [0, 1] limit [2, 4] strides [1, 2] : (tensor<2x4xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[S]] : tensor<2x2xf32>
func.func @reduce_transpose_slice(%x: tensor<4x8x2xf32>) -> tensor<?x?xf32> {
  %r = graph.reduce sum %x dims [1] : (tensor<4x8x2xf32>) -> tensor<?x?xf32>
  %t = graph.transpose %r perm [1, 0] : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = graph.slice %t start [0, 1] limit [2, 4] strides [1, 2] : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @dot_concat_gather
// CHECK-NEXT:    %[[D:.*]] = graph.dot %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.concat %[[D]], %[[D]] dim 1 : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    %[[G:.*]] = graph.gather %{{.*}}, %{{.*}} : (tensor<100x16xf32>, tensor<3xi32>) -> tensor<3x16xf32>
// CHECK-NEXT:    func.return %[[C]], %[[G]] : tensor<2x8x16xf32>, tensor<3x16xf32>
func.func @dot_concat_gather(%a: tensor<2x4x8xf32>, %w: tensor<8x16xf32>, %t: tensor<100x16xf32>, %ids: tensor<3xi32>) -> (tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %d = graph.dot %a, %w : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<?x?x?xf32>
  %c = graph.concat %d, %d dim 1 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %g = graph.gather %t, %ids : (tensor<100x16xf32>, tensor<3xi32>) -> tensor<?x?xf32>
  func.return %c, %g : tensor<?x?x?xf32>, tensor<?x?xf32>
}

// -----

// A concat dim is known only when every operand's is.
// CHECK-LABEL: func.func @concat_partly_dynamic
// CHECK-NEXT:    graph.concat %{{.*}}, %{{.*}} dim 0 : (tensor<2x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
func.func @concat_partly_dynamic(%x: tensor<2x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x?xf32> {
  %c = graph.concat %x, %y dim 0 : (tensor<2x8xf32>, tensor<?x8xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}

// -----

// Dynamic inputs: nothing to resolve, nothing changes.
// CHECK-LABEL: func.func @all_dynamic
// CHECK-SAME:    (%[[X:.*]]: tensor<?x?xf32>, %[[W:.*]]: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>)
// CHECK-NEXT:    %[[E:.*]] = graph.exp %[[X]] : tensor<?x?xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.dot %[[E]], %[[W]] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.reduce max %[[D]] dims [1] : (tensor<?x?xf32>) -> tensor<?xf32>
// CHECK-NEXT:    func.return %[[D]], %[[R]] : tensor<?x?xf32>, tensor<?xf32>
func.func @all_dynamic(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %e = graph.exp %x : tensor<?x?xf32>
  %d = graph.dot %e, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = graph.reduce max %d dims [1] : (tensor<?x?xf32>) -> tensor<?xf32>
  func.return %d, %r : tensor<?x?xf32>, tensor<?xf32>
}

// -----

// Known dims of a dynamic input still flow: the reduced `?` dim goes away.
// CHECK-LABEL: func.func @partly_dynamic
// CHECK-SAME:    -> tensor<8xf32>
// CHECK-NEXT:    graph.reduce sum %{{.*}} dims [0] : (tensor<?x8xf32>) -> tensor<8xf32>
func.func @partly_dynamic(%x: tensor<?x8xf32>) -> tensor<?xf32> {
  %r = graph.reduce sum %x dims [0] : (tensor<?x8xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

