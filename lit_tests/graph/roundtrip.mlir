// Every graph op, every element type, `?` dims and rank-0 tensors survive
// print -> parse -> print, in the custom and in the generic form.
// RUN: fs-opt %s | fs-opt | filecheck %s
// RUN: fs-opt %s --print-op-generic | fs-opt | filecheck %s

// CHECK-LABEL: func.func @unary_float
// CHECK-SAME:  (%[[X:.*]]: tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @unary_float(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %[[V0:.*]] = graph.neg %[[X]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[V1:.*]] = graph.abs %[[V0]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[V2:.*]] = graph.floor %[[V1]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[V3:.*]] = graph.ceil %[[V2]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[V4:.*]] = graph.exp %[[V3]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[V5:.*]] = graph.log %[[V4]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[V6:.*]] = graph.tanh %[[V5]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[V7:.*]] = graph.erf %[[V6]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[V8:.*]] = graph.sqrt %[[V7]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[V9:.*]] = graph.rsqrt %[[V8]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[V10:.*]] = graph.sigmoid %[[V9]] : tensor<4x8xf32>
  // CHECK-NEXT: func.return %[[V10]] : tensor<4x8xf32>
  %0 = graph.neg %x : tensor<4x8xf32>
  %1 = graph.abs %0 : tensor<4x8xf32>
  %2 = graph.floor %1 : tensor<4x8xf32>
  %3 = graph.ceil %2 : tensor<4x8xf32>
  %4 = graph.exp %3 : tensor<4x8xf32>
  %5 = graph.log %4 : tensor<4x8xf32>
  %6 = graph.tanh %5 : tensor<4x8xf32>
  %7 = graph.erf %6 : tensor<4x8xf32>
  %8 = graph.sqrt %7 : tensor<4x8xf32>
  %9 = graph.rsqrt %8 : tensor<4x8xf32>
  %10 = graph.sigmoid %9 : tensor<4x8xf32>
  func.return %10 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @unary_trig
// CHECK-SAME:  (%[[X:.*]]: tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @unary_trig(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %[[T0:.*]] = graph.round %[[X]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[T1:.*]] = graph.sin %[[T0]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[T2:.*]] = graph.cos %[[T1]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[T3:.*]] = graph.tan %[[T2]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[T4:.*]] = graph.asin %[[T3]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[T5:.*]] = graph.acos %[[T4]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[T6:.*]] = graph.atan %[[T5]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[T7:.*]] = graph.sinh %[[T6]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[T8:.*]] = graph.cosh %[[T7]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[T9:.*]] = graph.asinh %[[T8]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[T10:.*]] = graph.acosh %[[T9]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[T11:.*]] = graph.atanh %[[T10]] : tensor<4x8xf32>
  // CHECK-NEXT: func.return %[[T11]] : tensor<4x8xf32>
  %t0 = graph.round %x : tensor<4x8xf32>
  %t1 = graph.sin %t0 : tensor<4x8xf32>
  %t2 = graph.cos %t1 : tensor<4x8xf32>
  %t3 = graph.tan %t2 : tensor<4x8xf32>
  %t4 = graph.asin %t3 : tensor<4x8xf32>
  %t5 = graph.acos %t4 : tensor<4x8xf32>
  %t6 = graph.atan %t5 : tensor<4x8xf32>
  %t7 = graph.sinh %t6 : tensor<4x8xf32>
  %t8 = graph.cosh %t7 : tensor<4x8xf32>
  %t9 = graph.asinh %t8 : tensor<4x8xf32>
  %t10 = graph.acosh %t9 : tensor<4x8xf32>
  %t11 = graph.atanh %t10 : tensor<4x8xf32>
  func.return %t11 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @binary_float
// CHECK-SAME:  (%[[X:.*]]: tensor<8xf32>, %[[Y:.*]]: tensor<8xf32>)
func.func @binary_float(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK-NEXT: %[[A:.*]] = graph.add %[[X]], %[[Y]] : tensor<8xf32>
  // CHECK-NEXT: %[[S:.*]] = graph.sub %[[A]], %[[Y]] : tensor<8xf32>
  // CHECK-NEXT: %[[M:.*]] = graph.mul %[[S]], %[[X]] : tensor<8xf32>
  // CHECK-NEXT: %[[D:.*]] = graph.div %[[M]], %[[Y]] : tensor<8xf32>
  // CHECK-NEXT: %[[R:.*]] = graph.rem %[[D]], %[[Y]] : tensor<8xf32>
  // CHECK-NEXT: %[[P:.*]] = graph.pow %[[R]], %[[X]] : tensor<8xf32>
  // CHECK-NEXT: %[[MX:.*]] = graph.max %[[P]], %[[X]] : tensor<8xf32>
  // CHECK-NEXT: %[[MN:.*]] = graph.min %[[MX]], %[[Y]] : tensor<8xf32>
  // CHECK-NEXT: func.return %[[MN]]
  %a = graph.add %x, %y : tensor<8xf32>
  %s = graph.sub %a, %y : tensor<8xf32>
  %m = graph.mul %s, %x : tensor<8xf32>
  %d = graph.div %m, %y : tensor<8xf32>
  %r = graph.rem %d, %y : tensor<8xf32>
  %p = graph.pow %r, %x : tensor<8xf32>
  %mx = graph.max %p, %x : tensor<8xf32>
  %mn = graph.min %mx, %y : tensor<8xf32>
  func.return %mn : tensor<8xf32>
}

