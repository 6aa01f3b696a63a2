// graph.broadcast with a `like` operand: the `?` result sizes are the `like` operand's
// (only its sizes are read). The form survives print -> parse -> print, custom and
// generic, and shape inference refines `?` result dims from a static `like`.
// RUN: fs-opt %s --split-input-file | fs-opt --split-input-file | filecheck %s
// RUN: fs-opt %s --split-input-file --print-op-generic | fs-opt --split-input-file | filecheck %s
// RUN: fs-opt %s --split-input-file -p graph-shape-inference | filecheck %s --check-prefix=INFER

// CHECK-LABEL: func.func @softmax_row
// CHECK-SAME:  (%[[X:.*]]: tensor<6x?xf32>) -> tensor<6x?xf32>
// CHECK-NEXT:  %[[M:.*]] = graph.reduce max %[[X]] dims [1] : (tensor<6x?xf32>) -> tensor<6xf32>
// CHECK-NEXT:  %[[B:.*]] = graph.broadcast %[[M]] dims [0] like %[[X]] : (tensor<6xf32>, tensor<6x?xf32>) -> tensor<6x?xf32>
// CHECK-NEXT:  %[[S:.*]] = graph.sub %[[X]], %[[B]] : tensor<6x?xf32>
// CHECK-NEXT:  func.return %[[S]] : tensor<6x?xf32>
func.func @softmax_row(%x: tensor<6x?xf32>) -> tensor<6x?xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<6x?xf32>) -> tensor<6xf32>
  %b = graph.broadcast %m dims [0] like %x : (tensor<6xf32>, tensor<6x?xf32>) -> tensor<6x?xf32>
  %s = graph.sub %x, %b : tensor<6x?xf32>
  func.return %s : tensor<6x?xf32>
}

// -----

// A scalar to the shape of a fully dynamic tensor, with attributes kept.
// CHECK-LABEL: func.func @splat_like
// CHECK-SAME:  (%[[X:.*]]: tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:  %[[C:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:  %[[B:.*]] = graph.broadcast %[[C]] dims [] like %[[X]] {tag = 1 : i64} : (tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:  func.return %[[B]] : tensor<?x?xf32>
func.func @splat_like(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = graph.constant dense<1.0> : tensor<f32>
  %b = graph.broadcast %c dims [] like %x {tag = 1 : i64} : (tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %b : tensor<?x?xf32>
}

// -----

// `like` may be of another element type; a static `like` dim fixes the result dim.
// CHECK-LABEL: func.func @static_like
// INFER-LABEL: func.func @static_like
// INFER-SAME:  -> tensor<4x8xf32>
// INFER:       graph.broadcast %{{.*}} dims [1] like %{{.*}} : (tensor<8xf32>, tensor<4x8xi32>) -> tensor<4x8xf32>
func.func @static_like(%v: tensor<8xf32>, %s: tensor<4x8xi32>) -> tensor<?x8xf32> {
  // CHECK: graph.broadcast %{{.*}} dims [1] like %{{.*}} : (tensor<8xf32>, tensor<4x8xi32>) -> tensor<?x8xf32>
  %b = graph.broadcast %v dims [1] like %s : (tensor<8xf32>, tensor<4x8xi32>) -> tensor<?x8xf32>
  func.return %b : tensor<?x8xf32>
}
