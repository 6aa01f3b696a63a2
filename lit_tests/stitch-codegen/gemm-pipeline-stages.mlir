// A tensor-core configuration may fix the pipeline's depth (`/pP`, the tuner's stages
// knob): the shared tiles hold P k-steps, and schedule-to-gpu waits until at most P - 2
// copy groups are pending. Without it the tiles hold as many steps as fit the static
// shared arrays (4 for this tile). The FMA pipes take no stages.
// RUN: fs-opt %s -p 'stitch-codegen{gemm="64x64x32/32x32/f16/p3"}' | filecheck %s
// RUN: fs-opt %s -p 'stitch-codegen{gemm="64x64x32/32x32/f16/p3"},schedule-to-gpu' | filecheck %s --check-prefix=GPU
// RUN: fs-opt %s -p 'stitch-codegen{gemm="64x64x32/32x32/f16"}' | filecheck %s --check-prefix=AUTO
// RUN: not fs-opt %s -p 'stitch-codegen{gemm="64x64x32/4x4/p3"}' 2>&1 | filecheck %s --check-prefix=FMA

// CHECK: schedule.kernel @f_k0 gemm<tile = 64x64x32, thread = 32x32, math = f16>{{.*}}config = "gemm/64x64x32/32x32/f16/p3"
// CHECK: schedule.shared @a_tile : memref<6144xf16, 3 : i64>
// CHECK: schedule.shared @b_tile : memref<6144xf16, 3 : i64>
// GPU: gpu.cp_async_wait_group 1
// GPU-NOT: gpu.cp_async_wait_group 2
// AUTO: schedule.shared @a_tile : memref<8192xf16, 3 : i64>
// FMA: error: stitch-codegen: gemm=64x64x32/4x4/p3: 3 pipeline stages (the tensor cores take 2 to 4, the FMA pipes none)
func.func @f(%a: tensor<256x256xf16>, %b: tensor<256x256xf16>) -> tensor<256x256xf16> {
  %d = graph.dot %a, %b : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  func.return %d : tensor<256x256xf16>
}
