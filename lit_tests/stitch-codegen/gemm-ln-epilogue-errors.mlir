// A dot's epilogue may reduce its rows (a LayerNorm) only when a block tile spans the
// row, and in f32 (the lanes exchange 32-bit partials); otherwise the fusion is
// refused at the dot.
// RUN: fs-opt %s --split-input-file --verify-diagnostics -p stitch-codegen

func.func @wide(%a: tensor<8x16xf32>, %w: tensor<16x256xf32>) -> tensor<8x256xf32> {
  %y = stitch.fusion (%a, %w) : (tensor<8x16xf32>, tensor<16x256xf32>) -> tensor<8x256xf32> {
  ^bb0(%x: tensor<8x16xf32>, %v: tensor<16x256xf32>):
    // expected-error @+1 {{'graph.dot' op cannot be generated with the ops fused with it: a dot's epilogue can reduce its rows only when one block tile spans a row (128 columns at most), not 256}}
    %d = graph.dot %x, %v : (tensor<8x16xf32>, tensor<16x256xf32>) -> tensor<8x256xf32>
    %s = graph.reduce sum %d dims [1] : (tensor<8x256xf32>) -> tensor<8xf32>
    %sb = graph.broadcast %s dims [0] : (tensor<8xf32>) -> tensor<8x256xf32>
    %c = graph.sub %d, %sb : tensor<8x256xf32>
    stitch.yield %c : tensor<8x256xf32>
  }
  func.return %y : tensor<8x256xf32>
}

// -----

func.func @f64(%a: tensor<8x16xf64>, %w: tensor<16x32xf64>) -> tensor<8x32xf64> {
  %y = stitch.fusion (%a, %w) : (tensor<8x16xf64>, tensor<16x32xf64>) -> tensor<8x32xf64> {
  ^bb0(%x: tensor<8x16xf64>, %v: tensor<16x32xf64>):
    // expected-error @+1 {{'graph.dot' op cannot be generated with the ops fused with it: a dot's epilogue reduces rows in f32 only, not of f64}}
    %d = graph.dot %x, %v : (tensor<8x16xf64>, tensor<16x32xf64>) -> tensor<8x32xf64>
    %s = graph.reduce sum %d dims [1] : (tensor<8x32xf64>) -> tensor<8xf64>
    %sb = graph.broadcast %s dims [0] : (tensor<8xf64>) -> tensor<8x32xf64>
    %c = graph.sub %d, %sb : tensor<8x32xf64>
    stitch.yield %c : tensor<8x32xf64>
  }
  func.return %y : tensor<8x32xf64>
}
