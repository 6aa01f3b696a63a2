// f16 and bf16 dots run on the tensor cores: `math = f16` in the gemm parameters, the
// block tile split into warp tiles (`thread`), 32 threads per warp; f32 dots keep the
// FMA kernel unless precision=tf32.
// RUN: fs-opt %s -p stitch-codegen | filecheck %s
// RUN: fs-opt %s -p 'stitch-codegen{precision=tf32}' | filecheck %s --check-prefix=TF32
// RUN: fs-opt %s -p 'stitch-codegen{gemm="128x128x32/64x64/f16"}' | filecheck %s --check-prefix=FORCED
// RUN: not fs-opt %s -p 'stitch-codegen{precision=fp16}' 2>&1 | filecheck %s --check-prefix=PRECISION
// RUN: not fs-opt %s -p 'stitch-codegen{gemm="96x96x32/24x48/f16"}' 2>&1 | filecheck %s --check-prefix=WARP
// RUN: fs-opt %s -p 'stitch-codegen{precision=tf32 traffic_slack=0.3}' | filecheck %s --check-prefix=SLACK
// RUN: not fs-opt %s -p 'stitch-codegen{traffic_slack=1.5}' 2>&1 | filecheck %s --check-prefix=SLACK-RANGE

// CHECK-LABEL: func.func @half
// CHECK: schedule.kernel @half_k0 gemm<tile = {{[0-9]+}}x{{[0-9]+}}x32, thread = {{[0-9]+}}x{{[0-9]+}}, math = f16> grid [{{.*}}] block [128, 1, 1] cost {{{.*}}config = "gemm/{{.*}}/f16"
// CHECK: schedule.shared @a_tile : memref<{{[0-9]+}}xf16, 3 : i64>
// CHECK: schedule.kernel @half_k1 gemm<{{.*}}math = bf16>
// A forced tensor-core configuration applies to the dots of its math only.
// FORCED-LABEL: func.func @half
// FORCED: schedule.kernel @half_k0 gemm<tile = 128x128x32, thread = 64x64, math = f16> grid [2, 2, 1] block [128, 1, 1]
// FORCED: schedule.shared @a_tile : memref<12288xf16, 3 : i64>
// FORCED: schedule.shared @b_tile : memref<12288xf16, 3 : i64>
// FORCED: schedule.kernel @half_k1 gemm<{{.*}}math = bf16>{{.*}}candidates
// FORCED-LABEL: func.func @single
// FORCED: schedule.kernel @single_k0 gemm<tile = {{[0-9]+}}x{{[0-9]+}}x16{{.*}}> grid
// TF32-LABEL: func.func @half
func.func @half(%a: tensor<256x64xf16>, %b: tensor<64x256xf16>, %c: tensor<64x64xbf16>) -> (tensor<256x256xf16>, tensor<64x64xbf16>) {
  %d = graph.dot %a, %b : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>
  %e = graph.dot %c, %c : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  func.return %d, %e : tensor<256x256xf16>, tensor<64x64xbf16>
}

// CHECK-LABEL: func.func @single
// CHECK: schedule.kernel @single_k0 gemm<tile = {{[0-9]+}}x{{[0-9]+}}x16{{(, thread = [0-9]+x[0-9]+)?}}> grid
// TF32-LABEL: func.func @single
// TF32: schedule.kernel @single_k0 gemm<tile = {{[0-9]+}}x{{[0-9]+}}x32, thread = {{[0-9]+}}x{{[0-9]+}}, math = tf32>
// TF32: schedule.shared @a_tile : memref<{{[0-9]+}}xf32, 3 : i64>
func.func @single(%a: tensor<96x64xf32>, %b: tensor<64x80xf32>) -> tensor<96x80xf32> {
  %d = graph.dot %a, %b : (tensor<96x64xf32>, tensor<64x80xf32>) -> tensor<96x80xf32>
  func.return %d : tensor<96x80xf32>
}

// PRECISION: stitch-codegen: precision=fp16 (expected fp32 or tf32)
// WARP: stitch-codegen: gemm=96x96x32/24x48/f16: a tensor-core gemm needs warp tiles of multiples of 16x16

// For BERT's 256x768x768 product at tf32 the evaluator takes 64x32 tiles, 96 blocks for
// 108 SMs; no split-K variant is 5% faster (`SPLIT_MARGIN`)
// TF32-LABEL: func.func @qkv
// TF32: schedule.kernel @qkv_k0 gemm<tile = 64x32x32, thread = 32x16, math = tf32> grid [24, 4, 1]
// TF32-SAME: config = "gemm/64x32x32/32x16/tf32", requested_bytes = 29097984 : i64}
// With traffic_slack=0.3 a configuration up to 30% slower that requests fewer bytes is
// preferred: 64x64 tiles re-read A half as often (19.7 MB against 29.1)
// SLACK-LABEL: func.func @qkv
// SLACK: schedule.kernel @qkv_k0 gemm<tile = 64x64x32, thread = 32x32, math = tf32> grid [12, 4, 1]
// SLACK-SAME: requested_bytes = 19660800 : i64}
// SLACK-RANGE: stitch-codegen: traffic_slack=1.5 (expected a fraction from 0 to 1)
func.func @qkv(%a: tensor<256x768xf32>, %b: tensor<768x768xf32>) -> tensor<256x768xf32> {
  %d = graph.dot %a, %b : (tensor<256x768xf32>, tensor<768x768xf32>) -> tensor<256x768xf32>
  func.return %d : tensor<256x768xf32>
}
