// The vector width V (FusionStitching §4.2's enumerated launch dimensions): a loop
// kernel's thread takes V consecutive elements, a row kept in registers is held in
// slots of V elements; the vectorizer then moves each V elements with one memory
// instruction. Legal only with static shapes, elements of at most 4 bytes and
// innermost extents that are multiples of V; the latency-evaluator picks among the
// legal widths (`candidates`, `config` .../vV), `vector=` forces one where it is legal.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{vector=4}' | filecheck %s --check-prefix=V4
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{vector=2}' | filecheck %s --check-prefix=V2
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{vector=1}' | filecheck %s --check-prefix=V1
// RUN: not fs-opt %s -p 'stitch-codegen{vector=3}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not fs-opt %s -p 'stitch-codegen{vector=wide}' 2>&1 | filecheck %s --check-prefix=BAD-WORD
// BAD: error: stitch-codegen: vector=3 (expected auto, 1, 2 or 4)
// BAD-WORD: error: stitch-codegen: vector=wide (expected auto, 1, 2 or 4)

// 64x256 (a 256 broadcast along rows): V = 1, 2 and 4 are legal and scored; with one
// wave of 64 blocks the scalar kernel's shorter threads win. Forced, the grid shrinks
// by V.
// CHECK-LABEL: func.func @scale
// CHECK:       schedule.kernel @scale_k0 loop grid [64, 1, 1]
// CHECK-SAME:  candidates = 3 : i64, config = "loop/256", requested_bytes = {{[0-9]+}} : i64}
// V4-LABEL:    func.func @scale
// V4:          schedule.kernel @scale_k0 loop<vector_width = 4> grid [16, 1, 1] block [256, 1, 1]
// V2-LABEL:    func.func @scale
// V2:          schedule.kernel @scale_k0 loop<vector_width = 2> grid [32, 1, 1] block [256, 1, 1]
// V1-LABEL:    func.func @scale
// V1:          schedule.kernel @scale_k0 loop grid [64, 1, 1] block [256, 1, 1]
// V1-SAME:     candidates = 1 : i64, config = "loop/256", requested_bytes = {{[0-9]+}} : i64}
func.func @scale(%x: tensor<64x256xf32>, %b: tensor<256xf32>) -> tensor<64x256xf32> {
  %bb = graph.broadcast %b dims [1] : (tensor<256xf32>) -> tensor<64x256xf32>
  %y = graph.mul %x, %bb : tensor<64x256xf32>
  func.return %y : tensor<64x256xf32>
}

// Rows of 129: only V = 1 (one candidate), even when forced.
// CHECK-LABEL: func.func @odd
// CHECK:       schedule.kernel @odd_k0 loop grid [19, 1, 1] block [256, 1, 1]
// CHECK-SAME:  candidates = 1 : i64, config = "loop/256"
// V4-LABEL:    func.func @odd
// V4:          schedule.kernel @odd_k0 loop grid [19, 1, 1]
func.func @odd(%x: tensor<37x129xf32>) -> tensor<37x129xf32> {
  %y = graph.exp %x : tensor<37x129xf32>
  func.return %y : tensor<37x129xf32>
}

// Rows of 6 f16: V = 2 (4 bytes), not 4.
// CHECK-LABEL: func.func @six
// CHECK:       schedule.kernel @six_k0 loop
// CHECK-SAME:  candidates = 2 : i64
// V4-LABEL:    func.func @six
// V4:          schedule.kernel @six_k0 loop grid
// V2-LABEL:    func.func @six
// V2:          schedule.kernel @six_k0 loop<vector_width = 2> grid [1, 1, 1]
func.func @six(%x: tensor<16x6xf16>) -> tensor<16x6xf16> {
  %y = graph.neg %x : tensor<16x6xf16>
  func.return %y : tensor<16x6xf16>
}

// 8-byte elements: V = 1.
// V4-LABEL:    func.func @wide
// V4:          schedule.kernel @wide_k0 loop grid [64, 1, 1]
func.func @wide(%x: tensor<64x256xi64>) -> tensor<64x256xi64> {
  %y = graph.neg %x : tensor<64x256xi64>
  func.return %y : tensor<64x256xi64>
}

// A row kept in registers in slots of V elements. Vector slots are offered only where
// they compute no more elements past the row's end than scalar slots do (a block of 256
// with slots of 2 or 4 would leave lanes wholly past the 256-element row): 3 of the 10
// candidates are vector, e.g. 128 threads with one slot of 2, or a warp with two of 4.
// CHECK-LABEL: func.func @rms
// CHECK:       schedule.kernel @rms_k0 row
// CHECK-SAME:  candidates = 10 : i64
// V4-LABEL:    func.func @rms
// V4:          schedule.kernel @rms_k0 row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 8, vector_width = 4> grid [8, 1, 1] block [256, 1, 1]
// V4-SAME:     candidates = 1 : i64, config = "warp/256/reg2/v4"
// V2-LABEL:    func.func @rms
// V2:          schedule.kernel @rms_k0 row<threads_per_row = 128, rows_per_block = 1, elements_per_thread = 2, vector_width = 2>
// V2-SAME:     candidates = 2 : i64, config = "block/128/reg1/v2"
// V1-LABEL:    func.func @rms
// V1:          schedule.kernel @rms_k0 row
// V1-SAME:     candidates = 7 : i64
func.func @rms(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %sq = graph.mul %x, %x : tensor<64x256xf32>
  %s = graph.reduce sum %sq dims [1] : (tensor<64x256xf32>) -> tensor<64xf32>
  %r = graph.rsqrt %s : tensor<64xf32>
  %rb = graph.broadcast %r dims [0] : (tensor<64xf32>) -> tensor<64x256xf32>
  %y = graph.mul %x, %rb : tensor<64x256xf32>
  func.return %y : tensor<64x256xf32>
}

// Rows of 64, a warp per row: one slot of 2 per lane fits exactly; slots of 4 would
// leave half the warp past the row, so a forced 4 keeps the scalar candidates.
// V2-LABEL:    func.func @rows_of_64
// V2:          schedule.kernel @rows_of_64_k0 row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 2, vector_width = 2>
// V2-SAME:     config = "warp/256/reg1/v2"
// V4-LABEL:    func.func @rows_of_64
// V4:          schedule.kernel @rows_of_64_k0 row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 2> grid [8, 1, 1]
func.func @rows_of_64(%x: tensor<64x64xf32>) -> tensor<64xf32> {
  %s = graph.reduce sum %x dims [1] : (tensor<64x64xf32>) -> tensor<64xf32>
  func.return %s : tensor<64xf32>
}

// Rows of 30: no vector slots (30 = 32 lanes x 1 - 2; slots of 2 would compute 34
// elements past the row).
// V2-LABEL:    func.func @rows_of_30
// V2:          schedule.kernel @rows_of_30_k0 row<threads_per_row = 32, rows_per_block = 8> grid [8, 1, 1]
func.func @rows_of_30(%x: tensor<64x30xf32>) -> tensor<64xf32> {
  %s = graph.reduce sum %x dims [1] : (tensor<64x30xf32>) -> tensor<64xf32>
  func.return %s : tensor<64xf32>
}
