// stitch-codegen{rows=...} forces one row schedule (all are correct; they differ in
// speed), e.g. for the latency-evaluator or a comparison.
// RUN: fs-opt %s -p 'stitch-codegen{rows=thread}' | filecheck %s --check-prefix=THREAD
// RUN: fs-opt %s -p 'stitch-codegen{rows=warp}' | filecheck %s --check-prefix=WARP
// RUN: fs-opt %s -p 'stitch-codegen{rows=block}' | filecheck %s --check-prefix=BLOCK
// RUN: fs-opt %s -p 'stitch-codegen{rows=interleaved}' | filecheck %s --check-prefix=INTER
// RUN: not fs-opt %s -p 'stitch-codegen{rows=grid}' 2>&1 | filecheck %s --check-prefix=BAD

// THREAD: row<threads_per_row = 1, rows_per_block = 256{{.*}} grid [1, 1, 1]
// THREAD: schedule.group thread -> reg
// WARP: row<threads_per_row = 32, rows_per_block = 8{{.*}} grid [2, 1, 1]
// WARP: schedule.group warp -> lanes
// BLOCK: row<threads_per_row = 256, rows_per_block = 1{{.*}} grid [10, 1, 1]
// BLOCK: schedule.shared @partials_f32 : memref<8xf32, 3 : i64>
// BLOCK: schedule.group block -> shared @results_f32[0]
// INTER: row<threads_per_row = 8, rows_per_block = 32{{.*}}interleaved> grid [1, 1, 1]
// INTER: schedule.shared @partials_f32 : memref<256xf32, 3 : i64>
// INTER: schedule.group block -> shared @results_f32[0]
// BAD: error: stitch-codegen: rows=grid (expected auto, thread, warp, block or interleaved)
func.func @f(%x: tensor<10x100xf32>) -> tensor<10xf32> {
  %r = graph.reduce sum %x dims [1] : (tensor<10x100xf32>) -> tensor<10xf32>
  func.return %r : tensor<10xf32>
}
