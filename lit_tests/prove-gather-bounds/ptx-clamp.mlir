// A gather whose ids are unproven clamps each id into [0, rows-1] (max, then min with
// rows-1) before it addresses the table; one whose ids prove in range (a masked hash
// `rem` by the table size: a multiply-high and a subtraction) loads the row straight
// from the id.
// RUN: fs-opt %s --split-input-file -p prove-gather-bounds,fusion-explore,stitch-codegen,schedule-to-gpu -t ptx | filecheck %s
// Without the interval pass, both keep the clamp.
// RUN: fs-opt %s --split-input-file -p fusion-explore,stitch-codegen,schedule-to-gpu -t ptx | filecheck %s --check-prefix=NOPROOF

// CHECK-LABEL: .visible .entry unproven_k0(
// CHECK:         max.s64
// CHECK:         min.s64
// CHECK:         ld.global.f32
// NOPROOF-LABEL: .visible .entry unproven_k0(
// NOPROOF:         max.s64
// NOPROOF:         min.s64
func.func @unproven(%t: tensor<1000x16xf32>, %ids: tensor<8xi32>) -> tensor<8x16xf32> {
  %e = graph.gather %t, %ids : (tensor<1000x16xf32>, tensor<8xi32>) -> tensor<8x16xf32>
  func.return %e : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: .visible .entry proven_k0(
// CHECK:         mul.hi.s32
// CHECK-NOT:     max.s64
// CHECK-NOT:     min.s64
// CHECK:         ld.global.f32
// CHECK-NOT:     max.s64
// CHECK-NOT:     min.s64
// CHECK:         ret;
// NOPROOF-LABEL: .visible .entry proven_k0(
// NOPROOF:         mul.hi.s32
// NOPROOF:         max.s64
// NOPROOF:         min.s64
func.func @proven(%t: tensor<1000x16xf32>, %raw: tensor<8xi32>) -> tensor<8x16xf32> {
  %mask = graph.constant dense<2147483647> : tensor<8xi32>
  %n = graph.constant dense<1000> : tensor<8xi32>
  %pos = graph.and %raw, %mask : tensor<8xi32>
  %h = graph.rem %pos, %n : tensor<8xi32>
  %e = graph.gather %t, %h : (tensor<1000x16xf32>, tensor<8xi32>) -> tensor<8x16xf32>
  func.return %e : tensor<8x16xf32>
}
