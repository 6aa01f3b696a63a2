// RUN: fs-opt %s | fs-opt | filecheck %s
// RUN: fs-opt %s -t ptx | filecheck %s --check-prefix=PTX

// The tensor-core and async-copy ops round-trip, and the PTX printer spells them as the
// PTX ISA does (shared addresses from the workgroup buffer, global ones from the
// kernel argument).
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @k(
    // PTX-LABEL: .visible .entry k(
    gpu.func @k(%a: memref<?xf16>, %o: memref<?xf32>) workgroup(%t : memref<256xf16, 3>) kernel attributes {gpu.known_block_size = array<i32: 32, 1, 1>} {
      %i = gpu.thread_id x
      %n = arith.constant 8 : i32
      // CHECK: gpu.cp_async %[[T:.*]][%[[I:.*]]], %{{.*}}[%[[I]]], 16 : memref<256xf16, 3 : i64>, memref<?xf16>
      // CHECK-NEXT: gpu.cp_async %[[T]][%[[I]]], %{{.*}}[%[[I]]], 16, %{{.*}} : memref<256xf16, 3 : i64>, memref<?xf16>
      // CHECK-NEXT: gpu.cp_async_commit_group
      // CHECK-NEXT: gpu.cp_async_wait_group 1
      // PTX: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
      // PTX: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, 8;
      // PTX-NEXT: cp.async.commit_group;
      // PTX-NEXT: cp.async.wait_group 1;
      gpu.cp_async %t[%i], %a[%i], 16 : memref<256xf16, 3>, memref<?xf16>
      gpu.cp_async %t[%i], %a[%i], 16, %n : memref<256xf16, 3>, memref<?xf16>
      gpu.cp_async_commit_group
      gpu.cp_async_wait_group 1
      gpu.barrier
      // CHECK: %[[R0:.*]], %[[R1:.*]], %[[R2:.*]], %[[R3:.*]] = gpu.ldmatrix %[[T]][%[[I]]] : memref<256xf16, 3 : i64> -> i32, i32, i32, i32
      // CHECK-NEXT: %[[S0:.*]], %[[S1:.*]] = gpu.ldmatrix %[[T]][%[[I]]] trans : memref<256xf16, 3 : i64> -> i32, i32
      // PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}];
      // PTX: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}];
      %r0, %r1, %r2, %r3 = gpu.ldmatrix %t[%i] : memref<256xf16, 3> -> i32, i32, i32, i32
      %s0, %s1 = gpu.ldmatrix %t[%i] trans : memref<256xf16, 3> -> i32, i32
      %z = arith.constant 0.0 : f32
      // CHECK: gpu.mma_sync f16 [%[[R0]], %[[R1]], %[[R2]], %[[R3]]] [%[[S0]], %[[S1]]] [%[[Z:.*]], %[[Z]], %[[Z]], %[[Z]]]
      // CHECK-NEXT: gpu.mma_sync bf16
      // PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}, {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}};
      // PTX-NEXT: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
      %d0, %d1, %d2, %d3 = gpu.mma_sync f16 [%r0, %r1, %r2, %r3] [%s0, %s1] [%z, %z, %z, %z]
      %e0, %e1, %e2, %e3 = gpu.mma_sync bf16 [%r0, %r1, %r2, %r3] [%s0, %s1] [%d0, %d1, %d2, %d3]
      // CHECK: %[[X:.*]] = gpu.round_tf32 %{{.*}}
      // CHECK-NEXT: gpu.mma_sync tf32 [%[[X]], %[[X]], %[[X]], %[[X]]] [%[[X]], %[[X]]]
      // PTX: cvt.rna.tf32.f32 %r[[X:[0-9]+]], %f{{[0-9]+}};
      // PTX-NEXT: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {{.*}}, {%r[[X]], %r[[X]], %r[[X]], %r[[X]]}, {%r[[X]], %r[[X]]},
      %x = memref.load %o[%i] : memref<?xf32>
      %tf = gpu.round_tf32 %x
      %f0, %f1, %f2, %f3 = gpu.mma_sync tf32 [%tf, %tf, %tf, %tf] [%tf, %tf] [%e0, %e1, %e2, %e3]
      memref.store %f0, %o[%i] : memref<?xf32>
      // an f32 given as its bits (an ldmatrix register) is rounded straight from the .b32 register
      // CHECK: gpu.round_tf32 %{{.*}} : i32
      // PTX: cvt.rna.tf32.f32 %r{{[0-9]+}}, %r{{[0-9]+}};
      %bits = arith.bitcast %f1 : f32 to i32
      %tb = gpu.round_tf32 %bits : i32
      %tbf = arith.bitcast %tb : i32 to f32
      memref.store %tbf, %o[%i] : memref<?xf32>
      gpu.return
    }
  }
}

