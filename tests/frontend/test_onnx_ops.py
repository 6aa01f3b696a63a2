"""fsir/frontend/onnx_ops.py (and the Reduce*/ArgMax variants of the importer): each
op's expansion, run by the graph reference interpreter, against ONNX's own reference
evaluator (onnx.reference), which covers the newest opsets (Attention, RMSNormalization)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from fsir.errors import UserError
from fsir.frontend.onnx_import import ConstantInputsNeeded, import_onnx
from fsir.runtime.reference import run

rng = np.random.default_rng(3)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def make_model(nodes, inputs: dict, outputs: list[str], inits: dict | None = None, opset: int = 23):
    def info(name, array):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)

    g = helper.make_graph(nodes, "test", [info(n, a) for n, a in inputs.items()],
                          [onnx.ValueInfoProto(name=o) for o in outputs],
                          [numpy_helper.from_array(a, n) for n, a in (inits or {}).items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def check(nodes, inputs: dict, outputs: list[str], inits=None, opset=23, rtol=1e-5, atol=1e-6, bind=None, want=None):
    """fsir's expansion against onnx.reference (or `want`, where that reference does
    not follow the spec)."""
    model = make_model(nodes, inputs, outputs, inits, opset)
    want = want if want is not None else ReferenceEvaluator(model).run(None, inputs)
    module = import_onnx(model.SerializeToString(), "test.onnx", bind=bind)
    got = run(module, [a for n, a in inputs.items() if not bind or n not in bind])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


@pytest.mark.parametrize("op,attrs", [("Elu", {}), ("Elu", {"alpha": 0.5}), ("Selu", {}), ("Celu", {"alpha": 2.0}),
                                      ("HardSwish", {}), ("Mish", {}), ("Softsign", {}), ("Swish", {"alpha": 1.5}),
                                      ("ThresholdedRelu", {"alpha": 0.3}), ("Shrink", {"lambd": 0.7, "bias": 0.2})])
def test_activations(op, attrs):
    check([node(op, ["x"], ["y"], **attrs)], {"x": f32(3, 7) * 3}, ["y"], opset=24 if op == "Swish" else 22)


def test_activations_of_halves_round_once():
    x = (f32(64) * 3).astype(np.float16)
    got = check([node("Celu", ["x"], ["y"])], {"x": x}, ["y"], opset=22, rtol=1e-3)
    assert got[0].dtype == np.float16


def test_prelu_broadcasts_its_slope():
    check([node("PRelu", ["x", "s"], ["y"])], {"x": f32(2, 3, 4), "s": f32(4)}, ["y"], opset=16)
    with pytest.raises(UserError, match="does not broadcast to the input's shape"):
        import_onnx(make_model([node("PRelu", ["x", "s"], ["y"])], {"x": f32(4), "s": f32(3, 4)}, ["y"],
                               opset=16).SerializeToString())


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_rms_normalization(axis):
    check([node("RMSNormalization", ["x", "w"], ["y"], axis=axis, epsilon=0.01)], {"x": f32(2, 3, 5)}, ["y"],
          {"w": f32(*(2, 3, 5)[axis:])})


def test_instance_and_group_normalization():
    x = f32(2, 6, 3, 4)
    check([node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=0.01)], {"x": x}, ["y"],
          {"s": f32(6), "b": f32(6)}, opset=22, atol=1e-5)
    check([node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3)], {"x": x}, ["y"],
          {"s": f32(6), "b": f32(6)}, opset=21, atol=1e-5)
    with pytest.raises(UserError, match="do not split into 4 groups"):
        import_onnx(make_model([node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=4)], {"x": x},
                               ["y"], {"s": f32(6), "b": f32(6)}, opset=21).SerializeToString())


@pytest.mark.parametrize("p", [1, 2])
def test_lp_normalization_zero_rows_give_zero(p):
    x = f32(3, 4)
    x[1] = 0
    norm = np.linalg.norm(x, ord=p, axis=1, keepdims=True)  # (onnx.reference's L1 forgets the |x|)
    want = np.where(norm == 0, 0, x / np.where(norm == 0, 1, norm)).astype(np.float32)
    check([node("LpNormalization", ["x"], ["y"], p=p, axis=1)], {"x": x}, ["y"], opset=22, want=[want])


def test_mean_variance_normalization():
    check([node("MeanVarianceNormalization", ["x"], ["y"])], {"x": f32(2, 3, 4, 5)}, ["y"], opset=13, atol=1e-5)


@pytest.mark.parametrize("axis", [0, -1])
def test_hardmax_marks_the_first_maximum(axis):
    x = np.round(f32(3, 4, 5))  # ties: the first one wins
    check([node("Hardmax", ["x"], ["y"], axis=axis)], {"x": x}, ["y"], opset=13)


def test_hardmax_before_opset_13_coerces_to_2d():
    x = np.round(f32(3, 4, 5))
    flat = x.reshape(3, 20)  # (onnx.reference applies the opset-13 rule to every opset)
    want = (np.arange(20) == flat.argmax(1)[:, None]).astype(np.float32).reshape(x.shape)
    check([node("Hardmax", ["x"], ["y"], axis=1)], {"x": x}, ["y"], opset=11, want=[want])


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("last", [0, 1])
def test_arg_reduce_with_ties(op, last):
    check([node(op, ["x"], ["y"], axis=1, select_last_index=last)], {"x": np.round(f32(4, 6))}, ["y"])


def test_one_hot_and_eye_like():
    ids = np.array([[1, -1], [5, 0]], np.int64)  # -1 counts from depth, 5 is out of range
    check([node("OneHot", ["i", "d", "v"], ["y"], axis=1)], {"i": ids}, ["y"],
          {"d": np.array(4, np.int64), "v": np.array([2.0, 7.0], np.float32)})
    check([node("EyeLike", ["x"], ["y"], k=1)], {"x": f32(3, 5)}, ["y"], opset=22)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_elements(axis):
    data = f32(3, 4, 5)
    shape = [3, 4, 5]
    shape[axis] = 6
    ids = rng.integers(-(3, 4, 5)[axis], (3, 4, 5)[axis], shape).astype(np.int64)
    check([node("GatherElements", ["x", "i"], ["y"], axis=axis)], {"x": data, "i": ids}, ["y"])


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("axis", [0, -1])
def test_cumsum(exclusive, reverse, axis):
    x = rng.integers(-50, 50, (4, 7)).astype(np.int32)
    check([node("CumSum", ["x", "a"], ["y"], exclusive=exclusive, reverse=reverse)], {"x": x}, ["y"],
          {"a": np.array(axis, np.int64)})


def test_cumsum_axis_from_a_graph_input_is_specialised():
    model = make_model([node("CumSum", ["x", "a"], ["y"])], {"x": f32(3, 4), "a": np.array(1, np.int32)}, ["y"])
    with pytest.raises(ConstantInputsNeeded) as info:
        import_onnx(model.SerializeToString(), "m.onnx")
    assert info.value.inputs == ("a",) and str(info.value.loc) == "m.onnx:1:1"
    assert "graph input(s) 'a'" in info.value.message
    check([node("CumSum", ["x", "a"], ["y"])], {"x": f32(3, 4), "a": np.array(1, np.int32)}, ["y"],
          bind={"a": np.array(1, np.int32)}, atol=1e-5)


def test_bound_input_must_match_its_type():
    model = make_model([node("Reshape", ["x", "s"], ["y"])], {"x": f32(2, 3), "s": np.array([3, 2], np.int64)}, ["y"])
    with pytest.raises(UserError, match="bound to a int32 value of shape"):
        import_onnx(model.SerializeToString(), "m.onnx", bind={"s": np.array([3, 2], np.int32)})


@pytest.mark.parametrize("op", ["ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"])
def test_reduce_variants(op):
    x = np.abs(f32(3, 4, 5)) + 0.1
    x[0, 0, 0] = 80.0  # exp(80) overflows f32: LogSumExp must shift by the max
    check([node(op, ["x", "a"], ["y"], keepdims=0)], {"x": x}, ["y"], {"a": np.array([0, 2], np.int64)},
          opset=18, rtol=1e-5)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_boolean_max_min_are_any_all(op):
    x = rng.random((3, 4)) < 0.5
    x[0] = True
    x[1] = False
    check([node(op, ["x"], ["y"], axes=[1], keepdims=0)], {"x": x}, ["y"], opset=13)


@pytest.mark.parametrize("eq,shapes", [
    ("ij->ji", [(3, 4)]), ("ij->i", [(3, 4)]), ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("...ii->...i", [(2, 3, 3)]),
    ("i,i", [(5,), (5,)]), ("ij,jk", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("...ij,jk", [(2, 2, 3, 4), (4, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]), ("i,j->ij", [(3,), (4,)]), ("bii,bi->b", [(2, 3, 3), (2, 3)]),
])
def test_einsum(eq, shapes):
    inputs = {f"x{i}": f32(*s) for i, s in enumerate(shapes)}
    check([node("Einsum", list(inputs), ["y"], equation=eq)], inputs, ["y"], opset=12, atol=1e-5)


def test_einsum_rejects_bad_equations():
    model = make_model([node("Einsum", ["a"], ["y"], equation="ijk->i")], {"a": f32(3, 4)}, ["y"], opset=12)
    with pytest.raises(UserError, match="does not fit the operands' ranks"):
        import_onnx(model.SerializeToString(), "m.onnx")


ATTENTION_CASES = {
    "4d": ({}, [(2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)], None),
    "4d_causal_softcap": ({"is_causal": 1, "softcap": 2.0}, [(2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5)], None),
    "3d_gqa_scaled": ({"q_num_heads": 6, "kv_num_heads": 2, "scale": 0.1}, [(2, 4, 48), (2, 6, 16), (2, 6, 16)], None),
    "bool_mask_padded": ({}, [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)], "bool"),
    "float_mask_window": ({"left_window_size": 1, "right_window_size": 1}, [(1, 1, 5, 4), (1, 1, 5, 4), (1, 1, 5, 4)],
                          "float"),
}


@pytest.mark.parametrize("name", sorted(ATTENTION_CASES))
def test_attention(name):
    attrs, shapes, mask = ATTENTION_CASES[name]
    inputs = {n: f32(*s) for n, s in zip("QKV", shapes)}
    names = ["Q", "K", "V"]
    if mask == "bool":
        m = rng.random((3, 4)) < 0.7
        m[1] = False  # a row with no attendable key gives 0
        inputs["M"] = m
        names.append("M")
    elif mask == "float":
        inputs["M"] = f32(5, 5)
        names.append("M")
    check([node("Attention", names, ["Y", "", "", "S"], qk_matmul_output_mode=3, **attrs)], inputs, ["Y", "S"],
          opset=25, atol=1e-5)


def test_attention_with_past_kv_and_key_padding():
    inputs = {"Q": f32(2, 2, 3, 4), "K": f32(2, 2, 3, 4), "V": f32(2, 2, 3, 4), "pk": f32(2, 2, 2, 4),
              "pv": f32(2, 2, 2, 4)}
    check([node("Attention", ["Q", "K", "V", "", "pk", "pv"], ["Y", "PK", "PV"], is_causal=1)], inputs,
          ["Y", "PK", "PV"], atol=1e-5)
    inputs = {"Q": f32(2, 2, 3, 4), "K": f32(2, 2, 6, 4), "V": f32(2, 2, 6, 4), "n": np.array([4, 6], np.int64)}
    check([node("Attention", ["Q", "K", "V", "", "", "", "n"], ["Y"], is_causal=1)], inputs, ["Y"], opset=24,
          atol=1e-5)


@pytest.mark.parametrize("pos,neg", [(1, 1), (1, 0), (0, 1)])
def test_is_inf(pos, neg):
    x = np.array([1.0, np.inf, -np.inf, np.nan, -2.0], np.float32)
    check([node("IsInf", ["x"], ["y"], detect_positive=pos, detect_negative=neg)], {"x": x}, ["y"], opset=20)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_pow_wraps_like_numpy(dtype):
    x = np.array([2, -3, 0, 1, -1, 7], dtype)
    e = np.array([10, 3, 5, 0, 7, 40], dtype)  # 7^40 wraps around
    check([node("Pow", ["x", "e"], ["y"])], {"x": x, "e": e}, ["y"], opset=15, want=[np.power(x, e)])


def test_gather_nd_batch_dims():
    data = f32(2, 3, 4, 5)
    ids = rng.integers(-3, 3, (2, 6, 2)).astype(np.int64)
    ids[..., 1] %= 4
    check([node("GatherND", ["x", "i"], ["y"], batch_dims=1)], {"x": data, "i": ids}, ["y"], opset=13)


def test_max_of_one_operand_is_itself():
    check([node("Max", ["x"], ["y"])], {"x": f32(3)}, ["y"], opset=13)
