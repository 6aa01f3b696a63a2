// graph-canonicalize removes ops that return their operand unchanged, and only those:
// every pattern has a case where it must not fire.
// RUN: fs-opt %s --split-input-file -p graph-canonicalize | filecheck %s

// CHECK-LABEL: func.func @index_identities
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    func.return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @index_identities(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %r = graph.reshape %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = graph.convert %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = graph.transpose %x perm [0, 1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = graph.broadcast %x dims [0, 1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = graph.slice %x start [0, 0] limit [4, 8] strides [1, 1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %k = graph.concat %x dim 1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = graph.reduce sum %x dims [] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %r, %c, %t, %b, %s, %k, %n : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @index_non_identities
// CHECK-NEXT:    graph.reshape
// CHECK-NEXT:    graph.convert
// CHECK-NEXT:    graph.transpose
// CHECK-NEXT:    graph.broadcast
// CHECK-NEXT:    graph.slice
// CHECK-NEXT:    graph.slice
// CHECK-NEXT:    graph.concat
// CHECK-NEXT:    graph.reduce
// CHECK-NEXT:    func.return
func.func @index_non_identities(%x: tensor<4x4xf32>, %v: tensor<4xf32>) -> (tensor<16xf32>, tensor<4x4xf16>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<8x4xf32>, tensor<4xf32>) {
  %r = graph.reshape %x : (tensor<4x4xf32>) -> tensor<16xf32>
  %c = graph.convert %x : (tensor<4x4xf32>) -> tensor<4x4xf16>
  %t = graph.transpose %x perm [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = graph.broadcast %v dims [1] : (tensor<4xf32>) -> tensor<4x4xf32>
  %s = graph.slice %x start [0, 0] limit [4, 4] strides [2, 1] : (tensor<4x4xf32>) -> tensor<2x4xf32>
  %s1 = graph.slice %x start [1, 0] limit [4, 4] strides [1, 1] : (tensor<4x4xf32>) -> tensor<3x4xf32>
  %k = graph.concat %x, %x dim 0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %n = graph.reduce sum %x dims [1] : (tensor<4x4xf32>) -> tensor<4xf32>
  func.return %r, %c, %t, %b, %s, %s1, %k, %n : tensor<16xf32>, tensor<4x4xf16>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<8x4xf32>, tensor<4xf32>
}

// -----

// With `?` dims the same types do not mean the same sizes: a slice [0, 4) of a `?`
// dim may shorten it (this used to be removed). Broadcast of `?` dims is left alone
// conservatively.
// CHECK-LABEL: func.func @dynamic_non_identities
// CHECK-NEXT:    graph.slice
// CHECK-NEXT:    graph.broadcast
// CHECK-NEXT:    func.return
func.func @dynamic_non_identities(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %s = graph.slice %x start [0] limit [4] strides [1] : (tensor<?xf32>) -> tensor<?xf32>
  %b = graph.broadcast %x dims [0] : (tensor<?xf32>) -> tensor<?xf32>
  func.return %s, %b : tensor<?xf32>, tensor<?xf32>
}

// -----

// max/min/and/or of a value with itself is the value; add/sub/mul/xor are not.
// CHECK-LABEL: func.func @idempotent
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT:    %[[MXY:.*]] = graph.max %[[X]], %[[Y]] : tensor<4xf32>
// CHECK-NEXT:    %[[XOR:.*]] = graph.xor %[[I]], %[[I]] : tensor<4xi32>
// CHECK-NEXT:    %[[ADD:.*]] = graph.add %[[X]], %[[X]] : tensor<4xf32>
// CHECK-NEXT:    func.return %[[X]], %[[X]], %[[I]], %[[I]], %[[MXY]], %[[XOR]], %[[ADD]]
func.func @idempotent(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) {
  %mx = graph.max %x, %x : tensor<4xf32>
  %mn = graph.min %x, %x : tensor<4xf32>
  %a = graph.and %i, %i : tensor<4xi32>
  %o = graph.or %i, %i : tensor<4xi32>
  %mxy = graph.max %x, %y : tensor<4xf32>
  %xor = graph.xor %i, %i : tensor<4xi32>
  %add = graph.add %x, %x : tensor<4xf32>
  func.return %mx, %mn, %a, %o, %mxy, %xor, %add : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>
}

// -----

// x*1 and x/1 are exact for every x (also through a broadcast splat constant).
// CHECK-LABEL: func.func @mul_div_one
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[I:.*]]: tensor<4x8xi32>)
// CHECK-NEXT:    func.return %[[X]], %[[X]], %[[I]], %[[X]]
func.func @mul_div_one(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>) {
  %one = graph.constant dense<1.0> : tensor<4x8xf32>
  %ione = graph.constant dense<1> : tensor<4x8xi32>
  %m = graph.mul %x, %one : tensor<4x8xf32>
  %d = graph.div %x, %one : tensor<4x8xf32>
  %id = graph.div %i, %ione : tensor<4x8xi32>
  %s = graph.constant dense<1.0> : tensor<8xf32>
  %sb = graph.broadcast %s dims [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %mb = graph.mul %x, %sb : tensor<4x8xf32>
  func.return %m, %d, %id, %mb : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>
}

// -----

// Not identities: 1/x, x*2, x*[1, 2] (not a splat), x*1 where the constant is on the left
// (the pattern only looks at the right operand), x*0 (NaN*0 is NaN, not 0).
// CHECK-LABEL: func.func @mul_div_not_one
// CHECK-COUNT-5: graph.{{mul|div}}
// CHECK-NEXT:    func.return
func.func @mul_div_not_one(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %one = graph.constant dense<1.0> : tensor<2xf32>
  %two = graph.constant dense<2.0> : tensor<2xf32>
  %mixed = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %zero = graph.constant dense<0.0> : tensor<2xf32>
  %a = graph.div %one, %x : tensor<2xf32>
  %b = graph.mul %x, %two : tensor<2xf32>
  %c = graph.mul %x, %mixed : tensor<2xf32>
  %d = graph.mul %one, %x : tensor<2xf32>
  %e = graph.mul %x, %zero : tensor<2xf32>
  func.return %a, %b, %c, %d, %e : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Integers: x+0 and x-0 are x.
// CHECK-LABEL: func.func @int_add_sub_zero
// CHECK-SAME:    (%[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT:    func.return %[[I]], %[[I]]
func.func @int_add_sub_zero(%i: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %z = graph.constant dense<0> : tensor<4xi32>
  %a = graph.add %i, %z : tensor<4xi32>
  %s = graph.sub %i, %z : tensor<4xi32>
  func.return %a, %s : tensor<4xi32>, tensor<4xi32>
}

// -----

// Floats: -0.0 + 0.0 is +0.0, so x + 0.0 is NOT x, and neither is x - (-0.0);
// x + (-0.0) and x - 0.0 are x for every x (including -0.0, NaN and inf).
// CHECK-LABEL: func.func @float_add_sub_zero
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-DAG:     %[[PZ:.*]] = graph.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-DAG:     %[[NZ:.*]] = graph.constant dense<-0.000000e+00> : tensor<4xf32>
// CHECK-DAG:     %[[A:.*]] = graph.add %[[X]], %[[PZ]] : tensor<4xf32>
// CHECK-DAG:     %[[S:.*]] = graph.sub %[[X]], %[[NZ]] : tensor<4xf32>
// CHECK:         func.return %[[A]], %[[X]], %[[X]], %[[S]]
func.func @float_add_sub_zero(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %pz = graph.constant dense<0.0> : tensor<4xf32>
  %nz = graph.constant dense<-0.0> : tensor<4xf32>
  %a = graph.add %x, %pz : tensor<4xf32>
  %b = graph.add %x, %nz : tensor<4xf32>
  %c = graph.sub %x, %pz : tensor<4xf32>
  %d = graph.sub %x, %nz : tensor<4xf32>
  func.return %a, %b, %c, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A constant condition picks a branch.
// CHECK-LABEL: func.func @select_constant_condition
// CHECK-SAME:    (%[[C:.*]]: tensor<4xi1>, %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[S:.*]] = graph.select %[[C]], %[[X]], %[[Y]]
// CHECK-NEXT:    func.return %[[X]], %[[Y]], %[[S]]
func.func @select_constant_condition(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = graph.constant dense<true> : tensor<4xi1>
  %f = graph.constant dense<false> : tensor<4xi1>
  %a = graph.select %t, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = graph.select %f, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = graph.select %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a, %b, %s : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A non-splat condition is not constant-folded to one branch.
// CHECK-LABEL: func.func @select_mixed_condition
// CHECK:         graph.select
func.func @select_mixed_condition(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %m = graph.constant dense<[true, false]> : tensor<2xi1>
  %a = graph.select %m, %x, %y : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %a : tensor<2xf32>
}
