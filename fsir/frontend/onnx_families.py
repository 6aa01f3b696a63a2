"""Imports every module that registers ONNX converters (`onnx_import.converter`).

onnx_shape: shape and data movement (Reshape ... Range). onnx_arith: elementwise ops that are
not plain table rows, ArgMax/ArgMin, Trilu. onnx_math: reductions, MatMul, Gemm, Softmax,
LayerNormalization. onnx_nn: Conv, ConvTranspose, BatchNormalization. onnx_window: pooling, LRN, Pad, Resize,
DepthToSpace/SpaceToDepth. onnx_ops: activations, normalizations, index ops, Attention.
onnx_cast: element types and bit operations (Cast, CastLike, BitShift, Bitwise*).
onnx_scatter: ScatterND, ScatterElements, Scatter. onnx_control: If on a compile-time condition,
Loop and Scan with a compile-time trip count (unrolled). onnx_sequence: sequence ops of static length.
"""

from fsir.frontend import (  # noqa: F401
    onnx_arith,
    onnx_cast,
    onnx_control,
    onnx_math,
    onnx_nn,
    onnx_ops,
    onnx_scatter,
    onnx_sequence,
    onnx_shape,
    onnx_window,
)
