// schedule-to-gpu refuses an attention kernel whose group is no attention, or whose
// shared tiles are too small, naming the kernel.
// RUN: fs-opt %s --split-input-file --verify-diagnostics -p schedule-to-gpu

func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: an attention kernel has one group yielding softmax(q·kᵀ ...)·v (two graph.dot around a softmax over the last dim)}}
  %y = schedule.kernel @k attention<block_q = 32, block_k = 16> grid [1, 1, 1] block [32, 1, 1] (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %g = schedule.group block -> global : tensor<4x4xf32> {
      %d = graph.dot %a, %a : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      schedule.yield %d : tensor<4x4xf32>
    }
    schedule.yield %g : tensor<4x4xf32>
  }
  func.return %y : tensor<4x4xf32>
}

// -----

func.func @g(%q: tensor<4x8xf32>, %kt: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'schedule.kernel' op @k cannot be lowered: @v_tile must hold 128 f32 elements}}
  %y = schedule.kernel @k attention<block_q = 32, block_k = 16> grid [1, 1, 1] block [32, 1, 1] (%q, %kt, %v) : (tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x8xf32>):
    schedule.shared @q_tile : memref<288xf32, 3 : i64>
    schedule.shared @k_tile : memref<128xf32, 3 : i64>
    schedule.shared @v_tile : memref<64xf32, 3 : i64>
    schedule.shared @p_tile : memref<544xf32, 3 : i64>
    %g = schedule.group block -> global : tensor<4x8xf32> {
      %s = graph.dot %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
      %m = graph.reduce max %s dims [1] : (tensor<4x4xf32>) -> tensor<4xf32>
      %mb = graph.broadcast %m dims [0] : (tensor<4xf32>) -> tensor<4x4xf32>
      %sh = graph.sub %s, %mb : tensor<4x4xf32>
      %e = graph.exp %sh : tensor<4x4xf32>
      %l = graph.reduce sum %e dims [1] : (tensor<4x4xf32>) -> tensor<4xf32>
      %lb = graph.broadcast %l dims [0] : (tensor<4xf32>) -> tensor<4x4xf32>
      %p = graph.div %e, %lb : tensor<4x4xf32>
      %o = graph.dot %p, %c : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      schedule.yield %o : tensor<4x8xf32>
    }
    schedule.yield %g : tensor<4x8xf32>
  }
  func.return %y : tensor<4x8xf32>
}
