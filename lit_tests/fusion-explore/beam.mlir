// beam: the plan is a beam search over non-overlapping candidates by accumulated f
// (FusionStitching §5.3). With patterns of at most 4 ops, the first candidate met,
// {%a..%d}, saves less than {%b..%e} (%a must be written anyway for the dot). A beam
// of 1 takes it greedily; a beam of 3 also keeps the plan that skipped it.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch beam=1 max-ops=4}' | filecheck %s --check-prefix=B1
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch beam=3 max-ops=4}' | filecheck %s --check-prefix=B3

// B1-LABEL: func.func @beam
// B1: %[[A:.*]], %[[D:.*]] = stitch.fusion (%{{.*}}) {pattern = 0 : i64
// B1: graph.neg
// B1-NEXT: graph.exp
// B1-NEXT: graph.add
// B1-NEXT: graph.mul
// B1-NEXT: stitch.yield
// B1-NEXT: }
// B1-NEXT: %[[E:.*]] = graph.sub %[[D]]
// B1-NEXT: graph.dot %[[A]]

// B3-LABEL: func.func @beam
// B3: %[[A:.*]] = graph.neg
// B3-NEXT: %[[E:.*]] = stitch.fusion (%[[A]], %{{.*}}) {pattern = 0 : i64
// B3: graph.exp
// B3-NEXT: graph.add
// B3-NEXT: graph.mul
// B3-NEXT: graph.sub
// B3-NEXT: stitch.yield
// B3-NEXT: }
// B3-NEXT: graph.dot %[[A]]
func.func @beam(%x: tensor<1024x1024xf32>, %w: tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
  %a = graph.neg %x : tensor<1024x1024xf32>
  %b = graph.exp %a : tensor<1024x1024xf32>
  %c = graph.add %b, %x : tensor<1024x1024xf32>
  %d = graph.mul %c, %c : tensor<1024x1024xf32>
  %e = graph.sub %d, %x : tensor<1024x1024xf32>
  %m = graph.dot %a, %w : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  func.return %e, %m : tensor<1024x1024xf32>, tensor<1024x1024xf32>
}