// CHECK-LABEL: func.func @half_types
// CHECK-SAME:  (%[[H:.*]]: tensor<16xf16>, %[[B:.*]]: tensor<16xbf16>, %[[D:.*]]: tensor<16xf64>)
func.func @half_types(%h: tensor<16xf16>, %b: tensor<16xbf16>, %d: tensor<16xf64>) -> (tensor<16xf16>, tensor<16xbf16>, tensor<16xf64>) {
  // CHECK-NEXT: %[[HE:.*]] = graph.exp %[[H]] : tensor<16xf16>
  // CHECK-NEXT: %[[HA:.*]] = graph.add %[[HE]], %[[H]] : tensor<16xf16>
  // CHECK-NEXT: %[[BT:.*]] = graph.tanh %[[B]] : tensor<16xbf16>
  // CHECK-NEXT: %[[BM:.*]] = graph.mul %[[BT]], %[[B]] : tensor<16xbf16>
  // CHECK-NEXT: %[[DS:.*]] = graph.sqrt %[[D]] : tensor<16xf64>
  // CHECK-NEXT: func.return %[[HA]], %[[BM]], %[[DS]] : tensor<16xf16>, tensor<16xbf16>, tensor<16xf64>
  %he = graph.exp %h : tensor<16xf16>
  %ha = graph.add %he, %h : tensor<16xf16>
  %bt = graph.tanh %b : tensor<16xbf16>
  %bm = graph.mul %bt, %b : tensor<16xbf16>
  %ds = graph.sqrt %d : tensor<16xf64>
  func.return %ha, %bm, %ds : tensor<16xf16>, tensor<16xbf16>, tensor<16xf64>
}

// CHECK-LABEL: func.func @integer_ops
// CHECK-SAME:  (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>, %[[L:.*]]: tensor<4xi64>, %[[S:.*]]: tensor<4xi8>)
func.func @integer_ops(%x: tensor<4xi32>, %y: tensor<4xi32>, %l: tensor<4xi64>, %s: tensor<4xi8>) -> (tensor<4xi32>, tensor<4xi64>, tensor<4xi8>) {
  // CHECK-NEXT: %[[A:.*]] = graph.add %[[X]], %[[Y]] : tensor<4xi32>
  // CHECK-NEXT: %[[B:.*]] = graph.sub %[[A]], %[[Y]] : tensor<4xi32>
  // CHECK-NEXT: %[[C:.*]] = graph.mul %[[B]], %[[Y]] : tensor<4xi32>
  // CHECK-NEXT: %[[D:.*]] = graph.div %[[C]], %[[Y]] : tensor<4xi32>
  // CHECK-NEXT: %[[E:.*]] = graph.rem %[[D]], %[[Y]] : tensor<4xi32>
  // CHECK-NEXT: %[[F:.*]] = graph.and %[[E]], %[[X]] : tensor<4xi32>
  // CHECK-NEXT: %[[G:.*]] = graph.or %[[F]], %[[X]] : tensor<4xi32>
  // CHECK-NEXT: %[[H:.*]] = graph.xor %[[G]], %[[X]] : tensor<4xi32>
  // CHECK-NEXT: %[[I:.*]] = graph.not %[[H]] : tensor<4xi32>
  // CHECK-NEXT: %[[J:.*]] = graph.neg %[[I]] : tensor<4xi32>
  // CHECK-NEXT: %[[K:.*]] = graph.abs %[[J]] : tensor<4xi32>
  // CHECK-NEXT: %[[M:.*]] = graph.max %[[K]], %[[X]] : tensor<4xi32>
  // CHECK-NEXT: %[[N:.*]] = graph.min %[[M]], %[[X]] : tensor<4xi32>
  // CHECK-NEXT: %[[LA:.*]] = graph.add %[[L]], %[[L]] : tensor<4xi64>
  // CHECK-NEXT: %[[SA:.*]] = graph.mul %[[S]], %[[S]] : tensor<4xi8>
  // CHECK-NEXT: func.return %[[N]], %[[LA]], %[[SA]]
  %a = graph.add %x, %y : tensor<4xi32>
  %b = graph.sub %a, %y : tensor<4xi32>
  %c = graph.mul %b, %y : tensor<4xi32>
  %d = graph.div %c, %y : tensor<4xi32>
  %e = graph.rem %d, %y : tensor<4xi32>
  %f = graph.and %e, %x : tensor<4xi32>
  %g = graph.or %f, %x : tensor<4xi32>
  %h = graph.xor %g, %x : tensor<4xi32>
  %i = graph.not %h : tensor<4xi32>
  %j = graph.neg %i : tensor<4xi32>
  %k = graph.abs %j : tensor<4xi32>
  %m = graph.max %k, %x : tensor<4xi32>
  %n = graph.min %m, %x : tensor<4xi32>
  %la = graph.add %l, %l : tensor<4xi64>
  %sa = graph.mul %s, %s : tensor<4xi8>
  func.return %n, %la, %sa : tensor<4xi32>, tensor<4xi64>, tensor<4xi8>
}

