// gpu.load_vector / gpu.store_vector print as one ld/st with a .v2/.v4 vector of
// registers; 16-bit floats move as .b16, bytes as .s8 (loads) and .b8 (stores).
// RUN: fs-opt %s -t ptx | filecheck %s

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry vcopy(
    gpu.func @vcopy(%a: memref<?xf32>, %o: memref<?xf32>, %h: memref<?xf16>, %b: memref<?xi8>) kernel {
      %t = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %i = arith.muli %t, %c4 : index
      // CHECK:      mul.lo.s64 %[[I:rd[0-9]+]], %{{rd[0-9]+}}, 4;
      // CHECK-NEXT: mul.lo.s64 %[[OFF:rd[0-9]+]], %[[I]], 4;
      // CHECK-NEXT: add.s64 %[[P:rd[0-9]+]], %{{rd[0-9]+}}, %[[OFF]];
      // CHECK-NEXT: ld.global.v4.f32 {%[[X:f[0-9]+]], %[[Y:f[0-9]+]], %[[Z:f[0-9]+]], %[[W:f[0-9]+]]}, [%[[P]]];
      %x, %y, %z, %w = gpu.load_vector %a[%i] : memref<?xf32> -> f32, f32, f32, f32
      // CHECK: st.global.v4.f32 [%{{rd[0-9]+}}], {%[[W]], %[[Z]], %[[Y]], %[[X]]};
      gpu.store_vector %w, %z, %y, %x, %o[%i] : memref<?xf32>
      // CHECK: ld.global.v4.b16 {%[[H0:rs[0-9]+]], %{{rs[0-9]+}}, %{{rs[0-9]+}}, %[[H3:rs[0-9]+]]}, [%{{rd[0-9]+}}];
      %h0, %h1, %h2, %h3 = gpu.load_vector %h[%i] : memref<?xf16> -> f16, f16, f16, f16
      // CHECK: st.global.v2.b16 [%{{rd[0-9]+}}], {%[[H3]], %[[H0]]};
      gpu.store_vector %h3, %h0, %h[%i] : memref<?xf16>
      // CHECK: ld.global.v4.s8 {%[[B0:rs[0-9]+]], %{{rs[0-9]+}}, %{{rs[0-9]+}}, %{{rs[0-9]+}}}, [%{{rd[0-9]+}}];
      %b0, %b1, %b2, %b3 = gpu.load_vector %b[%i] : memref<?xi8> -> i8, i8, i8, i8
      // CHECK: st.global.v4.b8 [%{{rd[0-9]+}}], {%{{rs[0-9]+}}, %{{rs[0-9]+}}, %{{rs[0-9]+}}, %[[B0]]};
      gpu.store_vector %b3, %b2, %b1, %b0, %b[%i] : memref<?xi8>
      gpu.return
    }
  }
}
