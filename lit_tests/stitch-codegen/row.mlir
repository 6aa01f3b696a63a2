// Fusions with reductions become `row` kernels: the reductions' kept coordinates are
// rows; each reduction leads a group (sub-root) whose per-row result later groups read
// from registers, warp lanes or a shared-memory slot; the outputs form the root group.
// RUN: fs-opt %s -p stitch-codegen | filecheck %s

// Rows of 1024: the latency-evaluator picks a block of 1024 threads per row, each
// keeping its element in a register; sub-root results in shared slots. Its threads
// request each byte once (requested_bytes = global_bytes).
// CHECK-LABEL: func.func @softmax
// CHECK: schedule.kernel @softmax_k0 row<threads_per_row = 1024, rows_per_block = 1, elements_per_thread = 1> grid [4, 1, 1] block [1024, 1, 1] cost {warps = 128 : i64, global_bytes = 32768 : i64, smem_bytes = 132 : i64, estimate_us = {{.*}}, config = "block/1024/reg1", requested_bytes = 32768 : i64}
// CHECK-NEXT: ^{{.*}}(%[[X:.*]]: tensor<4x1024xf32>):
// CHECK-NEXT: schedule.shared @partials_f32 : memref<32xf32, 3 : i64>
// CHECK-NEXT: schedule.shared @results_f32 : memref<1xf32, 3 : i64>
// CHECK-NEXT: %[[M:.*]] = schedule.group block -> shared @results_f32[0] : tensor<4xf32> {
// CHECK-NEXT: %[[R:.*]] = graph.reduce max %[[X]] dims [1]
// CHECK-NEXT: schedule.yield %[[R]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[S:.*]] = schedule.group block -> shared @results_f32[0] : tensor<4xf32> {
// CHECK-NEXT: graph.broadcast %[[M]] dims [0]
// CHECK: graph.reduce sum
// CHECK: %[[P:.*]] = schedule.group block -> global row_dims [0] : tensor<4x1024xf32> {
// CHECK-DAG: graph.broadcast %[[M]] dims [0]
// CHECK-DAG: graph.broadcast %[[S]] dims [0]
// CHECK: schedule.yield %[[P]]
func.func @softmax(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  %y = stitch.fusion (%x) : (tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  ^bb0(%xa: tensor<4x1024xf32>):
    %m = graph.reduce max %xa dims [1] : (tensor<4x1024xf32>) -> tensor<4xf32>
    %mb = graph.broadcast %m dims [0] : (tensor<4xf32>) -> tensor<4x1024xf32>
    %d = graph.sub %xa, %mb : tensor<4x1024xf32>
    %e = graph.exp %d : tensor<4x1024xf32>
    %s = graph.reduce sum %e dims [1] : (tensor<4x1024xf32>) -> tensor<4xf32>
    %sb = graph.broadcast %s dims [0] : (tensor<4xf32>) -> tensor<4x1024xf32>
    %p = graph.div %e, %sb : tensor<4x1024xf32>
    stitch.yield %p : tensor<4x1024xf32>
  }
  func.return %y : tensor<4x1024xf32>
}

// Rows of 64: a warp per row (8 rows per block), results in every lane after a butterfly.
// CHECK-LABEL: func.func @row_sum
// CHECK: schedule.kernel @row_sum_k0 row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 2, vector_width = 2> grid [13, 1, 1] block [256, 1, 1]
// CHECK: schedule.group warp -> lanes : tensor<100xf32>
func.func @row_sum(%x: tensor<100x64xf32>) -> tensor<100xf32> {
  %r = graph.reduce sum %x dims [1] : (tensor<100x64xf32>) -> tensor<100xf32>
  func.return %r : tensor<100xf32>
}

// Reducing dim 0: neighbouring rows are neighbouring in memory, so a thread per row or
// interleaved slices (consecutive threads on consecutive columns); with 6 columns the
// evaluator prefers 8 slices per column.
// CHECK-LABEL: func.func @column
// CHECK: schedule.kernel @column_k0 row<threads_per_row = 8, rows_per_block = 32, elements_per_thread = 5, interleaved> grid [1, 1, 1] block [256, 1, 1]
// CHECK: %[[C:.*]] = schedule.group block -> shared @results_f32[0] : tensor<6xf32>
// CHECK: schedule.group block -> global row_dims [1] : tensor<40x6xf32>
func.func @column(%x: tensor<40x6xf32>) -> tensor<40x6xf32> {
  %y = stitch.fusion (%x) : (tensor<40x6xf32>) -> tensor<40x6xf32> {
  ^bb0(%xa: tensor<40x6xf32>):
    %m = graph.reduce max %xa dims [0] : (tensor<40x6xf32>) -> tensor<6xf32>
    %mb = graph.broadcast %m dims [1] : (tensor<6xf32>) -> tensor<40x6xf32>
    %d = graph.sub %xa, %mb : tensor<40x6xf32>
    stitch.yield %d : tensor<40x6xf32>
  }
  func.return %y : tensor<40x6xf32>
}

// Dynamic rows: the grid is computed at run time (the rules choose: no wave count).
// CHECK-LABEL: func.func @dynamic
// CHECK: schedule.kernel @dynamic_k0 row<threads_per_row = 32, rows_per_block = 8> grid [?, 1, 1] block [256, 1, 1] cost {smem_bytes = 0 : i64}
func.func @dynamic(%x: tensor<?x50xf32>) -> tensor<?xf32> {
  %r = graph.reduce min %x dims [1] : (tensor<?x50xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

// Rows of 5: a segment of 8 lanes per row, 32 rows per block.
// CHECK-LABEL: func.func @short_rows
// CHECK: schedule.kernel @short_rows_k0 row<threads_per_row = 8, rows_per_block = 32> grid [4, 1, 1] block [256, 1, 1]
// CHECK: schedule.group warp -> lanes : tensor<100xf32>
func.func @short_rows(%x: tensor<100x5xf32>) -> tensor<100xf32> {
  %r = graph.reduce sum %x dims [1] : (tensor<100x5xf32>) -> tensor<100xf32>
  func.return %r : tensor<100xf32>
}

// Few long columns: 8 interleaved threads per column (32 columns per block), their
// partials combined through shared memory; each column's result in its own slot.
// CHECK-LABEL: func.func @long_columns
// CHECK: schedule.kernel @long_columns_k0 row<threads_per_row = 8, rows_per_block = 32, interleaved> grid [2, 1, 1] block [256, 1, 1]
// CHECK-NEXT: ^{{.*}}
// CHECK-NEXT: schedule.shared @partials_f32 : memref<256xf32, 3 : i64>
// CHECK-NEXT: schedule.shared @results_f32 : memref<32xf32, 3 : i64>
// CHECK-NEXT: schedule.group block -> shared @results_f32[0] : tensor<40xf32>
func.func @long_columns(%x: tensor<500x40xf32>) -> tensor<40xf32> {
  %r = graph.reduce sum %x dims [0] : (tensor<500x40xf32>) -> tensor<40xf32>
  func.return %r : tensor<40xf32>
}
