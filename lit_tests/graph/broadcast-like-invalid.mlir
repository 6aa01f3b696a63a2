// graph.broadcast's `like` operand must be of the result's rank and compatible shape;
// a `?` result dim needs a `like` operand or an operand dim that gives its size.
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%m: tensor<6xf32>, %x: tensor<6x?x2xf32>) {
  // expected-error @+1 {{the 'like' operand's shape 6x?x2 is not compatible with the result shape 6x?}}
  %b = graph.broadcast %m dims [0] like %x : (tensor<6xf32>, tensor<6x?x2xf32>) -> tensor<6x?xf32>
  func.return
}

// -----

func.func @f(%m: tensor<6xf32>, %x: tensor<5x?xf32>) {
  // expected-error @+1 {{the 'like' operand's shape 5x? is not compatible with the result shape 6x?}}
  %b = graph.broadcast %m dims [0] like %x : (tensor<6xf32>, tensor<5x?xf32>) -> tensor<6x?xf32>
  func.return
}

// -----

func.func @f(%m: tensor<6xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{operand dim 0 of size 6 cannot broadcast to result dim 1 of size 4}}
  %b = graph.broadcast %m dims [1] like %x : (tensor<6xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @f(%m: tensor<6xf32>, %x: tensor<6x?xf32>) {
  // expected-error @+1 {{expected 2 operand types, got 1}}
  %b = graph.broadcast %m dims [0] like %x : (tensor<6xf32>) -> tensor<6x?xf32>
  func.return
}
