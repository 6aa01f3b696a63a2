// A two-pass LayerNorm's GEMMs (fsir/fusion/ln_stat.py).
// @producer: the GEMM writes z = x·w + bias + res and the partial moments of z's rows,
// 16 columns per partial. With 32x64 block tiles of 4x4 vector fragments a thread
// holds 4 consecutive columns, so a partial is 4 lanes: each adds its 4 values, two
// xor shuffles (2, 1) give the sum, the mean is sum / 16; then the squared deviations
// from it the same way; the first of the 4 lanes stores (mean, M2).
// @consumer: the GEMM normalises its A operand with the statistics combined from the
// partials (Chan's formula, unrolled): a thread per block tile row combines them once
// into shared memory (mean and rstd), then, after a barrier and before the k-loop,
// each thread reads those of the rows it stages.
// RUN: fs-opt %s -p 'stitch-codegen{gemm="32x64x16/4x4"},schedule-to-gpu' | filecheck %s
// RUN: fs-opt %s -p 'stitch-codegen{gemm="32x64x16/4x4"},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=PTX

// CHECK-LABEL: gpu.func @producer_k0(
// CHECK-SAME: %[[Z:[a-z]+]]: memref<?xf32>, %[[P:[a-z]+]]: memref<?xf32>)
// CHECK: scf.for
// CHECK: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[W:.*]] = arith.constant 32 : i32
// CHECK-NEXT: %[[X0:.*]], %{{.*}} = gpu.shuffle xor %[[S2:.*]], %[[TWO]], %[[W]] : f32
// CHECK-NEXT: %[[S3:.*]] = arith.addf %[[S2]], %[[X0]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[X1:.*]], %{{.*}} = gpu.shuffle xor %[[S3]], %[[ONE]], %[[W]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[S3]], %[[X1]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.constant 1.600000e+01 : f32
// CHECK-NEXT: %[[MEAN:.*]] = arith.divf %[[SUM]], %[[N]] : f32
// CHECK-NEXT: %[[D0:.*]] = arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK-NEXT: %[[Q0:.*]] = math.fma %[[D0]], %[[D0]], %{{.*}} : f32
// CHECK-NEXT: %[[D1:.*]] = arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK-NEXT: %[[Q1:.*]] = math.fma %[[D1]], %[[D1]], %[[Q0]] : f32
// CHECK-NEXT: %[[D2:.*]] = arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK-NEXT: %[[Q2:.*]] = math.fma %[[D2]], %[[D2]], %[[Q1]] : f32
// CHECK-NEXT: %[[D3:.*]] = arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK-NEXT: %[[Q3:.*]] = math.fma %[[D3]], %[[D3]], %[[Q2]] : f32
// CHECK-NEXT: %[[Y0:.*]], %{{.*}} = gpu.shuffle xor %[[Q3]], %[[TWO]], %[[W]] : f32
// CHECK-NEXT: %[[Q4:.*]] = arith.addf %[[Q3]], %[[Y0]] : f32
// CHECK-NEXT: %[[Y1:.*]], %{{.*}} = gpu.shuffle xor %[[Q4]], %[[ONE]], %[[W]] : f32
// CHECK-NEXT: %[[M2:.*]] = arith.addf %[[Q4]], %[[Y1]] : f32
// CHECK: scf.if
// CHECK: memref.store %[[MEAN]], %[[P]][%[[AT:.*]]] : memref<?xf32>
// CHECK-NEXT: %[[AT1:.*]] = arith.addi %[[AT]], %{{.*}} : index
// CHECK-NEXT: memref.store %[[M2]], %[[P]][%[[AT1]]] : memref<?xf32>
// PTX-LABEL: .entry producer_k0(
// PTX: shfl.sync.bfly.b32

func.func @producer(%x: tensor<64x96xf32>, %w: tensor<96x128xf32>, %bias: tensor<128xf32>, %res: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x8x2xf32>) {
  %z, %p = stitch.fusion (%x, %w, %bias, %res) : (tensor<64x96xf32>, tensor<96x128xf32>, tensor<128xf32>, tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x8x2xf32>) {
  ^bb0(%xa: tensor<64x96xf32>, %wa: tensor<96x128xf32>, %ba: tensor<128xf32>, %ra: tensor<64x128xf32>):
    %d = graph.dot %xa, %wa : (tensor<64x96xf32>, tensor<96x128xf32>) -> tensor<64x128xf32>
    %bb = graph.broadcast %ba dims [1] : (tensor<128xf32>) -> tensor<64x128xf32>
    %d1 = graph.add %d, %bb : tensor<64x128xf32>
    %z1 = graph.add %d1, %ra : tensor<64x128xf32>
    %p1 = graph.tile_moments %z1 tile 16 : (tensor<64x128xf32>) -> tensor<64x8x2xf32>
    stitch.yield %z1, %p1 : tensor<64x128xf32>, tensor<64x8x2xf32>
  }
  func.return %z, %p : tensor<64x128xf32>, tensor<64x8x2xf32>
}

