// A DAG of same-shaped elementwise ops is one kernel, however it fans out and joins
// (FusionStitching §5.2: candidates are convex). This is the shape of JAX's exact GELU:
// two rational-polynomial branches that each read t = x*x at every step, joined by a
// select on |x|. PatternReduction at %t combines its consumers' top-k patterns; the
// unions that leave out the ops closing the diamond (here %a and %m, read by the
// select) have a path leaving and re-entering them, and were once discarded, which
// left %t, %a, %m and %y in a kernel apart from the polynomials. Such a union is now
// grown to its convex closure, which competes with the other candidates.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=xla}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch report=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// REPORT: fusion-explore @erf_poly
// REPORT-NEXT: before: 22 kernels
// REPORT-NEXT: after: 1 kernels (1 fused)

// CHECK-LABEL: func.func @erf_poly
// CHECK-SAME: (%[[X:.*]]: tensor<16x256xf32>)
// CHECK-NEXT: %[[Y:.*]] = stitch.fusion (%[[X]]) {pattern = 0 : i64
// CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<16x256xf32>):
// CHECK-NEXT: graph.constant
// CHECK-COUNT-22: graph.
// CHECK-NEXT: stitch.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[Y]] : tensor<16x256xf32>
// CHECK-NOT: stitch.fusion
func.func @erf_poly(%x: tensor<16x256xf32>) -> tensor<16x256xf32> {
  %c = graph.constant dense<0.5> : tensor<16x256xf32>
  %t = graph.mul %x, %x : tensor<16x256xf32>
  %p0 = graph.mul %t, %c : tensor<16x256xf32>
  %pa0 = graph.add %p0, %c : tensor<16x256xf32>
  %p1 = graph.mul %pa0, %t : tensor<16x256xf32>
  %pa1 = graph.add %p1, %c : tensor<16x256xf32>
  %p2 = graph.mul %pa1, %t : tensor<16x256xf32>
  %pa2 = graph.add %p2, %c : tensor<16x256xf32>
  %p3 = graph.mul %pa2, %t : tensor<16x256xf32>
  %pa3 = graph.add %p3, %c : tensor<16x256xf32>
  %p4 = graph.mul %pa3, %t : tensor<16x256xf32>
  %q0 = graph.mul %t, %c : tensor<16x256xf32>
  %qa0 = graph.add %q0, %c : tensor<16x256xf32>
  %q1 = graph.mul %qa0, %t : tensor<16x256xf32>
  %qa1 = graph.add %q1, %c : tensor<16x256xf32>
  %q2 = graph.mul %qa1, %t : tensor<16x256xf32>
  %qa2 = graph.add %q2, %c : tensor<16x256xf32>
  %q3 = graph.mul %qa2, %t : tensor<16x256xf32>
  %qa3 = graph.add %q3, %c : tensor<16x256xf32>
  %q4 = graph.mul %qa3, %t : tensor<16x256xf32>
  %a = graph.abs %x : tensor<16x256xf32>
  %m = graph.compare lt %a, %c : (tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<16x256xi1>
  %y = graph.select %m, %p4, %q4 : (tensor<16x256xi1>, tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<16x256xf32>
  func.return %y : tensor<16x256xf32>
}
