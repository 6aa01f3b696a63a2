// A dot's fused elementwise consumers are the gemm kernel's stitched epilogue: the
// kernel's one group yields the epilogue's result (computed on the accumulators), its
// other operands (the bias, the residual) are kernel inputs read where needed. On the
// tensor cores (f16) the same group runs after the mma.sync tiles; a reshape of the
// product (HLO's [B*S, N] dots) may precede the epilogue.
// RUN: fs-opt %s --split-input-file -p stitch-codegen | filecheck %s

// CHECK-LABEL: func.func @bias_gelu
// CHECK: schedule.kernel @bias_gelu_k0 gemm<{{.*}}> grid [{{.*}}] block [{{.*}}]
// CHECK-SAME: config = "gemm/{{[0-9x/]+}}"
// CHECK-NEXT: ^{{.*}}(%[[X:.*]]: tensor<64x32xf32>, %[[W:.*]]: tensor<32x48xf32>, %[[B:.*]]: tensor<48xf32>):
// CHECK: schedule.group block -> global : tensor<64x48xf32> {
// CHECK-NEXT: %[[D:.*]] = graph.dot %[[X]], %[[W]]
// CHECK-NEXT: %[[BB:.*]] = graph.broadcast %[[B]] dims [1]
// CHECK-NEXT: %[[H:.*]] = graph.add %[[D]], %[[BB]]
// CHECK: %[[E:.*]] = graph.erf
// CHECK-NEXT: %[[O:.*]] = graph.add %[[E]]
// CHECK-NEXT: %[[HH:.*]] = graph.mul %[[H]]
// CHECK-NEXT: %[[G:.*]] = graph.mul %[[HH]], %[[O]]
// CHECK-NEXT: schedule.yield %[[G]] : tensor<64x48xf32>
func.func @bias_gelu(%x: tensor<64x32xf32>, %w: tensor<32x48xf32>, %b: tensor<48xf32>) -> tensor<64x48xf32> {
  %y = stitch.fusion (%x, %w, %b) : (tensor<64x32xf32>, tensor<32x48xf32>, tensor<48xf32>) -> tensor<64x48xf32> {
  ^bb0(%xa: tensor<64x32xf32>, %wa: tensor<32x48xf32>, %ba: tensor<48xf32>):
    %d = graph.dot %xa, %wa : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
    %bb = graph.broadcast %ba dims [1] : (tensor<48xf32>) -> tensor<64x48xf32>
    %h = graph.add %d, %bb : tensor<64x48xf32>
    %cr = graph.constant dense<0.70710678> : tensor<64x48xf32>
    %c1 = graph.constant dense<1.0> : tensor<64x48xf32>
    %ch = graph.constant dense<0.5> : tensor<64x48xf32>
    %s = graph.mul %h, %cr : tensor<64x48xf32>
    %e = graph.erf %s : tensor<64x48xf32>
    %o = graph.add %e, %c1 : tensor<64x48xf32>
    %hh = graph.mul %h, %ch : tensor<64x48xf32>
    %g = graph.mul %hh, %o : tensor<64x48xf32>
    stitch.yield %g : tensor<64x48xf32>
  }
  func.return %y : tensor<64x48xf32>
}

// -----

// CHECK-LABEL: func.func @residual_f16
// CHECK: schedule.kernel @residual_f16_k0 gemm<{{.*}}math = f16>
// CHECK-NEXT: ^{{.*}}(%[[X:.*]]: tensor<2x32x64xf16>, %[[W:.*]]: tensor<64x64xf16>, %[[R:.*]]: tensor<2x32x64xf16>):
// CHECK: schedule.shared @a_tile : memref<{{[0-9]+}}xf16, 3 : i64>
// CHECK: schedule.group block -> global : tensor<2x32x64xf16> {
// CHECK-NEXT: %[[D:.*]] = graph.dot %[[X]], %[[W]]
// CHECK-NEXT: %[[C:.*]] = graph.constant
// CHECK-NEXT: %[[S:.*]] = graph.mul %[[D]], %[[C]]
// CHECK-NEXT: %[[O:.*]] = graph.add %[[S]], %[[R]]
// CHECK-NEXT: schedule.yield %[[O]] : tensor<2x32x64xf16>
func.func @residual_f16(%x: tensor<2x32x64xf16>, %w: tensor<64x64xf16>, %r: tensor<2x32x64xf16>) -> tensor<2x32x64xf16> {
  %y = stitch.fusion (%x, %w, %r) : (tensor<2x32x64xf16>, tensor<64x64xf16>, tensor<2x32x64xf16>) -> tensor<2x32x64xf16> {
  ^bb0(%xa: tensor<2x32x64xf16>, %wa: tensor<64x64xf16>, %ra: tensor<2x32x64xf16>):
    %d = graph.dot %xa, %wa : (tensor<2x32x64xf16>, tensor<64x64xf16>) -> tensor<2x32x64xf16>
    %c = graph.constant dense<0.125> : tensor<2x32x64xf16>
    %s = graph.mul %d, %c : tensor<2x32x64xf16>
    %o = graph.add %s, %ra : tensor<2x32x64xf16>
    stitch.yield %o : tensor<2x32x64xf16>
  }
  func.return %y : tensor<2x32x64xf16>
}

// -----

// CHECK-LABEL: func.func @reshaped
// CHECK: schedule.kernel @reshaped_k0 gemm<
// CHECK: schedule.group block -> global : tensor<2x16x48xf32> {
// CHECK-NEXT: %[[D:.*]] = graph.dot {{.*}} -> tensor<32x48xf32>
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[D]] : (tensor<32x48xf32>) -> tensor<2x16x48xf32>
// CHECK: %[[O:.*]] = graph.max %[[R]]
// CHECK-NEXT: schedule.yield %[[O]] : tensor<2x16x48xf32>
func.func @reshaped(%x: tensor<32x24xf32>, %w: tensor<24x48xf32>) -> tensor<2x16x48xf32> {
  %y = stitch.fusion (%x, %w) : (tensor<32x24xf32>, tensor<24x48xf32>) -> tensor<2x16x48xf32> {
  ^bb0(%xa: tensor<32x24xf32>, %wa: tensor<24x48xf32>):
    %d = graph.dot %xa, %wa : (tensor<32x24xf32>, tensor<24x48xf32>) -> tensor<32x48xf32>
    %r = graph.reshape %d : (tensor<32x48xf32>) -> tensor<2x16x48xf32>
    %z = graph.constant dense<0.0> : tensor<2x16x48xf32>
    %o = graph.max %r, %z : tensor<2x16x48xf32>
    stitch.yield %o : tensor<2x16x48xf32>
  }
  func.return %y : tensor<2x16x48xf32>
}
