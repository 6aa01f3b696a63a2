// schedule-to-gpu needs every non-free op inside a schedule.kernel.
// RUN: fs-opt %s -p schedule-to-gpu --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k loop {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %g = schedule.group thread -> global : tensor<4xf32> {
      %e = graph.exp %a : tensor<4xf32>
      schedule.yield %e : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  // expected-error @+1 {{'graph.neg' op is left outside every kernel; run stitch-codegen before schedule-to-gpu}}
  %n = graph.neg %y : tensor<4xf32>
  func.return %n : tensor<4xf32>
}
