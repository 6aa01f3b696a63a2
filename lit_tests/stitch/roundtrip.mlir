// stitch.fusion / stitch.yield print in the custom syntax they parse.
// RUN: fs-opt %s | fs-opt | filecheck %s

// CHECK-LABEL: func.func @single
func.func @single(%x: tensor<4x8xf32>, %n: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[M:.*]] = stitch.fusion (%{{.*}}, %{{.*}}) {pattern = 0 : i64, score = 3.100000e-05 : f64} : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: ^{{.*}}(%[[X0:.*]]: tensor<4x8xf32>, %[[N0:.*]]: tensor<4xf32>):
  // CHECK-NEXT: %[[S:.*]] = graph.reduce sum %[[X0]] dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %[[D:.*]] = graph.div %[[S]], %[[N0]] : tensor<4xf32>
  // CHECK-NEXT: stitch.yield %[[D]] : tensor<4xf32>
  // CHECK-NEXT: }
  // CHECK-NEXT: func.return %[[M]] : tensor<4xf32>
  %m = stitch.fusion (%x, %n) {pattern = 0 : i64, score = 3.1e-05 : f64} : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4x8xf32>, %n0: tensor<4xf32>):
    %s = graph.reduce sum %x0 dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
    %d = graph.div %s, %n0 : tensor<4xf32>
    stitch.yield %d : tensor<4xf32>
  }
  func.return %m : tensor<4xf32>
}

// CHECK-LABEL: func.func @multi_output
func.func @multi_output(%x: tensor<4xf32>, %y: tensor<8xi32>) -> (tensor<4xf32>, tensor<8xi32>) {
  // CHECK: %[[A:.*]], %[[B:.*]] = stitch.fusion (%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<8xi32>) -> (tensor<4xf32>, tensor<8xi32>) {
  // CHECK: stitch.yield %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<8xi32>
  // CHECK: func.return %[[A]], %[[B]]
  %a, %b = stitch.fusion (%x, %y) : (tensor<4xf32>, tensor<8xi32>) -> (tensor<4xf32>, tensor<8xi32>) {
  ^bb0(%p: tensor<4xf32>, %q: tensor<8xi32>):
    %e = graph.exp %p : tensor<4xf32>
    %n = graph.neg %q : tensor<8xi32>
    stitch.yield %e, %n : tensor<4xf32>, tensor<8xi32>
  }
  func.return %a, %b : tensor<4xf32>, tensor<8xi32>
}

// CHECK-LABEL: func.func @no_operands
func.func @no_operands() -> tensor<4xi32> {
  // CHECK: stitch.fusion () : () -> tensor<4xi32> {
  // CHECK: graph.iota dim 0 : tensor<4xi32>
  %i = stitch.fusion () : () -> tensor<4xi32> {
    %r = graph.iota dim 0 : tensor<4xi32>
    stitch.yield %r : tensor<4xi32>
  }
  func.return %i : tensor<4xi32>
}
