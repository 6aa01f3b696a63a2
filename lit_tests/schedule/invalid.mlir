// The schedule dialect's parsers and verifiers: every rule on the enums, the mapping
// parameters and the ops.
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown mapping 'tiles' (expected loop, row, gemm, conv, columns, attention, segments)}}
  %y = schedule.kernel @k tiles {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a block has at most 1024 threads, got 2048}}
  %y = schedule.kernel @k loop grid [1, 1, 1] block [2048, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{grid and block need 3 entries each (x, y, z)}}
  %y = schedule.kernel @k loop grid [1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{schedule.yield types (tensor<4xi32>) must be the result types (tensor<4xf32>)}}
  %y = schedule.kernel @k loop grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
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
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
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
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
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
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
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
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
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
  %y = schedule.kernel @k loop grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = graph.exp %a : tensor<4xf32>
    schedule.yield %e : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = schedule.kernel @k loop grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{a shared buffer must be in memory space 3 (workgroup)}}
    schedule.shared @b : memref<8xf32>
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the row mapping needs the parameter 'rows_per_block'}}
  %y = schedule.kernel @k row<threads_per_row = 32> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the gemm mapping needs the parameter 'tile'}}
  %y = schedule.kernel @k gemm<thread = 2x2> grid [1, 1, 1] block [64, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown row parameter 'steps' (expected threads_per_row, rows_per_block, elements_per_thread, row_steps, vector_width, interleaved)}}
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8, steps = 2> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

// A loop thread computes one vector: its width is the only parameter.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown loop parameter 'elements_per_thread' (expected vector_width)}}
  %y = schedule.kernel @k loop<elements_per_thread = 4> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{row parameter 'threads_per_row' is given twice}}
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8, threads_per_row = 32> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{gemm parameter 'tile' is 3 sizes (AxBxC)}}
  %y = schedule.kernel @k gemm<tile = 16x16, thread = 2x2> grid [1, 1, 1] block [64, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{gemm parameter 'thread' is 2 sizes (AxB)}}
  %y = schedule.kernel @k gemm<tile = 16x16x8, thread = 2> grid [1, 1, 1] block [64, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{vector_width must be 1, 2 or 4, got 3}}
  %y = schedule.kernel @k loop<vector_width = 3> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{threads_per_row (0) and rows_per_block (8) must be positive}}
  %y = schedule.kernel @k row<threads_per_row = 0, rows_per_block = 8> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{threads_per_row x rows_per_block (64 x 32) is more than 1024 threads}}
  %y = schedule.kernel @k row<threads_per_row = 64, rows_per_block = 32> grid [1, 1, 1] block [1024, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a block-composed row needs a multiple of 32 threads, got 48}}
  %y = schedule.kernel @k row<threads_per_row = 48, rows_per_block = 1> grid [1, 1, 1] block [48, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{threads_per_row 24 must be a power of two up to 32 (or the rows interleaved)}}
  %y = schedule.kernel @k row<threads_per_row = 24, rows_per_block = 8> grid [1, 1, 1] block [192, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{elements_per_thread must be positive, got 0}}
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 0> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{row_steps must be positive, got 0}}
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 2, row_steps = 0> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{vector_width needs elements_per_thread (the row kept in registers)}}
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8, vector_width = 2> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{vector_width 4 must divide elements_per_thread 6}}
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 6, vector_width = 4> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{vector_width must be 1, 2 or 4, got 3}}
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 4, vector_width = 3> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{tile sizes must be positive, got tile = 16x0x8, thread = 1x1}}
  %y = schedule.kernel @k gemm<tile = 16x0x8> grid [1, 1, 1] block [64, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the micro-tile 3x2 must divide the block tile 16x16}}
  %y = schedule.kernel @k gemm<tile = 16x16x8, thread = 3x2> grid [1, 1, 1] block [40, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a 64x64 tile of 1x1 micro-tiles has 4096 threads (at most 1024)}}
  %y = schedule.kernel @k gemm<tile = 64x64x8> grid [1, 1, 1] block [1024, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'schedule.kernel' op threads_per_row x rows_per_block (32 x 4) needs block [128, 1, 1], got [256, 1, 1]}}
  %y = schedule.kernel @k row<threads_per_row = 32, rows_per_block = 4> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'schedule.kernel' op a 16x16 tile of 2x2 micro-tiles needs block [64, 1, 1], got [256, 1, 1]}}
  %y = schedule.kernel @k gemm<tile = 16x16x8, thread = 2x2> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    schedule.yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

// The parameters' kind is the kernel's mapping: another attribute is rejected.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'schedule.kernel' op #schedule<mapping row> should be of attribute subclassing `MappingParamsAttr`}}
  %y = "schedule.kernel"(%x) <{sym_name = "k", params = #schedule<mapping row>, grid = array<i64: 1, 1, 1>, block = array<i64: 256, 1, 1>}> ({
  ^bb0(%a: tensor<4xf32>):
    "schedule.yield"(%a) : (tensor<4xf32>) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// A parameter attribute written on its own is checked as it is parsed.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the micro-tile 4x4 must divide the block tile 16x2}}
  %y = "schedule.kernel"(%x) <{sym_name = "k", params = #schedule.gemm<tile = 16x2x8, thread = 4x4>, grid = array<i64: 1, 1, 1>, block = array<i64: 8, 1, 1>}> ({
  ^bb0(%a: tensor<4xf32>):
    "schedule.yield"(%a) : (tensor<4xf32>) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{Expected `thread`, `warp`, or `block`.}}
  %y = "schedule.group"() <{composition = #schedule<composition grid>, storage = #schedule<storage global>}> ({
    "schedule.yield"(%x) : (tensor<4xf32>) -> ()
  }) : () -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
