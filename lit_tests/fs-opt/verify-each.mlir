// The output of a pipeline is verified once, after its last pass (the input when it
// was parsed); --verify-each verifies after every pass, and both compile the same.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen,schedule-to-gpu' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen,schedule-to-gpu' --verify-each | filecheck %s

func.func @f(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %e = graph.exp %x : tensor<4x32xf32>
  func.return %e : tensor<4x32xf32>
}

// CHECK: gpu.func @{{.*}}(
// CHECK: math.exp
