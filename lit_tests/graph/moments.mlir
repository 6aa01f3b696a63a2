// The two-pass row statistic: per-tile partial moments (mean, M2) of the last dim and
// their combination into a row's mean and variance; a ragged last tile counts its
// own columns (80 = 32 + 32 + 16), f16 values give f32 moments.
// RUN: fs-opt %s | filecheck %s
// RUN: fs-opt %s | fs-opt | filecheck %s

// CHECK-LABEL: func.func @moments
// CHECK-NEXT: %[[P:.*]] = graph.tile_moments %{{.*}} tile 32 : (tensor<4x80xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT: %{{.*}} = graph.combine_moments %[[P]] tile 32 size 80 : (tensor<4x3x2xf32>) -> tensor<4x2xf32>
func.func @moments(%z: tensor<4x80xf32>) -> tensor<4x2xf32> {
  %p = graph.tile_moments %z tile 32 : (tensor<4x80xf32>) -> tensor<4x3x2xf32>
  %s = graph.combine_moments %p tile 32 size 80 : (tensor<4x3x2xf32>) -> tensor<4x2xf32>
  func.return %s : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @half
// CHECK-NEXT: graph.tile_moments %{{.*}} tile 16 : (tensor<2x?x64xf16>) -> tensor<2x?x4x2xf32>
func.func @half(%z: tensor<2x?x64xf16>) -> tensor<2x?x4x2xf32> {
  %p = graph.tile_moments %z tile 16 : (tensor<2x?x64xf16>) -> tensor<2x?x4x2xf32>
  func.return %p : tensor<2x?x4x2xf32>
}
