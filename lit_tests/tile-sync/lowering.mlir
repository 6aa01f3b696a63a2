// schedule-to-gpu of the stages of Fig. 4a (2x2 producer tiles, 2x3 consumer tiles).
// TileSync: the consumer tile (x, y) waits for producer tiles (0, y) and (1, y), each
// semaphore ready at 1; the producer posts its tile's semaphore after its last store.
// With the tile order, blocks take tiles from a counter (x = t mod 3, y = t div 3 for
// the consumer); with the wait-kernel, the producer's tile-0 block posts the start
// semaphore of its stream and a one-thread kernel on the consumer's stream waits on it.
// RUN: fs-opt %s -p 'schedule-to-gpu' | filecheck %s
// RowSync: one semaphore per producer row, ready at 2 (tiles per row); one wait.
// RUN: sed 's/policy tile/policy row/' %s | fs-opt -p 'schedule-to-gpu' | filecheck %s --check-prefix=ROW

// CHECK-LABEL: func.func @fig4a(
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[COUNTER0:.*]] = memref.alloc() : memref<1xi32>
// CHECK: gpu.memset %[[COUNTER0F:.*]], %[[ZERO]] : memref<?xi32>, i32
// CHECK: %[[SEMS:.*]] = memref.alloc() : memref<4xi32>
// CHECK: gpu.memset %[[SEMSF:.*]], %[[ZERO]] : memref<?xi32>, i32
// CHECK: %[[STARTS:.*]] = memref.alloc() : memref<2xi32>
// CHECK: gpu.memset %[[STARTSF:.*]], %[[ZERO]]
// CHECK: gpu.launch_func @kernels::@fig4a_k0 {{.*}} args({{.*}}, %[[COUNTER0F]] : memref<?xi32>, %[[STARTSF]] : memref<?xi32>, %[[SEMSF]] : memref<?xi32>) {gpu.stage = #gpu.stage<pipeline 0, stream 0, priority 0>}
// CHECK: gpu.launch_func @kernels::@fig4a_k1_wait blocks in (%[[ONE:.*]], %[[ONE]], %[[ONE]]) threads in (%[[ONE]], %[[ONE]], %[[ONE]]) args(%[[STARTSF]] : memref<?xi32>) {gpu.stage = #gpu.stage<pipeline 0, stream 1, priority 1>}
// CHECK: gpu.launch_func @kernels::@fig4a_k1 {{.*}} args({{.*}}, %[[SEMSF]] : memref<?xi32>) {gpu.stage = #gpu.stage<pipeline 0, stream 1, priority 1>}

// CHECK-LABEL: gpu.func @fig4a_k0(
// CHECK-SAME: %[[C:[^:]*]]: memref<?xf32>, %[[CNT:[^:]*]]: memref<?xi32>, %[[ST:[^:]*]]: memref<?xi32>, %[[OWN:[^:]*]]: memref<?xi32>)
// CHECK-NEXT: %[[T:.*]] = gpu.next_tile %[[CNT]] : memref<?xi32>
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[X:.*]] = arith.remui %[[T]], %[[TWO]] : index
// CHECK-NEXT: %[[Y:.*]] = arith.divui %[[T]], %[[TWO]] : index
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: gpu.sem_post %[[ST]][%{{.*}}], %{{.*}} : memref<?xi32>
// CHECK: %[[ROWOFF:.*]] = arith.muli %[[Y]], %[[TWO]] : index
// CHECK-NEXT: %[[TILE:.*]] = arith.addi %[[ROWOFF]], %[[X]] : index
// CHECK-NOT: gpu.block_id
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK-NEXT: gpu.sem_post %[[OWN]][%[[TILE]]], %{{.*}} : memref<?xi32>
// CHECK-NEXT: gpu.return

