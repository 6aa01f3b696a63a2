// The schedule dialect's verifiers.
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown mapping 'tiles' (expected loop, row, gemm)}}
  %y = schedule.kernel @k tiles {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a block has at most 1024 threads, got 2048}}
  %y = schedule.kernel @k loop {} grid [1, 1, 1] block [2048, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{grid and block need 3 entries each (x, y, z)}}
  %y = schedule.kernel @k loop {} grid [1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{schedule.yield types (tensor<4xi32>) must be the result types (tensor<4xf32>)}}
  %y = schedule.kernel @k loop {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %g = schedule.group thread -> global : tensor<4xi32> {
      %c = graph.convert %a : (tensor<4xf32>) -> tensor<4xi32>
      schedule.yield %c : tensor<4xi32>
    }
    schedule.yield %g : tensor<4xi32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k row {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{unknown shared buffer @results}}
    %g = schedule.group block -> shared @results[0] : tensor<4xf32> {
      %r = graph.reduce sum %a dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k row {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    schedule.shared @results : memref<2xf32, 3>
    // expected-error @+1 {{offset 2 is out of bounds of @results (2 elements)}}
    %g = schedule.group block -> shared @results[2] : tensor<4xf32> {
      %r = graph.reduce sum %a dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k row {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{unknown composition 'grid' (expected thread, warp, block)}}
    %g = schedule.group grid -> reg : tensor<4xf32> {
      %r = graph.reduce sum %a dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k row {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{unknown result storage 'l2' (expected reg, lanes, shared, global)}}
    %g = schedule.group warp -> l2 : tensor<4xf32> {
      %r = graph.reduce sum %a dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a schedule.kernel holds only schedule.shared and schedule.group ops, found 'graph.exp'}}
  %y = schedule.kernel @k loop {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = graph.exp %a : tensor<4xf32>
    schedule.yield %e : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k loop {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{a shared buffer must be in memory space 3 (workgroup)}}
    schedule.shared @b : memref<8xf32>
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
