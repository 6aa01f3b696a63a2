// graph.iota with a `like` operand: a `?` result dim takes its size from `like` (only
// its sizes are read), through `dims` when the ranks differ (-1: a static result dim).
// The form survives print -> parse -> print, custom and generic; shape inference
// refines `?` result dims from static `like` dims; the reference runs it.
// RUN: fs-opt %s --split-input-file | fs-opt --split-input-file | filecheck %s
// RUN: fs-opt %s --split-input-file --print-op-generic | fs-opt --split-input-file | filecheck %s
// RUN: fs-opt %s --split-input-file -p graph-shape-inference | filecheck %s --check-prefix=INFER

// arange(seq) of ids[batch, seq], as ONNX's Range(0, Shape(ids)[1], 1) imports.
// CHECK-LABEL: func.func @arange_seq
// CHECK-SAME:  (%[[IDS:.*]]: tensor<?x?xi64>) -> tensor<?xi64>
// CHECK-NEXT:  %[[P:.*]] = graph.iota dim 0 like %[[IDS]] dims [1] : (tensor<?x?xi64>) -> tensor<?xi64>
// CHECK-NEXT:  func.return %[[P]] : tensor<?xi64>
func.func @arange_seq(%ids: tensor<?x?xi64>) -> tensor<?xi64> {
  %p = graph.iota dim 0 like %ids dims [1] : (tensor<?x?xi64>) -> tensor<?xi64>
  func.return %p : tensor<?xi64>
}

// -----

// Same rank without `dims` (a broadcast's convention), attributes kept; a [seq, seq]
// size carrier and a static dim (-1) beside a `?` one.
// CHECK-LABEL: func.func @carriers
// CHECK-NEXT:  graph.iota dim 1 like %{{.*}} {tag = 1 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:  graph.iota dim 0 like %{{.*}} dims [1, 1] : (tensor<?x?xi64>) -> tensor<?x?xi32>
// CHECK-NEXT:  graph.iota dim 1 like %{{.*}} dims [-1, 0] : (tensor<?x?xi64>) -> tensor<4x?xi32>
// CHECK-NEXT:  graph.iota dim 1 : tensor<4x8xi32>
func.func @carriers(%x: tensor<?x8xf32>, %ids: tensor<?x?xi64>) -> (tensor<?x8xf32>, tensor<?x?xi32>, tensor<4x?xi32>, tensor<4x8xi32>) {
  %a = graph.iota dim 1 like %x {tag = 1 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %b = graph.iota dim 0 like %ids dims [1, 1] : (tensor<?x?xi64>) -> tensor<?x?xi32>
  %c = graph.iota dim 1 like %ids dims [-1, 0] : (tensor<?x?xi64>) -> tensor<4x?xi32>
  %d = graph.iota dim 1 : tensor<4x8xi32>
  func.return %a, %b, %c, %d : tensor<?x8xf32>, tensor<?x?xi32>, tensor<4x?xi32>, tensor<4x8xi32>
}

// -----

// A static `like` dim fixes the result dim it maps to.
// INFER-LABEL: func.func @static_like
// INFER-SAME:  -> (tensor<3xi32>, tensor<5x3xi32>)
// INFER-NEXT:  graph.iota dim 0 like %{{.*}} dims [1] : (tensor<5x3xf32>) -> tensor<3xi32>
// INFER-NEXT:  graph.iota dim 1 like %{{.*}} : (tensor<5x3xf32>) -> tensor<5x3xi32>
func.func @static_like(%s: tensor<5x3xf32>) -> (tensor<?xi32>, tensor<?x?xi32>) {
  %a = graph.iota dim 0 like %s dims [1] : (tensor<5x3xf32>) -> tensor<?xi32>
  %b = graph.iota dim 1 like %s : (tensor<5x3xf32>) -> tensor<?x?xi32>
  func.return %a, %b : tensor<?xi32>, tensor<?x?xi32>
}