// CHECK-LABEL: gpu.func @fig4a_k1(
// CHECK-SAME: %c: memref<?xf32>, %[[DD:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %[[CNT1:[^:]*]]: memref<?xi32>, %[[PS:[^:]*]]: memref<?xi32>)
// CHECK-NEXT: %[[T1:.*]] = gpu.next_tile %[[CNT1]] : memref<?xi32>
// CHECK-NEXT: %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT: %{{.*}} = arith.remui %[[T1]], %[[THREE]] : index
// CHECK-NEXT: %[[Y1:.*]] = arith.divui %[[T1]], %[[THREE]] : index
// R: in the k-loop's first step, the B element's load, then the waits, then A's load.
// CHECK: scf.for %[[K:.*]] = %[[K0:.*]] to %{{.*}} step %{{.*}} iter_args
// CHECK: %[[BV:.*]] = memref.load %[[DD]][%{{.*}}] : memref<?xf32>
// CHECK-NEXT: %[[FIRSTK:.*]] = arith.cmpi eq, %[[K]], %[[K0]] : index
// CHECK-NEXT: scf.if %[[FIRSTK]] {
// CHECK-NEXT: %[[READY:.*]] = arith.constant 1 : i32
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[TWO1:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[R:.*]] = arith.muli %[[Y1]], %[[TWO1]] : index
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[R]], %[[I]] : index
// CHECK-NEXT: gpu.sem_wait %[[PS]][%[[S]]], %[[READY]] : memref<?xi32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: %[[AV:.*]] = memref.load %c[%{{.*}}] : memref<?xf32>
// CHECK-NEXT: memref.store %[[AV]], %{{.*}}
// CHECK-NEXT: memref.store %[[BV]], %{{.*}}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.sem_post
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @fig4a_k1_wait(
// CHECK-SAME: %[[S0:.*]]: memref<?xi32>) kernel attributes {gpu.known_block_size = array<i32: 1, 1, 1>}
// CHECK: gpu.sem_wait %[[S0]][%{{.*}}], %{{.*}} : memref<?xi32>
// CHECK-NEXT: gpu.return

// ROW-LABEL: func.func @fig4a(
// ROW: memref.alloc() : memref<2xi32>
// ROW-LABEL: gpu.func @fig4a_k0(
// ROW: %[[Y:.*]] = arith.divui
// ROW: gpu.sem_post %{{.*}}[%[[Y]]], %{{.*}} : memref<?xi32>
// ROW-NEXT: gpu.return
// ROW-LABEL: gpu.func @fig4a_k1(
// ROW: %[[Y1:.*]] = arith.divui
// ROW: memref.load %{{.*}} : memref<?xf32>
// ROW-NEXT: %[[FIRSTK:.*]] = arith.cmpi eq
// ROW-NEXT: scf.if %[[FIRSTK]] {
// ROW-NEXT: %[[READY:.*]] = arith.constant 2 : i32
// ROW-NOT: scf.for
// ROW-NEXT: gpu.sem_wait %{{.*}}[%[[Y1]]], %[[READY]] : memref<?xi32>
// ROW-NEXT: }

func.func @fig4a(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>, %d: tensor<32x48xf32>) -> tensor<32x48xf32> {
  %c = schedule.kernel @fig4a_k0 gemm<tile = 16x16x16> grid [2, 2, 1] block [256, 1, 1] (%a, %b) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%a_1: tensor<32x32xf32>, %b_1: tensor<32x32xf32>):
    schedule.shared @a_tile : memref<256xf32, 3 : i64>
    schedule.shared @b_tile : memref<256xf32, 3 : i64>
    %c_1 = schedule.group block -> global : tensor<32x32xf32> {
      %c_2 = graph.dot %a_1, %b_1 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
      schedule.yield %c_2 : tensor<32x32xf32>
    }
    schedule.yield %c_1 : tensor<32x32xf32>
  }
  schedule.stage @fig4a_k0 pipeline 0 stream 0 priority 0 policy tile order row_major
  %e = schedule.kernel @fig4a_k1 gemm<tile = 16x16x16> grid [3, 2, 1] block [256, 1, 1] (%c, %d) : (tensor<32x32xf32>, tensor<32x48xf32>) -> tensor<32x48xf32> {
  ^bb0(%c_3: tensor<32x32xf32>, %d_1: tensor<32x48xf32>):
    schedule.shared @a_tile : memref<256xf32, 3 : i64>
    schedule.shared @b_tile : memref<256xf32, 3 : i64>
    %e_1 = schedule.group block -> global : tensor<32x48xf32> {
      %e_2 = graph.dot %c_3, %d_1 : (tensor<32x32xf32>, tensor<32x48xf32>) -> tensor<32x48xf32>
      schedule.yield %e_2 : tensor<32x48xf32>
    }
    schedule.yield %e_1 : tensor<32x48xf32>
  }
  schedule.stage @fig4a_k1 pipeline 0 stream 1 priority 1 policy tile order row_major wait_kernel reorder
  schedule.tile_dep @fig4a_k1 on @fig4a_k0 operand 0 map affine_map<(x, y, i, j) -> (i, y + j)> extents [2, 1]
  func.return %e : tensor<32x48xf32>
}
