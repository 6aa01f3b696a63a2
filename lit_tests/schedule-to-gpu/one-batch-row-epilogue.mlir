// A batch-1 product whose row max is the GEMM's epilogue (issue 27: batch-1 BERT and
// GPT-2 exports). The epilogue provides the max at grid z's batch index, the broadcast
// reads that size-1 dim at 0: element values meet at one canonical index (size-1 dims
// at 0), so the kernel lowers as one GEMM instead of failing with "'graph.reduce' op
// cannot be computed per element here".
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen,schedule-to-gpu' | filecheck %s

// CHECK: gpu.func @f_k0(
// CHECK: gpu.shuffle
// CHECK: arith.maximumf
// CHECK: gpu.return
// CHECK-NOT: gpu.func
func.func @f(%a: tensor<1x33x8xf32>, %b: tensor<1x8x33xf32>) -> tensor<1x33x33xf32> {
  %d = graph.dot %a, %b : (tensor<1x33x8xf32>, tensor<1x8x33xf32>) -> tensor<1x33x33xf32>
  %m = graph.reduce max %d dims [2] : (tensor<1x33x33xf32>) -> tensor<1x33xf32>
  %mb = graph.broadcast %m dims [0, 1] : (tensor<1x33xf32>) -> tensor<1x33x33xf32>
  %s = graph.sub %d, %mb : tensor<1x33x33xf32>
  func.return %s : tensor<1x33x33xf32>
}
