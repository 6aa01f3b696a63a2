// A DAG of same-shaped elementwise ops is one kernel, however it fans out and joins
// (FusionStitching §5.2: candidates are convex). Both functions are cut down from JAX's
// exact GELU (erf as rational polynomials, selects on ranges of x).
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=xla}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch report=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// @selects: %e feeds four compares and the last select; the selects chain. Every
// consumer's candidates hold only part of the chain, and a union of some of them with
// %e has a path leaving and re-entering it (%e -> a compare left out -> a select in
// it). Such unions are grown to their convex closure (adding the compares left out),
// which competes with the other candidates.

// REPORT: fusion-explore @selects
// REPORT-NEXT: before: 9 kernels
// REPORT-NEXT: after: 1 kernels (1 fused)

// CHECK-LABEL: func.func @selects
// CHECK-SAME: (%[[H:.*]]: tensor<16x256xf32>)
// CHECK-NEXT: %[[Y:.*]] = stitch.fusion (%[[H]]) {pattern = 0 : i64
// CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<16x256xf32>):
// CHECK-COUNT-4: graph.constant
// CHECK-NEXT: graph.exp
// CHECK-COUNT-4: graph.compare
// CHECK-COUNT-4: graph.select
// CHECK-NEXT: stitch.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[Y]] : tensor<16x256xf32>
// CHECK-NOT: stitch.fusion
func.func @selects(%h: tensor<16x256xf32>) -> tensor<16x256xf32> {
  %e = graph.exp %h : tensor<16x256xf32>
  %one = graph.constant dense<1.0> : tensor<16x256xf32>
  %zero = graph.constant dense<0.0> : tensor<16x256xf32>
  %two = graph.constant dense<2.0> : tensor<16x256xf32>
  %lo = graph.constant dense<-88.7228394> : tensor<16x256xf32>
  %small = graph.compare lt %e, %one : (tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<16x256xi1>
  %neg = graph.compare lt %e, %zero : (tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<16x256xi1>
  %under = graph.compare lt %e, %lo : (tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<16x256xi1>
  %mid = graph.compare lt %e, %two : (tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<16x256xi1>
  %s1 = graph.select %mid, %one, %two : (tensor<16x256xi1>, tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<16x256xf32>
  %s2 = graph.select %under, %zero, %s1 : (tensor<16x256xi1>, tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<16x256xf32>
  %s3 = graph.select %neg, %two, %s2 : (tensor<16x256xi1>, tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<16x256xf32>
  %r = graph.select %small, %e, %s3 : (tensor<16x256xi1>, tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<16x256xf32>
  func.return %r : tensor<16x256xf32>
}

// @erf_poly: two polynomials in t = x*x, joined by a select on |x|. Everything here
// is computed from the function's input by light ops, and a light op fed only by
// inputs is absorbed into a pattern holding all its consumers: a consumer's pattern
// could already hold the op being visited, which was then counted twice, inflating
// the score of patterns that leave %t, %a and %m apart.

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
