// schedule-to-gpu needs every non-free op inside a schedule.kernel.
// RUN: fs-opt %s -p schedule-to-gpu --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k loop grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %g = schedule.group thread -> global : tensor<4xf32> {
      %e = graph.exp %a : tensor<4xf32>
      schedule.yield %e : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  // expected-error @+1 {{'graph.neg' op is left outside every kernel; run stitch-codegen before schedule-to-gpu}}
  %n = graph.neg %y : tensor<4xf32>
  func.return %n : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: missing 'partials_f32'}}
  %y = schedule.kernel @k row<threads_per_row = 256, rows_per_block = 1> grid [4, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    schedule.shared @results_f32 : memref<1xf32, 3>
    %g = schedule.group block -> shared @results_f32[0] : tensor<4xf32> {
      %r = graph.reduce sum %a dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k loop grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %g = schedule.group thread -> global : tensor<4xf32> {
      // expected-error @+1 {{'graph.reduce' op cannot be computed per element here: it must lead a group of a row kernel (a reduction) or be a gemm kernel's root (a dot)}}
      %r = graph.reduce sum %a dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

// An elementwise sub-root kept in registers needs the row cached in slots.
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: an elementwise sub-root kept in registers needs elements_per_thread (each thread keeps its slots of the row)}}
  %y = schedule.kernel @k row<threads_per_row = 8, rows_per_block = 32> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %e = schedule.group warp -> lanes row_dims [0] : tensor<4x8xf32> {
      %e0 = graph.exp %a : tensor<4x8xf32>
      schedule.yield %e0 : tensor<4x8xf32>
    }
    %s = schedule.group warp -> lanes : tensor<4xf32> {
      %r = graph.reduce sum %e dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    %g = schedule.group warp -> global row_dims [0] : tensor<4x8xf32> {
      %b = graph.broadcast %s dims [0] : (tensor<4xf32>) -> tensor<4x8xf32>
      %d = graph.div %e, %b : tensor<4x8xf32>
      schedule.yield %d : tensor<4x8xf32>
    }
    schedule.yield %g : tensor<4x8xf32>
  }
  func.return %y : tensor<4x8xf32>
}

// -----

// Shared rows must fit their buffer: 32 rows of 8 from offset 0 need 256 elements.
func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: shared buffer @rows cannot hold 32 rows of 8 elements from offset 0}}
  %y = schedule.kernel @k row<threads_per_row = 8, rows_per_block = 32> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    schedule.shared @rows : memref<64xf32, 3>
    %e = schedule.group warp -> shared @rows[0] row_dims [0] : tensor<4x8xf32> {
      %e0 = graph.exp %a : tensor<4x8xf32>
      schedule.yield %e0 : tensor<4x8xf32>
    }
    %s = schedule.group warp -> lanes : tensor<4xf32> {
      %r = graph.reduce sum %e dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    schedule.yield %s : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: vector_width 4 needs static innermost extents that are multiples of it (a result of 6)}}
  %y = schedule.kernel @k loop<vector_width = 4> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x6xf32>) -> tensor<4x6xf32> {
  ^bb0(%a: tensor<4x6xf32>):
    %g = schedule.group thread -> global : tensor<4x6xf32> {
      %e = graph.exp %a : tensor<4x6xf32>
      schedule.yield %e : tensor<4x6xf32>
    }
    schedule.yield %g : tensor<4x6xf32>
  }
  func.return %y : tensor<4x6xf32>
}

// -----

func.func @f(%x: tensor<4x6xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: vector_width 4 needs static innermost extents that are multiples of it (a row of 6)}}
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 4, vector_width = 4> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x6xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x6xf32>):
    %g = schedule.group warp -> lanes : tensor<4xf32> {
      %r = graph.reduce sum %a dims [1] : (tensor<4x6xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<20x40xf32>, %w: tensor<40x33xf32>) -> tensor<20x33xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: @b_tile has 64 elements; the tiles need 128}}
  %y = schedule.kernel @k gemm<tile = 16x16x8, thread = 2x2> grid [3, 2, 1] block [64, 1, 1] (%x, %w) : (tensor<20x40xf32>, tensor<40x33xf32>) -> tensor<20x33xf32> {
  ^bb0(%a: tensor<20x40xf32>, %b: tensor<40x33xf32>):
    schedule.shared @a_tile : memref<128xf32, 3 : i64>
    schedule.shared @b_tile : memref<64xf32, 3 : i64>
    %g = schedule.group block -> global : tensor<20x33xf32> {
      %d = graph.dot %a, %b : (tensor<20x40xf32>, tensor<40x33xf32>) -> tensor<20x33xf32>
      schedule.yield %d : tensor<20x33xf32>
    }
    schedule.yield %g : tensor<20x33xf32>
  }
  func.return %y : tensor<20x33xf32>
}
