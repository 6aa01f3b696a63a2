// schedule-to-gpu refuses a columns kernel whose lanes and vectors (the tuner's knobs,
// each cluster's) its columns cannot take, naming the kernel: more than one element
// per thread of a dense copy, of a column whose dim they do not divide or of a table
// whose row they do not load as one aligned vector; more lanes than the operand's
// warps hold threads for.
// RUN: fs-opt %s --split-input-file --verify-diagnostics -p schedule-to-gpu

// a dense copy takes one element per thread
func.func @f(%dense: tensor<4x2xf32>, %ids0: tensor<4x3xi32>, %t0: tensor<10x8xf32>, %ids1: tensor<4x5xi32>, %t1: tensor<20x4xf64>) -> tensor<4x14xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: concat operand 0: 2 elements per thread need a column whose static dim they divide}}
  %x = schedule.kernel @k columns<rows_per_tile = 4, warps = [0, 1, 5, 9], lanes = [1, 4, 8], vectors = [2, 1, 1]> grid [2, 1, 1] block [256, 1, 1] (%t0, %ids0, %t1, %ids1, %dense) : (tensor<10x8xf32>, tensor<4x3xi32>, tensor<20x4xf64>, tensor<4x5xi32>, tensor<4x2xf32>) -> tensor<4x14xf32> {
  ^bb0(%t0_1: tensor<10x8xf32>, %ids0_1: tensor<4x3xi32>, %t1_1: tensor<20x4xf64>, %ids1_1: tensor<4x5xi32>, %dense_1: tensor<4x2xf32>):
    %r0 = schedule.group warp -> reg : tensor<4x8xf32> {
      %e0 = graph.gather %t0_1, %ids0_1 : (tensor<10x8xf32>, tensor<4x3xi32>) -> tensor<4x3x8xf32>
      %r0_1 = graph.reduce sum %e0 dims [1] : (tensor<4x3x8xf32>) -> tensor<4x8xf32>
      schedule.yield %r0_1 : tensor<4x8xf32>
    }
    %r1 = schedule.group warp -> reg : tensor<4x4xf64> {
      %e1 = graph.gather %t1_1, %ids1_1 : (tensor<20x4xf64>, tensor<4x5xi32>) -> tensor<4x5x4xf64>
      %r1_1 = graph.reduce max %e1 dims [1] : (tensor<4x5x4xf64>) -> tensor<4x4xf64>
      schedule.yield %r1_1 : tensor<4x4xf64>
    }
    %x_1 = schedule.group thread -> global : tensor<4x14xf32> {
      %c1 = graph.convert %r1 : (tensor<4x4xf64>) -> tensor<4x4xf32>
      %x_2 = graph.concat %dense_1, %r0, %c1 dim 1 : (tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x14xf32>
      schedule.yield %x_2 : tensor<4x14xf32>
    }
    schedule.yield %x_1 : tensor<4x14xf32>
  }
  func.return %x : tensor<4x14xf32>
}

// -----

// 4 elements per thread of a column of dim 6
func.func @f(%dense: tensor<4x2xf32>, %ids0: tensor<4x3xi32>, %t0: tensor<10x6xf32>, %ids1: tensor<4x5xi32>, %t1: tensor<20x4xf64>) -> tensor<4x12xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: concat operand 1: 4 elements per thread need a column whose static dim they divide}}
  %x = schedule.kernel @k columns<rows_per_tile = 4, warps = [0, 1, 5, 9], lanes = [1, 4, 8], vectors = [1, 4, 1]> grid [2, 1, 1] block [256, 1, 1] (%t0, %ids0, %t1, %ids1, %dense) : (tensor<10x6xf32>, tensor<4x3xi32>, tensor<20x4xf64>, tensor<4x5xi32>, tensor<4x2xf32>) -> tensor<4x12xf32> {
  ^bb0(%t0_1: tensor<10x6xf32>, %ids0_1: tensor<4x3xi32>, %t1_1: tensor<20x4xf64>, %ids1_1: tensor<4x5xi32>, %dense_1: tensor<4x2xf32>):
    %r0 = schedule.group warp -> reg : tensor<4x6xf32> {
      %e0 = graph.gather %t0_1, %ids0_1 : (tensor<10x6xf32>, tensor<4x3xi32>) -> tensor<4x3x6xf32>
      %r0_1 = graph.reduce sum %e0 dims [1] : (tensor<4x3x6xf32>) -> tensor<4x6xf32>
      schedule.yield %r0_1 : tensor<4x6xf32>
    }
    %r1 = schedule.group warp -> reg : tensor<4x4xf64> {
      %e1 = graph.gather %t1_1, %ids1_1 : (tensor<20x4xf64>, tensor<4x5xi32>) -> tensor<4x5x4xf64>
      %r1_1 = graph.reduce max %e1 dims [1] : (tensor<4x5x4xf64>) -> tensor<4x4xf64>
      schedule.yield %r1_1 : tensor<4x4xf64>
    }
    %x_1 = schedule.group thread -> global : tensor<4x12xf32> {
      %c1 = graph.convert %r1 : (tensor<4x4xf64>) -> tensor<4x4xf32>
      %x_2 = graph.concat %dense_1, %r0, %c1 dim 1 : (tensor<4x2xf32>, tensor<4x6xf32>, tensor<4x4xf32>) -> tensor<4x12xf32>
      schedule.yield %x_2 : tensor<4x12xf32>
    }
    schedule.yield %x_1 : tensor<4x12xf32>
  }
  func.return %x : tensor<4x12xf32>
}

