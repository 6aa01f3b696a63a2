// The GEMM kernel: each thread accumulates a tm x tn micro-tile in registers (the
// k loop's iter_args). Each k-step stages the block's A and B tiles in shared memory,
// every thread copying several elements, zero-padded where a tile crosses the edge of
// an operand; after a barrier the unrolled k-step loads tm values of A and tn of B per
// k and does tm x tn fused multiply-adds; outputs are stored under edge guards.
// RUN: fs-opt %s -p 'stitch-codegen{gemm="16x16x8/2x2"},schedule-to-gpu' | filecheck %s
// RUN: fs-opt %s -p 'stitch-codegen{gemm="32x32x16/2x2"},schedule-to-gpu' | filecheck %s --check-prefix=EVEN
// RUN: fs-opt %s -p 'stitch-codegen{gemm="32x32x8/4x4"},schedule-to-gpu' | filecheck %s --check-prefix=VEC

// 16x16 tiles of 2x2 micro-tiles: 64 threads; 8-deep k-steps, so each thread stages
// two elements of each 16x8 / 8x16 tile. 20x33 outputs and K = 40 need every guard.
// CHECK-LABEL: func.func @mm
// CHECK: gpu.launch_func @kernels::@mm_k0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in
// CHECK-LABEL: gpu.func @mm_k0(
// CHECK-SAME: workgroup(%[[AT:.*]] : memref<128xf32, 3 : i64>, %[[BT:.*]] : memref<128xf32, 3 : i64>) kernel attributes {gpu.known_block_size = array<i32: 64, 1, 1>}
// CHECK-DAG: gpu.block_id x
// CHECK-DAG: gpu.block_id y
// CHECK: %[[R0:[^, ]+]], %[[R1:[^, ]+]], %[[R2:[^, ]+]], %[[R3:[^, ]+]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C0:[^, ]+]] = %{{[^,]+}}, %[[C1:[^, ]+]] = %{{[^,]+}}, %[[C2:[^, ]+]] = %{{[^,]+}}, %[[C3:[^, ]+]] = %{{[^)]+}}) -> (f32, f32, f32, f32) {
// CHECK-COUNT-2: memref.store %{{.*}}, %[[AT]]
// CHECK-COUNT-2: memref.store %{{.*}}, %[[BT]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[X0:.*]] = memref.load %[[AT]]
// CHECK-NEXT: %[[X1:.*]] = memref.load %[[AT]]
// CHECK-NEXT: %[[Y0:.*]] = memref.load %[[BT]]
// CHECK-NEXT: %[[Y1:.*]] = memref.load %[[BT]]
// CHECK-NEXT: math.fma %[[X0]], %[[Y0]], %[[C0]] : f32
// CHECK-NEXT: math.fma %[[X0]], %[[Y1]], %[[C1]] : f32
// CHECK-NEXT: math.fma %[[X1]], %[[Y0]], %[[C2]] : f32
// CHECK-NEXT: math.fma %[[X1]], %[[Y1]], %[[C3]] : f32
// CHECK-COUNT-28: math.fma
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: scf.if
// CHECK: memref.store %[[R0]]
// CHECK: scf.if
// CHECK: memref.store %[[R1]]
// CHECK: scf.if
// CHECK: memref.store %[[R2]]
// CHECK: scf.if
// CHECK: memref.store %[[R3]]
// CHECK: gpu.return
func.func @mm(%a: tensor<20x40xf32>, %b: tensor<40x33xf32>) -> tensor<20x33xf32> {
  %d = graph.dot %a, %b : (tensor<20x40xf32>, tensor<40x33xf32>) -> tensor<20x33xf32>
  func.return %d : tensor<20x33xf32>
}

// Sizes that are multiples of the tiles: no guard anywhere (the grid covers the output
// exactly and k-steps never pass K); the tiles are loaded and stored straight.
// EVEN-LABEL: gpu.func @even_k0(%a: memref<?xf32>
// EVEN-SAME: workgroup(%[[AT:.*]] : memref<512xf32, 3 : i64>, %[[BT:.*]] : memref<512xf32, 3 : i64>) kernel attributes {gpu.known_block_size = array<i32: 256, 1, 1>}
// EVEN-NOT: scf.if
// EVEN: scf.for
// EVEN-NOT: scf.if
// EVEN: memref.load %a[
// EVEN: memref.store %{{.*}}, %[[AT]]
// EVEN-NOT: scf.if
// EVEN: gpu.barrier
// EVEN-NOT: scf.if
// EVEN: gpu.return
// 4x4 micro-tiles read their fragments as 4-vectors: the A tile is stored transposed
// with rows 32 + 4 apart (8 x 36 = 288 elements), and each k's 16 multiply-adds take
// one vector of A and one of B.
// VEC-LABEL: gpu.func @even_k0(
// VEC-SAME: workgroup(%[[AT:.*]] : memref<288xf32, 3 : i64>, %[[BT:.*]] : memref<256xf32, 3 : i64>)
// VEC: scf.for
// VEC-COUNT-4: memref.store %{{.*}}, %[[AT]]
// VEC-COUNT-4: memref.store %{{.*}}, %[[BT]]
// VEC-NEXT: gpu.barrier
// VEC-NEXT: %[[X0:[^, ]+]], %[[X1:[^, ]+]], %[[X2:[^, ]+]], %[[X3:[^, ]+]] = gpu.load_vector %[[AT]]
// VEC-NEXT: %[[Y0:[^, ]+]], %[[Y1:[^, ]+]], %[[Y2:[^, ]+]], %[[Y3:[^, ]+]] = gpu.load_vector %[[BT]]
// VEC-NEXT: math.fma %[[X0]], %[[Y0]]
// VEC-COUNT-14: math.fma
// VEC-NEXT: math.fma %[[X3]], %[[Y3]]
// VEC-NEXT: gpu.load_vector %[[AT]]
// VEC-NEXT: gpu.load_vector %[[BT]]
// VEC-COUNT-112: math.fma
// VEC-NEXT: gpu.barrier
// VEC-NEXT: scf.yield
func.func @even(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %d = graph.dot %a, %b : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  func.return %d : tensor<64x64xf32>
}
