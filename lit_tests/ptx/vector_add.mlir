// RUN: fs-opt %s -t ptx | filecheck %s
// RUN: fs-opt %s -t 'ptx{arch=sm_90}' | filecheck %s --check-prefix=SM90

// CHECK: .version 8.7
// CHECK-NEXT: .target sm_80
// CHECK-NEXT: .address_size 64
// SM90: .target sm_90

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: .visible .entry vadd(
    // CHECK-NEXT: .param .u64 vadd_param_0,
    // CHECK-NEXT: .param .u64 vadd_param_1,
    // CHECK-NEXT: .param .u64 vadd_param_2,
    // CHECK-NEXT: .param .u64 vadd_param_3
    // CHECK-NEXT: )
    // CHECK-NEXT: .maxntid 256, 1, 1
    gpu.func @vadd(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %n: index) kernel attributes {gpu.known_block_size = array<i32: 256, 1, 1>} {
      // CHECK: ld.param.u64 %[[A:rd[0-9]+]], [vadd_param_0];
      // CHECK-NEXT: cvta.to.global.u64 %[[GA:rd[0-9]+]], %[[A]];
      // CHECK: ld.param.u64 %{{rd[0-9]+}}, [vadd_param_3];
      // CHECK: mul.wide.u32
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      // CHECK: setp.lt.u64 %[[P:p[0-9]+]],
      // CHECK-NEXT: @!%[[P]] bra $L__vadd_[[END:[0-9]+]];
      scf.if %in {
        // CHECK: ld.global.f32 %[[X:f[0-9]+]],
        // CHECK: ld.global.f32 %[[Y:f[0-9]+]],
        // CHECK-NEXT: add.rn.f32 %[[S:f[0-9]+]], %[[X]], %[[Y]];
        // CHECK: st.global.f32 [%{{rd[0-9]+}}], %[[S]];
        %x = memref.load %a[%i] : memref<?xf32>
        %y = memref.load %b[%i] : memref<?xf32>
        %s = arith.addf %x, %y : f32
        memref.store %s, %c[%i] : memref<?xf32>
      }
      // CHECK-NEXT: $L__vadd_[[END]]:
      // CHECK-NEXT: ret;
      gpu.return
    }
  }
  func.func @host(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %g = arith.ceildivui %n, %c256 : index
    gpu.launch_func @kernels::@vadd blocks in (%g, %c1, %c1) threads in (%c256, %c1, %c1) args(%a : memref<?xf32>, %b : memref<?xf32>, %c : memref<?xf32>, %n : index)
    func.return
  }
}
