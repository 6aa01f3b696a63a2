// stitch.fusion's verifier: block arguments mirror the operands, yields match the
// results, and only graph ops live inside.
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{block arguments (tensor<4xi32>) must mirror the operands (tensor<4xf32>)}}
  %y = stitch.fusion (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xi32>):
    %c = graph.convert %a : (tensor<4xi32>) -> tensor<4xf32>
    stitch.yield %c : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{stitch.yield types (tensor<4xi1>) must be the result types (tensor<4xf32>)}}
  %y = stitch.fusion (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = graph.compare gt %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    stitch.yield %c : tensor<4xi1>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a stitch.fusion may hold only graph ops, found 'func.call'}}
  %y = stitch.fusion (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = func.call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>
    stitch.yield %c : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
func.func private @g(tensor<4xf32>) -> tensor<4xf32>

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{stitch.yield must be inside a stitch.fusion}}
  stitch.yield %x : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected 1 operand types, got 2}}
  %y = stitch.fusion (%x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    stitch.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
