// Constants left outside every fusion are cloned into the kernels that use them (a
// weight becomes a constant buffer of its GEMM kernel); a constant is a kernel of its
// own only when the function itself returns it.
// RUN: fs-opt %s -p stitch-codegen | filecheck %s

// CHECK-LABEL: func.func @weight
// CHECK-NOT:   schedule.kernel @weight_k{{[0-9]+}} loop
// CHECK:       %[[Y:.*]] = schedule.kernel @weight_k0 gemm
// CHECK:       graph.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK:       graph.dot
// CHECK-NOT:   schedule.kernel
// CHECK:       func.return %[[Y]]
func.func @weight(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %y = graph.dot %x, %w : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @returned
// CHECK:       %[[C:.*]] = schedule.kernel @returned_k0 loop
// CHECK:       graph.constant dense<{{\[}}1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK:       %[[Y:.*]] = schedule.kernel @returned_k1 loop
// CHECK:       func.return %[[Y]], %[[C]]
func.func @returned(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = graph.add %x, %c : tensor<2xf32>
  func.return %y, %c : tensor<2xf32>, tensor<2xf32>
}
