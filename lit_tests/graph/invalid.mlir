// The graph dialect's verifier and parser reject malformed ops with messages that say
// what is wrong (one error per chunk: verification stops at the first).
// RUN: fs-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>, %y: tensor<5xf32>) {
  // expected-error @+1 {{operand shapes differ: 4 and 5 (broadcast explicitly with graph.broadcast)}}
  %r = graph.add %x, %y : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>, %y: tensor<4xf16>) {
  // expected-error @+1 {{operand element types differ: f32 and f16}}
  %r = graph.mul %x, %y : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xi32>) {
  // expected-error @+1 {{does not accept element type i32 (float types only)}}
  %r = graph.exp %x : tensor<4xi32>
  func.return
}

// -----

func.func @f(%x: tensor<4xi1>, %y: tensor<4xi1>) {
  // expected-error @+1 {{does not accept element type i1 (numeric types only)}}
  %r = graph.pow %x, %y : tensor<4xi1>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{does not accept element type f32 (integer types only)}}
  %r = graph.not %x : tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xi1>) {
  // expected-error @+1 {{does not accept element type i1 (numeric types only)}}
  %r = graph.neg %x : tensor<4xi1>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected 2 operands, got 1}}
  %r = "graph.add"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{result shape 5 does not match the expected 4}}
  %r = graph.exp %x : (tensor<4xf32>) -> tensor<5xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{result element type f16 does not match the expected f32}}
  %r = graph.exp %x : (tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{result shape 4x1 does not match the expected 4}}
  %r = graph.exp %x : (tensor<4xf32>) -> tensor<4x1xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{expected 2 operand types, got 1}}
  %r = graph.add %x, %y : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xindex>) {
  // expected-error @+1 {{unsupported element type index}}
  %r = graph.abs %x : tensor<4xindex>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{operand element types differ: f32 and i32}}
  %r = graph.compare lt %x, %y : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{result element type f32 does not match the expected i1}}
  %r = graph.compare lt %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{operand shapes differ: 4 and 3}}
  %r = graph.compare ge %x, %y : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xi1>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{Expected one of 'eq', 'ge', 'gt', 'le', 'lt', 'ne'}}
  %r = graph.compare gte %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

func.func @f(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{condition must have element type i1, got f32}}
  %r = graph.select %c, %x, %x : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{branch element types differ: f32 and i32}}
  %r = graph.select %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%c: tensor<3xi1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes differ: 3 and 4}}
  %r = graph.select %c, %x, %x : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{result shape 8 does not match the expected 4}}
  %r = graph.convert %x : (tensor<4xf32>) -> tensor<8xf16>
  func.return
}

// -----

func.func @f() {
  // expected-error @+1 {{expected a dense elements attribute}}
  %r = graph.constant 1.0 : f32
  func.return
}

// -----

func.func @f() {
  // expected-error @+1 {{iota dimension 2 is out of range for rank 2}}
  %r = graph.iota dim 2 : tensor<4x8xi32>
  func.return
}

// -----

func.func @f() {
  // expected-error @+1 {{iota needs an integer or float element type, got i1}}
  %r = graph.iota dim 0 : tensor<4xi1>
  func.return
}

// -----

func.func @f(%v: tensor<8xf32>) {
  // expected-error @+1 {{dims has 2 entries but the operand has rank 1}}
  %r = graph.broadcast %v dims [0, 1] : (tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @f(%v: tensor<8xf32>) {
  // expected-error @+1 {{broadcast dimension 2 is out of range for rank 2}}
  %r = graph.broadcast %v dims [2] : (tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @f(%v: tensor<8x4xf32>) {
  // expected-error @+1 {{dims [2, 1] must be increasing (use graph.transpose to permute)}}
  %r = graph.broadcast %v dims [2, 1] : (tensor<8x4xf32>) -> tensor<2x4x8xf32>
  func.return
}

// -----

func.func @f(%v: tensor<8x8xf32>) {
  // expected-error @+1 {{broadcast dimensions [1, 1] contain duplicates}}
  %r = graph.broadcast %v dims [1, 1] : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return
}

// -----

func.func @f(%v: tensor<3xf32>) {
  // expected-error @+1 {{operand dim 0 of size 3 cannot broadcast to result dim 1 of size 4}}
  %r = graph.broadcast %v dims [1] : (tensor<3xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @f(%v: tensor<3xf32>) {
  // expected-error @+1 {{result element type f16 does not match the expected f32}}
  %r = graph.broadcast %v dims [0] : (tensor<3xf32>) -> tensor<3x4xf16>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{cannot reshape 4x8 (32 elements) to 30 (30 elements)}}
  %r = graph.reshape %x : (tensor<4x8xf32>) -> tensor<30xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{cannot reshape 4x8 (32 elements) to ?x5}}
  %r = graph.reshape %x : (tensor<4x8xf32>) -> tensor<?x5xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reshape cannot change the element type (use graph.convert)}}
  %r = graph.reshape %x : (tensor<4x8xf32>) -> tensor<32xi32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{perm [0, 0] is not a permutation of 2 dimensions}}
  %r = graph.transpose %x perm [0, 0] : (tensor<4x8xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{perm [1] is not a permutation of 2 dimensions}}
  %r = graph.transpose %x perm [1] : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{perm [1, 2] is not a permutation of 2 dimensions}}
  %r = graph.transpose %x perm [1, 2] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape 4x8 does not match the expected 8x4}}
  %r = graph.transpose %x perm [1, 0] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice [0, 9) of dim 1 is out of bounds for size 8}}
  %r = graph.slice %x start [0, 0] limit [4, 9] strides [1, 1] : (tensor<4x8xf32>) -> tensor<4x9xf32>
  func.return
}

