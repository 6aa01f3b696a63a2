"""Imports every module that registers ONNX converters (`onnx_import.converter`)."""
