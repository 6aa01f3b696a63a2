// The virtual producer h also combines candidates of different producers that meet at
// a common consumer (FusionStitching §5.2): the biased Q and the biased, transposed K
// both inline into the Q·Kᵀ GEMM's loads. Without h (remote=false) every pattern has
// one top producer, so only one of the two chains reaches the GEMM (which one is the
// latency-evaluator's choice; the simplified one's is checked). The projections are
// also returned, so their kernels cannot take the bias adds as an epilogue (a GEMM
// kernel has one output).
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s --check-prefix=ON
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch remote=false evaluator=simple}' | filecheck %s --check-prefix=OFF
// RUN: fs-opt %s -p 'fusion-explore{mode=xla evaluator=simple}' | filecheck %s --check-prefix=XLA

// ON-LABEL: func.func @qk
// ON-SAME: (%[[X:.*]]: tensor<256x64xf32>, %[[WQ:.*]]: tensor<64x64xf32>, %[[WK:.*]]: tensor<64x64xf32>, %[[BQ:.*]]: tensor<64xf32>, %[[BK:.*]]: tensor<64xf32>)
// ON-NEXT: %[[Q:.*]] = graph.dot %[[X]], %[[WQ]]
// ON-NEXT: %[[K:.*]] = graph.dot %[[X]], %[[WK]]
// ON-NEXT: %[[S:.*]] = stitch.fusion (%[[BQ]], %[[Q]], %[[BK]], %[[K]]) {pattern = 0 : i64
// ON-NEXT: ^{{.*}}(%[[BQA:.*]]: tensor<64xf32>, %[[QA:.*]]: tensor<256x64xf32>, %[[BKA:.*]]: tensor<64xf32>, %[[KA:.*]]: tensor<256x64xf32>):
// ON-NEXT: %[[BQB:.*]] = graph.broadcast %[[BQA]] dims [1]
// ON-NEXT: %[[QB:.*]] = graph.add %[[QA]], %[[BQB]]
// ON-NEXT: %[[BKB:.*]] = graph.broadcast %[[BKA]] dims [1]
// ON-NEXT: %[[KB:.*]] = graph.add %[[KA]], %[[BKB]]
// ON-NEXT: %[[KT:.*]] = graph.transpose %[[KB]] perm [1, 0]
// ON-NEXT: %[[SA:.*]] = graph.dot %[[QB]], %[[KT]]
// ON-NEXT: stitch.yield %[[SA]] : tensor<256x256xf32>
// ON-NEXT: }
// ON-NEXT: func.return %[[S]], %[[Q]], %[[K]]

// OFF-LABEL: func.func @qk
// OFF: %[[KT:.*]] = stitch.fusion (%{{.*}}, %{{.*}}) {pattern = 0 : i64
// OFF: graph.transpose
// OFF-NEXT: stitch.yield
// OFF: %[[S:.*]] = stitch.fusion (%{{.*}}, %{{.*}}, %[[KT]]) {pattern = 1 : i64
// OFF: graph.dot
// OFF: func.return %[[S]]

// In the XLA baseline GEMMs are library calls: nothing is fused into them (the
// two bias chains are packed into one kernel instead).
// XLA-LABEL: func.func @qk
// XLA: stitch.fusion
// XLA-NOT: graph.dot
// XLA: stitch.yield
// XLA: graph.dot
// XLA-NEXT: func.return
func.func @qk(%x: tensor<256x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %bq: tensor<64xf32>, %bk: tensor<64xf32>) -> (tensor<256x256xf32>, tensor<256x64xf32>, tensor<256x64xf32>) {
  %q = graph.dot %x, %wq : (tensor<256x64xf32>, tensor<64x64xf32>) -> tensor<256x64xf32>
  %k = graph.dot %x, %wk : (tensor<256x64xf32>, tensor<64x64xf32>) -> tensor<256x64xf32>
  %bqb = graph.broadcast %bq dims [1] : (tensor<64xf32>) -> tensor<256x64xf32>
  %qa = graph.add %q, %bqb : tensor<256x64xf32>
  %bkb = graph.broadcast %bk dims [1] : (tensor<64xf32>) -> tensor<256x64xf32>
  %ka = graph.add %k, %bkb : tensor<256x64xf32>
  %kt = graph.transpose %ka perm [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
  %s = graph.dot %qa, %kt : (tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
  func.return %s, %q, %k : tensor<256x256xf32>, tensor<256x64xf32>, tensor<256x64xf32>
}
