// graph.reduce_window and graph.pad survive print -> parse -> print, in the custom
// and in the generic form (their kind and mode are typed enum attributes).
// RUN: fs-opt %s | fs-opt | filecheck %s
// RUN: fs-opt %s --print-op-generic | fs-opt | filecheck %s
// RUN: fs-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @pool
// CHECK-SAME:  (%[[X:.*]]: tensor<1x3x9x9xf32>, %[[D:.*]]: tensor<?x12xi32>)
func.func @pool(%x: tensor<1x3x9x9xf32>, %d: tensor<?x12xi32>) -> (tensor<1x3x5x5xf32>, tensor<1x3x4x4xf32>, tensor<?x6xi32>) {
  // CHECK-NEXT: graph.reduce_window max %[[X]] window [1, 1, 3, 3] strides [1, 1, 2, 2] dilations [1, 1, 1, 1] low [0, 0, 1, 1] high [0, 0, 1, 1] : (tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32>
  // CHECK-NEXT: graph.reduce_window sum %[[X]] window [1, 1, 2, 2] strides [1, 1, 2, 2] dilations [1, 1, 2, 2] low [0, 0, 0, 0] high [0, 0, 0, 0] : (tensor<1x3x9x9xf32>) -> tensor<1x3x4x4xf32>
  // CHECK-NEXT: graph.reduce_window min %[[D]] window [1, 3] strides [1, 2] dilations [1, 1] low [0, 1] high [0, 0] : (tensor<?x12xi32>) -> tensor<?x6xi32>
  // GENERIC: "graph.reduce_window"(%{{.*}}) <{kind = #graph<reduce_kind max>, window = array<i64: 1, 1, 3, 3>
  %m = graph.reduce_window max %x window [1, 1, 3, 3] strides [1, 1, 2, 2] dilations [1, 1, 1, 1] low [0, 0, 1, 1] high [0, 0, 1, 1] : (tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32>
  %s = graph.reduce_window sum %x window [1, 1, 2, 2] strides [1, 1, 2, 2] dilations [1, 1, 2, 2] low [0, 0, 0, 0] high [0, 0, 0, 0] : (tensor<1x3x9x9xf32>) -> tensor<1x3x4x4xf32>
  %n = graph.reduce_window min %d window [1, 3] strides [1, 2] dilations [1, 1] low [0, 1] high [0, 0] : (tensor<?x12xi32>) -> tensor<?x6xi32>
  func.return %m, %s, %n : tensor<1x3x5x5xf32>, tensor<1x3x4x4xf32>, tensor<?x6xi32>
}

// CHECK-LABEL: func.func @pads
// CHECK-SAME:  (%[[X:.*]]: tensor<4x8xf32>, %[[V:.*]]: tensor<f32>)
func.func @pads(%x: tensor<4x8xf32>, %v: tensor<f32>) -> (tensor<6x8xf32>, tensor<6x12xf32>, tensor<4x22xf32>) {
  // CHECK-NEXT: graph.pad constant %[[X]], %[[V]] low [0, 1] high [2, -1] interior [0, 0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<6x8xf32>
  // CHECK-NEXT: graph.pad reflect %[[X]] low [1, 2] high [1, 2] interior [0, 0] : (tensor<4x8xf32>) -> tensor<6x12xf32>
  // CHECK-NEXT: graph.pad constant %[[X]], %[[V]] low [0, 0] high [0, 0] interior [0, 2] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x22xf32>
  // GENERIC: "graph.pad"(%{{.*}}, %{{.*}}) <{mode = #graph<pad_mode constant>
  // GENERIC: "graph.pad"(%{{.*}}) <{mode = #graph<pad_mode reflect>
  %c = graph.pad constant %x, %v low [0, 1] high [2, -1] interior [0, 0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<6x8xf32>
  %r = graph.pad reflect %x low [1, 2] high [1, 2] interior [0, 0] : (tensor<4x8xf32>) -> tensor<6x12xf32>
  %i = graph.pad constant %x, %v low [0, 0] high [0, 0] interior [0, 2] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x22xf32>
  func.return %c, %r, %i : tensor<6x8xf32>, tensor<6x12xf32>, tensor<4x22xf32>
}
