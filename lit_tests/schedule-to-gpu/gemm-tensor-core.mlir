// A tensor-core GEMM kernel: A and B staged by 16-byte cp.asyncs into four buffers
// (a four-stage pipeline, as many as MAX_STAGES allows and 48 KB of static shared arrays
// hold: three k-steps are committed before the loop; each step waits until at most two
// groups are pending (its own has landed), and one barrier publishes its tiles and frees
// the previous step's buffer, which it refills three steps ahead before its mma's),
// zero-filled past the ragged M edge (src-size 0), the swizzled tiles read by ldmatrix
// (B transposed), mma.sync accumulating in f32, the accumulators stored under edge
// guards. K = 20 rows are not whole 16-byte chunks: those operands are staged
// synchronously.
// RUN: fs-opt %s -p 'stitch-codegen{gemm="64x64x32/32x32/f16"},schedule-to-gpu' | filecheck %s
// RUN: fs-opt %s -p 'stitch-codegen{gemm="64x64x32/32x32/f16"},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=PTX
// RUN: fs-opt %s -p 'stitch-codegen{precision=tf32},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=TF32

// CHECK-LABEL: gpu.func @mm_k0(
// CHECK-SAME: workgroup(%[[AT:.*]] : memref<8192xf16, 3 : i64>, %[[BT:.*]] : memref<8192xf16, 3 : i64>) kernel attributes {gpu.known_block_size = array<i32: 128, 1, 1>}
// CHECK: gpu.cp_async %[[AT]][%{{.*}}], %{{.*}}[%{{.*}}], 16, %{{.*}} : memref<8192xf16, 3 : i64>, memref<?xf16>
// CHECK: gpu.cp_async %[[BT]][%{{.*}}], %{{.*}}[%{{.*}}], 16 : memref<8192xf16, 3 : i64>, memref<?xf16>
// CHECK: gpu.cp_async_commit_group
// CHECK: gpu.cp_async_commit_group
// CHECK: gpu.cp_async_commit_group
// CHECK-NOT: gpu.cp_async_commit_group
// CHECK: scf.for
// CHECK-NEXT: arith
// CHECK: gpu.cp_async_wait_group 2
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: gpu.cp_async %[[AT]]
// CHECK: gpu.cp_async_commit_group
// CHECK-NOT: gpu.barrier
// CHECK: gpu.ldmatrix %[[AT]][%{{.*}}] : memref<8192xf16, 3 : i64> -> i32, i32, i32, i32
// CHECK: gpu.ldmatrix %[[BT]][%{{.*}}] trans : memref<8192xf16, 3 : i64> -> i32, i32, i32, i32
// CHECK: gpu.mma_sync f16
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: gpu.cp_async_wait_group 0
// CHECK-LABEL: gpu.func @mm_k1(
// CHECK-NOT: gpu.cp_async
// CHECK: memref.store {{.*}} : memref<8192xf16, 3 : i64>
// CHECK: gpu.barrier
// CHECK: gpu.ldmatrix
// CHECK: gpu.mma_sync f16

// PTX-LABEL: .visible .entry mm_k0(
// PTX: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// PTX: cp.async.wait_group 2;
// PTX-NEXT: bar.sync 0;
// PTX: cp.async.commit_group;
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: cp.async.wait_group 0;

// TF32-LABEL: .visible .entry single_k0(
// A and B by 16-byte chunks
// TF32: cp.async.cg.shared.global {{.*}}, 16
// TF32: cp.async.cg.shared.global {{.*}}, 16
// TF32-NOT: cp.async.ca
// TF32: cp.async.wait_group 2;
// A's tf32 fragment: one ldmatrix of four 8x4 matrices of 32-bit elements, each rounded
// (rounded straight from the ldmatrix registers, no move)
// TF32: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%[[R0:r[0-9]+]], %{{r[0-9]+}}, %{{r[0-9]+}}, %{{r[0-9]+}}}
// TF32-NEXT: cvt.rna.tf32.f32 %[[A0:r[0-9]+]], %[[R0]];
// TF32: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// B's fragments of one 8-column tile (b0, b1 of k 0-7, then of k 8-15): a scalar load
// from a column of the row-major tile each, rounded
// TF32: ld.shared.f32 %[[B0:f[0-9]+]]
// TF32-NEXT: cvt.rna.tf32.f32 %[[RB0:r[0-9]+]], %[[B0]];
// TF32: ld.shared.f32 %[[B1:f[0-9]+]]
// TF32-NEXT: cvt.rna.tf32.f32 %[[RB1:r[0-9]+]], %[[B1]];
// TF32: ld.shared.f32 %[[B2:f[0-9]+]]
// TF32-NEXT: cvt.rna.tf32.f32 %[[RB2:r[0-9]+]], %[[B2]];
// TF32: ld.shared.f32 %[[B3:f[0-9]+]]
// TF32-NEXT: cvt.rna.tf32.f32 %[[RB3:r[0-9]+]], %[[B3]];
// TF32-NOT: ldmatrix
// TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {{.*}}, {%[[A0]], {{.*}}}, {%[[RB0]], %[[RB1]]}, {{.*}};
// TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {{.*}}, {%[[RB2]], %[[RB3]]}, {{.*}};
// TF32: cp.async.wait_group 0;
func.func @mm(%a: tensor<100x64xf16>, %b: tensor<64x128xf16>, %c: tensor<40x20xf16>, %d: tensor<20x24xf16>) -> (tensor<100x128xf16>, tensor<40x24xf16>) {
  %x = graph.dot %a, %b : (tensor<100x64xf16>, tensor<64x128xf16>) -> tensor<100x128xf16>
  %y = graph.dot %c, %d : (tensor<40x20xf16>, tensor<20x24xf16>) -> tensor<40x24xf16>
  func.return %x, %y : tensor<100x128xf16>, tensor<40x24xf16>
}

func.func @single(%a: tensor<96x64xf32>, %b: tensor<64x80xf32>) -> tensor<96x80xf32> {
  %d = graph.dot %a, %b : (tensor<96x64xf32>, tensor<64x80xf32>) -> tensor<96x80xf32>
  func.return %d : tensor<96x80xf32>
}
