// Columns of one structure share one code body (fsir/lowering/columns.py): 6 columns in
// 2 clusters (hashed sums of dim 16 with 100, 50 and 70 rows; means of dim 4 with 30,
// 20 and 10 rows and their own scales), interleaved in the concat, are 2 bodies. The
// clusters' warps follow each other (`clusters` orders them), so a warp finds its
// cluster by one comparison and its column by a division; the column's ids and table
// are read at its row of the address table (`gpu.table_buffer ... [%row]`), its table
// size (the clamp), hash modulus, mean scale and concat offset from the row's words,
// which the host writes before the addresses (`gpu.address_table values [...]`).
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen' | filecheck %s --check-prefix=STITCH
// RUN: fs-opt %s -p 'fusion-explore,stitch-codegen,schedule-to-gpu' | filecheck %s

// STITCH: schedule.kernel @six_k0 columns<rows_per_tile = 8, warps = [0, 16, 32, 48, 56, 64, 72], lanes = [4, 8, 4, 8, 4, 8], vectors = [1, 1, 1, 1, 1, 1], clusters = [0, 1, 0, 1, 0, 1]>

// The host: the words (per hashed column: rows, which are its modulus too, so one word,
// and offset; per mean column: rows, scale as f32 bits, offset), then the rows'
// addresses, then the output's.
// CHECK-LABEL: func.func @six(
// CHECK:       %[[T:.*]] = gpu.address_table values [100, 0, 50, 20, 70, 40, 30, 1045220557, 16, 20, 1056964608, 36, 10, -1077936128, 56] %i0_flat, %t0_flat, %i1_flat, %t1_flat, %i3_flat, %t3_flat, %t2_flat, %i2_flat, %t4_flat, %i4_flat, %t5_flat, %i5_flat, %x_flat : {{.*}} -> memref<28xi64>
// CHECK:       gpu.launch_func @kernels::@six_k0 {{.*}} args(%[[T]] : memref<28xi64>)

