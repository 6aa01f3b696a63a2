// top-k: each op keeps its k best candidate patterns (FusionStitching §5.2). %c's best
// pattern is {%c, %d}; %v cannot join it (the path %v -> dot -> %d would leave the
// kernel and re-enter it), so with k=1 %v stays alone. With k=3 %c also keeps the
// single-op pattern {%c}, %v extends it to {%v, %c}, and that saves far more: the
// 16 MB %v is not read back by the reduction.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch top-k=1}' | filecheck %s --check-prefix=K1
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch top-k=3}' | filecheck %s --check-prefix=K3
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s --check-prefix=K3

// K1-LABEL: func.func @topk
// K1: %[[V:.*]] = graph.exp %{{.*}} : tensor<4096x1024xf32>
// K1: %[[M:.*]] = graph.dot %[[V]]
// K1: %[[D:.*]] = stitch.fusion (%[[V]], %[[M]]) {pattern = 0 : i64, score = {{.*}}}
// K1-NEXT: ^{{.*}}(%[[VA:.*]]: tensor<4096x1024xf32>, %[[MA:.*]]: tensor<4096xf32>):
// K1-NEXT: %[[C:.*]] = graph.reduce sum %[[VA]] dims [1]
// K1-NEXT: %[[DA:.*]] = graph.add %[[C]], %[[MA]]
// K1-NEXT: stitch.yield %[[DA]] : tensor<4096xf32>
// K1-NOT: stitch.fusion
// K1: func.return %[[D]], %[[M]]

// K3-LABEL: func.func @topk
// K3-SAME: (%[[X:.*]]: tensor<4096x1024xf32>, %[[W:.*]]: tensor<1024xf32>)
// K3: %[[V:.*]], %[[C:.*]] = stitch.fusion (%[[X]]) {pattern = 0 : i64, score = {{.*}}}
// K3-NEXT: ^{{.*}}(%[[XA:.*]]: tensor<4096x1024xf32>):
// K3-NEXT: %[[VA:.*]] = graph.exp %[[XA]]
// K3-NEXT: %[[CA:.*]] = graph.reduce sum %[[VA]] dims [1]
// K3-NEXT: stitch.yield %[[VA]], %[[CA]] : tensor<4096x1024xf32>, tensor<4096xf32>
// K3: %[[M:.*]] = graph.dot %[[V]], %[[W]]
// K3-NEXT: %[[D:.*]] = graph.add %[[C]], %[[M]] : tensor<4096xf32>
// K3-NEXT: func.return %[[D]], %[[M]]
func.func @topk(%x: tensor<4096x1024xf32>, %w: tensor<1024xf32>) -> (tensor<4096xf32>, tensor<4096xf32>) {
  %v = graph.exp %x : tensor<4096x1024xf32>
  %c = graph.reduce sum %v dims [1] : (tensor<4096x1024xf32>) -> tensor<4096xf32>
  %m = graph.dot %v, %w : (tensor<4096x1024xf32>, tensor<1024xf32>) -> tensor<4096xf32>
  %d = graph.add %c, %m : tensor<4096xf32>
  func.return %d, %m : tensor<4096xf32>, tensor<4096xf32>
}
