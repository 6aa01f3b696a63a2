// A graph op's #graph.dims (written by symbolic-dims) must describe its result.
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{the result: dim 1 is 4, #graph.dims says 5}}
  %y = graph.neg %x {graph.dims = #graph.dims<[B, 5]>} : tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}

// -----

func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{the result: #graph.dims has 3 entries for a tensor of rank 2}}
  %y = graph.neg %x {graph.dims = #graph.dims<[B, 4, 1]>} : tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}

// -----

func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{expected a dim: an int, a symbol or a quoted product}}
  %y = graph.neg %x {graph.dims = #graph.dims<["B+C", 4]>} : tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