// CHECK-LABEL: func.func @unsigned_and_bits
// CHECK-SAME:  (%[[U:.*]]: tensor<4xui16>, %[[F:.*]]: tensor<4xf32>)
func.func @unsigned_and_bits(%u: tensor<4xui16>, %f: tensor<4xf32>) -> (tensor<4xui16>, tensor<4xi32>) {
  // CHECK-NEXT: %[[L:.*]] = graph.shl %[[U]], %[[U]] : tensor<4xui16>
  // CHECK-NEXT: %[[R:.*]] = graph.shr %[[L]], %[[U]] : tensor<4xui16>
  // CHECK-NEXT: %[[B:.*]] = graph.bitcast %[[F]] : (tensor<4xf32>) -> tensor<4xi32>
  // CHECK-NEXT: func.return %[[R]], %[[B]] : tensor<4xui16>, tensor<4xi32>
  %l = graph.shl %u, %u : tensor<4xui16>
  %r = graph.shr %l, %u : tensor<4xui16>
  %b = graph.bitcast %f : (tensor<4xf32>) -> tensor<4xi32>
  func.return %r, %b : tensor<4xui16>, tensor<4xi32>
}

// CHECK-LABEL: func.func @bool_ops
// CHECK-SAME:  (%[[P:.*]]: tensor<2x3xi1>, %[[Q:.*]]: tensor<2x3xi1>)
func.func @bool_ops(%p: tensor<2x3xi1>, %q: tensor<2x3xi1>) -> tensor<2x3xi1> {
  // CHECK-NEXT: %[[A:.*]] = graph.and %[[P]], %[[Q]] : tensor<2x3xi1>
  // CHECK-NEXT: %[[O:.*]] = graph.or %[[A]], %[[Q]] : tensor<2x3xi1>
  // CHECK-NEXT: %[[X:.*]] = graph.xor %[[O]], %[[P]] : tensor<2x3xi1>
  // CHECK-NEXT: %[[N:.*]] = graph.not %[[X]] : tensor<2x3xi1>
  // CHECK-NEXT: %[[C:.*]] = graph.compare eq %[[N]], %[[P]] : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %[[S:.*]] = graph.select %[[C]], %[[P]], %[[Q]] : (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %a = graph.and %p, %q : tensor<2x3xi1>
  %o = graph.or %a, %q : tensor<2x3xi1>
  %x = graph.xor %o, %p : tensor<2x3xi1>
  %n = graph.not %x : tensor<2x3xi1>
  %c = graph.compare eq %n, %p : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %s = graph.select %c, %p, %q : (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return %s : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @compare_and_select
// CHECK-SAME:  (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi64>)
func.func @compare_and_select(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi1>) {
  // CHECK-NEXT: %[[EQ:.*]] = graph.compare eq %[[X]], %[[Y]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  // CHECK-NEXT: graph.compare ne %[[X]], %[[Y]]
  // CHECK-NEXT: graph.compare lt %[[X]], %[[Y]]
  // CHECK-NEXT: graph.compare le %[[X]], %[[Y]]
  // CHECK-NEXT: graph.compare gt %[[X]], %[[Y]]
  // CHECK-NEXT: %[[GE:.*]] = graph.compare ge %[[I]], %[[I]] : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK-NEXT: %[[S:.*]] = graph.select %[[EQ]], %[[X]], %[[Y]] : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: func.return %[[S]], %[[GE]]
  %eq = graph.compare eq %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %ne = graph.compare ne %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %lt = graph.compare lt %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %le = graph.compare le %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %gt = graph.compare gt %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %ge = graph.compare ge %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %s = graph.select %eq, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s, %ge : tensor<4xf32>, tensor<4xi1>
}

// CHECK-LABEL: func.func @convert
// CHECK-SAME:  (%[[X:.*]]: tensor<3xf32>)
func.func @convert(%x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK-NEXT: %[[H:.*]] = graph.convert %[[X]] : (tensor<3xf32>) -> tensor<3xf16>
  // CHECK-NEXT: %[[B:.*]] = graph.convert %[[H]] : (tensor<3xf16>) -> tensor<3xbf16>
  // CHECK-NEXT: %[[I:.*]] = graph.convert %[[B]] : (tensor<3xbf16>) -> tensor<3xi32>
  // CHECK-NEXT: %[[L:.*]] = graph.convert %[[I]] : (tensor<3xi32>) -> tensor<3xi64>
  // CHECK-NEXT: %[[P:.*]] = graph.convert %[[L]] : (tensor<3xi64>) -> tensor<3xi1>
  // CHECK-NEXT: %[[F:.*]] = graph.convert %[[P]] : (tensor<3xi1>) -> tensor<3xf32>
  // CHECK-NEXT: %[[S:.*]] = graph.convert %[[F]] : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK-NEXT: func.return %[[S]]
  %h = graph.convert %x : (tensor<3xf32>) -> tensor<3xf16>
  %b = graph.convert %h : (tensor<3xf16>) -> tensor<3xbf16>
  %i = graph.convert %b : (tensor<3xbf16>) -> tensor<3xi32>
  %l = graph.convert %i : (tensor<3xi32>) -> tensor<3xi64>
  %p = graph.convert %l : (tensor<3xi64>) -> tensor<3xi1>
  %f = graph.convert %p : (tensor<3xi1>) -> tensor<3xf32>
  %s = graph.convert %f : (tensor<3xf32>) -> tensor<3xf32>
  func.return %s : tensor<3xf32>
}

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<4x8xf32>, tensor<f32>, tensor<2x2xf16>, tensor<3xbf16>, tensor<2xi32>, tensor<i64>, tensor<2xi1>) {
  // CHECK-NEXT: %[[SPLAT:.*]] = graph.constant dense<1.000000e+00> : tensor<4x8xf32>
  // CHECK-NEXT: %[[SCALAR:.*]] = graph.constant dense<-2.500000e-01> : tensor<f32>
  // CHECK-NEXT: %[[H:.*]] = graph.constant dense<{{\[\[}}1.500000e+00, -2.000000e+00], [2.500000e-01, 3.000000e+00]]> : tensor<2x2xf16>
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<[5.000000e-01, 1.000000e+00, 2.000000e+00]> : tensor<3xbf16>
  // CHECK-NEXT: %[[I:.*]] = graph.constant dense<[1, -2]> : tensor<2xi32>
  // CHECK-NEXT: %[[L:.*]] = graph.constant dense<7> : tensor<i64>
  // CHECK-NEXT: %[[P:.*]] = graph.constant dense<[true, false]> : tensor<2xi1> {note = "kept"}
  // CHECK-NEXT: func.return %[[SPLAT]], %[[SCALAR]], %[[H]], %[[B]], %[[I]], %[[L]], %[[P]]
  %splat = graph.constant dense<1.0> : tensor<4x8xf32>
  %scalar = graph.constant dense<-0.25> : tensor<f32>
  %h = graph.constant dense<[[1.5, -2.0], [0.25, 3.0]]> : tensor<2x2xf16>
  %b = graph.constant dense<[0.5, 1.0, 2.0]> : tensor<3xbf16>
  %i = graph.constant dense<[1, -2]> : tensor<2xi32>
  %l = graph.constant dense<7> : tensor<i64>
  %p = graph.constant dense<[true, false]> : tensor<2xi1> {note = "kept"}
  func.return %splat, %scalar, %h, %b, %i, %l, %p : tensor<4x8xf32>, tensor<f32>, tensor<2x2xf16>, tensor<3xbf16>, tensor<2xi32>, tensor<i64>, tensor<2xi1>
}

// CHECK-LABEL: func.func @iota
func.func @iota() -> (tensor<4x8xi32>, tensor<5xf32>, tensor<2x3x4xi64>) {
  // CHECK-NEXT: %[[A:.*]] = graph.iota dim 1 : tensor<4x8xi32>
  // CHECK-NEXT: %[[B:.*]] = graph.iota dim 0 : tensor<5xf32>
  // CHECK-NEXT: %[[C:.*]] = graph.iota dim 2 : tensor<2x3x4xi64>
  %a = graph.iota dim 1 : tensor<4x8xi32>
  %b = graph.iota dim 0 : tensor<5xf32>
  %c = graph.iota dim 2 : tensor<2x3x4xi64>
  func.return %a, %b, %c : tensor<4x8xi32>, tensor<5xf32>, tensor<2x3x4xi64>
}

// CHECK-LABEL: func.func @index_ops
// CHECK-SAME:  (%[[X:.*]]: tensor<4x8xf32>, %[[V:.*]]: tensor<8xf32>, %[[ONE:.*]]: tensor<1x8xf32>)
func.func @index_ops(%x: tensor<4x8xf32>, %v: tensor<8xf32>, %one: tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<2x4x4xf32>, tensor<8x4xf32>, tensor<2x3xf32>, tensor<12x8xf32>, tensor<4x16xf32>, tensor<3x4x8xf32>) {
  // CHECK-NEXT: %[[B:.*]] = graph.broadcast %[[V]] dims [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[B1:.*]] = graph.broadcast %[[ONE]] dims [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[B3:.*]] = graph.broadcast %[[X]] dims [1, 2] : (tensor<4x8xf32>) -> tensor<3x4x8xf32>
  // CHECK-NEXT: %[[R:.*]] = graph.reshape %[[X]] : (tensor<4x8xf32>) -> tensor<2x4x4xf32>
  // CHECK-NEXT: %[[T:.*]] = graph.transpose %[[X]] perm [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  // CHECK-NEXT: %[[S:.*]] = graph.slice %[[X]] start [0, 2] limit [4, 8] strides [2, 2] : (tensor<4x8xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[C:.*]] = graph.concat %[[X]], %[[B]], %[[B1]] dim 0 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>
  // CHECK-NEXT: %[[C2:.*]] = graph.concat %[[X]], %[[X]] dim 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %[[C1:.*]] = graph.concat %[[X]] dim 1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: func.return %[[C1]], %[[R]], %[[T]], %[[S]], %[[C]], %[[C2]], %[[B3]]
  %b = graph.broadcast %v dims [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %b1 = graph.broadcast %one dims [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
  %b3 = graph.broadcast %x dims [1, 2] : (tensor<4x8xf32>) -> tensor<3x4x8xf32>
  %r = graph.reshape %x : (tensor<4x8xf32>) -> tensor<2x4x4xf32>
  %t = graph.transpose %x perm [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %s = graph.slice %x start [0, 2] limit [4, 8] strides [2, 2] : (tensor<4x8xf32>) -> tensor<2x3xf32>
  %c = graph.concat %x, %b, %b1 dim 0 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>
  %c2 = graph.concat %x, %x dim 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  %c1 = graph.concat %x dim 1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %c1, %r, %t, %s, %c, %c2, %b3 : tensor<4x8xf32>, tensor<2x4x4xf32>, tensor<8x4xf32>, tensor<2x3xf32>, tensor<12x8xf32>, tensor<4x16xf32>, tensor<3x4x8xf32>
}

// CHECK-LABEL: func.func @reductions
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3x4xf32>, %[[I:.*]]: tensor<5xi32>)
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<5xi32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<i32>, tensor<2x3x4xf32>) {
  // CHECK-NEXT: %[[SUM:.*]] = graph.reduce sum %[[X]] dims [2] : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[MAX:.*]] = graph.reduce max %[[X]] dims [0, 2] : (tensor<2x3x4xf32>) -> tensor<3xf32>
  // CHECK-NEXT: %[[MIN:.*]] = graph.reduce min %[[X]] dims [1, 0] : (tensor<2x3x4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %[[PROD:.*]] = graph.reduce prod %[[X]] dims [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK-NEXT: %[[ISUM:.*]] = graph.reduce sum %[[I]] dims [0] : (tensor<5xi32>) -> tensor<i32>
  // CHECK-NEXT: %[[NONE:.*]] = graph.reduce sum %[[X]] dims [] : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: func.return %[[SUM]], %[[MAX]], %[[MIN]], %[[PROD]], %[[ISUM]], %[[NONE]]
  %sum = graph.reduce sum %x dims [2] : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  %max = graph.reduce max %x dims [0, 2] : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %min = graph.reduce min %x dims [1, 0] : (tensor<2x3x4xf32>) -> tensor<4xf32>
  %prod = graph.reduce prod %x dims [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<f32>
  %isum = graph.reduce sum %i dims [0] : (tensor<5xi32>) -> tensor<i32>
  %none = graph.reduce sum %x dims [] : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %sum, %max, %min, %prod, %isum, %none : tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<i32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @windows_and_pads
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x6x6xf32>, %[[V:.*]]: tensor<f32>)
func.func @windows_and_pads(%x: tensor<1x2x6x6xf32>, %v: tensor<f32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x8x7xf32>, tensor<1x2x6x8xf32>) {
  // CHECK-NEXT: %[[W:.*]] = graph.reduce_window max %[[X]] window [1, 1, 3, 3] strides [1, 1, 2, 2] dilations [1, 1, 1, 1] low [0, 0, 1, 1] high [0, 0, 0, 0] : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  // CHECK-NEXT: %[[C:.*]] = graph.pad constant %[[X]], %[[V]] low [0, 0, 1, 0] high [0, 0, 1, 1] interior [0, 0, 0, 0] : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x8x7xf32>
  // CHECK-NEXT: %[[E:.*]] = graph.pad edge %[[X]] low [0, 0, 0, 1] high [0, 0, 0, 1] interior [0, 0, 0, 0] : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x8xf32>
  // CHECK-NEXT: func.return %[[W]], %[[C]], %[[E]]
  %w = graph.reduce_window max %x window [1, 1, 3, 3] strides [1, 1, 2, 2] dilations [1, 1, 1, 1] low [0, 0, 1, 1] high [0, 0, 0, 0] : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  %c = graph.pad constant %x, %v low [0, 0, 1, 0] high [0, 0, 1, 1] interior [0, 0, 0, 0] : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x8x7xf32>
  %e = graph.pad edge %x low [0, 0, 0, 1] high [0, 0, 0, 1] interior [0, 0, 0, 0] : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x8xf32>
  func.return %w, %c, %e : tensor<1x2x3x3xf32>, tensor<1x2x8x7xf32>, tensor<1x2x6x8xf32>
}

// CHECK-LABEL: func.func @gather_and_dot
// CHECK-SAME:  (%[[T:.*]]: tensor<100x16xf32>, %[[IDS:.*]]: tensor<2x8xi32>, %[[IDS64:.*]]: tensor<3xi64>, %[[A:.*]]: tensor<2x8x16xf32>, %[[W:.*]]: tensor<16x4xf32>, %[[V:.*]]: tensor<16xf32>)
func.func @gather_and_dot(%t: tensor<100x16xf32>, %ids: tensor<2x8xi32>, %ids64: tensor<3xi64>, %a: tensor<2x8x16xf32>, %w: tensor<16x4xf32>, %v: tensor<16xf32>) -> (tensor<2x8x16xf32>, tensor<3x16xf32>, tensor<2x8x4xf32>, tensor<2x8xf32>, tensor<f32>, tensor<2x8x8xf32>) {
  // CHECK-NEXT: %[[E:.*]] = graph.gather %[[T]], %[[IDS]] : (tensor<100x16xf32>, tensor<2x8xi32>) -> tensor<2x8x16xf32>
  // CHECK-NEXT: %[[E64:.*]] = graph.gather %[[T]], %[[IDS64]] : (tensor<100x16xf32>, tensor<3xi64>) -> tensor<3x16xf32>
  // CHECK-NEXT: %[[MM:.*]] = graph.dot %[[A]], %[[W]] : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
  // CHECK-NEXT: %[[MV:.*]] = graph.dot %[[A]], %[[V]] : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %[[VV:.*]] = graph.dot %[[V]], %[[V]] : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
  // CHECK-NEXT: %[[AT:.*]] = graph.transpose %[[A]] perm [0, 2, 1] : (tensor<2x8x16xf32>) -> tensor<2x16x8xf32>
  // CHECK-NEXT: %[[BMM:.*]] = graph.dot %[[A]], %[[AT]] : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %e = graph.gather %t, %ids : (tensor<100x16xf32>, tensor<2x8xi32>) -> tensor<2x8x16xf32>
  %e64 = graph.gather %t, %ids64 : (tensor<100x16xf32>, tensor<3xi64>) -> tensor<3x16xf32>
  %mm = graph.dot %a, %w : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
  %mv = graph.dot %a, %v : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8xf32>
  %vv = graph.dot %v, %v : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
  %at = graph.transpose %a perm [0, 2, 1] : (tensor<2x8x16xf32>) -> tensor<2x16x8xf32>
  %bmm = graph.dot %a, %at : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  func.return %e, %e64, %mm, %mv, %vv, %bmm : tensor<2x8x16xf32>, tensor<3x16xf32>, tensor<2x8x4xf32>, tensor<2x8xf32>, tensor<f32>, tensor<2x8x8xf32>
}

// `?` dims: short `: T` form where all types agree, the long form where a static
// operand meets a `?` result (as before shape inference).
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:  (%[[X:.*]]: tensor<?x8xf32>, %[[Y:.*]]: tensor<4x8xf32>, %[[IDS:.*]]: tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?xf32>, tensor<?x8xf32>, tensor<?x?xf32>, tensor<?x8xf32>)
func.func @dynamic(%x: tensor<?x8xf32>, %y: tensor<4x8xf32>, %ids: tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?xf32>, tensor<?x8xf32>, tensor<?x?xf32>, tensor<?x8xf32>) {
  // CHECK-NEXT: %[[E:.*]] = graph.exp %[[X]] : tensor<?x8xf32>
  // CHECK-NEXT: %[[A:.*]] = graph.add %[[Y]], %[[Y]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  // CHECK-NEXT: %[[M:.*]] = graph.mul %[[E]], %[[Y]] : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[R:.*]] = graph.reduce sum %[[E]] dims [1] : (tensor<?x8xf32>) -> tensor<?xf32>
  // CHECK-NEXT: %[[B:.*]] = graph.broadcast %[[R]] dims [0] : (tensor<?xf32>) -> tensor<?x8xf32>
  // CHECK-NEXT: %[[T:.*]] = graph.transpose %[[B]] perm [1, 0] : (tensor<?x8xf32>) -> tensor<8x?xf32>
  // CHECK-NEXT: %[[RS:.*]] = graph.reshape %[[T]] : (tensor<8x?xf32>) -> tensor<?x?xf32>
  // CHECK-NEXT: %[[G:.*]] = graph.gather %[[M]], %[[IDS]] : (tensor<4x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  // CHECK-NEXT: func.return %[[A]], %[[R]], %[[B]], %[[RS]], %[[G]]
  %e = graph.exp %x : tensor<?x8xf32>
  %a = graph.add %y, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  %m = graph.mul %e, %y : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = graph.reduce sum %e dims [1] : (tensor<?x8xf32>) -> tensor<?xf32>
  %b = graph.broadcast %r dims [0] : (tensor<?xf32>) -> tensor<?x8xf32>
  %t = graph.transpose %b perm [1, 0] : (tensor<?x8xf32>) -> tensor<8x?xf32>
  %rs = graph.reshape %t : (tensor<8x?xf32>) -> tensor<?x?xf32>
  %g = graph.gather %m, %ids : (tensor<4x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  func.return %a, %r, %b, %rs, %g : tensor<?x8xf32>, tensor<?xf32>, tensor<?x8xf32>, tensor<?x?xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: func.func @rank_zero
// CHECK-SAME:  (%[[S:.*]]: tensor<f32>, %[[X:.*]]: tensor<3xf32>)
func.func @rank_zero(%s: tensor<f32>, %x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<1x1xf32>) {
  // CHECK-NEXT: %[[E:.*]] = graph.exp %[[S]] : tensor<f32>
  // CHECK-NEXT: %[[A:.*]] = graph.add %[[E]], %[[S]] : tensor<f32>
  // CHECK-NEXT: %[[B:.*]] = graph.broadcast %[[A]] dims [] : (tensor<f32>) -> tensor<3xf32>
  // CHECK-NEXT: %[[M:.*]] = graph.mul %[[B]], %[[X]] : tensor<3xf32>
  // CHECK-NEXT: %[[R:.*]] = graph.reduce max %[[M]] dims [0] : (tensor<3xf32>) -> tensor<f32>
  // CHECK-NEXT: %[[T:.*]] = graph.transpose %[[R]] perm [] : (tensor<f32>) -> tensor<f32>
  // CHECK-NEXT: %[[RS:.*]] = graph.reshape %[[T]] : (tensor<f32>) -> tensor<1x1xf32>
  // CHECK-NEXT: func.return %[[T]], %[[M]], %[[RS]]
  %e = graph.exp %s : tensor<f32>
  %a = graph.add %e, %s : tensor<f32>
  %b = graph.broadcast %a dims [] : (tensor<f32>) -> tensor<3xf32>
  %m = graph.mul %b, %x : tensor<3xf32>
  %r = graph.reduce max %m dims [0] : (tensor<3xf32>) -> tensor<f32>
  %t = graph.transpose %r perm [] : (tensor<f32>) -> tensor<f32>
  %rs = graph.reshape %t : (tensor<f32>) -> tensor<1x1xf32>
  func.return %t, %m, %rs : tensor<f32>, tensor<3xf32>, tensor<1x1xf32>
}

// Scatter (point updates of whole windows, one kind per reduction) and sort (keys, values).
// CHECK-LABEL: func.func @scatter_sort(
// CHECK-SAME: %[[X:.*]]: tensor<8x4xf32>, %[[I:.*]]: tensor<3x1xi32>, %[[U:.*]]: tensor<3x4xf32>, %[[J:.*]]: tensor<?x2xi64>, %[[V:.*]]: tensor<?xf32>, %[[K:.*]]: tensor<4x16xf16>, %[[W:.*]]: tensor<4x16xi32>
// CHECK-NEXT: %{{.*}} = graph.scatter add %[[X]], %[[I]], %[[U]] dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %{{.*}} = graph.scatter none %[[X]], %[[J]], %[[V]] dims [1, 0] : (tensor<8x4xf32>, tensor<?x2xi64>, tensor<?xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %{{.*}} = graph.scatter mul %[[X]], %[[I]], %[[U]] dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %{{.*}} = graph.scatter max %[[X]], %[[I]], %[[U]] dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %{{.*}} = graph.scatter min %[[X]], %[[I]], %[[U]] dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %{{.*}} = graph.sort ascending %[[K]], %[[W]] dim 1 : (tensor<4x16xf16>, tensor<4x16xi32>) -> tensor<4x16xi32>
// CHECK-NEXT: %{{.*}} = graph.sort descending %[[K]], %[[K]] dim 0 : tensor<4x16xf16>
func.func @scatter_sort(%x: tensor<8x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3x4xf32>, %j: tensor<?x2xi64>,
                        %v: tensor<?xf32>, %k: tensor<4x16xf16>, %w: tensor<4x16xi32>)
    -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x16xi32>,
        tensor<4x16xf16>) {
  %a = graph.scatter add %x, %i, %u dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %n = graph.scatter none %x, %j, %v dims [1, 0] : (tensor<8x4xf32>, tensor<?x2xi64>, tensor<?xf32>) -> tensor<8x4xf32>
  %m = graph.scatter mul %x, %i, %u dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %hi = graph.scatter max %x, %i, %u dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %lo = graph.scatter min %x, %i, %u dims [0] : (tensor<8x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %s = graph.sort ascending %k, %w dim 1 : (tensor<4x16xf16>, tensor<4x16xi32>) -> tensor<4x16xi32>
  %t = graph.sort descending %k, %k dim 0 : tensor<4x16xf16>
  func.return %a, %n, %m, %hi, %lo, %s, %t : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>,
                                             tensor<8x4xf32>, tensor<4x16xi32>, tensor<4x16xf16>
}

// Discardable attributes print between the properties and the types.
// CHECK-LABEL: func.func @attributes
func.func @attributes(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[E:.*]] = graph.exp %{{.*}} {fusion_hint = "keep"} : tensor<4x8xf32>
  // CHECK-NEXT: graph.reduce sum %[[E]] dims [1] {tag = 3 : i64} : (tensor<4x8xf32>) -> tensor<4xf32>
  %e = graph.exp %x {fusion_hint = "keep"} : tensor<4x8xf32>
  %r = graph.reduce sum %e dims [1] {tag = 3 : i64} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// graph.conv (more forms in conv.mlir).
// CHECK-LABEL: func.func @conv
func.func @conv(%x: tensor<2x4x9x9xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x5x3xf32> {
  // CHECK-NEXT: graph.conv %{{.*}}, %{{.*}} strides [2, 2] pad_low [1, 0] pad_high [1, 1] dilation [1, 2] lhs_dilation [1, 1] groups 2 : (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x5x3xf32>
  %y = graph.conv %x, %w strides [2, 2] pad_low [1, 0] pad_high [1, 1] dilation [1, 2] lhs_dilation [1, 1] groups 2 : (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x5x3xf32>
  func.return %y : tensor<2x6x5x3xf32>
}

// graph.segment_reduce (ragged bags by offsets; more in segment-reduce.mlir) and a
// gather proven in bounds.
// CHECK-LABEL: func.func @segments
func.func @segments(%d: tensor<?x16xf32>, %o: tensor<?xi64>, %t: tensor<8x16xf32>, %i: tensor<4xi32>) -> (tensor<?x16xf32>, tensor<4x16xf32>) {
  // CHECK-NEXT: graph.segment_reduce mean %{{.*}}, %{{.*}} : (tensor<?x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  // CHECK-NEXT: graph.gather %{{.*}}, %{{.*}} {in_bounds} : (tensor<8x16xf32>, tensor<4xi32>) -> tensor<4x16xf32>
  %s = graph.segment_reduce mean %d, %o : (tensor<?x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  %g = graph.gather %t, %i {in_bounds} : (tensor<8x16xf32>, tensor<4xi32>) -> tensor<4x16xf32>
  func.return %s, %g : tensor<?x16xf32>, tensor<4x16xf32>
}

// The two-pass row statistic (more in moments.mlir): per-tile partial moments and
// their combination.
// CHECK-LABEL: func.func @moments
func.func @moments(%z: tensor<4x80xf32>) -> tensor<4x2xf32> {
  // CHECK-NEXT: %[[P:.*]] = graph.tile_moments %{{.*}} tile 32 : (tensor<4x80xf32>) -> tensor<4x3x2xf32>
  // CHECK-NEXT: graph.combine_moments %[[P]] tile 32 size 80 : (tensor<4x3x2xf32>) -> tensor<4x2xf32>
  %p = graph.tile_moments %z tile 32 : (tensor<4x80xf32>) -> tensor<4x3x2xf32>
  %s = graph.combine_moments %p tile 32 size 80 : (tensor<4x3x2xf32>) -> tensor<4x2xf32>
  func.return %s : tensor<4x2xf32>
}