// -----

// A `?` dim is kept whole (limit -9223372036854775808) only from start 0 with stride 1.
func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{slice [1, -9223372036854775808) of dim 0 is out of bounds for size ?}}
  %r = graph.slice %x start [1, 0] limit [-9223372036854775808, 8] strides [1, 1] : (tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice [3, 2) of dim 0 is out of bounds for size 4}}
  %r = graph.slice %x start [3, 0] limit [2, 8] strides [1, 1] : (tensor<4x8xf32>) -> tensor<0x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice [-1, 4) of dim 0 is out of bounds for size 4}}
  %r = graph.slice %x start [-1, 0] limit [4, 8] strides [1, 1] : (tensor<4x8xf32>) -> tensor<5x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{stride 0 of dim 1 must be positive}}
  %r = graph.slice %x start [0, 0] limit [4, 8] strides [1, 0] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{start, limit and strides need 2 entries each (the operand rank)}}
  %r = graph.slice %x start [0] limit [4] strides [1] : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape 4x2 does not match the expected 4x3}}
  %r = graph.slice %x start [0, 0] limit [4, 8] strides [1, 3] : (tensor<4x8xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{concat dimension 2 is out of range for rank 2}}
  %r = graph.concat %x, %x dim 2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x7xf32>) {
  // expected-error @+1 {{operand dim 1 sizes differ: 8 and 7}}
  %r = graph.concat %x, %y dim 0 : (tensor<4x8xf32>, tensor<4x7xf32>) -> tensor<8x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x8xf16>) {
  // expected-error @+1 {{operand element types differ: f32 and f16}}
  %r = graph.concat %x, %y dim 0 : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<8x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>, %y: tensor<8xf32>) {
  // expected-error @+1 {{operand ranks differ: 2 and 1}}
  %r = graph.concat %x, %y dim 0 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<5x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape 4x8 does not match the expected 4x16}}
  %r = graph.concat %x, %x dim 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reduction dimension 2 is out of range for rank 2}}
  %r = graph.reduce sum %x dims [2] : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reduction dimensions [1, 1] contain duplicates}}
  %r = graph.reduce sum %x dims [1, 1] : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape 8 does not match the expected 4}}
  %r = graph.reduce max %x dims [1] : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape 4x1 does not match the expected 4}}
  %r = graph.reduce min %x dims [1] : (tensor<4x8xf32>) -> tensor<4x1xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xi1>) {
  // expected-error @+1 {{cannot reduce i1 tensors (convert them first)}}
  %r = graph.reduce sum %x dims [1] : (tensor<4x8xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{Expected one of 'max', 'min', 'prod', 'sum'}}
  %r = graph.reduce mean %x dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{Expected 'dims'}}
  %r = graph.reduce sum %x : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @f(%t: tensor<10x4xf32>, %ids: tensor<3xf32>) {
  // expected-error @+1 {{ids must be i32 or i64, got f32}}
  %r = graph.gather %t, %ids : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @f(%t: tensor<10x4xf32>, %ids: tensor<3xi1>) {
  // expected-error @+1 {{ids must be i32 or i64, got i1}}
  %r = graph.gather %t, %ids : (tensor<10x4xf32>, tensor<3xi1>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @f(%t: tensor<f32>, %ids: tensor<3xi32>) {
  // expected-error @+1 {{the table must have rank >= 1}}
  %r = graph.gather %t, %ids : (tensor<f32>, tensor<3xi32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @f(%t: tensor<10x4xf32>, %ids: tensor<3xi32>) {
  // expected-error @+1 {{result shape 3x10 does not match the expected 3x4}}
  %r = graph.gather %t, %ids : (tensor<10x4xf32>, tensor<3xi32>) -> tensor<3x10xf32>
  func.return
}

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<7x3xf32>) {
  // expected-error @+1 {{contracting dims differ: 4x8 @ 7x3}}
  %r = graph.dot %a, %b : (tensor<4x8xf32>, tensor<7x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @f(%a: tensor<2x4x8xf32>, %b: tensor<3x8x5xf32>) {
  // expected-error @+1 {{batch dims 2 and 3 do not broadcast}}
  %r = graph.dot %a, %b : (tensor<2x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x4x5xf32>
  func.return
}

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x3xf16>) {
  // expected-error @+1 {{operand element types differ: f32 and f16}}
  %r = graph.dot %a, %b : (tensor<4x8xf32>, tensor<8x3xf16>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @f(%a: tensor<f32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{dot operands must have rank >= 1}}
  %r = graph.dot %a, %b : (tensor<f32>, tensor<8x3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{result shape 3x4 does not match the expected 4x3}}
  %r = graph.dot %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @f(%a: tensor<4x8xi1>, %b: tensor<8x3xi1>) {
  // expected-error @+1 {{cannot multiply i1 tensors}}
  %r = graph.dot %a, %b : (tensor<4x8xi1>, tensor<8x3xi1>) -> tensor<4x3xi1>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{use of undefined value '%nope'}}
  %r = graph.exp %nope : tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{Operation graph.frobnicate is not registered}}
  %r = graph.frobnicate %x : tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{operand is used with type f32, but has been previously used or defined with type tensor<4xf32>}}
  %r = graph.exp %x : f32
  func.return
}

// -----

func.func @f(%x: f32) {
  // expected-error @+1 {{f32 should be of base attribute tensor}}
  %r = graph.exp %x : f32
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<5xf32> {
  %r = graph.exp %x : tensor<4xf32>
  // expected-error @+1 {{expected [tensor<5xf32>], got [tensor<4xf32>]}}
  func.return %r : tensor<4xf32>
}

// -----

// A `?` result is fine, but a static one must agree with what the operands imply.
func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{result shape 4x7 does not match the expected ?x8}}
  %r = graph.exp %x : (tensor<?x8xf32>) -> tensor<4x7xf32>
  func.return
}

// -----

func.func @f() {
  // expected-error @+1 {{concat needs at least one operand}}
  %r = "graph.concat"() <{dim = 0 : i64}> : () -> tensor<4xf32>
  func.return
}

// -----

func.func @f() {
  // expected-error @+1 {{iota dimension -1 is out of range for rank 1}}
  %r = graph.iota dim -1 : tensor<4xi32>
  func.return
}

// -----

// The generic form bypasses the keyword parser; the kind is a typed enum attribute
// whose parser names the allowed kinds.
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{Expected `sum`, `max`, `min`, or `prod`.}}
  %r = "graph.reduce"(%x) <{kind = #graph<reduce_kind mean>, dims = array<i64: 0>}> : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.reduce' op "sum" should be of base attribute graph.reduce_kind}}
  %r = "graph.reduce"(%x) <{kind = "sum", dims = array<i64: 0>}> : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @f(%x: tensor<8x4xf32>, %o: tensor<3xi32>) {
  // expected-error @+1 {{Expected `sum`, `mean`, `max`, or `min`.}}
  %r = "graph.segment_reduce"(%x, %o) <{kind = #graph<segment_kind prod>}> : (tensor<8x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  func.return
}

// -----

// Each op has its own enum: a reduce kind is no segment kind.
func.func @f(%x: tensor<8x4xf32>, %o: tensor<3xi32>) {
  // expected-error @+1 {{'graph.segment_reduce' op #graph<reduce_kind sum> should be of base attribute graph.segment_kind}}
  %r = "graph.segment_reduce"(%x, %o) <{kind = #graph<reduce_kind sum>}> : (tensor<8x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{Expected `eq`, `ne`, `lt`, `le`, `gt`, or `ge`.}}
  %r = "graph.compare"(%x, %y) <{direction = #graph<compare_direction gte>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'graph.compare' op "gt" should be of base attribute graph.compare_direction}}
  %r = "graph.compare"(%x, %y) <{direction = "gt"}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

func.func @f(%x: tensor<8xf32>, %i: tensor<3x1xi32>, %u: tensor<3xf32>) {
  // expected-error @+1 {{Expected `none`, `add`, `mul`, `max`, or `min`.}}
  %r = "graph.scatter"(%x, %i, %u) <{kind = #graph<scatter_kind sub>, dims = array<i64: 0>}> : (tensor<8xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<8xf32>, %i: tensor<3x1xi32>, %u: tensor<3xf32>) {
  // expected-error @+1 {{'graph.scatter' op "add" should be of base attribute graph.scatter_kind}}
  %r = "graph.scatter"(%x, %i, %u) <{kind = "add", dims = array<i64: 0>}> : (tensor<8xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @f(%k: tensor<4x8xf32>) {
  // expected-error @+1 {{Expected `ascending`, or `descending`.}}
  %r = "graph.sort"(%k, %k) <{direction = #graph<sort_direction up>, dim = 1 : i64}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @f(%k: tensor<4x8xf32>) {
  // expected-error @+1 {{'graph.sort' op "ascending" should be of base attribute graph.sort_direction}}
  %r = "graph.sort"(%k, %k) <{direction = "ascending", dim = 1 : i64}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<8x4xf32>, %i: tensor<3x2xi32>, %u: tensor<3x4xf32>) {
  // expected-error @+1 {{the last dim of the indices (2) must be the number of scattered dims (1)}}
  %r = graph.scatter add %x, %i, %u dims [0] : (tensor<8x4xf32>, tensor<3x2xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<8x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x5xf32>) {
  // expected-error @+1 {{updates shape 3x5 does not match indices and operand: expected 3x4}}
  %r = graph.scatter none %x, %i, %u dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<8x4xf32>, %i: tensor<3x1xf32>, %u: tensor<3x4xf32>) {
  // expected-error @+1 {{indices must be integers, got f32}}
  %r = graph.scatter max %x, %i, %u dims [0] : (tensor<8x4xf32>, tensor<3x1xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<8x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x8xf32>) {
  // expected-error @+1 {{scatter dimension 2 is out of range for rank 2}}
  %r = graph.scatter min %x, %i, %u dims [2] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @f(%k: tensor<2x65xf32>) {
  // expected-error @+1 {{sorts only static dims of at most 64 elements, dim 1 has 65}}
  %r = graph.sort ascending %k, %k dim 1 : tensor<2x65xf32>
  func.return
}

// -----

func.func @f(%k: tensor<2x?xf32>) {
  // expected-error @+1 {{sorts only static dims of at most 64 elements, dim 1 has ?}}
  %r = graph.sort ascending %k, %k dim 1 : tensor<2x?xf32>
  func.return
}

// -----

func.func @f(%k: tensor<2x8xf32>, %v: tensor<2x7xf32>) {
  // expected-error @+1 {{keys and values shapes differ: 2x8 and 2x7}}
  %r = graph.sort ascending %k, %v dim 1 : (tensor<2x8xf32>, tensor<2x7xf32>) -> tensor<2x7xf32>
  func.return
}

// -----

func.func @f(%k: tensor<2x8xf32>) {
  // expected-error @+1 {{Expected one of 'ascending', 'descending'}}
  %r = graph.sort upward %k, %k dim 1 : tensor<2x8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<8xf32>, %i: tensor<3x1xi32>, %u: tensor<3xf32>) {
  // expected-error @+1 {{Expected one of 'add', 'max', 'min', 'mul', 'none'}}
  %r = graph.scatter sub %x, %i, %u dims [0] : (tensor<8xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<?x4x?xf32>) {
  // expected-error @+1 {{reshape groups [2, 1, 1, 1] do not cover ?x4x? -> ?x1x?}}
  %r = graph.reshape %x {groups = array<i64: 2, 1, 1, 1>} : (tensor<?x4x?xf32>) -> tensor<?x1x?xf32>
  func.return
}

// -----

func.func @f(%x: tensor<?x4x?xf32>) {
  // expected-error @+1 {{reshape group ?x4x? -> ?x? does not determine its result dims}}
  %r = graph.reshape %x {groups = array<i64: 3, 2>} : (tensor<?x4x?xf32>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @f(%x: tensor<?x4x?xf32>) {
  // expected-error @+1 {{reshape group 4 cannot become 3}}
  %r = graph.reshape %x {groups = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<?x4x?xf32>) -> tensor<?x3x?xf32>
  func.return
}

// -----

func.func @f(%x: tensor<?x4x?xf32>) {
  // expected-error @+1 {{reshape groups [2, 0, 1, 3] must be pairs of dim counts of at least 1}}
  %r = graph.reshape %x {groups = array<i64: 2, 0, 1, 3>} : (tensor<?x4x?xf32>) -> tensor<?x1x?xf32>
  func.return
}
