// schedule-to-gpu needs every non-free op inside a schedule.kernel.
// RUN: fs-opt %s -p schedule-to-gpu --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k loop {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
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
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: threads_per_row x rows_per_block (32 x 4) must be the block size 256}}
  %y = schedule.kernel @k row {threads_per_row = 32 : i64, rows_per_block = 4 : i64} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %g = schedule.group warp -> lanes : tensor<4xf32> {
      %r = graph.reduce sum %a dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: the row mapping needs the parameter 'rows_per_block'}}
  %y = schedule.kernel @k row {threads_per_row = 32 : i64} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %g = schedule.group warp -> lanes : tensor<4xf32> {
      %r = graph.reduce sum %a dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: missing 'partials_f32'}}
  %y = schedule.kernel @k row {threads_per_row = 256 : i64, rows_per_block = 1 : i64} grid [4, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
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
  %y = schedule.kernel @k loop {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
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
  %y = schedule.kernel @k row {threads_per_row = 8 : i64, rows_per_block = 32 : i64} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %e = schedule.group warp -> lanes {row_dims = array<i64: 0>} : tensor<4x8xf32> {
      %e0 = graph.exp %a : tensor<4x8xf32>
      schedule.yield %e0 : tensor<4x8xf32>
    }
    %s = schedule.group warp -> lanes : tensor<4xf32> {
      %r = graph.reduce sum %e dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    %g = schedule.group warp -> global {row_dims = array<i64: 0>} : tensor<4x8xf32> {
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
  %y = schedule.kernel @k row {threads_per_row = 8 : i64, rows_per_block = 32 : i64} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    schedule.shared @rows : memref<64xf32, 3>
    %e = schedule.group warp -> shared @rows[0] {row_dims = array<i64: 0>} : tensor<4x8xf32> {
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

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: vector_width must be 1, 2 or 4, got 3}}
  %y = schedule.kernel @k loop {vector_width = 3 : i64} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %g = schedule.group thread -> global : tensor<4x8xf32> {
      %e = graph.exp %a : tensor<4x8xf32>
      schedule.yield %e : tensor<4x8xf32>
    }
    schedule.yield %g : tensor<4x8xf32>
  }
  func.return %y : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: vector_width 4 needs static innermost extents that are multiples of it (a result of 6)}}
  %y = schedule.kernel @k loop {vector_width = 4 : i64} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x6xf32>) -> tensor<4x6xf32> {
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

func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: vector_width needs elements_per_thread (the row kept in registers)}}
  %y = schedule.kernel @k row {threads_per_row = 32 : i64, rows_per_block = 8 : i64, vector_width = 2 : i64} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %g = schedule.group warp -> lanes : tensor<4xf32> {
      %r = graph.reduce sum %a dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
      schedule.yield %r : tensor<4xf32>
    }
    schedule.yield %g : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x6xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: vector_width 4 needs static innermost extents that are multiples of it (a row of 6)}}
  %y = schedule.kernel @k row {threads_per_row = 32 : i64, rows_per_block = 8 : i64, elements_per_thread = 4 : i64, vector_width = 4 : i64} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x6xf32>) -> tensor<4xf32> {
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
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: a 16x16 tile of 2x2 micro-tiles needs block [64, 1, 1]}}
  %y = schedule.kernel @k gemm {tile_m = 16 : i64, tile_n = 16 : i64, tile_k = 8 : i64, thread_m = 2 : i64, thread_n = 2 : i64} grid [3, 2, 1] block [256, 1, 1] (%x, %w) : (tensor<20x40xf32>, tensor<40x33xf32>) -> tensor<20x33xf32> {
  ^bb0(%a: tensor<20x40xf32>, %b: tensor<40x33xf32>):
    schedule.shared @a_tile : memref<128xf32, 3 : i64>
    schedule.shared @b_tile : memref<128xf32, 3 : i64>
    %g = schedule.group block -> global : tensor<20x33xf32> {
      %d = graph.dot %a, %b : (tensor<20x40xf32>, tensor<40x33xf32>) -> tensor<20x33xf32>
      schedule.yield %d : tensor<20x33xf32>
    }
    schedule.yield %g : tensor<20x33xf32>
  }
  func.return %y : tensor<20x33xf32>
}

// -----

func.func @f(%x: tensor<20x40xf32>, %w: tensor<40x33xf32>) -> tensor<20x33xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: the micro-tile 3x2 must divide the block tile 16x16}}
  %y = schedule.kernel @k gemm {tile_m = 16 : i64, tile_n = 16 : i64, tile_k = 8 : i64, thread_m = 3 : i64, thread_n = 2 : i64} grid [3, 2, 1] block [40, 1, 1] (%x, %w) : (tensor<20x40xf32>, tensor<40x33xf32>) -> tensor<20x33xf32> {
  ^bb0(%a: tensor<20x40xf32>, %b: tensor<40x33xf32>):
    schedule.shared @a_tile : memref<128xf32, 3 : i64>
    schedule.shared @b_tile : memref<128xf32, 3 : i64>
    %g = schedule.group block -> global : tensor<20x33xf32> {
      %d = graph.dot %a, %b : (tensor<20x40xf32>, tensor<40x33xf32>) -> tensor<20x33xf32>
      schedule.yield %d : tensor<20x33xf32>
    }
    schedule.yield %g : tensor<20x33xf32>
  }
  func.return %y : tensor<20x33xf32>
}

// -----

func.func @f(%x: tensor<20x40xf32>, %w: tensor<40x33xf32>) -> tensor<20x33xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: @b_tile has 64 elements; the tiles need 128}}
  %y = schedule.kernel @k gemm {tile_m = 16 : i64, tile_n = 16 : i64, tile_k = 8 : i64, thread_m = 2 : i64, thread_n = 2 : i64} grid [3, 2, 1] block [64, 1, 1] (%x, %w) : (tensor<20x40xf32>, tensor<40x33xf32>) -> tensor<20x33xf32> {
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
