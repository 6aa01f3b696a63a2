// remote fusion: a virtual producer of every kernel packs independent patterns into
// one kernel when the score says so (FusionStitching §5.2, fig. 5): two unrelated
// chains become one fusion with two results. remote=false keeps them apart.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s --check-prefix=ON
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch remote=true}' | filecheck %s --check-prefix=ON
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch remote=false}' | filecheck %s --check-prefix=OFF

// ON-LABEL: func.func @two_chains
// ON-SAME: (%[[X:.*]]: tensor<64x128xf32>, %[[Y:.*]]: tensor<256xf32>)
// ON-NEXT: %[[B:.*]], %[[D:.*]] = stitch.fusion (%[[X]], %[[Y]]) {pattern = 0 : i64
// ON-NEXT: ^{{.*}}(%[[XA:.*]]: tensor<64x128xf32>, %[[YA:.*]]: tensor<256xf32>):
// ON-NEXT: %[[E:.*]] = graph.exp %[[XA]]
// ON-NEXT: %[[M:.*]] = graph.mul %[[E]], %[[XA]]
// ON-NEXT: %[[N:.*]] = graph.neg %[[YA]]
// ON-NEXT: %[[T:.*]] = graph.tanh %[[N]]
// ON-NEXT: stitch.yield %[[M]], %[[T]] : tensor<64x128xf32>, tensor<256xf32>
// ON-NEXT: }
// ON-NEXT: func.return %[[B]], %[[D]]

// OFF-LABEL: func.func @two_chains
// OFF: %[[B:.*]] = stitch.fusion (%{{.*}}) {pattern = 0 : i64
// OFF: graph.exp
// OFF-NEXT: graph.mul
// OFF: %[[D:.*]] = stitch.fusion (%{{.*}}) {pattern = 1 : i64
// OFF: graph.neg
// OFF-NEXT: graph.tanh
// OFF: func.return %[[B]], %[[D]]
func.func @two_chains(%x: tensor<64x128xf32>, %y: tensor<256xf32>) -> (tensor<64x128xf32>, tensor<256xf32>) {
  %a = graph.exp %x : tensor<64x128xf32>
  %b = graph.mul %a, %x : tensor<64x128xf32>
  %c = graph.neg %y : tensor<256xf32>
  %d = graph.tanh %c : tensor<256xf32>
  func.return %b, %d : tensor<64x128xf32>, tensor<256xf32>
}
