// Row kernels: a warp per row reduces with a butterfly of gpu.shuffle xor; a block per
// row adds a shared-memory exchange of warp partials between two barriers and leaves
// the row's result in a shared slot; root groups loop over the row's columns with the
// row's threads, reading sub-root results computed once per row.
// RUN: fs-opt %s -p 'stitch-codegen{registers=off rows=auto},schedule-to-gpu' | filecheck %s

// CHECK-LABEL: gpu.func @warp_k0(
// CHECK-SAME: %[[X:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?xf32>) kernel
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %{{.*}} : index
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK: %[[UB:.*]] = arith.select %[[VALID]], %{{.*}}, %{{.*}} : index
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %[[LANE]] to %[[UB]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK: memref.load %[[X]]
// CHECK: arith.addf
// CHECK: %[[S1:.*]], %{{.*}} = gpu.shuffle xor %[[ACC]], %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK-NOT: gpu.barrier
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK: gpu.return
func.func @warp(%x: tensor<10x50xf32>) -> tensor<10x50xf32> {
  %y = stitch.fusion (%x) : (tensor<10x50xf32>) -> tensor<10x50xf32> {
  ^bb0(%xa: tensor<10x50xf32>):
    %s = graph.reduce sum %xa dims [1] : (tensor<10x50xf32>) -> tensor<10xf32>
    %sb = graph.broadcast %s dims [0] : (tensor<10xf32>) -> tensor<10x50xf32>
    %d = graph.div %xa, %sb : tensor<10x50xf32>
    stitch.yield %d : tensor<10x50xf32>
  }
  func.return %y : tensor<10x50xf32>
}

// CHECK-LABEL: gpu.func @block_k0(
// CHECK-SAME: workgroup(%[[PART:.*]] : memref<{{[0-9]+}}xf32, 3 : i64>, %[[RES:.*]] : memref<1xf32, 3 : i64>) kernel
// CHECK: scf.for
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}}, %[[PART]][%{{.*}}] : memref<{{[0-9]+}}xf32, 3 : i64>
// CHECK: gpu.barrier
// CHECK: memref.load %[[PART]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.store %{{.*}}, %[[RES]][%{{.*}}] : memref<1xf32, 3 : i64>
// CHECK: gpu.barrier
// CHECK-NEXT: %[[MAX:.*]] = memref.load %[[RES]][%{{.*}}] : memref<1xf32, 3 : i64>
// CHECK: scf.for
// CHECK: arith.subf %{{.*}}, %[[MAX]] : f32
func.func @block(%x: tensor<3x2000xf32>) -> tensor<3x2000xf32> {
  %y = stitch.fusion (%x) : (tensor<3x2000xf32>) -> tensor<3x2000xf32> {
  ^bb0(%xa: tensor<3x2000xf32>):
    %m = graph.reduce max %xa dims [1] : (tensor<3x2000xf32>) -> tensor<3xf32>
    %mb = graph.broadcast %m dims [0] : (tensor<3xf32>) -> tensor<3x2000xf32>
    %d = graph.sub %xa, %mb : tensor<3x2000xf32>
    stitch.yield %d : tensor<3x2000xf32>
  }
  func.return %y : tensor<3x2000xf32>
}

// i64 values shuffle as two 32-bit halves.
// CHECK-LABEL: gpu.func @wide_k0
// CHECK: arith.trunci %{{.*}} : i64 to i32
// CHECK: gpu.shuffle xor %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: arith.ori %{{.*}}, %{{.*}} : i64
func.func @wide(%x: tensor<4x40xi64>) -> tensor<4xi64> {
  %r = graph.reduce sum %x dims [1] : (tensor<4x40xi64>) -> tensor<4xi64>
  func.return %r : tensor<4xi64>
}
