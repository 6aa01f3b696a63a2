// A group's rows (`row_dims [...]`, maybe none) and `packed` (an independent part every
// thread of the grid takes elements of in turn) are properties: they print in the
// syntax they parse, custom or generic; the columns kernel's parameters likewise.
// RUN: fs-opt %s | fs-opt | filecheck %s
// RUN: fs-opt %s --print-op-generic | fs-opt | filecheck %s

// CHECK-LABEL: func.func @rows
// CHECK:       schedule.group block -> global row_dims [0] : tensor<4x8xf32>
// CHECK:       schedule.group thread -> global packed : tensor<3xf32>
// CHECK:       schedule.group block -> global row_dims [] : tensor<4x8xf32>
func.func @rows(%x: tensor<4x8xf32>, %z: tensor<3xf32>) -> (tensor<4x8xf32>, tensor<3xf32>, tensor<4x8xf32>) {
  %y, %w, %v = schedule.kernel @rows_k0 row<threads_per_row = 8, rows_per_block = 1> grid [4, 1, 1] block [8, 1, 1] (%x, %z) : (tensor<4x8xf32>, tensor<3xf32>) -> (tensor<4x8xf32>, tensor<3xf32>, tensor<4x8xf32>) {
  ^bb0(%x0: tensor<4x8xf32>, %z0: tensor<3xf32>):
    %e = schedule.group block -> global row_dims [0] : tensor<4x8xf32> {
      %a = graph.exp %x0 : tensor<4x8xf32>
      schedule.yield %a : tensor<4x8xf32>
    }
    %p = schedule.group thread -> global packed : tensor<3xf32> {
      %b = graph.neg %z0 : tensor<3xf32>
      schedule.yield %b : tensor<3xf32>
    }
    %n = schedule.group block -> global row_dims [] : tensor<4x8xf32> {
      %c = graph.neg %x0 : tensor<4x8xf32>
      schedule.yield %c : tensor<4x8xf32>
    }
    schedule.yield %e, %p, %n : tensor<4x8xf32>, tensor<3xf32>, tensor<4x8xf32>
  }
  func.return %y, %w, %v : tensor<4x8xf32>, tensor<3xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @columns
// CHECK:       schedule.kernel @columns_k0 columns<rows_per_tile = 8, warps = [0, 2, 4], lanes = [4, 4], vectors = [2, 2], clusters = [0, 0]> grid [1, 1, 1] block [256, 1, 1]
func.func @columns(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %y = schedule.kernel @columns_k0 columns<vectors = [2, 2], clusters = [0, 0], rows_per_tile = 8, lanes = [4, 4], warps = [0, 2, 4]> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    schedule.yield %a : tensor<8x4xf32>
  }
  func.return %y : tensor<8x4xf32>
}
