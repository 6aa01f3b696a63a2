// Expensive elementwise ops as sub-roots (FusionStitching §4.1-4.2): an op such as exp
// read by two or more groups (softmax: the sum's and the output's) either stays
// recomputed by index propagation in every reader (subroots=none) or leads a group of
// its own placed before its first reader (subroots=all): in a register-cached
// configuration its value stays in each thread's slots (`reg`, `lanes` for a warp),
// in a looping one its rows go to shared memory (`shared @rows_f32[offset]`, a row of
// the block's rows each), placed by the dominance-based allocator (§4.4). With
// subroots=auto (the default) the latency-evaluator chooses between the two.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{rows=block subroots=all}' | filecheck %s --check-prefix=ALL
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{rows=block subroots=none}' | filecheck %s --check-prefix=NONE
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{rows=warp subroots=all}' | filecheck %s --check-prefix=WARP
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen{rows=block}' | filecheck %s --check-prefix=AUTO
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch},stitch-codegen' | filecheck %s --check-prefix=FREE
// RUN: not fs-opt %s -p 'stitch-codegen{subroots=some}' 2>&1 | filecheck %s --check-prefix=BAD

// BAD: error: stitch-codegen: subroots=some (expected auto, all or none)

// Rows of 3000 with 256 threads each loop (12 elements a thread): exp's rows live in
// shared memory between its group and its two readers; forced off, both readers
// compute exp. The evaluator takes the shared rows (fewer global reads).
// ALL-LABEL:  func.func @long
// ALL:        schedule.shared @rows_f32 : memref<3000xf32, 3 : i64>
// ALL:        schedule.group block -> shared @results_f32[0]
// ALL:        %[[E:.*]] = schedule.group block -> shared @rows_f32[0] row_dims [0]
// ALL-NEXT:   graph.broadcast
// ALL-NEXT:   graph.sub
// ALL-NEXT:   %[[EXP:.*]] = graph.exp
// ALL-NEXT:   schedule.yield %[[EXP]]
// ALL:        schedule.group block -> shared @results_f32[0]
// ALL-NEXT:   graph.reduce sum %[[E]] dims [1]
// ALL:        schedule.group block -> global
// ALL-NOT:    graph.exp
// ALL:        graph.div %[[E]],
// NONE-LABEL: func.func @long
// NONE-NOT:   @rows_f32
// NONE:       schedule.group block -> shared @results_f32[0]
// NONE:       schedule.group block -> shared @results_f32[0]
// NONE:       graph.exp
// NONE:       schedule.group block -> global
// NONE:       graph.exp
// AUTO-LABEL: func.func @long
// AUTO:       candidates = 2 : i64, config = "block/256/smem-exp"
// AUTO:       schedule.group block -> shared @rows_f32[0]
// 8 rows of a 256-thread block with one warp each would need 8 x 12000 bytes of
// shared rows (over the 48 KB a kernel may declare): exp stays recomputed.
// WARP-LABEL: func.func @long
// WARP-NOT:   @rows_f32
// WARP:       func.return

// 64-element rows are cached in registers: exp stays in each thread's slots (its
// lanes for a warp per row); it costs what the memo's reuse costs, so the evaluator
// keeps the configuration without it.
// ALL-LABEL:  func.func @short
// ALL-NOT:    @rows_f32
// ALL:        %[[E:.*]] = schedule.group block -> reg row_dims [0]
// ALL:        graph.reduce sum %[[E]]
// WARP-LABEL: func.func @short
// WARP:       %[[E:.*]] = schedule.group warp -> lanes row_dims [0]
// WARP:       graph.reduce sum %[[E]]
// AUTO-LABEL: func.func @short
// AUTO:       candidates = 2 : i64, config = "block/256/reg1"
// AUTO-NOT:   row_dims [0] : tensor<16x64xf32>
// AUTO:       schedule.group block -> global
// FREE-LABEL: func.func @short
// FREE:       candidates = 7 : i64, config = "warp/256/reg1/v2"

// 16384 f32 a row is 64 KB of shared rows: no configuration keeps them.
// ALL-LABEL:  func.func @too_wide
// ALL-NOT:    @rows_f32
// ALL:        func.return

// The allocator: exp's rows are dead after their last reader (the second sum), so
// tanh's rows, written after it, take the same space.
// ALL-LABEL:  func.func @disjoint
// ALL:        schedule.shared @rows_f32 : memref<3000xf32, 3 : i64>
// ALL:        schedule.group block -> shared @rows_f32[0] row_dims [0]
// ALL:        graph.exp
// ALL:        schedule.group block -> shared @rows_f32[0] row_dims [0]
// ALL:        graph.tanh

