// gpu.load_vector / gpu.store_vector: 2 or 4 consecutive elements in one memory
// instruction (fsir's vectorizer forms them; the PTX printer prints ld/st .v2/.v4).
// RUN: fs-opt %s | fs-opt | filecheck %s

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @k(
    gpu.func @k(%a: memref<?xf32>, %h: memref<?xbf16>, %m: memref<?x8xi8>, %i: index, %j: index) kernel {
      // CHECK:      %[[X:.*]], %[[Y:.*]], %[[Z:.*]], %[[W:.*]] = gpu.load_vector %{{.*}}[%[[I:.*]]] : memref<?xf32> -> f32, f32, f32, f32
      // CHECK-NEXT: gpu.store_vector %[[W]], %[[Z]], %[[Y]], %[[X]], %{{.*}}[%[[I]]] : memref<?xf32>
      %x, %y, %z, %w = gpu.load_vector %a[%i] : memref<?xf32> -> f32, f32, f32, f32
      gpu.store_vector %w, %z, %y, %x, %a[%i] : memref<?xf32>
      // CHECK-NEXT: %{{.*}}, %{{.*}} = gpu.load_vector %{{.*}}[%[[I]]] : memref<?xbf16> -> bf16, bf16
      %h0, %h1 = gpu.load_vector %h[%i] : memref<?xbf16> -> bf16, bf16
      // CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = gpu.load_vector %{{.*}}[%[[I]], %{{.*}}] : memref<?x8xi8> -> i8, i8, i8, i8
      %b0, %b1, %b2, %b3 = gpu.load_vector %m[%i, %j] : memref<?x8xi8> -> i8, i8, i8, i8
      // CHECK-NEXT: gpu.store_vector %{{.*}}, %{{.*}}, %{{.*}}[%[[I]]] : memref<?xbf16>
      gpu.store_vector %h1, %h0, %h[%i] : memref<?xbf16>
      gpu.return
    }
  }
}
