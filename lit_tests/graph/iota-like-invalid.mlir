// graph.iota's `like` operand must give every `?` result dim a size: of the result's
// rank and compatible shape without `dims`; with `dims`, one entry per result dim, each
// a dim of `like` or -1 for a static result dim.
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<6x?x2xf32>) {
  // expected-error @+1 {{the 'like' operand's shape 6x?x2 is not compatible with the result shape 6x?}}
  %i = graph.iota dim 0 like %x : (tensor<6x?x2xf32>) -> tensor<6x?xi32>
  func.return
}

// -----

func.func @f(%x: tensor<5x?xf32>) {
  // expected-error @+1 {{the 'like' operand's shape 5x? is not compatible with the result shape ?x4}}
  %i = graph.iota dim 0 like %x dims [1, 0] : (tensor<5x?xf32>) -> tensor<?x4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<5x?xf32>) {
  // expected-error @+1 {{the 'like' operand's shape 5x? is not compatible with the result shape 6}}
  %i = graph.iota dim 0 like %x dims [0] : (tensor<5x?xf32>) -> tensor<6xi32>
  func.return
}

// -----

func.func @f(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{dims entry 2 is out of range for the 'like' operand's rank 2}}
  %i = graph.iota dim 0 like %x dims [2] : (tensor<?x?xf32>) -> tensor<?xi32>
  func.return
}

// -----

func.func @f(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{dims has 1 entries but the result has rank 2}}
  %i = graph.iota dim 0 like %x dims [1] : (tensor<?x?xf32>) -> tensor<?x?xi32>
  func.return
}

// -----

func.func @f(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{result dim 0 is '?' but takes no dim of the 'like' operand (dims entry -1)}}
  %i = graph.iota dim 0 like %x dims [-1] : (tensor<?x?xf32>) -> tensor<?xi32>
  func.return
}

// -----

func.func @f(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{expected 1 operand type, got 2}}
  %i = graph.iota dim 0 like %x dims [0] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?xi32>
  func.return
}

// -----

func.func @f() {
  // expected-error @+1 {{'dims' needs a 'like' operand}}
  %i = "graph.iota"() <{dim = 0 : i64, like_dims = array<i64: 0>}> : () -> tensor<4xi32>
  func.return
}
