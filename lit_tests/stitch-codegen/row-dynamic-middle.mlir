// A reduction over a `?` dim that is not the innermost ([1, ?, 4] over dim 1: rows
// [1, 4]) cannot take an epilogue of the operand's shape: pairing the result's `?` dim
// with the rows' static size-1 dim would make its reads look local (the read of a
// size-1 dim is 0) while it holds more elements than the row at run time.
// RUN: fs-opt %s -p stitch-codegen --verify-diagnostics

func.func @middle(%x: tensor<1x?x4xf32>) -> tensor<1x?x4xf32> {
  %y = stitch.fusion (%x) : (tensor<1x?x4xf32>) -> tensor<1x?x4xf32> {
  ^bb0(%xa: tensor<1x?x4xf32>):
    %m = graph.reduce max %xa dims [1] : (tensor<1x?x4xf32>) -> tensor<1x4xf32>
    %mb = graph.broadcast %m dims [0, 2] like %xa : (tensor<1x4xf32>, tensor<1x?x4xf32>) -> tensor<1x?x4xf32>
    // expected-error @+1 {{'graph.sub' op result 1x?x4 cannot be split into the rows (1x4) of the fusion's reductions without inter-block communication}}
    %d = graph.sub %xa, %mb : tensor<1x?x4xf32>
    stitch.yield %d : tensor<1x?x4xf32>
  }
  func.return %y : tensor<1x?x4xf32>
}
