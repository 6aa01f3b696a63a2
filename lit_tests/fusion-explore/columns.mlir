// Embedding columns (RECom): every column feeding one concat — ids hashed by rem or
// not, gathered, weighted or not, reduced over the bag by sum / max / a scaled sum
// (mean) — and the concat are one fusion, found by structure before the search
// (fsir/analysis/columns.py); a dense operand of the concat is read by it. The dot after
// the concat stays a GEMM kernel. mode=xla packs no columns.
// RUN: fs-opt %s -p 'fusion-explore{report=true}' 2>&1 | filecheck %s
// RUN: fs-opt %s -p 'fusion-explore{mode=xla}' | filecheck %s --check-prefix=XLA

// CHECK:      fusion-explore @cols: mode=stitch
// CHECK:        after: 2 kernels (1 fused)
// CHECK:        kernel 0: fusion pattern=0 ops=11
// CHECK-NEXT:   kernel 1: graph.dot
// CHECK-LABEL: func.func @cols
// CHECK-SAME:  (%[[D:[^:]*]]: tensor<8x3xf32>, %[[I0:[^:]*]]: tensor<8x5xi32>, %[[T0:[^:]*]]: tensor<100x16xf32>
// CHECK-NEXT:  %[[X:.*]] = stitch.fusion (%[[I0]], %[[T0]], {{.*}}, %[[D]]) {pattern = 0 : i64
// CHECK:         graph.rem
// CHECK-NEXT:    graph.gather
// CHECK-NEXT:    graph.reduce sum
// CHECK-NEXT:    graph.gather
// CHECK-NEXT:    graph.broadcast
// CHECK-NEXT:    graph.mul
// CHECK-NEXT:    graph.reduce max
// CHECK-NEXT:    graph.gather
// CHECK-NEXT:    graph.reduce sum
// CHECK-NEXT:    graph.mul
// CHECK-NEXT:    %[[C:.*]] = graph.concat %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} dim 1
// CHECK-NEXT:    stitch.yield %[[C]] : tensor<8x31xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  %{{.*}} = graph.dot %[[X]], %{{.*}}

// XLA-LABEL: func.func @cols
// XLA-COUNT-3: graph.reduce
// XLA-NOT:     graph.reduce
// XLA:         graph.concat
func.func @cols(%dense: tensor<8x3xf32>, %ids0: tensor<8x5xi32>, %t0: tensor<100x16xf32>, %ids1: tensor<8x2xi32>, %t1: tensor<30x8xf32>, %w1: tensor<8x2xf32>, %ids2: tensor<8x40xi32>, %t2: tensor<50x4xf32>, %w: tensor<31x2xf32>) -> tensor<8x2xf32> {
  %m0 = graph.constant dense<100> : tensor<8x5xi32>
  %h0 = graph.rem %ids0, %m0 : tensor<8x5xi32>
  %e0 = graph.gather %t0, %h0 : (tensor<100x16xf32>, tensor<8x5xi32>) -> tensor<8x5x16xf32>
  %r0 = graph.reduce sum %e0 dims [1] : (tensor<8x5x16xf32>) -> tensor<8x16xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<30x8xf32>, tensor<8x2xi32>) -> tensor<8x2x8xf32>
  %wb1 = graph.broadcast %w1 dims [0, 1] : (tensor<8x2xf32>) -> tensor<8x2x8xf32>
  %we1 = graph.mul %e1, %wb1 : tensor<8x2x8xf32>
  %r1 = graph.reduce max %we1 dims [1] : (tensor<8x2x8xf32>) -> tensor<8x8xf32>
  %e2 = graph.gather %t2, %ids2 : (tensor<50x4xf32>, tensor<8x40xi32>) -> tensor<8x40x4xf32>
  %r2 = graph.reduce sum %e2 dims [1] : (tensor<8x40x4xf32>) -> tensor<8x4xf32>
  %s2 = graph.constant dense<0.025> : tensor<8x4xf32>
  %a2 = graph.mul %r2, %s2 : tensor<8x4xf32>
  %x = graph.concat %dense, %r0, %r1, %a2 dim 1 : (tensor<8x3xf32>, tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x31xf32>
  %y = graph.dot %x, %w : (tensor<8x31xf32>, tensor<31x2xf32>) -> tensor<8x2xf32>
  func.return %y : tensor<8x2xf32>
}
