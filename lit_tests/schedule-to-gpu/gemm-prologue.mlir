// A GEMM prologue (LayerNorm-normalised A from a statistics kernel's mean and rstd):
// each thread loads the statistics of the A-tile rows it stages once, before the
// k-loop, and keeps them in registers; each k-step then loads x, and γ and β once for
// the column the thread stages (its elements share it), and normalises x on its way
// to the shared tile. Plain GEMMs keep their staging arithmetic inside the loop.
// RUN: fs-opt %s -p 'stitch-codegen{gemm="32x32x16/4x4"},schedule-to-gpu' | filecheck %s
// RUN: fs-opt %s -p 'stitch-codegen{gemm="32x32x16/4x4"},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=PTX

// CHECK-LABEL: gpu.func @f_k1(
// CHECK-SAME: %[[X:[a-z]+]]: memref<?xf32>, %[[MU:[a-z]+]]: memref<?xf32>, %[[RS:[a-z]+]]: memref<?xf32>, %[[GA:[a-z]+]]: memref<?xf32>, %[[BE:[a-z]+]]: memref<?xf32>
// CHECK-NOT: scf.for
// CHECK: %[[M0:.*]] = memref.load %[[MU]][%[[R0:.*]]] : memref<?xf32>
// CHECK-NEXT: %[[M1:.*]] = memref.load %[[MU]][%[[R1:.*]]] : memref<?xf32>
// CHECK-NOT: scf.for
// CHECK: %[[S0:.*]] = memref.load %[[RS]][%[[R0]]] : memref<?xf32>
// CHECK-NEXT: %[[S1:.*]] = memref.load %[[RS]][%[[R1]]] : memref<?xf32>
// CHECK: scf.for
// CHECK-NOT: memref.load %[[MU]]
// CHECK-NOT: memref.load %[[RS]]
// CHECK: %[[XV:.*]] = memref.load %[[X]]
// CHECK-NEXT: %[[XC:.*]] = arith.subf %[[XV]], %[[M0]] : f32
// CHECK-NEXT: %[[XN:.*]] = arith.mulf %[[XC]], %[[S0]] : f32
// CHECK-NEXT: %[[G:.*]] = memref.load %[[GA]][%[[K:.*]]] : memref<?xf32>
// CHECK-NEXT: %[[XG:.*]] = arith.mulf %[[XN]], %[[G]] : f32
// CHECK-NEXT: %[[B:.*]] = memref.load %[[BE]][%[[K]]] : memref<?xf32>
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[XG]], %[[B]] : f32
// CHECK-NEXT: memref.store %[[Y]]
// CHECK-NOT: memref.load %[[GA]]
// CHECK-NOT: memref.load %[[BE]]
// CHECK: %[[XV1:.*]] = memref.load %[[X]]
// CHECK-NEXT: %[[XC1:.*]] = arith.subf %[[XV1]], %[[M1]] : f32
// CHECK-NEXT: %[[XN1:.*]] = arith.mulf %[[XC1]], %[[S1]] : f32
// CHECK-NEXT: arith.mulf %[[XN1]], %[[G]] : f32
// CHECK: gpu.barrier

// 8 staged rows x (mean, rstd) before the loop's label; per k-step 8 elements of x,
// γ and β once, 8 of the weights.
// PTX-LABEL: .entry f_k1(
// PTX-COUNT-16: ld.global.f32
// PTX-NOT: ld.global
// PTX: $L__f_k1_1:
// PTX-COUNT-18: ld.global.f32
// PTX-NOT: ld.global
// PTX: bar.sync

func.func @f(%x: tensor<64x64xf32>, %gamma: tensor<64xf32>, %beta: tensor<64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<64x32xf32> {
  %mean, %rstd = stitch.fusion (%x) : (tensor<64x64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%xa: tensor<64x64xf32>):
    %n = graph.constant dense<64.0> : tensor<64xf32>
    %eps = graph.constant dense<1.0e-05> : tensor<64xf32>
    %sum = graph.reduce sum %xa dims [1] : (tensor<64x64xf32>) -> tensor<64xf32>
    %mu = graph.div %sum, %n : tensor<64xf32>
    %mu_b = graph.broadcast %mu dims [0] : (tensor<64xf32>) -> tensor<64x64xf32>
    %xc = graph.sub %xa, %mu_b : tensor<64x64xf32>
    %sq = graph.mul %xc, %xc : tensor<64x64xf32>
    %sqsum = graph.reduce sum %sq dims [1] : (tensor<64x64xf32>) -> tensor<64xf32>
    %var = graph.div %sqsum, %n : tensor<64xf32>
    %ve = graph.add %var, %eps : tensor<64xf32>
    %rs = graph.rsqrt %ve : tensor<64xf32>
    stitch.yield %mu, %rs : tensor<64xf32>, tensor<64xf32>
  }
  %y = stitch.fusion (%x, %mean, %rstd, %gamma, %beta, %w, %b) : (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32> {
  ^bb0(%xa: tensor<64x64xf32>, %mu: tensor<64xf32>, %rs: tensor<64xf32>, %ga: tensor<64xf32>, %be: tensor<64xf32>, %wa: tensor<64x32xf32>, %ba: tensor<32xf32>):
    %mu_b = graph.broadcast %mu dims [0] : (tensor<64xf32>) -> tensor<64x64xf32>
    %xc = graph.sub %xa, %mu_b : tensor<64x64xf32>
    %rs_b = graph.broadcast %rs dims [0] : (tensor<64xf32>) -> tensor<64x64xf32>
    %xn = graph.mul %xc, %rs_b : tensor<64x64xf32>
    %ga_b = graph.broadcast %ga dims [1] : (tensor<64xf32>) -> tensor<64x64xf32>
    %g = graph.mul %xn, %ga_b : tensor<64x64xf32>
    %be_b = graph.broadcast %be dims [1] : (tensor<64xf32>) -> tensor<64x64xf32>
    %a = graph.add %g, %be_b : tensor<64x64xf32>
    %d = graph.dot %a, %wa : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
    %bb = graph.broadcast %ba dims [1] : (tensor<32xf32>) -> tensor<64x32xf32>
    %h = graph.add %d, %bb : tensor<64x32xf32>
    %z = graph.constant dense<0.0> : tensor<64x32xf32>
    %relu = graph.max %h, %z : tensor<64x32xf32>
    stitch.yield %relu : tensor<64x32xf32>
  }
  func.return %y : tensor<64x32xf32>
}

