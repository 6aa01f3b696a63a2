// RUN: fs-opt %s | fs-opt | filecheck %s

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[E:.*]] = graph.exp %{{.*}} : tensor<4x8xf32>
  // CHECK: graph.tanh %[[E]] : tensor<4x8xf32>
  %e = graph.exp %x : tensor<4x8xf32>
  %t = graph.tanh %e : tensor<4x8xf32>
  func.return %t : tensor<4x8xf32>
}
