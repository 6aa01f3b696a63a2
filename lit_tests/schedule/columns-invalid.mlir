// The columns mapping's parameters (`#schedule.columns<...>`): their verifier (lists
// of one entry per concat operand, prefix sums of warps, lanes and vectors a shuffle
// butterfly and an aligned vector load allow, the operands of one cluster sharing one
// schedule) and the kernel's check of its launch against them.
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{a columns kernel needs 'lanes' and 'vectors' (and 'clusters' when given) of one entry per concat operand and 'warps' of one more, got 2 lanes, 1 vectors, 2 warps}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [0, 1], lanes = [1, 1], vectors = [1]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{warps must be non-decreasing prefix sums from 0, got [0, 2, 1]}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [0, 2, 1], lanes = [1, 1], vectors = [1, 1]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{warps must be non-decreasing prefix sums from 0, got [1, 2]}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [1, 2], lanes = [1], vectors = [1]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{lanes must be powers of two up to 32, got [3]}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [0, 1], lanes = [3], vectors = [1]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{lanes must be powers of two up to 32, got [64]}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [0, 1], lanes = [64], vectors = [1]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{vectors must be 1, 2 or 4, got [8]}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [0, 1], lanes = [1], vectors = [8]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{clusters must be operand indices below 2, got [0, 2]}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [0, 1, 2], lanes = [1, 1], vectors = [1, 1], clusters = [0, 2]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{concat operand 1 shares the code body of cluster 0 but not its lanes, vectors or number of warps}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [0, 1, 3], lanes = [1, 1], vectors = [1, 1], clusters = [0, 0]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{concat operand 1 shares the code body of cluster 0 but not its lanes, vectors or number of warps}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [0, 2, 4], lanes = [2, 4], vectors = [1, 1], clusters = [0, 0]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{rows_per_tile must be positive, got 0}}
  %y = schedule.kernel @k columns<rows_per_tile = 0, warps = [0, 1], lanes = [1], vectors = [1]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{the columns mapping needs the parameter 'warps'}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, lanes = [1], vectors = [1]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'[' expected}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = 4, lanes = [1], vectors = [1]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{grid x covers 8 warps, the columns need 9}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [0, 9], lanes = [1], vectors = [1]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{a columns kernel's block is whole warps along x, got [48, 1, 1]}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [0, 1], lanes = [1], vectors = [1]> grid [1, 1, 1] block [48, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}

// -----

func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{a columns kernel's block is whole warps along x, got [32, 2, 1]}}
  %y = schedule.kernel @k columns<rows_per_tile = 8, warps = [0, 1], lanes = [1], vectors = [1]> grid [1, 1, 1] block [32, 2, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}