// CHECK-LABEL: gpu.func @consumer_k0(
// CHECK-SAME: %[[PP:[a-z]+]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>) workgroup(%{{.*}} : memref<{{[0-9]+}}xf32, 3 : i64>, %{{.*}} : memref<{{[0-9]+}}xf32, 3 : i64>, %[[ST:.*]] : memref<64xf32, 3 : i64>)
// CHECK-NOT: scf.for
// CHECK: scf.if
// CHECK-COUNT-6: memref.load %[[PP]]
// CHECK: memref.store %[[MU:.*]], %[[ST]][%[[R:.*]]] : memref<64xf32, 3 : i64>
// CHECK: %[[RS:.*]] = math.rsqrt
// CHECK: memref.store %[[RS]], %[[ST]][%{{.*}}] : memref<64xf32, 3 : i64>
// CHECK-NOT: scf.for
// CHECK: gpu.barrier
// CHECK-NOT: scf.for
// CHECK: memref.load %[[ST]]
// CHECK: scf.for
// CHECK-NOT: memref.load %[[PP]]
// CHECK-NOT: math.rsqrt
// CHECK: gpu.return
// PTX-LABEL: .entry consumer_k0(

func.func @consumer(%z: tensor<64x96xf32>, %p: tensor<64x3x2xf32>, %g: tensor<96xf32>, %b: tensor<96xf32>, %w: tensor<96x48xf32>) -> tensor<64x48xf32> {
  %d = stitch.fusion (%p, %g, %b, %z, %w) : (tensor<64x3x2xf32>, tensor<96xf32>, tensor<96xf32>, tensor<64x96xf32>, tensor<96x48xf32>) -> tensor<64x48xf32> {
  ^bb0(%p_1: tensor<64x3x2xf32>, %g_1: tensor<96xf32>, %b_1: tensor<96xf32>, %z_1: tensor<64x96xf32>, %w_1: tensor<96x48xf32>):
    %eps = graph.constant dense<1.000000e-05> : tensor<64xf32>
    %s = graph.combine_moments %p_1 tile 32 size 96 : (tensor<64x3x2xf32>) -> tensor<64x2xf32>
    %m2 = graph.slice %s start [0, 0] limit [64, 1] strides [1, 1] : (tensor<64x2xf32>) -> tensor<64x1xf32>
    %v2 = graph.slice %s start [0, 1] limit [64, 2] strides [1, 1] : (tensor<64x2xf32>) -> tensor<64x1xf32>
    %m = graph.reshape %m2 : (tensor<64x1xf32>) -> tensor<64xf32>
    %v = graph.reshape %v2 : (tensor<64x1xf32>) -> tensor<64xf32>
    %ve = graph.add %v, %eps : tensor<64xf32>
    %r = graph.rsqrt %ve : tensor<64xf32>
    %mb = graph.broadcast %m dims [0] : (tensor<64xf32>) -> tensor<64x96xf32>
    %rb = graph.broadcast %r dims [0] : (tensor<64xf32>) -> tensor<64x96xf32>
    %gb = graph.broadcast %g_1 dims [1] : (tensor<96xf32>) -> tensor<64x96xf32>
    %bb = graph.broadcast %b_1 dims [1] : (tensor<96xf32>) -> tensor<64x96xf32>
    %xc = graph.sub %z_1, %mb : tensor<64x96xf32>
    %y0 = graph.mul %xc, %rb : tensor<64x96xf32>
    %y1 = graph.mul %y0, %gb : tensor<64x96xf32>
    %y = graph.add %y1, %bb : tensor<64x96xf32>
    %d_1 = graph.dot %y, %w_1 : (tensor<64x96xf32>, tensor<96x48xf32>) -> tensor<64x48xf32>
    stitch.yield %d_1 : tensor<64x48xf32>
  }
  func.return %d : tensor<64x48xf32>
}
