// Shared tiles beyond the 48 KB of static .shared arrays ptxas accepts are views of
// dynamic shared memory: two tf32 stages of a 128x128x32 tile are 64 KB, A's stages at
// byte 0 and B's at 32768, and the launch provides the 65536 bytes. The three stages a
// 128x128x16 tile gets (48 KB) stay static workgroup attributions.
// RUN: fs-opt %s -p 'stitch-codegen{precision=tf32 gemm="128x128x32/64x32/tf32"},schedule-to-gpu' | filecheck %s
// RUN: fs-opt %s -p 'stitch-codegen{precision=tf32 gemm="128x128x32/64x32/tf32"},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=PTX
// RUN: fs-opt %s -p 'stitch-codegen{precision=tf32 gemm="128x128x16/64x32/tf32"},schedule-to-gpu' | filecheck %s --check-prefix=STATIC

// CHECK-LABEL: func.func @mm(
// CHECK: %[[BYTES:.*]] = arith.constant 65536 : i32
// CHECK: gpu.launch_func @kernels::@mm_k0 blocks in ({{.*}}) threads in ({{.*}}) dynamic_shared_memory_size %[[BYTES]] args(
// CHECK-LABEL: gpu.func @mm_k0(
// CHECK-NOT: workgroup
// CHECK-SAME: kernel
// CHECK-NEXT: %[[DYN:.*]] = gpu.dynamic_shared_memory : memref<?xi8, 3 : i64>
// CHECK-NEXT: %[[A_AT:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[DYN]][%[[A_AT]]][] : memref<?xi8, 3 : i64> to memref<8192xf32, 3 : i64>
// CHECK-NEXT: %[[B_AT:.*]] = arith.constant 32768 : index
// CHECK-NEXT: %[[B:.*]] = memref.view %[[DYN]][%[[B_AT]]][] : memref<?xi8, 3 : i64> to memref<8192xf32, 3 : i64>
// CHECK: gpu.cp_async %[[A]][%{{.*}}], %{{.*}}[%{{.*}}], 16
// CHECK: gpu.cp_async %[[B]][%{{.*}}], %{{.*}}[%{{.*}}], 16
// CHECK: gpu.ldmatrix %[[A]]
// CHECK: memref.load %[[B]]
// CHECK: gpu.mma_sync tf32

// PTX: .extern .shared .align 16 .b8 __fsir_dynamic_smem[];
// PTX-LABEL: .visible .entry mm_k0(
// PTX-NOT: .shared .align
// PTX: mov.u64 %rd{{[0-9]+}}, __fsir_dynamic_smem;
// PTX: cp.async.cg.shared.global

// STATIC-LABEL: func.func @mm(
// STATIC-NOT: dynamic_shared_memory_size
// STATIC: gpu.func @mm_k0(%{{.*}}) workgroup(%{{.*}} : memref<6144xf32, 3 : i64>, %{{.*}} : memref<6144xf32, 3 : i64>) kernel
// STATIC-NOT: gpu.dynamic_shared_memory
func.func @mm(%a: tensor<256x64xf32>, %b: tensor<64x256xf32>) -> tensor<256x256xf32> {
  %d = graph.dot %a, %b : (tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
  func.return %d : tensor<256x256xf32>
}
