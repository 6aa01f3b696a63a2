// fusion-explore{mode=none}: the no-fusion baseline. Every op gets its own fusion;
// free reshapes stay outside (a view, no kernel); constants are cloned into their users.
// RUN: fs-opt %s -p 'fusion-explore{mode=none}' | filecheck %s

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>)
func.func @chain(%x: tensor<4x6xf32>) -> tensor<3x8xf32> {
  // CHECK-NEXT: %[[E:.*]] = stitch.fusion (%[[X]]) {pattern = 0 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32> {
  // CHECK-NEXT: ^{{.*}}(%[[A:.*]]: tensor<4x6xf32>):
  // CHECK-NEXT: %[[K:.*]] = graph.constant dense<2.000000e+00> : tensor<4x6xf32>
  // CHECK-NEXT: %[[M:.*]] = graph.mul %[[A]], %[[K]] : tensor<4x6xf32>
  // CHECK-NEXT: stitch.yield %[[M]] : tensor<4x6xf32>
  // CHECK-NEXT: }
  // CHECK-NEXT: %[[R:.*]] = graph.reshape %[[E]] : (tensor<4x6xf32>) -> tensor<3x8xf32>
  // CHECK-NEXT: %[[N:.*]] = stitch.fusion (%[[R]]) {pattern = 1 : i64} : (tensor<3x8xf32>) -> tensor<3x8xf32> {
  // CHECK: graph.exp
  // CHECK: func.return %[[N]] : tensor<3x8xf32>
  %k = graph.constant dense<2.0> : tensor<4x6xf32>
  %m = graph.mul %x, %k : tensor<4x6xf32>
  %r = graph.reshape %m : (tensor<4x6xf32>) -> tensor<3x8xf32>
  %e = graph.exp %r : tensor<3x8xf32>
  func.return %e : tensor<3x8xf32>
}

// CHECK-LABEL: func.func @layernorm_like
func.func @layernorm_like(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-COUNT-4: stitch.fusion
  // CHECK-NOT: stitch.fusion
  // CHECK: func.return
  %s = graph.reduce sum %x dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
  %n = graph.constant dense<8.0> : tensor<4xf32>
  %m = graph.div %s, %n : tensor<4xf32>
  %b = graph.broadcast %m dims [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %d = graph.sub %x, %b : tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}

// A returned constant is computed by a kernel of its own.
// CHECK-LABEL: func.func @returned_constant
// CHECK-NEXT: %[[C:.*]] = stitch.fusion () : () -> tensor<2xi32> {
// CHECK-NEXT: graph.constant dense<[1, 2]> : tensor<2xi32>
// CHECK: func.return %[[C]]
func.func @returned_constant() -> tensor<2xi32> {
  %c = graph.constant dense<[1, 2]> : tensor<2xi32>
  func.return %c : tensor<2xi32>
}
