// Fusions without reductions become `loop` kernels: one thread per output element,
// producers inlined by index propagation (thread composition), outputs of different
// shapes packed into one loop. Like every kernel, a loop kernel carries the
// latency-evaluator's estimate (§4.3) in its cost.
// RUN: fs-opt %s -p stitch-codegen | filecheck %s

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<3x37xf32>)
func.func @chain(%x: tensor<3x37xf32>) -> tensor<3x37xf32> {
  // CHECK-NEXT: %[[Y:.*]] = schedule.kernel @chain_k0 loop grid [1, 1, 1] block [256, 1, 1] cost {warps = 8 : i64, global_bytes = 888 : i64, smem_bytes = 0 : i64, estimate_us = {{[0-9.e+-]+}} : f64, registers = {{[0-9]+}} : i64, occupancy = {{[0-9]+}} : i64, waves = 1 : i64, candidates = 1 : i64, config = "loop/256", requested_bytes = {{[0-9]+}} : i64} (%[[X]]) : (tensor<3x37xf32>) -> tensor<3x37xf32> {
  // CHECK-NEXT: ^{{.*}}(%[[A:.*]]: tensor<3x37xf32>):
  // CHECK-NEXT: %[[G:.*]] = schedule.group thread -> global : tensor<3x37xf32> {
  // CHECK-NEXT: %[[E:.*]] = graph.exp %[[A]] : tensor<3x37xf32>
  // CHECK-NEXT: %[[N:.*]] = graph.neg %[[E]] : tensor<3x37xf32>
  // CHECK-NEXT: schedule.yield %[[N]] : tensor<3x37xf32>
  // CHECK-NEXT: }
  // CHECK-NEXT: schedule.yield %[[G]] : tensor<3x37xf32>
  // CHECK-NEXT: }
  // CHECK-NEXT: func.return %[[Y]] : tensor<3x37xf32>
  %y = stitch.fusion (%x) : (tensor<3x37xf32>) -> tensor<3x37xf32> {
  ^bb0(%a: tensor<3x37xf32>):
    %e = graph.exp %a : tensor<3x37xf32>
    %n = graph.neg %e : tensor<3x37xf32>
    stitch.yield %n : tensor<3x37xf32>
  }
  func.return %y : tensor<3x37xf32>
}

// Kernel packing: independent outputs share one loop over the largest.
// CHECK-LABEL: func.func @packed
// CHECK: schedule.kernel @packed_k0 loop grid [2, 1, 1] block [256, 1, 1]
// CHECK: schedule.group thread -> global : tensor<4xf32>, tensor<300xi32>
func.func @packed(%a: tensor<4xf32>, %b: tensor<300xi32>) -> (tensor<4xf32>, tensor<300xi32>) {
  %x, %y = stitch.fusion (%a, %b) : (tensor<4xf32>, tensor<300xi32>) -> (tensor<4xf32>, tensor<300xi32>) {
  ^bb0(%p: tensor<4xf32>, %q: tensor<300xi32>):
    %e = graph.exp %p : tensor<4xf32>
    %n = graph.neg %q : tensor<300xi32>
    stitch.yield %e, %n : tensor<4xf32>, tensor<300xi32>
  }
  func.return %x, %y : tensor<4xf32>, tensor<300xi32>
}

// Ops left outside fusions become kernels of their own; free reshapes stay views.
// CHECK-LABEL: func.func @leftovers
// CHECK-NEXT: %[[E:.*]] = schedule.kernel @leftovers_k0 loop
// CHECK: graph.reshape %[[E]] : (tensor<4x6xf32>) -> tensor<24xf32>
// CHECK: schedule.kernel @leftovers_k1 loop grid [?, 1, 1]
func.func @leftovers(%x: tensor<4x6xf32>, %d: tensor<?xf32>) -> (tensor<24xf32>, tensor<?xf32>) {
  %e = graph.exp %x : tensor<4x6xf32>
  %r = graph.reshape %e : (tensor<4x6xf32>) -> tensor<24xf32>
  %t = graph.tanh %d : tensor<?xf32>
  func.return %r, %t : tensor<24xf32>, tensor<?xf32>
}