// CHECK-LABEL: gpu.func @six_k0(%table: memref<28xi64>) kernel
// CHECK:       %[[WARP:.*]] = arith.addi
// CHECK:       %[[C:.*]] = arith.cmpi slt, %[[WARP]], %[[START1:.*]] : index
// CHECK:       scf.if %[[C]] {
// the hashed sums: 16 warps a column, 2 words and 2 addresses a row (one product
// finds both); the rows' word loaded once, as the clamp's bound and as the modulus
// CHECK:         %[[SLOT:.*]] = arith.divui %[[WARP]], %{{.*}} : index
// CHECK:         %[[W:.*]] = arith.muli %[[SLOT]], %{{.*}} : index
// CHECK-NEXT:    %i0 = gpu.table_buffer %table 15 [%[[W]]] : memref<28xi64> -> memref<?xi32>
// CHECK-NEXT:    %t0 = gpu.table_buffer %table 16 [%[[W]]] : memref<28xi64> -> memref<?xf32>
// CHECK-NEXT:    %[[ROWS:.*]] = memref.load %table[%[[W]]] : memref<28xi64>
// CHECK-NEXT:    arith.index_cast %[[ROWS]] : i64 to index
// CHECK-NEXT:    arith.trunci %[[ROWS]] : i64 to i32
// CHECK-NOT:     memref.load %table[%[[W]]]
// CHECK:         scf.for
// CHECK:           memref.load %i0
// CHECK:           arith.remsi
// CHECK:           arith.minsi
// CHECK:           memref.load %t0
// CHECK:         memref.store %{{.*}}, %x
// CHECK:       } else {
// the means (the last cluster: its warps past the columns' run nothing)
// CHECK:         %[[REL:.*]] = arith.subi %[[WARP]], %[[START1]] : index
// CHECK:         %[[IN:.*]] = arith.cmpi slt, %[[REL]], %{{.*}} : index
// CHECK-NEXT:    scf.if %[[IN]] {
// CHECK:           %t2 = gpu.table_buffer %table 21 [%{{.*}}] : memref<28xi64> -> memref<?xf32>
// CHECK-NEXT:      %i2 = gpu.table_buffer %table 22 [%{{.*}}] : memref<28xi64> -> memref<?xi32>
// CHECK:           %[[ROWS2:.*]] = memref.load %table
// CHECK-NEXT:      arith.index_cast %[[ROWS2]] : i64 to index
// CHECK:           %[[SCALE:.*]] = memref.load %table
// CHECK-NEXT:      %[[S32:.*]] = arith.trunci %[[SCALE]] : i64 to i32
// CHECK-NEXT:      %[[S:.*]] = arith.bitcast %[[S32]] : i32 to f32
// CHECK:           scf.for
// CHECK:           arith.mulf %{{.*}}, %[[S]] : f32
// CHECK:           memref.store %{{.*}}, %x
// one bag loop a cluster
// CHECK-NOT:   scf.for
// CHECK:       gpu.return
func.func @six(%i0: tensor<8x3xi32>, %t0: tensor<100x16xf32>, %i1: tensor<8x3xi32>, %t1: tensor<50x16xf32>, %i2: tensor<8x5xi32>, %t2: tensor<30x4xf32>, %i3: tensor<8x3xi32>, %t3: tensor<70x16xf32>, %i4: tensor<8x5xi32>, %t4: tensor<20x4xf32>, %i5: tensor<8x5xi32>, %t5: tensor<10x4xf32>) -> tensor<8x60xf32> {
  %m0 = graph.constant dense<100> : tensor<8x3xi32>
  %h0 = graph.rem %i0, %m0 : tensor<8x3xi32>
  %e0 = graph.gather %t0, %h0 : (tensor<100x16xf32>, tensor<8x3xi32>) -> tensor<8x3x16xf32>
  %r0 = graph.reduce sum %e0 dims [1] : (tensor<8x3x16xf32>) -> tensor<8x16xf32>
  %m1 = graph.constant dense<50> : tensor<8x3xi32>
  %h1 = graph.rem %i1, %m1 : tensor<8x3xi32>
  %e1 = graph.gather %t1, %h1 : (tensor<50x16xf32>, tensor<8x3xi32>) -> tensor<8x3x16xf32>
  %r1 = graph.reduce sum %e1 dims [1] : (tensor<8x3x16xf32>) -> tensor<8x16xf32>
  %e2 = graph.gather %t2, %i2 : (tensor<30x4xf32>, tensor<8x5xi32>) -> tensor<8x5x4xf32>
  %r2 = graph.reduce sum %e2 dims [1] : (tensor<8x5x4xf32>) -> tensor<8x4xf32>
  %s2 = graph.constant dense<0.2> : tensor<8x4xf32>
  %a2 = graph.mul %r2, %s2 : tensor<8x4xf32>
  %m3 = graph.constant dense<70> : tensor<8x3xi32>
  %h3 = graph.rem %i3, %m3 : tensor<8x3xi32>
  %e3 = graph.gather %t3, %h3 : (tensor<70x16xf32>, tensor<8x3xi32>) -> tensor<8x3x16xf32>
  %r3 = graph.reduce sum %e3 dims [1] : (tensor<8x3x16xf32>) -> tensor<8x16xf32>
  %e4 = graph.gather %t4, %i4 : (tensor<20x4xf32>, tensor<8x5xi32>) -> tensor<8x5x4xf32>
  %r4 = graph.reduce sum %e4 dims [1] : (tensor<8x5x4xf32>) -> tensor<8x4xf32>
  %s4 = graph.constant dense<0.5> : tensor<8x4xf32>
  %a4 = graph.mul %r4, %s4 : tensor<8x4xf32>
  %e5 = graph.gather %t5, %i5 : (tensor<10x4xf32>, tensor<8x5xi32>) -> tensor<8x5x4xf32>
  %r5 = graph.reduce sum %e5 dims [1] : (tensor<8x5x4xf32>) -> tensor<8x4xf32>
  %s5 = graph.constant dense<-1.5> : tensor<8x4xf32>
  %a5 = graph.mul %r5, %s5 : tensor<8x4xf32>
  %x = graph.concat %r0, %a2, %r1, %a4, %r3, %a5 dim 1 : (tensor<8x16xf32>, tensor<8x4xf32>, tensor<8x16xf32>, tensor<8x4xf32>, tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<8x60xf32>
  func.return %x : tensor<8x60xf32>
}
