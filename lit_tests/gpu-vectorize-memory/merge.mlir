// The load/store vectorizer (fsir/lowering/vectorize.py): scalar accesses of one global
// buffer at x + c0 .. x + c0 + V - 1, with x + c0 provably a multiple of V, become one
// gpu.load_vector / gpu.store_vector; everything else stays scalar.
// RUN: fs-opt %s -p 'gpu-vectorize-memory{width=4}' | filecheck %s
// RUN: fs-opt %s -p 'gpu-vectorize-memory{width=2}' | filecheck %s --check-prefix=W2
// RUN: not fs-opt %s -p 'gpu-vectorize-memory{width=3}' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: gpu-vectorize-memory: width=3 (expected 1, 2 or 4)

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @aligned(
    // CHECK-SAME:  %[[A:.*]]: memref<?xf32>, %[[O:.*]]: memref<?xf32>)
    // CHECK:       %[[I:.*]] = arith.muli %{{.*}}, %{{.*}} : index
    // CHECK:       %[[X0:.*]], %[[X1:.*]], %[[X2:.*]], %[[X3:.*]] = gpu.load_vector %[[A]][%[[I]]] : memref<?xf32> -> f32, f32, f32, f32
    // CHECK-NEXT:  %[[S:.*]] = arith.addf %[[X0]], %[[X3]] : f32
    // CHECK-NEXT:  gpu.store_vector %[[S]], %[[X1]], %[[X2]], %[[X3]], %[[O]][%[[I]]] : memref<?xf32>
    // CHECK-NEXT:  gpu.return
    // W2-LABEL:    gpu.func @aligned(
    // W2:          gpu.load_vector %{{.*}}[%[[I:.*]]] : memref<?xf32> -> f32, f32
    // W2:          gpu.load_vector %{{.*}}[%[[I2:.*]]] : memref<?xf32> -> f32, f32
    // W2:          gpu.store_vector %{{.*}}, %{{.*}}, %{{.*}}[%[[I]]] : memref<?xf32>
    // W2:          gpu.store_vector %{{.*}}, %{{.*}}, %{{.*}}[%[[I2]]] : memref<?xf32>
    gpu.func @aligned(%a: memref<?xf32>, %o: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %i = arith.muli %t, %c4 : index
      %i1 = arith.addi %i, %c1 : index
      %i2 = arith.addi %i, %c2 : index
      %i3 = arith.addi %i, %c3 : index
      %x0 = memref.load %a[%i] : memref<?xf32>
      %x1 = memref.load %a[%i1] : memref<?xf32>
      %x2 = memref.load %a[%i2] : memref<?xf32>
      %x3 = memref.load %a[%i3] : memref<?xf32>
      %s = arith.addf %x0, %x3 : f32
      memref.store %s, %o[%i] : memref<?xf32>
      memref.store %x1, %o[%i1] : memref<?xf32>
      memref.store %x2, %o[%i2] : memref<?xf32>
      memref.store %x3, %o[%i3] : memref<?xf32>
      gpu.return
    }

    // A row offset (row * 768) plus a lane's vector (lane * 4): 4 divides both. The
    // loads come in the order 5, 4, 7, 6: the vector load goes first, at x + 4.
    // CHECK-LABEL: gpu.func @row_slot(
    // CHECK:       %[[X:.*]] = arith.addi %{{.*}}, %{{.*}} : index
    // CHECK:       %[[C4:.*]] = arith.constant 4 : index
    // CHECK-NEXT:  %[[B:.*]] = arith.addi %[[X]], %[[C4]] : index
    // CHECK-NEXT:  %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = gpu.load_vector %{{.*}}[%[[B]]] : memref<?xf16> -> f16, f16, f16, f16
    // CHECK-NOT:   memref.load
    gpu.func @row_slot(%a: memref<?xf16>, %o: memref<?xf32>, %row: index) kernel {
      %t = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %c6 = arith.constant 6 : index
      %c7 = arith.constant 7 : index
      %c768 = arith.constant 768 : index
      %r = arith.muli %row, %c768 : index
      %l = arith.muli %t, %c4 : index
      %x = arith.addi %r, %l : index
      %i5 = arith.addi %x, %c5 : index
      %y5 = memref.load %a[%i5] : memref<?xf16>
      %i4 = arith.addi %x, %c4 : index
      %y4 = memref.load %a[%i4] : memref<?xf16>
      %i7 = arith.addi %x, %c7 : index
      %y7 = memref.load %a[%i7] : memref<?xf16>
      %i6 = arith.addi %x, %c6 : index
      %y6 = memref.load %a[%i6] : memref<?xf16>
      %s = arith.addf %y4, %y5 : f16
      %s2 = arith.addf %y6, %y7 : f16
      %s3 = arith.addf %s, %s2 : f16
      %e = arith.extf %s3 : f16 to f32
      memref.store %e, %o[%t] : memref<?xf32>
      gpu.return
    }

    // Offsets 2..5 of a multiple of 4: no aligned group of 4, two of 2.
    // CHECK-LABEL: gpu.func @shifted(
    // CHECK:       gpu.load_vector %{{.*}} : memref<?xi32> -> i32, i32
    // CHECK:       gpu.load_vector %{{.*}} : memref<?xi32> -> i32, i32
    gpu.func @shifted(%a: memref<?xi32>, %o: memref<?xi32>) kernel {
      %t = gpu.thread_id x
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %i = arith.muli %t, %c4 : index
      %i2 = arith.addi %i, %c2 : index
      %i3 = arith.addi %i, %c3 : index
      %i4 = arith.addi %i, %c4 : index
      %i5 = arith.addi %i, %c5 : index
      %x2 = memref.load %a[%i2] : memref<?xi32>
      %x3 = memref.load %a[%i3] : memref<?xi32>
      %x4 = memref.load %a[%i4] : memref<?xi32>
      %x5 = memref.load %a[%i5] : memref<?xi32>
      %s = arith.addi %x2, %x3 : i32
      %s2 = arith.addi %x4, %x5 : i32
      %s3 = arith.addi %s, %s2 : i32
      memref.store %s3, %o[%t] : memref<?xi32>
      gpu.return
    }

    // Not merged: a thread index (not known to be a multiple of 4), a store to the
    // buffer between the loads, a barrier between them, booleans (stored as bytes and
    // converted), shared memory.
    // CHECK-LABEL: gpu.func @scalar(
    // CHECK-NOT:   gpu.load_vector
    // CHECK-NOT:   gpu.store_vector
    // CHECK:       gpu.return
    gpu.func @scalar(%a: memref<?xf32>, %b: memref<?xi1>, %o: memref<?xf32>) workgroup(%s: memref<256xf32, 3>) kernel {
      %t = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %t1 = arith.addi %t, %c1 : index
      %t2 = arith.addi %t, %c2 : index
      %t3 = arith.addi %t, %c3 : index
      %u0 = memref.load %a[%t] : memref<?xf32>
      %u1 = memref.load %a[%t1] : memref<?xf32>
      %u2 = memref.load %a[%t2] : memref<?xf32>
      %u3 = memref.load %a[%t3] : memref<?xf32>
      %i = arith.muli %t, %c4 : index
      %i1 = arith.addi %i, %c1 : index
      %i2 = arith.addi %i, %c2 : index
      %i3 = arith.addi %i, %c3 : index
      %v0 = memref.load %o[%i] : memref<?xf32>
      %v2 = memref.load %o[%i2] : memref<?xf32>
      memref.store %u0, %o[%t] : memref<?xf32>
      %v1 = memref.load %o[%i1] : memref<?xf32>
      %v3 = memref.load %o[%i3] : memref<?xf32>
      %q0 = memref.load %a[%i] : memref<?xf32>
      %q2 = memref.load %a[%i2] : memref<?xf32>
      gpu.barrier
      %q1 = memref.load %a[%i1] : memref<?xf32>
      %q3 = memref.load %a[%i3] : memref<?xf32>
      %p0 = memref.load %b[%i] : memref<?xi1>
      %p1 = memref.load %b[%i1] : memref<?xi1>
      %p2 = memref.load %b[%i2] : memref<?xi1>
      %p3 = memref.load %b[%i3] : memref<?xi1>
      %w0 = memref.load %s[%i] : memref<256xf32, 3>
      %w1 = memref.load %s[%i1] : memref<256xf32, 3>
      %w2 = memref.load %s[%i2] : memref<256xf32, 3>
      %w3 = memref.load %s[%i3] : memref<256xf32, 3>
      gpu.return
    }
  }
}
