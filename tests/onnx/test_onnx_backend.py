"""fsir.onnx.backend against ONNX's own backend test suite.

Two views of the same suite:

- `onnx.backend.test.BackendTest` itself, for the node tests of op types fsir runs
  (`RUNS`): these must pass exactly as ONNX's runner checks them;
- every node case, run in each fusion mode (stitch, xla, none) and classified by
  `fsir.onnx.conformance`: in every mode each must pass or be refused with a located
  error — never a wrong result, never a crash — and the modes must agree with each
  other (the same outcome, outputs within the case's tolerance of each other).
  `benchmarks/onnx_conformance.py` prints the same run as tables.
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from fsir.onnx import backend as fsir_backend
from fsir.onnx.conformance import MODES, Outcome, node_cases, run_case_modes
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
    CASES = node_cases()
BY_NAME = {c.name: c for c in CASES}

# bf16 attention cases whose expected outputs fsir knowingly does not reproduce: ONNX's
# reference sums the softmax denominator in bf16 (softmax_precision unset means the
# input's precision), fsir in f32. `test_bf16_attention_differs_only_in_the_softmax_sum`
# shows that this is the whole difference.
BF16_SOFTMAX_SUM = tuple(name for base in ("test_attention_3d_causal_bf16", "test_attention_4d_causal_bf16",
                                           "test_attention_4d_causal_padded_kv_bf16",
                                           "test_attention_4d_padded_kv_bf16")
                         for name in (base, base + "_expanded"))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case_three_ways(case):
    """Every node case in every fusion mode: passed, or refused with a location, and
    the same in each mode; the bf16 cases above fail alike in every mode."""
    run = run_case_modes(case)
    assert run.disagreement is None, f"the fusion modes disagree: {run.disagreement}\n" + "\n".join(
        f"  {mode}: {r.outcome.value} {r.message}" for mode, r in run.results.items())
    result = run.results[MODES[0]]
    if case.name in BF16_SOFTMAX_SUM:
        assert result.outcome in (Outcome.PASSED, Outcome.FAILED), result.message
        return
    assert result.outcome in (Outcome.PASSED, Outcome.REFUSED), f"{result.outcome}: {result.message}"
    if result.outcome is Outcome.REFUSED:
        assert result.located, f"refused without a location: {result.message}"


class Softmax(OpRun):
    """ONNX's Softmax with each step rounded to the input's type as ONNX's reference
    does, except that the denominator is accumulated in f32 (as fsir's reductions are).
    (`ReferenceEvaluator(new_ops=...)` replaces an op by the class of its name.)"""

    op_domain = ""

    def _run(self, x, axis=None):
        axis = -1 if axis is None else axis  # the schema's default, passed as None when unset
        with np.errstate(invalid="ignore"):  # a fully masked row is NaN, as in ONNX's own
            e = np.exp(x - x.max(axis=axis, keepdims=True))
        total = e.astype(np.float32).sum(axis=axis, keepdims=True).astype(x.dtype)
        return ((e / total).astype(x.dtype),)


@pytest.mark.parametrize("name", BF16_SOFTMAX_SUM)
def test_bf16_attention_differs_only_in_the_softmax_sum(name):
    """fsir's output is bit for bit ONNX's reference evaluation of the expanded graph
    with only the softmax denominator summed in f32, while the expected output is ONNX's
    reference of the Attention op, which sums it in bf16."""
    expanded = BY_NAME[name if name.endswith("_expanded") else name + "_expanded"]
    model, data = expanded.load()
    inputs, expected = data[0]
    feeds = {i.name: a for i, a in zip(model.graph.input, inputs)}
    (got,) = fsir_backend.prepare(BY_NAME[name].load()[0]).run(inputs)
    (f32_sum,) = ReferenceEvaluator(model, new_ops=[Softmax]).run(None, feeds)
    op_model = BY_NAME[name.removesuffix("_expanded")].load()[0]
    (bf16_sum,) = ReferenceEvaluator(op_model).run(None, feeds)
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got.astype(np.float32), f32_sum.astype(np.float32))
    np.testing.assert_array_equal(bf16_sum.astype(np.float32), expected[0].astype(np.float32))
    assert not np.array_equal(got.astype(np.float32), expected[0].astype(np.float32))


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
