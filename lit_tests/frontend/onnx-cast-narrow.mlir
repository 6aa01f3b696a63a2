// RUN: fs-opt %S/Inputs/cast_narrow.onnx | filecheck %s
// ONNX's narrow types are storage only (fsir/frontend/onnx_storage.py): a float8 value
// is its code in a ui8, an int4 value sits in an i8, and Cast expands into integer and
// float graph ops on those bytes (fsir/frontend/onnx_cast.py). The model
// (Inputs/make_cast_narrow.py): f32 -> FLOAT8E5M2 (saturate=0) -> f16; INT4 -> f32.

// CHECK-LABEL: func.func @cast_narrow(%x: tensor<4xf32>, %q: tensor<4xi8>) -> (tensor<4xui8>, tensor<4xf16>, tensor<4xf32>)

// Encoding: the f32 bits, rebiased (127 - 15 = 112: 112 << 23 = 939524096), shifted
// right by 23 - 2 bits with round to nearest even (+ 2^20 - 1 + the kept lsb)
// CHECK:       %[[BITS:.*]] = graph.bitcast %x : (tensor<4xf32>) -> tensor<4xi32>
// CHECK:       %[[NEG:.*]] = graph.compare lt %[[BITS]]
// CHECK:       %[[ABS:.*]] = graph.and %[[BITS]]
// CHECK:       %[[NAN:.*]] = graph.compare gt %[[ABS]]
// CHECK:       %[[REBIAS:.*]] = graph.constant dense<939524096>
// CHECK:       %[[V:.*]] = graph.sub %[[ABS]], %[[REBIAS]]
// CHECK:       %[[LSB:.*]] = graph.and
// CHECK:       %[[HALF:.*]] = graph.constant dense<1048575>
// CHECK:       %[[R0:.*]] = graph.add %[[V]], %[[HALF]]
// CHECK:       %[[R1:.*]] = graph.add %[[R0]], %[[LSB]]
// CHECK:       %[[NORMAL:.*]] = graph.shr %[[R1]]
// Below the smallest normal: |x| in units of the smallest denormal 2^-16, rounded half to even
// CHECK:       graph.constant dense<6.553600e+04>
// CHECK:       %[[RND:.*]] = graph.round
// CHECK:       %[[DEN:.*]] = graph.convert %[[RND]] : (tensor<4xf32>) -> tensor<4xi32>
// CHECK:       %[[MAG:.*]] = graph.select %{{.*}}, %[[DEN]], %[[NORMAL]]
// saturate=0: beyond the largest finite code (0x7B) is inf (0x7C); NaN is 0x7E; the sign is bit 7
// CHECK:       %[[OVER:.*]] = graph.compare gt %[[MAG]], %{{.*}}
// CHECK:       %[[INF:.*]] = graph.constant dense<124>
// CHECK:       %[[M1:.*]] = graph.select %[[OVER]], %[[INF]], %[[MAG]]
// CHECK:       %[[QNAN:.*]] = graph.constant dense<126>
// CHECK:       %[[M2:.*]] = graph.select %[[NAN]], %[[QNAN]], %[[M1]]
// CHECK:       %[[SIGNED:.*]] = graph.or %[[M2]]
// CHECK:       %[[CODE:.*]] = graph.select %[[NEG]], %[[SIGNED]], %[[M2]]
// CHECK:       %[[Y8:.*]] = graph.convert %[[CODE]] : (tensor<4xi32>) -> tensor<4xui8>

// Decoding: exponent and mantissa moved into f32 bits, denormals as m * 2^-16, inf and NaN selected
// CHECK:       %[[C:.*]] = graph.convert %[[Y8]] : (tensor<4xui8>) -> tensor<4xi32>
// CHECK:       graph.bitcast %{{.*}} : (tensor<4xi32>) -> tensor<4xf32>
// CHECK:       graph.constant dense<1.52587891e-05>
// CHECK:       graph.constant dense<0x7f800000>
// CHECK:       graph.neg
// CHECK:       graph.constant dense<[0x7fc00000
// CHECK:       %[[F:.*]] = graph.select
// CHECK:       %[[BACK:.*]] = graph.convert %[[F]] : (tensor<4xf32>) -> tensor<4xf16>

// int4 values are widened as the i8 they are stored in
// CHECK:       %[[QF:.*]] = graph.convert %q : (tensor<4xi8>) -> tensor<4xf32>
// CHECK:       func.return %[[Y8]], %[[BACK]], %[[QF]] : tensor<4xui8>, tensor<4xf16>, tensor<4xf32>
