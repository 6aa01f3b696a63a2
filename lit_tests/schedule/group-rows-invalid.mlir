// The verifier of a group's `row_dims` (increasing dims of its results) and `packed`
// (an independent part has no rows).
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = schedule.kernel @k row<threads_per_row = 8, rows_per_block = 1> grid [4, 1, 1] block [8, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x0: tensor<4x8xf32>):
    // expected-error @+1 {{row_dims [2] must be increasing dims of the group's results (rank 2)}}
    %e = schedule.group block -> global row_dims [2] : tensor<4x8xf32> {
      %a = graph.exp %x0 : tensor<4x8xf32>
      schedule.yield %a : tensor<4x8xf32>
    }
    schedule.yield %e : tensor<4x8xf32>
  }
  func.return %y : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = schedule.kernel @k row<threads_per_row = 8, rows_per_block = 1> grid [4, 1, 1] block [8, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x0: tensor<4x8xf32>):
    // expected-error @+1 {{row_dims [1, 0] must be increasing dims of the group's results (rank 2)}}
    %e = schedule.group block -> global row_dims [1, 0] : tensor<4x8xf32> {
      %a = graph.exp %x0 : tensor<4x8xf32>
      schedule.yield %a : tensor<4x8xf32>
    }
    schedule.yield %e : tensor<4x8xf32>
  }
  func.return %y : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = schedule.kernel @k row<threads_per_row = 8, rows_per_block = 1> grid [4, 1, 1] block [8, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x0: tensor<4x8xf32>):
    // expected-error @+1 {{a packed group has no row_dims (every thread takes its elements in turn)}}
    %e = schedule.group thread -> global row_dims [0] packed : tensor<4x8xf32> {
      %a = graph.exp %x0 : tensor<4x8xf32>
      schedule.yield %a : tensor<4x8xf32>
    }
    schedule.yield %e : tensor<4x8xf32>
  }
  func.return %y : tensor<4x8xf32>
}
