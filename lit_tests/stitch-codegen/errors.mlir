// Fusions stitch-codegen cannot generate are user errors at the op responsible.
// RUN: fs-opt %s -p stitch-codegen --split-input-file --verify-diagnostics

// A dot kernel's epilogue holds elementwise ops on the dot's result shape: a
// transpose of the product reads it at another index.
func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = stitch.fusion (%a) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>):
    // expected-error @+1 {{'graph.dot' op cannot be generated with the ops fused with it: only elementwise ops on the dot's result shape can be fused after a dot, not 'graph.transpose' on 4x4}}
    %d = graph.dot %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %e = graph.exp %d : tensor<4x4xf32>
    %t = graph.transpose %e perm [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
    stitch.yield %t : tensor<4x4xf32>
  }
  func.return %y : tensor<4x4xf32>
}

// -----

// The product and its epilogue's result both leave the kernel: it has one output.
func.func @two_outputs(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %y:2 = stitch.fusion (%a) : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  ^bb0(%x: tensor<4x4xf32>):
    // expected-error @+1 {{'graph.dot' op cannot be generated with the ops fused with it: a dot kernel has one output (the dot's result or its fused epilogue's)}}
    %d = graph.dot %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %e = graph.exp %d : tensor<4x4xf32>
    stitch.yield %d, %e : tensor<4x4xf32>, tensor<4x4xf32>
  }
  func.return %y#0, %y#1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A reduction of the product's rows may feed a normalisation of them in the GEMM's
// epilogue (a LayerNorm), but the kernel's output is the product's shape, not a row.
func.func @reduced(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  %y = stitch.fusion (%a) : (tensor<4x4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4x4xf32>):
    // expected-error @+1 {{'graph.dot' op cannot be generated with the ops fused with it: a dot's epilogue reducing its rows must end in a value of the dot's shape (the normalised rows), not 'graph.reduce' on 4}}
    %d = graph.dot %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %r = graph.reduce sum %d dims [1] : (tensor<4x4xf32>) -> tensor<4xf32>
    stitch.yield %r : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%a: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{'graph.tanh' op on f64 needs 'math.tanh', which the GPU code generator has in f32 only (convert to f32 first)}}
  %e = graph.tanh %a : tensor<4xf64>
  func.return %e : tensor<4xf64>
}

// -----

func.func @f(%x: tensor<4x9xf32>) -> (tensor<4xf32>, tensor<9xf32>) {
  %y, %z = stitch.fusion (%x) : (tensor<4x9xf32>) -> (tensor<4xf32>, tensor<9xf32>) {
  ^bb0(%xa: tensor<4x9xf32>):
    %s = graph.reduce sum %xa dims [1] : (tensor<4x9xf32>) -> tensor<4xf32>
    // expected-error @+1 {{'graph.reduce' op keeps a 9 shape unlike the fusion's first reduction (4); stitching them needs inter-block communication}}
    %t = graph.reduce sum %xa dims [0] : (tensor<4x9xf32>) -> tensor<9xf32>
    stitch.yield %s, %t : tensor<4xf32>, tensor<9xf32>
  }
  func.return %y, %z : tensor<4xf32>, tensor<9xf32>
}

// -----

func.func @f(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  %y = stitch.fusion (%x) : (tensor<4x4xf32>) -> tensor<4xf32> {
  ^bb0(%xa: tensor<4x4xf32>):
    %s = graph.reduce sum %xa dims [1] : (tensor<4x4xf32>) -> tensor<4xf32>
    %b = graph.broadcast %s dims [1] : (tensor<4xf32>) -> tensor<4x4xf32>
    %d = graph.sub %xa, %b : tensor<4x4xf32>
    // expected-error @+1 {{'graph.reduce' op reads a reduction result of a row it does not reduce; stitching them needs inter-block communication}}
    %t = graph.reduce max %d dims [1] : (tensor<4x4xf32>) -> tensor<4xf32>
    stitch.yield %t : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4x9xf32>) -> tensor<4x9xf32> {
  %y = stitch.fusion (%x) : (tensor<4x9xf32>) -> tensor<4x9xf32> {
  ^bb0(%xa: tensor<4x9xf32>):
    %s = graph.reduce sum %xa dims [1] : (tensor<4x9xf32>) -> tensor<4xf32>
    %r = graph.reshape %s : (tensor<4xf32>) -> tensor<2x2xf32>
    %t = graph.transpose %r perm [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %k = graph.reshape %t : (tensor<2x2xf32>) -> tensor<4xf32>
    %b = graph.broadcast %k dims [0] : (tensor<4xf32>) -> tensor<4x9xf32>
    // expected-error @+1 {{'graph.sub' op result 4x9 cannot be split into the rows (4) of the fusion's reductions without inter-block communication}}
    %d = graph.sub %xa, %b : tensor<4x9xf32>
    stitch.yield %d : tensor<4x9xf32>
  }
  func.return %y : tensor<4x9xf32>
}