// ... but when the output reads both, their rows are live together: two spaces.
// ALL-LABEL:  func.func @overlap
// ALL:        schedule.shared @rows_f32 : memref<6000xf32, 3 : i64>
// ALL:        schedule.group block -> shared @rows_f32[0] row_dims [0]
// ALL:        graph.exp
// ALL:        schedule.group block -> shared @rows_f32[3000] row_dims [0]
// ALL:        graph.tanh

func.func @long(%x: tensor<2x3000xf32>) -> tensor<2x3000xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %mb = graph.broadcast %m dims [0] : (tensor<2xf32>) -> tensor<2x3000xf32>
  %d = graph.sub %x, %mb : tensor<2x3000xf32>
  %e = graph.exp %d : tensor<2x3000xf32>
  %s = graph.reduce sum %e dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %sb = graph.broadcast %s dims [0] : (tensor<2xf32>) -> tensor<2x3000xf32>
  %y = graph.div %e, %sb : tensor<2x3000xf32>
  func.return %y : tensor<2x3000xf32>
}

func.func @short(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<16x64xf32>) -> tensor<16xf32>
  %mb = graph.broadcast %m dims [0] : (tensor<16xf32>) -> tensor<16x64xf32>
  %d = graph.sub %x, %mb : tensor<16x64xf32>
  %e = graph.exp %d : tensor<16x64xf32>
  %s = graph.reduce sum %e dims [1] : (tensor<16x64xf32>) -> tensor<16xf32>
  %sb = graph.broadcast %s dims [0] : (tensor<16xf32>) -> tensor<16x64xf32>
  %y = graph.div %e, %sb : tensor<16x64xf32>
  func.return %y : tensor<16x64xf32>
}

func.func @too_wide(%x: tensor<2x16384xf32>) -> tensor<2x16384xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<2x16384xf32>) -> tensor<2xf32>
  %mb = graph.broadcast %m dims [0] : (tensor<2xf32>) -> tensor<2x16384xf32>
  %d = graph.sub %x, %mb : tensor<2x16384xf32>
  %e = graph.exp %d : tensor<2x16384xf32>
  %s = graph.reduce sum %e dims [1] : (tensor<2x16384xf32>) -> tensor<2xf32>
  %sb = graph.broadcast %s dims [0] : (tensor<2xf32>) -> tensor<2x16384xf32>
  %y = graph.div %e, %sb : tensor<2x16384xf32>
  func.return %y : tensor<2x16384xf32>
}

func.func @disjoint(%x: tensor<2x3000xf32>) -> tensor<2x3000xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %mb = graph.broadcast %m dims [0] : (tensor<2xf32>) -> tensor<2x3000xf32>
  %d = graph.sub %x, %mb : tensor<2x3000xf32>
  %e = graph.exp %d : tensor<2x3000xf32>
  %s1 = graph.reduce sum %e dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %ex = graph.mul %e, %x : tensor<2x3000xf32>
  %s2 = graph.reduce sum %ex dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %s12 = graph.div %s2, %s1 : tensor<2xf32>
  %b = graph.broadcast %s12 dims [0] : (tensor<2xf32>) -> tensor<2x3000xf32>
  %xb = graph.sub %x, %b : tensor<2x3000xf32>
  %t = graph.tanh %xb : tensor<2x3000xf32>
  %s3 = graph.reduce sum %t dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %b3 = graph.broadcast %s3 dims [0] : (tensor<2xf32>) -> tensor<2x3000xf32>
  %q = graph.div %t, %b3 : tensor<2x3000xf32>
  %y = graph.add %q, %t : tensor<2x3000xf32>
  func.return %y : tensor<2x3000xf32>
}

func.func @overlap(%x: tensor<2x3000xf32>) -> tensor<2x3000xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %mb = graph.broadcast %m dims [0] : (tensor<2xf32>) -> tensor<2x3000xf32>
  %d = graph.sub %x, %mb : tensor<2x3000xf32>
  %e = graph.exp %d : tensor<2x3000xf32>
  %s1 = graph.reduce sum %e dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %ex = graph.mul %e, %x : tensor<2x3000xf32>
  %s2 = graph.reduce sum %ex dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %s12 = graph.div %s2, %s1 : tensor<2xf32>
  %b = graph.broadcast %s12 dims [0] : (tensor<2xf32>) -> tensor<2x3000xf32>
  %xb = graph.sub %x, %b : tensor<2x3000xf32>
  %t = graph.tanh %xb : tensor<2x3000xf32>
  %s3 = graph.reduce sum %t dims [1] : (tensor<2x3000xf32>) -> tensor<2xf32>
  %b3 = graph.broadcast %s3 dims [0] : (tensor<2xf32>) -> tensor<2x3000xf32>
  %q = graph.div %t, %b3 : tensor<2x3000xf32>
  %y = graph.mul %q, %e : tensor<2x3000xf32>
  func.return %y : tensor<2x3000xf32>
}
