// RUN: fs-opt %s | fs-opt | filecheck %s
// RUN: fs-opt %s -t ptx | filecheck %s --check-prefix=PTX

// Spellings other compilers emit: #gpu.address_space<...> memory spaces and upper_bound
// hints on the id ops.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @k(
    // CHECK-SAME: %{{.*}}: memref<?xf32, #gpu.address_space<global>>, %{{.*}}: index) workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>) private(%{{.*}} : memref<4xf32, #gpu.address_space<private>>) kernel {
    // PTX-LABEL: .visible .entry k(
    // PTX: .shared .align 16 .b8 k_smem0[128];
    // PTX: .local .align 16 .b8 k_local1[16];
    gpu.func @k(%a: memref<?xf32, #gpu.address_space<global>>, %n: index) workgroup(%smem : memref<32xf32, #gpu.address_space<workgroup>>) private(%p : memref<4xf32, #gpu.address_space<private>>) kernel {
      // CHECK-NEXT: %{{.*}} = gpu.thread_id x upper_bound 256
      // CHECK-NEXT: %{{.*}} = gpu.lane_id upper_bound 32
      // CHECK-NEXT: %{{.*}} = gpu.subgroup_id upper_bound 8 : index
      // CHECK-NEXT: %{{.*}} = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x upper_bound 256
      %l = gpu.lane_id upper_bound 32
      %w = gpu.subgroup_id upper_bound 8 : index
      %d = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      // PTX: ld.global.f32 %[[V:f[0-9]+]],
      // PTX: st.shared.f32 [%{{rd[0-9]+}}], %[[V]];
      // PTX: st.local.f32 [%{{rd[0-9]+}}], %[[V]];
      %v = memref.load %a[%tid] : memref<?xf32, #gpu.address_space<global>>
      memref.store %v, %smem[%l] : memref<32xf32, #gpu.address_space<workgroup>>
      memref.store %v, %p[%w] : memref<4xf32, #gpu.address_space<private>>
      gpu.return
    }
  }
}
