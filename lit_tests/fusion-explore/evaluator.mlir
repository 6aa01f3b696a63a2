// The latency-evaluator picks among the explorer's plans (§4.3 serving §5).
// evaluator=codegen (the default) generates the kernels where the plans differ, as
// stitch-codegen would for the chosen gpu, and adds their estimates (`estimate_us`)
// and launch costs; evaluator=simple sums the delta-evaluator's simplified kernel
// latencies. Here the reduction over rows cannot share a kernel with the column
// reduction, so the plans split the function on either side of the broadcast-sub:
// the simplified evaluator keeps the row reduction alone (nothing in between is
// written), while the generated kernels say a thread per column re-computing x - r is
// slower than writing x - r from the row kernel and reducing it in a loop of its own.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch report=true}' 2>&1 | filecheck %s --check-prefix=CODEGEN
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch report=true evaluator=codegen gpu=A100}' 2>&1 | filecheck %s --check-prefix=A100
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch report=true evaluator=simple}' 2>&1 | filecheck %s --check-prefix=SIMPLE
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch report=true evaluator-budget=2}' 2>&1 | filecheck %s --check-prefix=BUDGET

// CODEGEN: fusion-explore @rows_then_columns: {{.*}} evaluator=codegen
// CODEGEN: search: 9 candidates, 3 distinct plans
// CODEGEN-NEXT: evaluator: codegen chose plan 1 of 3; est. [[P0:[0-9.]+]], [[P1:[0-9.]+]], [[P2:[0-9.]+]] us for the 5 kernels they do not all share (0 common kernels not evaluated)
// CODEGEN-LABEL: func.func @rows_then_columns
// CODEGEN-NEXT: %[[D:.*]] = stitch.fusion (%{{.*}}) {pattern = 0 : i64
// CODEGEN: graph.reduce sum %{{.*}} dims [1]
// CODEGEN-NEXT: graph.broadcast
// CODEGEN-NEXT: graph.sub
// CODEGEN-NEXT: stitch.yield
// CODEGEN: graph.reduce sum %[[D]] dims [0]

// A100: gpu=A100 {{.*}} evaluator=codegen
// A100: evaluator: codegen chose plan {{[0-9]}} of 3; est. {{[0-9.]+}}, {{[0-9.]+}}, {{[0-9.]+}} us

// SIMPLE: fusion-explore @rows_then_columns: {{.*}} evaluator=simple
// SIMPLE: evaluator: simple chose plan 0 of 3; est. {{[0-9.]+}}, {{[0-9.]+}}, {{[0-9.]+}} us
// SIMPLE-LABEL: func.func @rows_then_columns
// SIMPLE-NEXT: %[[R:.*]] = graph.reduce sum %{{.*}} dims [1]
// SIMPLE-NEXT: stitch.fusion (%[[R]], %{{.*}}) {pattern = 0 : i64

// More kernels to generate than the budget: the simplified evaluator decides, and says why.
// BUDGET: evaluator: simple chose plan 0 of 3; est. {{.*}} us (codegen evaluator over budget: 5 kernels to evaluate > evaluator-budget=2)
func.func @rows_then_columns(%x: tensor<64x128xf32>) -> tensor<128xf32> {
  %r = graph.reduce sum %x dims [1] : (tensor<64x128xf32>) -> tensor<64xf32>
  %rb = graph.broadcast %r dims [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %d = graph.sub %x, %rb : tensor<64x128xf32>
  %c = graph.reduce sum %d dims [0] : (tensor<64x128xf32>) -> tensor<128xf32>
  func.return %c : tensor<128xf32>
}
