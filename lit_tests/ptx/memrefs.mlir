// RUN: fs-opt %s -t ptx | filecheck %s

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Static N-D memrefs are row-major; constant indices fold into the offset.
    // CHECK-LABEL: .visible .entry transpose(
    gpu.func @transpose(%x: memref<4x8x16xf32>, %y: memref<16x8x4xf32>) workgroup(%tile : memref<8x17xf32, 3>) private(%tmp : memref<4xf32, 5>) kernel {
      %i = gpu.thread_id x
      %j = gpu.thread_id y
      %k = gpu.thread_id z
      // CHECK: mul.lo.s64 %[[A:rd[0-9]+]], %{{rd[0-9]+}}, 512;
      // CHECK-NEXT: mad.lo.s64 %[[B:rd[0-9]+]], %{{rd[0-9]+}}, 64, %[[A]];
      // CHECK-NEXT: mad.lo.s64 %[[C:rd[0-9]+]], %{{rd[0-9]+}}, 4, %[[B]];
      %v = memref.load %x[%i, %j, %k] : memref<4x8x16xf32>
      memref.store %v, %y[%k, %j, %i] : memref<16x8x4xf32>
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      // CHECK: ld.global.f32 %{{f[0-9]+}}, [%{{rd[0-9]+}}+200];
      %c0_ = arith.constant 0 : index
      %c3_ = arith.constant 3 : index
      %w = memref.load %x[%c0_, %c3_, %c2] : memref<4x8x16xf32>
      // padded shared tile: stride 17
      // CHECK: mul.lo.s64 %{{rd[0-9]+}}, %{{rd[0-9]+}}, 68;
      // CHECK: st.shared.f32
      memref.store %w, %tile[%j, %k] : memref<8x17xf32, 3>
      // private attributions are .local arrays
      // CHECK: st.local.f32 [%{{rd[0-9]+}}+4],
      memref.store %w, %tmp[%c1] : memref<4xf32, 5>
      %u = memref.load %tmp[%c1] : memref<4xf32, 5>
      memref.store %u, %y[%c2, %c1, %c1] : memref<16x8x4xf32>
      gpu.return
    }

    // A dynamic outer dimension with static inner ones, and a strided layout.
    // CHECK-LABEL: .visible .entry rows(
    // memref.alloca in a kernel is per-thread local memory
    // CHECK: .local .align 16 .b8 rows_local{{[0-9]+}}[8];
    // offset 8 elements = 32 bytes, added to the base once
    // CHECK: ld.param.u64 %{{rd[0-9]+}}, [rows_param_1];
    // CHECK-NEXT: cvta.to.global.u64 %[[Y:rd[0-9]+]],
    // CHECK-NEXT: add.s64 %[[YB:rd[0-9]+]], %[[Y]], 32;
    gpu.func @rows(%x: memref<?x768xf16>, %y: memref<64x64xf32, strided<[128, 2], offset: 8>>, %r: index) kernel {
      %c5 = arith.constant 5 : index
      // CHECK: mul.lo.s64 %{{rd[0-9]+}}, %{{rd[0-9]+}}, 1536;
      // CHECK: ld.global.b16 %{{rs[0-9]+}}, [%{{rd[0-9]+}}+10];
      %v = memref.load %x[%r, %c5] : memref<?x768xf16>
      %f = arith.extf %v : f16 to f32
      // strides 128 and 2 elements
      // CHECK: mul.lo.s64 %[[O:rd[0-9]+]], %{{rd[0-9]+}}, 512;
      // CHECK-NEXT: add.s64 %[[AD:rd[0-9]+]], %[[YB]], %[[O]];
      // CHECK-NEXT: st.global.f32 [%[[AD]]+40],
      memref.store %f, %y[%r, %c5] : memref<64x64xf32, strided<[128, 2], offset: 8>>
      // CHECK: st.local.f32 [%{{rd[0-9]+}}+4],
      %c1 = arith.constant 1 : index
      %buf = memref.alloca() : memref<2xf32>
      memref.store %f, %buf[%c1] : memref<2xf32>
      gpu.return
    }
  }
}
