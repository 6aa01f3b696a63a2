"""Imports every module that registers ONNX converters (`onnx_import.converter`)."""

from fsir.frontend import onnx_ops  # noqa: E402, F401  (activations, normalizations, index ops, attention)
