// graph.scatter and graph.sort: syntax round trip, then the verifier's errors.
// RUN: fs-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @scatter(
// CHECK-SAME: %[[X:.*]]: tensor<8x4xf32>, %[[I:.*]]: tensor<3x1xi32>, %[[U:.*]]: tensor<3x4xf32>
// CHECK: %{{.*}} = graph.scatter add %[[X]], %[[I]], %[[U]] dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
// CHECK: %{{.*}} = graph.scatter none %[[X]], %{{.*}}, %{{.*}} dims [1, 0] : (tensor<8x4xf32>, tensor<2x5x2xi64>, tensor<2x5xf32>) -> tensor<8x4xf32>
func.func @scatter(%x: tensor<8x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>, %j: tensor<2x5x2xi64>,
                   %v: tensor<2x5xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %r = graph.scatter add %x, %i, %u dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %s = graph.scatter none %x, %j, %v dims [1, 0] : (tensor<8x4xf32>, tensor<2x5x2xi64>, tensor<2x5xf32>) -> tensor<8x4xf32>
  func.return %r, %s : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @sort(
// CHECK: %{{.*}} = graph.sort ascending %{{.*}}, %{{.*}} dim 1 : (tensor<4x16xf32>, tensor<4x16xi32>) -> tensor<4x16xi32>
// CHECK: %{{.*}} = graph.sort descending %{{.*}}, %{{.*}} dim 0 : tensor<4x16xf32>
func.func @sort(%k: tensor<4x16xf32>, %v: tensor<4x16xi32>) -> (tensor<4x16xi32>, tensor<4x16xf32>) {
  %r = graph.sort ascending %k, %v dim 1 : (tensor<4x16xf32>, tensor<4x16xi32>) -> tensor<4x16xi32>
  %s = graph.sort descending %k, %k dim 0 : tensor<4x16xf32>
  func.return %r, %s : tensor<4x16xi32>, tensor<4x16xf32>
}
