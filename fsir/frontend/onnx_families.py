"""Imports every module that registers ONNX converters (`onnx_import.converter`)."""

# scatter: ScatterND, ScatterElements, Scatter
from fsir.frontend import onnx_scatter  # noqa: E402, F401
