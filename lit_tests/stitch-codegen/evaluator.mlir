// The latency-evaluator (§4.3) picks each row kernel's configuration: it lowers every
// candidate (thread / warp / block of 128-1024 threads per row, the row in registers
// in slots of 1, 2 or 4 elements moved by one vector access each, or re-read) to gpu IR, scores it with L = N_wave x L_warp (and a bandwidth floor)
// on the H100 model and records the winner's figures in the kernel's cost.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{gpu=T4}' | filecheck %s --check-prefix=T4

// 64-element rows: a warp (32 lanes, two elements each in registers, loaded as one
// 8-byte vector) per row. The candidates include each register-cached one with exp as
// a sub-root kept in the lanes (warp/256/reg1/v2/lanes-exp): it costs the same (the
// memo shares exp's slots either way) and the first, without, is kept.
// CHECK-LABEL: func.func @short_rows
// CHECK:       %[[Y:.*]] = schedule.kernel @short_rows_k0 row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 2, vector_width = 2>
// CHECK-SAME:  estimate_us = {{[0-9.e+-]+}} : f64, registers = {{[0-9]+}} : i64, occupancy = {{[0-9]+}} : i64, waves = 1 : i64, candidates = 7 : i64, config = "warp/256/reg1/v2"
// CHECK:       %[[M:.*]] = schedule.group warp -> lanes
// CHECK:       %[[S:.*]] = schedule.group warp -> lanes
// CHECK:       schedule.group warp -> global
// CHECK:       func.return %[[Y]]
func.func @short_rows(%x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<128x64xf32>) -> tensor<128xf32>
  %mb = graph.broadcast %m dims [0] : (tensor<128xf32>) -> tensor<128x64xf32>
  %d = graph.sub %x, %mb : tensor<128x64xf32>
  %e = graph.exp %d : tensor<128x64xf32>
  %s = graph.reduce sum %e dims [1] : (tensor<128x64xf32>) -> tensor<128xf32>
  %sb = graph.broadcast %s dims [0] : (tensor<128xf32>) -> tensor<128x64xf32>
  %y = graph.div %e, %sb : tensor<128x64xf32>
  func.return %y : tensor<128x64xf32>
}

// 8192-element rows: a block of 1024 threads per row (8 elements each in registers),
// the two reductions meeting in shared memory.
// CHECK-LABEL: func.func @long_rows
// CHECK:       %[[Y:.*]] = schedule.kernel @long_rows_k0 row<threads_per_row = 1024, rows_per_block = 1, elements_per_thread = 8, vector_width = 4> grid [4, 1, 1] block [1024, 1, 1]
// CHECK-SAME:  config = "block/1024/reg2/v4"
// CHECK:       schedule.shared @partials_f32 : memref<32xf32, 3 : i64>
// CHECK:       %[[M:.*]] = schedule.group block -> shared @results_f32[0]
// CHECK:       %[[S:.*]] = schedule.group block -> shared @results_f32[0]
// CHECK:       schedule.group block -> global
// T4-LABEL:    func.func @long_rows
// T4:          schedule.kernel @long_rows_k0 row
// T4-SAME:     config = "block/
func.func @long_rows(%x: tensor<4x8192xf32>) -> tensor<4x8192xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<4x8192xf32>) -> tensor<4xf32>
  %mb = graph.broadcast %m dims [0] : (tensor<4xf32>) -> tensor<4x8192xf32>
  %d = graph.sub %x, %mb : tensor<4x8192xf32>
  %e = graph.exp %d : tensor<4x8192xf32>
  %s = graph.reduce sum %e dims [1] : (tensor<4x8192xf32>) -> tensor<4xf32>
  %sb = graph.broadcast %s dims [0] : (tensor<4xf32>) -> tensor<4x8192xf32>
  %y = graph.div %e, %sb : tensor<4x8192xf32>
  func.return %y : tensor<4x8192xf32>
}

// GEMM and loop kernels carry the evaluator's estimate too; the GEMM's candidates are
// the register-blocked configurations whose block tile fits the 64x64 product (16x16 to
// 64x64; the smallest gives the most blocks), the loop kernel's its vector widths (1, 2,
// 4: 64-wide rows allow all three). The product is also returned, so the exp is not the
// GEMM's epilogue (a GEMM kernel has one output).
// CHECK-LABEL: func.func @gemm_and_loop
// CHECK:       schedule.kernel @gemm_and_loop_k0 gemm
// CHECK-SAME:  estimate_us = {{[0-9.e+-]+}} : f64, registers = {{[0-9]+}} : i64, occupancy = {{[0-9]+}} : i64, waves = {{[0-9]+}} : i64, candidates = 7 : i64, config = "gemm/16x16x16/1x1"
// CHECK:       schedule.kernel @gemm_and_loop_k1 loop
// CHECK-SAME:  waves = {{[0-9]+}} : i64, candidates = 3 : i64, config = "loop/256"
func.func @gemm_and_loop(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %d = graph.dot %a, %b : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  %y = graph.exp %d : tensor<64x64xf32>
  func.return %y, %d : tensor<64x64xf32>, tensor<64x64xf32>
}

// A `?` grid cannot be counted in waves: the kernel is built without an estimate.
// CHECK-LABEL: func.func @dynamic
// CHECK:       schedule.kernel @dynamic_k0 loop grid [?, 1, 1]
// CHECK-NOT:   estimate_us
// CHECK-SAME:  {
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = graph.exp %x : tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}
