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
