// symbolic-dims names every `?` dim by its class of equal sizes: the argument symbols
// (#graph.dims, e.g. an ONNX dim_param) or fresh ones `<arg>_d<dim>`, merged where ops
// need sizes to agree; reshapes give products, and a product merged with a symbol
// names that symbol's class. Running it twice gives the same names.
// RUN: fs-opt %s --split-input-file -p symbolic-dims | filecheck %s
// RUN: fs-opt %s --split-input-file -p symbolic-dims,symbolic-dims | filecheck %s

// Two embedding columns of batch B concatenated: the unnamed batch of %ids2 joins B
// through the concat, and %w through the multiply.
// CHECK-LABEL: func.func @columns
// CHECK-SAME:    %ids: tensor<?x4xi32> {graph.dims = #graph.dims<[B, 4]>}
// CHECK-SAME:    %ids2: tensor<?x3xi32> {graph.dims = #graph.dims<[B, 3]>}
// CHECK-SAME:    %w: tensor<?x24xf32> {graph.dims = #graph.dims<[B, 24]>}
// CHECK:         graph.gather %t, %ids {graph.dims = #graph.dims<[B, 4, 16]>}
// CHECK:         graph.reduce sum %{{.*}} dims [1] {graph.dims = #graph.dims<[B, 16]>}
// CHECK:         graph.concat %{{.*}}, %{{.*}} dim 1 {graph.dims = #graph.dims<[B, 24]>}
// CHECK:         graph.mul %{{.*}}, %w {graph.dims = #graph.dims<[B, 24]>}
func.func @columns(%t: tensor<1000x16xf32>, %ids: tensor<?x4xi32> {graph.dims = #graph.dims<[B, 4]>}, %t2: tensor<50x8xf32>, %ids2: tensor<?x3xi32>, %w: tensor<?x24xf32>) -> tensor<?x24xf32> {
  %e = graph.gather %t, %ids : (tensor<1000x16xf32>, tensor<?x4xi32>) -> tensor<?x4x16xf32>
  %s = graph.reduce sum %e dims [1] : (tensor<?x4x16xf32>) -> tensor<?x16xf32>
  %e2 = graph.gather %t2, %ids2 : (tensor<50x8xf32>, tensor<?x3xi32>) -> tensor<?x3x8xf32>
  %s2 = graph.reduce sum %e2 dims [1] : (tensor<?x3x8xf32>) -> tensor<?x8xf32>
  %c = graph.concat %s, %s2 dim 1 : (tensor<?x16xf32>, tensor<?x8xf32>) -> tensor<?x24xf32>
  %y = graph.mul %c, %w : tensor<?x24xf32>
  func.return %y : tensor<?x24xf32>
}

// -----

// Products: a flattened [B, 4] is B*4; a flat argument added to it is B*4 as well, and
// reshaping back divides the product. Concatenating along the batch adds: 2*B.
// CHECK-LABEL: func.func @products
// CHECK-SAME:    %flat: tensor<?xi32> {graph.dims = #graph.dims<["4*B"]>}
// CHECK:         graph.reshape %ids {graph.dims = #graph.dims<["4*B"]>}
// CHECK:         graph.add %{{.*}}, %flat {graph.dims = #graph.dims<["4*B"]>}
// CHECK:         graph.reshape %{{.*}} {graph.dims = #graph.dims<[B, 2, 2]>}
// CHECK:         graph.concat %ids, %ids dim 0 {graph.dims = #graph.dims<["2*B", 4]>}
func.func @products(%ids: tensor<?x4xi32> {graph.dims = #graph.dims<[B, 4]>}, %flat: tensor<?xi32>) -> (tensor<?x2x2xi32>, tensor<?x4xi32>) {
  %r = graph.reshape %ids : (tensor<?x4xi32>) -> tensor<?xi32>
  %f = graph.add %r, %flat : tensor<?xi32>
  %b = graph.reshape %f : (tensor<?xi32>) -> tensor<?x2x2xi32>
  %c = graph.concat %ids, %ids dim 0 : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>
  func.return %b, %c : tensor<?x2x2xi32>, tensor<?x4xi32>
}

// -----

// Sizes nothing ties together stay apart; a dot ties the contracting dims (K) but
// not the free ones.
// CHECK-LABEL: func.func @apart
// CHECK-SAME:    %a: tensor<?x?xf32> {graph.dims = #graph.dims<[M, K]>}
// CHECK-SAME:    %b: tensor<?x?xf32> {graph.dims = #graph.dims<[K, b_d1]>}
// CHECK-SAME:    %u: tensor<?xf32> {graph.dims = #graph.dims<[u_d0]>}
// CHECK:         graph.dot %a, %b {graph.dims = #graph.dims<[M, b_d1]>}
func.func @apart(%a: tensor<?x?xf32> {graph.dims = #graph.dims<[M, K]>}, %b: tensor<?x?xf32>, %u: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %d = graph.dot %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %n = graph.neg %u : tensor<?xf32>
  func.return %d, %n : tensor<?x?xf32>, tensor<?xf32>
}
