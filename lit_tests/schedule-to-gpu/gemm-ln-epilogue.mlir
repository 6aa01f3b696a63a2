// The gemm kernel with a LayerNorm epilogue, its 16x64 block tile spanning the rows:
// after the k-loop each thread adds the bias to its 4 accumulators (z, computed once
// and reused), sums them, and a butterfly of shuffles over the tile row's 16 lanes
// (xor 8, 4, 2, 1) gives every lane the row's sum; the mean is subtracted from the
// same z values for the variance's second butterfly, and the stores normalise with
// rsqrt and γ, β. No shared memory, no barrier after the loop.
// RUN: fs-opt %s -p 'stitch-codegen{gemm="16x64x16_1x4"},schedule-to-gpu' | filecheck %s

// CHECK-LABEL: gpu.func @narrow_k0(
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32, f32
// CHECK-NEXT: }
// CHECK-NOT: gpu.barrier
// CHECK: %[[B0:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK-NEXT: %[[Z0:.*]] = arith.addf %{{.*}}, %[[B0]] : f32
// CHECK: %[[C8:.*]] = arith.constant 8 : i32
// CHECK-NEXT: %[[W:.*]] = arith.constant 32 : i32
// CHECK-NEXT: %[[X8:.*]], %{{.*}} = gpu.shuffle xor %[[S:.*]], %[[C8]], %[[W]] : f32
// CHECK-NEXT: %[[S8:.*]] = arith.addf %[[S]], %[[X8]] : f32
// CHECK: gpu.shuffle xor %{{.*}}, %{{.*}}, %[[W]] : f32
// CHECK: gpu.shuffle xor %{{.*}}, %{{.*}}, %[[W]] : f32
// CHECK: %[[X1:.*]], %{{.*}} = gpu.shuffle xor %[[S2:.*]], %{{.*}}, %[[W]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[S2]], %[[X1]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.constant 6.400000e+01 : f32
// CHECK-NEXT: %[[MEAN:.*]] = arith.divf %[[SUM]], %[[N]] : f32
// CHECK-NEXT: %[[XC0:.*]] = arith.subf %[[Z0]], %[[MEAN]] : f32
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK: %[[RSTD:.*]] = math.rsqrt
// CHECK-NEXT: %[[XN:.*]] = arith.mulf %[[XC0]], %[[RSTD]] : f32
// CHECK-COUNT-4: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK-NEXT: gpu.return
builtin.module {
  func.func @narrow(%x: tensor<128x48xf32>, %w: tensor<48x64xf32>, %bias: tensor<64xf32>, %gamma: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<128x64xf32> {
    %y = stitch.fusion (%x, %w, %bias, %gamma, %beta) {pattern = 0 : i64, score = 1.724000e-05 : f64} : (tensor<128x48xf32>, tensor<48x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<128x64xf32> {
    ^bb0(%x_1: tensor<128x48xf32>, %w_1: tensor<48x64xf32>, %bias_1: tensor<64xf32>, %gamma_1: tensor<64xf32>, %beta_1: tensor<64xf32>):
      %n = graph.constant dense<6.400000e+01> : tensor<128xf32>
      %eps = graph.constant dense<1.000000e-05> : tensor<128xf32>
      %d = graph.dot %x_1, %w_1 : (tensor<128x48xf32>, tensor<48x64xf32>) -> tensor<128x64xf32>
      %bias_b = graph.broadcast %bias_1 dims [1] : (tensor<64xf32>) -> tensor<128x64xf32>
      %z = graph.add %d, %bias_b : tensor<128x64xf32>
      %sum = graph.reduce sum %z dims [1] : (tensor<128x64xf32>) -> tensor<128xf32>
      %mean = graph.div %sum, %n : tensor<128xf32>
      %mean_b = graph.broadcast %mean dims [0] : (tensor<128xf32>) -> tensor<128x64xf32>
      %xc = graph.sub %z, %mean_b : tensor<128x64xf32>
      %sq = graph.mul %xc, %xc : tensor<128x64xf32>
      %sqsum = graph.reduce sum %sq dims [1] : (tensor<128x64xf32>) -> tensor<128xf32>
      %var = graph.div %sqsum, %n : tensor<128xf32>
      %ve = graph.add %var, %eps : tensor<128xf32>
      %rstd = graph.rsqrt %ve : tensor<128xf32>
      %rstd_b = graph.broadcast %rstd dims [0] : (tensor<128xf32>) -> tensor<128x64xf32>
      %xn = graph.mul %xc, %rstd_b : tensor<128x64xf32>
      %gamma_b = graph.broadcast %gamma_1 dims [1] : (tensor<64xf32>) -> tensor<128x64xf32>
      %g = graph.mul %xn, %gamma_b : tensor<128x64xf32>
      %beta_b = graph.broadcast %beta_1 dims [1] : (tensor<64xf32>) -> tensor<128x64xf32>
      %y_1 = graph.add %g, %beta_b : tensor<128x64xf32>
      stitch.yield %y_1 : tensor<128x64xf32>
    }
    func.return %y : tensor<128x64xf32>
  }
}

