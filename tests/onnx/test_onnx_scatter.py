"""ONNX's own node tests of ScatterND, ScatterElements and Scatter, run by
`onnx.backend.test.BackendTest` through fsir.onnx.backend (the simulator): every one
passes, duplicates and reductions included."""

from __future__ import annotations

from fsir.testing.onnx_backend import backend_test_cases

globals().update(backend_test_cases(__name__, r"^test_(scatternd|scatter_elements|scatter_with_axis|scatter_without_axis)\w*_cpu$"))

