// prove-gather-bounds marks a gather `in_bounds` when the interval analysis proves its
// ids lie in [0, rows-1]; anything it cannot prove keeps the clamp (no attribute).
// RUN: fs-opt %s --split-input-file -p prove-gather-bounds | filecheck %s

// A hash: the sign bit masked off, then `rem` by the table size: [0, 999].
// CHECK-LABEL: func.func @hash_masked_rem
// CHECK:         %[[H:.*]] = graph.rem
// CHECK-NEXT:    graph.gather %{{.*}}, %[[H]] {in_bounds}
func.func @hash_masked_rem(%t: tensor<1000x16xf32>, %raw: tensor<8x4xi32>) -> tensor<8x4x16xf32> {
  %mask = graph.constant dense<2147483647> : tensor<8x4xi32>
  %n = graph.constant dense<1000> : tensor<8x4xi32>
  %pos = graph.and %raw, %mask : tensor<8x4xi32>
  %h = graph.rem %pos, %n : tensor<8x4xi32>
  %e = graph.gather %t, %h : (tensor<1000x16xf32>, tensor<8x4xi32>) -> tensor<8x4x16xf32>
  func.return %e : tensor<8x4x16xf32>
}

// -----

// `rem` keeps the dividend's sign: abs(INT_MIN) is INT_MIN, so |x| % n may be negative.
// CHECK-LABEL: func.func @abs_rem_unproven
// CHECK:         graph.gather
// CHECK-NOT:     in_bounds
func.func @abs_rem_unproven(%t: tensor<1000x16xf32>, %raw: tensor<8xi32>) -> tensor<8x16xf32> {
  %n = graph.constant dense<1000> : tensor<8xi32>
  %a = graph.abs %raw : tensor<8xi32>
  %h = graph.rem %a, %n : tensor<8xi32>
  %e = graph.gather %t, %h : (tensor<1000x16xf32>, tensor<8xi32>) -> tensor<8x16xf32>
  func.return %e : tensor<8x16xf32>
}

// -----

// Python's modulo ((x % n + n) % n) is in range; a table one row smaller is not.
// CHECK-LABEL: func.func @floor_mod
// CHECK:         graph.gather %{{.*}} {in_bounds} : (tensor<1000x16xf32>
// CHECK:         graph.gather %{{.*}} : (tensor<999x16xf32>
func.func @floor_mod(%t: tensor<1000x16xf32>, %u: tensor<999x16xf32>, %raw: tensor<8xi32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %n = graph.constant dense<1000> : tensor<8xi32>
  %r = graph.rem %raw, %n : tensor<8xi32>
  %s = graph.add %r, %n : tensor<8xi32>
  %h = graph.rem %s, %n : tensor<8xi32>
  %e = graph.gather %t, %h : (tensor<1000x16xf32>, tensor<8xi32>) -> tensor<8x16xf32>
  %f = graph.gather %u, %h : (tensor<999x16xf32>, tensor<8xi32>) -> tensor<8x16xf32>
  func.return %e, %f : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A clamp (ONNX Clip: max then min) and the bucketise idiom: the count of boundaries
// below x, a sum of 0/1 over 5 boundaries, is in [0, 5].
// CHECK-LABEL: func.func @clamp_and_bucketise
// CHECK:         graph.gather %{{.*}} {in_bounds} : (tensor<64x8xf32>
// CHECK:         graph.gather %{{.*}} {in_bounds} : (tensor<6x8xf32>
func.func @clamp_and_bucketise(%t: tensor<64x8xf32>, %b: tensor<6x8xf32>, %raw: tensor<4xi64>, %x: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %lo = graph.constant dense<0> : tensor<4xi64>
  %hi = graph.constant dense<63> : tensor<4xi64>
  %c0 = graph.max %raw, %lo : tensor<4xi64>
  %c = graph.min %c0, %hi : tensor<4xi64>
  %e = graph.gather %t, %c : (tensor<64x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  %bounds = graph.constant dense<[-1.0, 0.0, 0.5, 1.0, 2.0]> : tensor<5xf32>
  %bb = graph.broadcast %bounds dims [1] : (tensor<5xf32>) -> tensor<4x5xf32>
  %xb = graph.broadcast %x dims [0] : (tensor<4xf32>) -> tensor<4x5xf32>
  %ge = graph.compare ge %xb, %bb : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xi1>
  %one = graph.convert %ge : (tensor<4x5xi1>) -> tensor<4x5xi32>
  %bucket = graph.reduce sum %one dims [1] : (tensor<4x5xi32>) -> tensor<4xi32>
  %f = graph.gather %b, %bucket : (tensor<6x8xf32>, tensor<4xi32>) -> tensor<4x8xf32>
  func.return %e, %f : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// iota within the table; ids from a function argument are unknown.
// CHECK-LABEL: func.func @iota_and_argument
// CHECK:         graph.gather %{{.*}} {in_bounds} : (tensor<16x8xf32>, tensor<16xi32>)
// CHECK:         graph.gather %{{.*}} : (tensor<16x8xf32>, tensor<4xi32>)
func.func @iota_and_argument(%t: tensor<16x8xf32>, %ids: tensor<4xi32>) -> (tensor<16x8xf32>, tensor<4x8xf32>) {
  %i = graph.iota dim 0 : tensor<16xi32>
  %e = graph.gather %t, %i : (tensor<16x8xf32>, tensor<16xi32>) -> tensor<16x8xf32>
  %f = graph.gather %t, %ids : (tensor<16x8xf32>, tensor<4xi32>) -> tensor<4x8xf32>
  func.return %e, %f : tensor<16x8xf32>, tensor<4x8xf32>
}
