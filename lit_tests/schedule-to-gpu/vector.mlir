// Vector width 4 on gpu IR and in the printed PTX text: a loop kernel's thread takes 4 consecutive
// elements (the broadcast operand's too: (i*4) % 256 is a multiple of 4), a row kernel
// holds its row in one slot of 4; the vectorizer merges each thread's 4 loads and 4
// stores into one gpu.load_vector / gpu.store_vector, printed as ld/st.global.v4.f32.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{vector=4},schedule-to-gpu' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{vector=4},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=PTX

// CHECK-LABEL: gpu.func @scale_k0(
// CHECK-SAME:  %[[B:.*]]: memref<?xf32>, %[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>)
// CHECK:       %[[T:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:       %[[I:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK:       scf.if
// CHECK-NEXT:  %[[COL:.*]] = arith.remui %[[I]], %{{.*}} : index
// CHECK-NEXT:  %[[X0:.*]], %[[X1:.*]], %[[X2:.*]], %[[X3:.*]] = gpu.load_vector %[[X]][%[[I]]] : memref<?xf32> -> f32, f32, f32, f32
// CHECK-NEXT:  %[[B0:.*]], %[[B1:.*]], %[[B2:.*]], %[[B3:.*]] = gpu.load_vector %[[B]][%[[COL]]] : memref<?xf32> -> f32, f32, f32, f32
// CHECK-NEXT:  %[[Y0:.*]] = arith.mulf %[[X0]], %[[B0]] : f32
// CHECK:       %[[Y3:.*]] = arith.mulf %[[X3]], %[[B3]] : f32
// CHECK-NEXT:  gpu.store_vector %[[Y0]], %{{.*}}, %{{.*}}, %[[Y3]], %[[Y]][%[[I]]] : memref<?xf32>
// CHECK-NOT:   memref.load
// CHECK-NOT:   memref.store
// CHECK:       gpu.return
// PTX-LABEL:   .visible .entry scale_k0(
// PTX-COUNT-2: ld.global.v4.f32
// PTX:         st.global.v4.f32
// PTX-NOT:     ld.global.f32
// PTX:         ret;
func.func @scale(%x: tensor<64x256xf32>, %b: tensor<256xf32>) -> tensor<64x256xf32> {
  %bb = graph.broadcast %b dims [1] : (tensor<256xf32>) -> tensor<64x256xf32>
  %y = graph.mul %x, %bb : tensor<64x256xf32>
  func.return %y : tensor<64x256xf32>
}

// The row in registers: lane l holds columns 4l .. 4l + 3 (lanes 64..127 of the
// 128-thread block are past the row: their slot is clamped and masked).
// CHECK-LABEL: gpu.func @rms_k0(
// CHECK:       %[[X0:.*]], %[[X1:.*]], %[[X2:.*]], %[[X3:.*]] = gpu.load_vector %{{.*}}[%[[OFF:.*]]] : memref<?xf32> -> f32, f32, f32, f32
// CHECK-NOT:   memref.load %{{.*}} : memref<?xf32>
// CHECK:       math.rsqrt
// CHECK:       gpu.store_vector %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}[%[[OFF]]] : memref<?xf32>
// PTX-LABEL:   .visible .entry rms_k0(
// PTX:         ld.global.v4.f32
// PTX-NOT:     ld.global.f32
// PTX:         st.global.v4.f32
func.func @rms(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %sq = graph.mul %x, %x : tensor<64x256xf32>
  %s = graph.reduce sum %sq dims [1] : (tensor<64x256xf32>) -> tensor<64xf32>
  %r = graph.rsqrt %s : tensor<64xf32>
  %rb = graph.broadcast %r dims [0] : (tensor<64xf32>) -> tensor<64x256xf32>
  %y = graph.mul %x, %rb : tensor<64x256xf32>
  func.return %y : tensor<64x256xf32>
}
