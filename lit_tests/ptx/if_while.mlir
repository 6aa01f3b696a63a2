// RUN: fs-opt %s -t ptx | filecheck %s

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // scf.if with results: both branches copy into the result register.
    // CHECK-LABEL: .visible .entry clamp(
    gpu.func @clamp(%x: memref<?xf32>, %y: memref<?xf32>, %lo: f32) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<?xf32>
      %small = arith.cmpf olt, %v, %lo : f32
      // CHECK: setp.lt.f32 %[[P:p[0-9]+]], %[[V:f[0-9]+]], %[[LO:f[0-9]+]];
      // CHECK-NEXT: @!%[[P]] bra $L__clamp_[[ELSE:[0-9]+]];
      // CHECK-NEXT: mov.f32 %[[R:f[0-9]+]], %[[LO]];
      // CHECK-NEXT: bra $L__clamp_[[END:[0-9]+]];
      // CHECK-NEXT: $L__clamp_[[ELSE]]:
      // CHECK-NEXT: mul.rn.f32 %[[D:f[0-9]+]], %[[V]], %[[V]];
      // CHECK-NEXT: mov.f32 %[[R]], %[[D]];
      // CHECK-NEXT: $L__clamp_[[END]]:
      %r = scf.if %small -> (f32) {
        scf.yield %lo : f32
      } else {
        %d = arith.mulf %v, %v : f32
        scf.yield %d : f32
      }
      // CHECK: st.global.f32 [%{{rd[0-9]+}}], %[[R]];
      memref.store %r, %y[%i] : memref<?xf32>
      gpu.return
    }

    // scf.while: Collatz steps of each element.
    // CHECK-LABEL: .visible .entry collatz(
    gpu.func @collatz(%x: memref<?xi32>, %steps: memref<?xi32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<?xi32>
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c3 = arith.constant 3 : i32
      // CHECK: $L__collatz_[[HEAD:[0-9]+]]:
      // CHECK: setp.gt.s32 %[[C:p[0-9]+]],
      // CHECK: @!%[[C]] bra $L__collatz_[[EXIT:[0-9]+]];
      // (the remainder by 2: a shift, an add, a shift, a multiply and a subtraction)
      // CHECK: shr.s32
      // CHECK: sub.s32
      // CHECK: bra $L__collatz_[[HEAD]];
      // CHECK-NEXT: $L__collatz_[[EXIT]]:
      %n, %s = scf.while (%a = %v, %k = %c0) : (i32, i32) -> (i32, i32) {
        %more = arith.cmpi sgt, %a, %c1 : i32
        scf.condition(%more) %a, %k : i32, i32
      } do {
      ^bb0(%a: i32, %k: i32):
        %c2 = arith.constant 2 : i32
        %odd = arith.remsi %a, %c2 : i32
        %isodd = arith.cmpi ne, %odd, %c0 : i32
        %half = arith.divsi %a, %c2 : i32
        %t = arith.muli %a, %c3 : i32
        %t1 = arith.addi %t, %c1 : i32
        %next = arith.select %isodd, %t1, %half : i32
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %next, %k1 : i32, i32
      }
      memref.store %s, %steps[%i] : memref<?xi32>
      gpu.return
    }

    // cf branches between blocks with block arguments.
    // CHECK-LABEL: .visible .entry branches(
    // CHECK: @!%{{p[0-9]+}} bra $L__branches_[[OTHER:[0-9]+]];
    // CHECK: bra $L__branches_[[B1:[0-9]+]];
    // CHECK: $L__branches_[[OTHER]]:
    // CHECK: $L__branches_[[B1]]:
    // CHECK: st.global.b32
    gpu.func @branches(%x: memref<?xi32>, %f: i1) kernel {
      %c0 = arith.constant 0 : index
      %a = arith.constant 7 : i32
      %b = arith.constant 9 : i32
      cf.cond_br %f, ^bb1(%a : i32), ^bb1(%b : i32)
    ^bb1(%v: i32):
      memref.store %v, %x[%c0] : memref<?xi32>
      gpu.return
    }
  }
}
