"""Imports every module that registers ONNX converters (`onnx_import.converter`)."""

# element types and bit operations: Cast, CastLike, BitShift, Bitwise*
from fsir.frontend import onnx_cast  # noqa: E402, F401
