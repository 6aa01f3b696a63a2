"""Imports every module that registers ONNX converters (`onnx_import.converter`).

onnx_nn: Conv, ConvTranspose, BatchNormalization. onnx_window: pooling, LRN, Pad, Resize,
DepthToSpace/SpaceToDepth. onnx_ops: activations, normalizations, index ops, Attention.
onnx_cast: element types and bit operations (Cast, CastLike, BitShift, Bitwise*).
onnx_scatter: ScatterND, ScatterElements, Scatter. onnx_control: If on a compile-time condition.
"""

from fsir.frontend import onnx_cast, onnx_control, onnx_nn, onnx_ops, onnx_scatter, onnx_window  # noqa: F401
