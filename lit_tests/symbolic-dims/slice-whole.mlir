// A slice of the static dims of a value with a symbolic batch keeps the `?` dim whole
// (start 0, stride 1, limit -9223372036854775808, the `?` of builtin shapes): its
// result has the operand's run-time size B there, as GPT-2's fused QKV split exports.
// RUN: fs-opt %s -p symbolic-dims | filecheck %s
// RUN: fs-opt %s --print-op-generic | fs-opt | filecheck %s --check-prefix=ROUND

// CHECK-LABEL: func.func @split
// CHECK:         graph.slice %x start [0, 0, 64] limit [-9223372036854775808, 16, 128] strides [1, 1, 1] {graph.dims = #graph.dims<[B, 16, 64]>}
// CHECK:         graph.add %{{.*}}, %y {graph.dims = #graph.dims<[B, 16, 64]>}
// ROUND:         graph.slice %x start [0, 0, 64] limit [-9223372036854775808, 16, 128] strides [1, 1, 1] : (tensor<?x16x192xf32>) -> tensor<?x16x64xf32>
func.func @split(%x: tensor<?x16x192xf32> {graph.dims = #graph.dims<[B, 16, 192]>}, %y: tensor<?x16x64xf32>) -> tensor<?x16x64xf32> {
  %k = graph.slice %x start [0, 0, 64] limit [-9223372036854775808, 16, 128] strides [1, 1, 1] : (tensor<?x16x192xf32>) -> tensor<?x16x64xf32>
  %r = graph.add %k, %y : tensor<?x16x64xf32>
  func.return %r : tensor<?x16x64xf32>
}
