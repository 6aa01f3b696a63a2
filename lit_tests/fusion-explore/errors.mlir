// An unknown mode is a user error naming the modes there are.
// RUN: not fs-opt %s -p 'fusion-explore{mode=greedy}' 2>&1 | filecheck %s

// CHECK: error: fusion-explore: unknown mode 'greedy' (expected one of: none, xla, stitch)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = graph.exp %x : tensor<4xf32>
  func.return %e : tensor<4xf32>
}
