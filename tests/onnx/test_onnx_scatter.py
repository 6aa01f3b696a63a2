"""ONNX's own node tests of ScatterND, ScatterElements and Scatter, run by
`onnx.backend.test.BackendTest` through fsir.onnx.backend (the simulator): every one
passes, duplicates and reductions included."""

from __future__ import annotations

import onnx.backend.test

from fsir.onnx import backend as fsir_backend

backend_test = onnx.backend.test.BackendTest(fsir_backend, __name__)
backend_test.include(r"^test_(scatternd|scatter_elements|scatter_with_axis|scatter_without_axis)\w*_cpu$")
globals().update(backend_test.test_cases)

