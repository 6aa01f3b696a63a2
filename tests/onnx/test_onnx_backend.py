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

import pytest

from fsir.onnx import backend as fsir_backend
from fsir.onnx.conformance import Outcome, node_cases, run_case, sample
from fsir.testing.onnx_backend import backend_test_cases

RUNS = ("relu", "add", "sub", "mul", "div", "exp", "log", "sqrt", "tanh", "sigmoid", "softmax_axis_0",
        "layer_normalization_2d_axis0", "matmul_2d", "gemm_default_no_bias", "transpose_default", "concat_1d_axis_0",
        "where_example", "gather_0")
# windows (fsir/frontend/onnx_window.py)
RUNS += ("maxpool_2d_pads", "maxpool_2d_ceil", "maxpool_with_argmax_2d_precomputed_strides", "averagepool_2d_pads",
         "averagepool_2d_precomputed_same_upper", "globalaveragepool", "globalmaxpool", "lppool_2d_strides", "lrn",
         "depthtospace_crd_mode_example", "spacetodepth_example")

globals().update(backend_test_cases(__name__, "^test_(" + "|".join(RUNS) + ")_cpu$"))

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # ONNX's case generators warn about their own overflows
    SAMPLE = sample(node_cases(), 4)


# Cases whose expected outputs fsir knowingly does not reproduce, with why; fsir's result
# must still match them within `tolerance` (the test checks it).
KNOWN_DIFFERENCES = {
    name: ("ONNX's reference sums the softmax denominator in bf16 (softmax_precision unset means the "
           "input's precision); fsir accumulates every reduction in f32, one bf16 step away", (2e-2, 1e-2))
    for base in ("test_attention_3d_causal_bf16", "test_attention_4d_causal_bf16",
                 "test_attention_4d_causal_padded_kv_bf16", "test_attention_4d_padded_kv_bf16")
    for name in (base, base + "_expanded")
}


@pytest.mark.parametrize("case", SAMPLE, ids=[c.name for c in SAMPLE])
def test_node_case_passes_or_is_refused_with_a_location(case):
    if case.name in KNOWN_DIFFERENCES:
        import numpy as np

        _, (rtol, atol) = KNOWN_DIFFERENCES[case.name]
        model, data = case.load()
        rep = fsir_backend.prepare(model)
        for ins, expected in data:
            for got, want in zip(rep.run(ins), expected):
                np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                                           rtol=rtol, atol=atol)
        return
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
