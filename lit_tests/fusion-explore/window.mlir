// A window reduction reads its operand from memory (fsir/codegen/capability.py): its
// producer stays in another kernel, while its elementwise consumers join its own.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s

// CHECK-LABEL: func.func @pool_after_exp
// CHECK:       %[[E:.*]] = stitch.fusion
// CHECK:         graph.exp
// CHECK-NOT:     graph.reduce_window
// CHECK:       stitch.fusion (%[[E]]
// CHECK:         graph.reduce_window max
// CHECK-NEXT:    graph.neg
func.func @pool_after_exp(%x: tensor<4x33xf32>) -> tensor<4x16xf32> {
  %e = graph.exp %x : tensor<4x33xf32>
  %a = graph.add %e, %e : tensor<4x33xf32>
  %y = graph.reduce_window max %a window [1, 3] strides [1, 2] dilations [1, 1] low [0, 0] high [0, 0] : (tensor<4x33xf32>) -> tensor<4x16xf32>
  %n = graph.neg %y : tensor<4x16xf32>
  func.return %n : tensor<4x16xf32>
}
