// The explorer only proposes patterns the code generator can make (§5.2; the rules are
// fsir/codegen/capability.py). A column reduction over the rows of a row reduction's
// consumer would need the whole reduced tensor across blocks: the row reduction stays
// out, its consumers and the column reduction form one fusion, and the report says
// why the larger pattern was rejected. (The simplified evaluator picks the plan: the
// codegen one prefers the other side of the split, see evaluator.mlir.)
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch report=true evaluator=simple}' 2>&1 | filecheck %s

// CHECK: fusion-explore @rows_then_columns: mode=stitch
// CHECK: rejected 1x: codegen: reductions keep different row shapes (64 and 128): stitching them needs inter-block communication
// CHECK-LABEL: func.func @rows_then_columns
// CHECK-NEXT: %[[R:.*]] = graph.reduce sum %{{.*}} dims [1]
// CHECK-NEXT: %[[C:.*]] = stitch.fusion (%[[R]], %{{.*}}) {pattern = 0 : i64
// CHECK: graph.broadcast
// CHECK-NEXT: graph.sub
// CHECK-NEXT: graph.reduce sum %{{.*}} dims [0]
// CHECK: func.return %[[C]]
func.func @rows_then_columns(%x: tensor<64x128xf32>) -> tensor<128xf32> {
  %r = graph.reduce sum %x dims [1] : (tensor<64x128xf32>) -> tensor<64xf32>
  %rb = graph.broadcast %r dims [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %d = graph.sub %x, %rb : tensor<64x128xf32>
  %c = graph.reduce sum %d dims [0] : (tensor<64x128xf32>) -> tensor<128xf32>
  func.return %c : tensor<128xf32>
}
