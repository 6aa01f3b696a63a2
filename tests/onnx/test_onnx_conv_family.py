"""ONNX's own runner (`onnx.backend.test.BackendTest`) on node tests of the conv family
(Conv, ConvTranspose, BatchNormalization), which fsir runs as implicit-GEMM conv kernels:
they must pass exactly as ONNX checks them. (Every case of the family is in
`benchmarks/onnx_conformance.py`.)"""

from __future__ import annotations

from fsir.testing.onnx_backend import backend_test_cases

RUNS = ("basic_conv_with_padding", "conv_with_strides_and_asymmetric_padding", "conv_with_autopad_same",
        "convtranspose_group_2", "convtranspose_output_shape", "convtranspose_1d", "convtranspose_dilations",
        "batchnorm_example", "batchnorm_example_training_mode")

globals().update(backend_test_cases(__name__, "^test_(" + "|".join(RUNS) + ")_cpu$"))
