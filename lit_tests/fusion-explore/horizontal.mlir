// Horizontal GEMM fusion (fsir/fusion/horizontal.py): dots multiplying one activation
// by several weights may become one dot over the weights concatenated along N, the
// concat inlined into the GEMM's B tile loads and each dot's result a slice of the
// merged one. The explorer plans the function both ways and keeps the plan its
// latency-evaluator scores lower: for these small projections the launches saved win.
// A dot with another lhs, or a weight of another K, is left alone. XLA mode never merges.
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch}' | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=xla}' | filecheck %s --check-prefix=XLA
// RUN: fs-opt %s -p 'fusion-explore{mode=stitch horizontal=false}' | filecheck %s --check-prefix=XLA

// CHECK-LABEL: func.func @qkv
// CHECK-NEXT: %[[D:.*]] = stitch.fusion (%wq, %wk, %wv, %x)
// CHECK-NEXT: ^{{.*}}(%[[WQ:.*]]: tensor<40x32xf32>, %[[WK:.*]]: tensor<40x32xf32>, %[[WV:.*]]: tensor<40x48xf32>, %[[X:.*]]: tensor<2x20x40xf32>):
// CHECK-NEXT: %[[W:.*]] = graph.concat %[[WQ]], %[[WK]], %[[WV]] dim 1 : {{.*}} -> tensor<40x112xf32>
// CHECK-NEXT: %[[P:.*]] = graph.dot %[[X]], %[[W]] : {{.*}} -> tensor<2x20x112xf32>
// CHECK-NEXT: stitch.yield %[[P]]
// CHECK: graph.slice %{{.*}} start [0, 0, 0] limit [2, 20, 32]
// CHECK: graph.slice %{{.*}} start [0, 0, 32] limit [2, 20, 64]
// CHECK: graph.slice %{{.*}} start [0, 0, 64] limit [2, 20, 112]
// CHECK-NOT: graph.concat
// CHECK: graph.dot %{{.*}}, %wo
// CHECK: graph.dot %y, %wq
// CHECK: func.return

// XLA-LABEL: func.func @qkv
// XLA-NOT: graph.concat
// XLA-NOT: graph.slice
// XLA: func.return
func.func @qkv(%x: tensor<2x20x40xf32>, %y: tensor<2x20x40xf32>, %wq: tensor<40x32xf32>, %bq: tensor<32xf32>,
    %wk: tensor<40x32xf32>, %wv: tensor<40x48xf32>, %wo: tensor<32x8xf32>)
    -> (tensor<2x20x32xf32>, tensor<2x20x32xf32>, tensor<2x20x48xf32>, tensor<2x20x8xf32>, tensor<2x20x32xf32>) {
  %q = graph.dot %x, %wq : (tensor<2x20x40xf32>, tensor<40x32xf32>) -> tensor<2x20x32xf32>
  %bq_b = graph.broadcast %bq dims [2] : (tensor<32xf32>) -> tensor<2x20x32xf32>
  %qb = graph.add %q, %bq_b : tensor<2x20x32xf32>
  %k = graph.dot %x, %wk : (tensor<2x20x40xf32>, tensor<40x32xf32>) -> tensor<2x20x32xf32>
  %kt = graph.tanh %k : tensor<2x20x32xf32>
  %v = graph.dot %x, %wv : (tensor<2x20x40xf32>, tensor<40x48xf32>) -> tensor<2x20x48xf32>
  %o = graph.dot %qb, %wo : (tensor<2x20x32xf32>, tensor<32x8xf32>) -> tensor<2x20x8xf32>
  %z = graph.dot %y, %wq : (tensor<2x20x40xf32>, tensor<40x32xf32>) -> tensor<2x20x32xf32>
  func.return %qb, %kt, %v, %o, %z : tensor<2x20x32xf32>, tensor<2x20x32xf32>, tensor<2x20x48xf32>, tensor<2x20x8xf32>, tensor<2x20x32xf32>
}
