// RUN: fs-opt %S/../../examples/onnx/bert_layer.onnx | filecheck %s
// RUN: fs-opt %S/../../examples/onnx/bert_layer.onnx -f onnx | filecheck %s
// A BERT layer exported by torch.onnx: weights become constants, numpy broadcasting
// becomes explicit graph.broadcast, and Softmax / LayerNormalization / Erf-GELU are
// expanded into the reductions and elementwise ops fusion stitches.

// CHECK-LABEL: func.func @main_graph(%x: tensor<2x16x64xf32>, %mask: tensor<2x1x1x16xf32>) -> tensor<2x16x64xf32>
// CHECK:       %[[WQ:.*]] = graph.constant dense<"0x{{[0-9A-F]+}}"> : tensor<64x64xf32>
// CHECK:       graph.dot %x, %[[WQ]] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
// CHECK:       graph.transpose %{{.*}} perm [0, 2, 1, 3] : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>

// The additive mask stretches its size-1 dims:
// CHECK:       graph.broadcast %mask dims [0, 1, 2, 3] : (tensor<2x1x1x16xf32>) -> tensor<2x4x16x16xf32>

// Softmax over the last dim:
// CHECK:       %[[MAX:.*]] = graph.reduce max %[[S:.*]] dims [3] : (tensor<2x4x16x16xf32>) -> tensor<2x4x16xf32>
// CHECK:       %[[MB:.*]] = graph.broadcast %[[MAX]] dims [0, 1, 2]
// CHECK:       %[[D:.*]] = graph.sub %[[S]], %[[MB]]
// CHECK:       %[[E:.*]] = graph.exp %[[D]]
// CHECK:       %[[SUM:.*]] = graph.reduce sum %[[E]] dims [3]
// CHECK:       %[[SB:.*]] = graph.broadcast %[[SUM]] dims [0, 1, 2]
// CHECK:       graph.div %[[E]], %[[SB]] : tensor<2x4x16x16xf32>

// LayerNormalization: mean, centred variance, rsqrt, scale and shift:
// CHECK:       graph.reduce sum %{{.*}} dims [2] : (tensor<2x16x64xf32>) -> tensor<2x16xf32>
// CHECK:       graph.reduce sum %{{.*}} dims [2] : (tensor<2x16x64xf32>) -> tensor<2x16xf32>
// CHECK:       graph.rsqrt %{{.*}} : tensor<2x16xf32>

// GELU from the exported Erf:
// CHECK:       graph.erf %{{.*}} : tensor<2x16x256xf32>
// CHECK:       func.return
