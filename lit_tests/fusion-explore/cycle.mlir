// Patterns that would create a cycle between kernels are rejected (FusionStitching
// fig. 6): %a and %c are neighbours, but %a -> dot -> %c leaves {%a, %c} and re-enters
// it, so the kernel would need its own output. %b and %c fuse instead, into the dot's
// kernel as its stitched epilogue (%b, a light op on %a, is computed where it is read).
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch report=true}' 2>&1 | filecheck %s

// CHECK: fusion-explore @diamond
// CHECK: rejected {{[0-9]+}}x: cycle between kernels
// CHECK-LABEL: func.func @diamond
// CHECK-NEXT: %[[A:.*]] = graph.exp
// CHECK-NEXT: %[[C:.*]] = stitch.fusion (%[[A]], %{{.*}}) {pattern = 0 : i64
// CHECK-NEXT: ^{{.*}}(%[[AA:.*]]: tensor<512x512xf32>, %[[WA:.*]]: tensor<512x512xf32>):
// CHECK-NEXT: %[[M:.*]] = graph.dot %[[AA]], %[[WA]]
// CHECK-NEXT: %[[B:.*]] = graph.neg %[[AA]]
// CHECK-NEXT: %[[CA:.*]] = graph.add %[[B]], %[[M]]
// CHECK-NEXT: stitch.yield %[[CA]]
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[C]]
func.func @diamond(%x: tensor<512x512xf32>, %w: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %a = graph.exp %x : tensor<512x512xf32>
  %m = graph.dot %a, %w : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %b = graph.neg %a : tensor<512x512xf32>
  %c = graph.add %b, %m : tensor<512x512xf32>
  func.return %c : tensor<512x512xf32>
}
