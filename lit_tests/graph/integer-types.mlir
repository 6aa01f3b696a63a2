// Integer element types: signless iN are signed, uiN unsigned (xDSL's unsigned
// IntegerType); constants, shifts and conversions print and parse back.
// RUN: fs-opt %s | fs-opt | filecheck %s
// RUN: fs-opt %s --print-op-generic | fs-opt | filecheck %s

// CHECK-LABEL: func.func @unsigned
// CHECK-SAME:  (%[[X:.*]]: tensor<4xui8>, %[[N:.*]]: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xui64>, tensor<4xf64>)
func.func @unsigned(%x: tensor<4xui8>, %n: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xui64>, tensor<4xf64>) {
  // CHECK-NEXT: %[[C:.*]] = graph.constant dense<[255, 0, 128, 7]> : tensor<4xui8>
  %c = graph.constant dense<[255, 0, 128, 7]> : tensor<4xui8>
  // CHECK-NEXT: %[[L:.*]] = graph.shl %[[X]], %[[N]] : tensor<4xui8>
  // CHECK-NEXT: %[[R:.*]] = graph.shr %[[L]], %[[C]] : tensor<4xui8>
  %l = graph.shl %x, %n : tensor<4xui8>
  %r = graph.shr %l, %c : tensor<4xui8>
  // CHECK-NEXT: %[[W:.*]] = graph.convert %[[R]] : (tensor<4xui8>) -> tensor<4xui64>
  // CHECK-NEXT: %[[F:.*]] = graph.convert %[[W]] : (tensor<4xui64>) -> tensor<4xf64>
  %w = graph.convert %r : (tensor<4xui8>) -> tensor<4xui64>
  %f = graph.convert %w : (tensor<4xui64>) -> tensor<4xf64>
  // CHECK-NEXT: func.return %[[R]], %[[W]], %[[F]] : tensor<4xui8>, tensor<4xui64>, tensor<4xf64>
  func.return %r, %w, %f : tensor<4xui8>, tensor<4xui64>, tensor<4xf64>
}

// CHECK-LABEL: func.func @narrow_signed
func.func @narrow_signed(%x: tensor<4xi8>, %y: tensor<4xi16>) -> (tensor<4xi8>, tensor<4xi16>) {
  // CHECK-NEXT: graph.constant dense<[-128, 127, -1, 0]> : tensor<4xi8>
  %c = graph.constant dense<[-128, 127, -1, 0]> : tensor<4xi8>
  // CHECK-NEXT: graph.shr %{{.*}}, %{{.*}} : tensor<4xi8>
  %s = graph.shr %x, %c : tensor<4xi8>
  // CHECK-NEXT: graph.rem %{{.*}}, %{{.*}} : tensor<4xi16>
  %r = graph.rem %y, %y : tensor<4xi16>
  func.return %s, %r : tensor<4xi8>, tensor<4xi16>
}

// CHECK-LABEL: func.func @bitcast
func.func @bitcast(%x: tensor<4xf32>, %h: tensor<4xf16>, %b: tensor<4xi1>) -> (tensor<4xui32>, tensor<4xbf16>, tensor<4xui8>) {
  // CHECK-NEXT: graph.bitcast %{{.*}} : (tensor<4xf32>) -> tensor<4xui32>
  // CHECK-NEXT: graph.bitcast %{{.*}} : (tensor<4xf16>) -> tensor<4xbf16>
  // CHECK-NEXT: graph.bitcast %{{.*}} : (tensor<4xi1>) -> tensor<4xui8>
  %u = graph.bitcast %x : (tensor<4xf32>) -> tensor<4xui32>
  %f = graph.bitcast %h : (tensor<4xf16>) -> tensor<4xbf16>
  %c = graph.bitcast %b : (tensor<4xi1>) -> tensor<4xui8>
  func.return %u, %f, %c : tensor<4xui32>, tensor<4xbf16>, tensor<4xui8>
}
