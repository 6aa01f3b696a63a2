// A GEMM whose B operand is a concat along N (merged sibling dots: Q, K and V's
// weights, fsir/fusion/horizontal.py). When every piece is a multiple of the tile's N
// wide, no tile straddles two pieces: each k-step stages the whole B tile from the
// tile's piece, chosen by uniform branches on the tile's first column (a search over
// the pieces, once per tile), so the staged elements are plain loads with no compare
// of their own. A concat that tiles straddle keeps the per-element search.
// RUN: fs-opt %s -p 'stitch-codegen{gemm="32x32x16/4x4"},schedule-to-gpu' | filecheck %s
// RUN: fs-opt %s -p 'stitch-codegen{gemm="32x32x16/4x4"},schedule-to-gpu' -t ptx | filecheck %s --check-prefix=PTX
// RUN: fs-opt %s -p 'stitch-codegen{precision=tf32},schedule-to-gpu' | filecheck %s --check-prefix=TF32

// CHECK-LABEL: gpu.func @qkv_k0(
// CHECK-SAME: %[[WQ:[a-z]+]]: memref<?xf32>, %[[WK:[a-z]+]]: memref<?xf32>, %[[WV:[a-z]+]]: memref<?xf32>, %[[X:[a-z]+]]: memref<?xf32>
// CHECK: %[[BX:.*]] = gpu.block_id x
// CHECK-NEXT: %[[N0:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK: %[[FIRST:.*]] = arith.cmpi slt, %[[N0]], %{{.*}} : index
// CHECK: scf.for
// CHECK-COUNT-8: memref.load %[[X]]
// CHECK-NOT: arith.cmpi
// CHECK: scf.if %[[FIRST]] {
// CHECK-NOT: arith.cmpi
// CHECK-COUNT-8: memref.load %[[WQ]]
// CHECK-NOT: arith.cmpi
// CHECK: } else {
// CHECK-NEXT: %[[SECOND:.*]] = arith.cmpi slt, %[[N0]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[SECOND]] {
// CHECK-NEXT: %[[BASE:.*]] = arith.subi %[[N0]], %{{.*}} : index
// CHECK-NOT: arith.cmpi
// CHECK-COUNT-8: memref.load %[[WK]]
// CHECK-NOT: arith.cmpi
// CHECK: } else {
// CHECK-NOT: arith.cmpi
// CHECK-COUNT-8: memref.load %[[WV]]
// CHECK-NOT: arith.cmpi
// CHECK: gpu.barrier

// The PTX k-step's only compares are the loop's and the search's second level.
// PTX-LABEL: .entry qkv_k0(
// PTX: $L__qkv_k0_1:
// PTX-NEXT: setp.ge.s64
// PTX-NEXT: bra
// PTX-COUNT-8: ld.global.f32
// PTX-NOT: setp
// PTX: bra
// PTX-NOT: setp
// PTX-COUNT-8: ld.global.f32
// PTX-NOT: setp
// PTX: bra $L
// PTX-NEXT: $L__qkv_k0_{{[0-9]+}}:
// PTX-NEXT: setp.lt.s64
// PTX-NOT: setp
// PTX-COUNT-8: ld.global.f32
// PTX-NOT: setp
// PTX: bra $L
// PTX-NOT: setp
// PTX-COUNT-8: ld.global.f32
// PTX-NOT: setp
// PTX: bar.sync

// Pieces 48 wide under 32-wide tiles: each element searches them.
// CHECK-LABEL: gpu.func @straddling_k0(
// CHECK: scf.for
// CHECK: %[[C:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %{{.*}} = scf.if %[[C]] -> (f32) {
// CHECK: %[[C2:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %{{.*}} = scf.if %[[C2]] -> (f32) {

// tf32 tensor cores copy the tile's piece with cp.async, the piece chosen per tile.
// TF32-LABEL: gpu.func @qkv_k0(
// TF32-SAME: %[[WQ:[a-z]+]]: memref<?xf32>, %[[WK:[a-z]+]]: memref<?xf32>, %[[WV:[a-z]+]]: memref<?xf32>, %[[X:[a-z]+]]: memref<?xf32>
// TF32: scf.for
// TF32: scf.if
// TF32: gpu.cp_async %{{.*}}, %[[X]]
// TF32: scf.if
// TF32-NOT: arith.cmpi
// TF32: gpu.cp_async %{{.*}}, %[[WQ]]
// TF32: } else {
// TF32: scf.if
// TF32-NOT: arith.cmpi
// TF32: gpu.cp_async %{{.*}}, %[[WK]]
// TF32: } else {
// TF32-NOT: arith.cmpi
// TF32: gpu.cp_async %{{.*}}, %[[WV]]
// TF32: gpu.cp_async_commit_group

func.func @qkv(%x: tensor<64x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>) -> tensor<64x192xf32> {
  %p = stitch.fusion (%wq, %wk, %wv, %x) : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x192xf32> {
  ^bb0(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>, %xa: tensor<64x64xf32>):
    %w = graph.concat %a, %b, %c dim 1 : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x192xf32>
    %d = graph.dot %xa, %w : (tensor<64x64xf32>, tensor<64x192xf32>) -> tensor<64x192xf32>
    stitch.yield %d : tensor<64x192xf32>
  }
  func.return %p : tensor<64x192xf32>
}

func.func @straddling(%x: tensor<64x64xf32>, %wq: tensor<64x48xf32>, %wk: tensor<64x48xf32>, %wv: tensor<64x48xf32>) -> tensor<64x144xf32> {
  %p = stitch.fusion (%wq, %wk, %wv, %x) : (tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x64xf32>) -> tensor<64x144xf32> {
  ^bb0(%a: tensor<64x48xf32>, %b: tensor<64x48xf32>, %c: tensor<64x48xf32>, %xa: tensor<64x64xf32>):
    %w = graph.concat %a, %b, %c dim 1 : (tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>) -> tensor<64x144xf32>
    %d = graph.dot %xa, %w : (tensor<64x64xf32>, tensor<64x144xf32>) -> tensor<64x144xf32>
    stitch.yield %d : tensor<64x144xf32>
  }
  func.return %p : tensor<64x144xf32>
}
