"""Imports every module that registers ONNX converters (`onnx_import.converter`)."""

# -- conv: Conv, ConvTranspose, BatchNormalization
from fsir.frontend import onnx_nn  # noqa: F401, E402
# windows, padding, resampling (pooling, LRN, Pad, Resize, DepthToSpace/SpaceToDepth)
from fsir.frontend import onnx_window  # noqa: E402, F401
