// An unknown mode is a user error naming the modes there are; so are an unknown
// latency-evaluator and a negative budget for it.
// RUN: not fs-opt %s -p 'fusion-explore{mode=greedy}' 2>&1 | filecheck %s
// RUN: not fs-opt %s -p 'fusion-explore{mode=stitch evaluator=ptxas}' 2>&1 | filecheck %s --check-prefix=EVAL
// RUN: not fs-opt %s -p 'fusion-explore{mode=stitch evaluator-budget=-1}' 2>&1 | filecheck %s --check-prefix=BUDGET

// CHECK: error: fusion-explore: mode=greedy (expected stitch, xla or none)
// EVAL: error: fusion-explore: unknown evaluator 'ptxas' (expected one of: codegen, simple)
// EVAL-NOT: Traceback
// BUDGET: error: fusion-explore: evaluator-budget must not be negative
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = graph.exp %x : tensor<4xf32>
  func.return %e : tensor<4xf32>
}
