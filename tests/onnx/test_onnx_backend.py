"""fsir.onnx.backend against ONNX's own backend test suite.

Two views of the same suite:

- `onnx.backend.test.BackendTest` itself, for the node tests of op types fsir runs
  (`RUNS`): these must pass exactly as ONNX's runner checks them;
- every node case of a fixed sample (every 4th case of each op type; the full suite is
  `benchmarks/onnx_conformance.py`), classified by `fsir.onnx.conformance`: each must
  pass or be refused with a located error — never a wrong result, never a crash.
"""

from __future__ import annotations

import warnings

import onnx.backend.test
import pytest

from fsir.onnx import backend as fsir_backend
from fsir.onnx.conformance import Outcome, node_cases, run_case, sample

RUNS = ("relu", "add", "sub", "mul", "div", "exp", "log", "sqrt", "tanh", "sigmoid", "softmax_axis_0",
        "layer_normalization_2d_axis0", "matmul_2d", "gemm_default_no_bias", "transpose_default", "concat_1d_axis_0",
        "where_example", "gather_0")
# windows (fsir/frontend/onnx_window.py)
RUNS += ("maxpool_2d_pads", "maxpool_2d_ceil", "maxpool_with_argmax_2d_precomputed_strides", "averagepool_2d_pads",
         "averagepool_2d_precomputed_same_upper", "globalaveragepool", "globalmaxpool", "lppool_2d_strides", "lrn",
         "depthtospace_crd_mode_example", "spacetodepth_example")

backend_test = onnx.backend.test.BackendTest(fsir_backend, __name__)
backend_test.include("^test_(" + "|".join(RUNS) + ")_cpu$")
globals().update(backend_test.test_cases)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # ONNX's case generators warn about their own overflows
    SAMPLE = sample(node_cases(), 4)


@pytest.mark.parametrize("case", SAMPLE, ids=[c.name for c in SAMPLE])
def test_node_case_passes_or_is_refused_with_a_location(case):
    result = run_case(case)
    assert result.outcome in (Outcome.PASSED, Outcome.REFUSED), f"{result.outcome}: {result.message}"
    if result.outcome is Outcome.REFUSED:
        assert result.located, f"refused without a location: {result.message}"


def test_shape_inputs_are_specialised_and_cached():
    """A Reshape whose shape is a graph input: prepare defers, run compiles once per
    distinct shape value and reuses the executable for a value seen before."""
    import numpy as np
    from onnx import TensorProto, helper

    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["r"]), helper.make_node("Relu", ["r"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
         helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    rep = fsir_backend.prepare(helper.make_model(g))
    assert rep.executable is None and rep.bound == ("s",)
    x = np.arange(-6, 6, dtype=np.float32).reshape(2, 6)
    for shape in ([3, 4], [4, 3], [3, 4]):
        (y,) = rep.run([x, np.array(shape, np.int64)])
        np.testing.assert_array_equal(y, np.maximum(x, 0).reshape(shape))
    assert len(rep.cache) == 2
    (y,) = rep.run({"x": x, "s": np.array([12, -1], np.int64)})
    assert y.shape == (12, 1) and len(rep.cache) == 3
