// x - max(x, dims [1]) on [1, ?, 4]: the fusion explorer asks stitch-codegen's row
// rule, which pairs dims of equal size only (`?` with `?`), so the broadcast and the
// subtraction are not fused after the reduction (its rows are [1, 4], the result's
// dims 1 and 2 are [?, 4]); they run in a kernel of their own.
// RUN: fs-opt %s -p graph-canonicalize,fusion-explore,stitch-codegen | filecheck %s

// CHECK-LABEL: func.func @middle
// CHECK: schedule.kernel @middle_k0 row<{{.*}}> {{.*}} -> tensor<1x4xf32> {
// CHECK-NOT: graph.broadcast
// CHECK: schedule.kernel @middle_k1 loop
// CHECK: graph.broadcast
// CHECK: graph.sub
func.func @middle(%x: tensor<1x?x4xf32>) -> tensor<1x?x4xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<1x?x4xf32>) -> tensor<1x4xf32>
  %mb = graph.broadcast %m dims [0, 2] like %x : (tensor<1x4xf32>, tensor<1x?x4xf32>) -> tensor<1x?x4xf32>
  %d = graph.sub %x, %mb : tensor<1x?x4xf32>
  func.return %d : tensor<1x?x4xf32>
}
