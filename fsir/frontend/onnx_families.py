"""Imports every module that registers ONNX converters (`onnx_import.converter`)."""

# -- conv: Conv, ConvTranspose, BatchNormalization
from fsir.frontend import onnx_nn  # noqa: F401, E402
