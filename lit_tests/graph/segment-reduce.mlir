// graph.segment_reduce: ragged bags given by start offsets; prints as it parses, and the
// result takes the offsets' length and the data's other dims.
// RUN: fs-opt %s --split-input-file | filecheck %s
// RUN: fs-opt %s --split-input-file -p graph-shape-inference | filecheck %s --check-prefix=INFER

// CHECK-LABEL: func.func @kinds
// CHECK-SAME:    (%[[D:.*]]: tensor<?x16xf32>, %[[O:.*]]: tensor<?xi32>)
// CHECK:         graph.segment_reduce sum %[[D]], %[[O]] : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
// CHECK:         graph.segment_reduce mean %[[D]], %[[O]]
// CHECK:         graph.segment_reduce max %[[D]], %[[O]]
// CHECK:         graph.segment_reduce min %[[D]], %[[O]]
func.func @kinds(%d: tensor<?x16xf32>, %o: tensor<?xi32>) -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
  %s = graph.segment_reduce sum %d, %o : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  %m = graph.segment_reduce mean %d, %o : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  %x = graph.segment_reduce max %d, %o : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  %n = graph.segment_reduce min %d, %o : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  func.return %s, %m, %x, %n : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
}

// -----

// INFER-LABEL: func.func @static_segments
// INFER:         graph.segment_reduce sum %{{.*}} : (tensor<?x4x8xi32>, tensor<5xi64>) -> tensor<5x4x8xi32>
func.func @static_segments(%d: tensor<?x4x8xi32>, %o: tensor<5xi64>) -> tensor<?x?x?xi32> {
  %s = graph.segment_reduce sum %d, %o : (tensor<?x4x8xi32>, tensor<5xi64>) -> tensor<?x?x?xi32>
  func.return %s : tensor<?x?x?xi32>
}