// -----

// 2 elements of an f64 table's row are no vector load the lowering makes (at most 4-byte elements)
func.func @f(%dense: tensor<4x2xf32>, %ids0: tensor<4x3xi32>, %t0: tensor<10x8xf32>, %ids1: tensor<4x5xi32>, %t1: tensor<20x4xf64>) -> tensor<4x14xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: concat operand 2: 2 elements per thread are no aligned vector load of its tables' rows (their dims and element types allow [1])}}
  %x = schedule.kernel @k columns<rows_per_tile = 4, warps = [0, 1, 5, 9], lanes = [1, 4, 8], vectors = [1, 1, 2]> grid [2, 1, 1] block [256, 1, 1] (%t0, %ids0, %t1, %ids1, %dense) : (tensor<10x8xf32>, tensor<4x3xi32>, tensor<20x4xf64>, tensor<4x5xi32>, tensor<4x2xf32>) -> tensor<4x14xf32> {
  ^bb0(%t0_1: tensor<10x8xf32>, %ids0_1: tensor<4x3xi32>, %t1_1: tensor<20x4xf64>, %ids1_1: tensor<4x5xi32>, %dense_1: tensor<4x2xf32>):
    %r0 = schedule.group warp -> reg : tensor<4x8xf32> {
      %e0 = graph.gather %t0_1, %ids0_1 : (tensor<10x8xf32>, tensor<4x3xi32>) -> tensor<4x3x8xf32>
      %r0_1 = graph.reduce sum %e0 dims [1] : (tensor<4x3x8xf32>) -> tensor<4x8xf32>
      schedule.yield %r0_1 : tensor<4x8xf32>
    }
    %r1 = schedule.group warp -> reg : tensor<4x4xf64> {
      %e1 = graph.gather %t1_1, %ids1_1 : (tensor<20x4xf64>, tensor<4x5xi32>) -> tensor<4x5x4xf64>
      %r1_1 = graph.reduce max %e1 dims [1] : (tensor<4x5x4xf64>) -> tensor<4x4xf64>
      schedule.yield %r1_1 : tensor<4x4xf64>
    }
    %x_1 = schedule.group thread -> global : tensor<4x14xf32> {
      %c1 = graph.convert %r1 : (tensor<4x4xf64>) -> tensor<4x4xf32>
      %x_2 = graph.concat %dense_1, %r0, %c1 dim 1 : (tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x14xf32>
      schedule.yield %x_2 : tensor<4x14xf32>
    }
    schedule.yield %x_1 : tensor<4x14xf32>
  }
  func.return %x : tensor<4x14xf32>
}

// -----

// 8 lanes per element of column 1 need 8 warps, its range holds 4
func.func @f(%dense: tensor<4x2xf32>, %ids0: tensor<4x3xi32>, %t0: tensor<10x8xf32>, %ids1: tensor<4x5xi32>, %t1: tensor<20x4xf64>) -> tensor<4x14xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: concat operand 1 needs 4 rows x its dim / 1 x 8 lanes threads, more than its warps hold}}
  %x = schedule.kernel @k columns<rows_per_tile = 4, warps = [0, 1, 5, 9], lanes = [1, 8, 8], vectors = [1, 1, 1]> grid [2, 1, 1] block [256, 1, 1] (%t0, %ids0, %t1, %ids1, %dense) : (tensor<10x8xf32>, tensor<4x3xi32>, tensor<20x4xf64>, tensor<4x5xi32>, tensor<4x2xf32>) -> tensor<4x14xf32> {
  ^bb0(%t0_1: tensor<10x8xf32>, %ids0_1: tensor<4x3xi32>, %t1_1: tensor<20x4xf64>, %ids1_1: tensor<4x5xi32>, %dense_1: tensor<4x2xf32>):
    %r0 = schedule.group warp -> reg : tensor<4x8xf32> {
      %e0 = graph.gather %t0_1, %ids0_1 : (tensor<10x8xf32>, tensor<4x3xi32>) -> tensor<4x3x8xf32>
      %r0_1 = graph.reduce sum %e0 dims [1] : (tensor<4x3x8xf32>) -> tensor<4x8xf32>
      schedule.yield %r0_1 : tensor<4x8xf32>
    }
    %r1 = schedule.group warp -> reg : tensor<4x4xf64> {
      %e1 = graph.gather %t1_1, %ids1_1 : (tensor<20x4xf64>, tensor<4x5xi32>) -> tensor<4x5x4xf64>
      %r1_1 = graph.reduce max %e1 dims [1] : (tensor<4x5x4xf64>) -> tensor<4x4xf64>
      schedule.yield %r1_1 : tensor<4x4xf64>
    }
    %x_1 = schedule.group thread -> global : tensor<4x14xf32> {
      %c1 = graph.convert %r1 : (tensor<4x4xf64>) -> tensor<4x4xf32>
      %x_2 = graph.concat %dense_1, %r0, %c1 dim 1 : (tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x14xf32>
      schedule.yield %x_2 : tensor<4x14xf32>
    }
    schedule.yield %x_1 : tensor<4x14xf32>
  }
  func.return %x : tensor<4x14xf32>
}
