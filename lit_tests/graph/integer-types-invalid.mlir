// Integer element types the graph dialect refuses: shifts take no booleans, and the
// explicitly signed siN spelling is not used (signless iN is the signed type).
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xi1>) {
  // expected-error @+1 {{does not accept element type i1 (int types only)}}
  %r = graph.shl %x, %x : tensor<4xi1>
  func.return
}

// -----

func.func @f(%x: tensor<4xsi8>) {
  // expected-error @+1 {{unsupported element type si8; fsir supports f32, f16, bf16, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64}}
  %r = graph.neg %x : tensor<4xsi8>
  func.return
}

// -----

func.func @f(%x: tensor<4xui8>, %y: tensor<4xi8>) {
  // expected-error @+1 {{operand element types differ: ui8 and i8}}
  %r = graph.add %x, %y : (tensor<4xui8>, tensor<4xi8>) -> tensor<4xui8>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{cannot bitcast f32 (32 bits) to i64 (64 bits): the widths differ}}
  %r = graph.bitcast %x : (tensor<4xf32>) -> tensor<4xi64>
  func.return
}
