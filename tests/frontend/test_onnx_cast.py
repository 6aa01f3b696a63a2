"""ONNX Cast, CastLike, BitShift and Bitwise*: imported, compiled, run on the simulator
and compared with onnxruntime; unsupported element types refused at the node."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from fsir.errors import UserError
from fsir.frontend.onnx_import import import_onnx
from fsir.onnx.backend import FsirBackend

NP = {TensorProto.UINT8: np.uint8, TensorProto.UINT16: np.uint16, TensorProto.UINT32: np.uint32,
      TensorProto.UINT64: np.uint64, TensorProto.INT8: np.int8, TensorProto.INT16: np.int16,
      TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.BOOL: np.bool_}


def _model(node, inputs, output):
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, [2, 9]) for n, t in inputs],
                              [helper.make_tensor_value_info("y", output, [2, 9])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _values(t, rng):
    dt = np.dtype(NP[t])
    if dt == np.bool_:
        return rng.random((2, 9)) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, (2, 9), dtype=dt, endpoint=True)
    return (rng.standard_normal((2, 9)) * 300).astype(dt)


def _check(model, inputs):
    rng = np.random.default_rng(0)
    feeds = [_values(t, rng) for _, t in inputs]
    want = ort.InferenceSession(model.SerializeToString()).run(None, dict(zip([n for n, _ in inputs], feeds)))
    got = FsirBackend.prepare(model, "CPU").run(feeds)
    assert got[0].dtype == want[0].dtype
    np.testing.assert_array_equal(got[0], want[0])


CASTS = [(TensorProto.UINT8, TensorProto.FLOAT), (TensorProto.FLOAT, TensorProto.DOUBLE),
         (TensorProto.UINT64, TensorProto.FLOAT), (TensorProto.INT8, TensorProto.UINT16),
         (TensorProto.UINT32, TensorProto.INT8), (TensorProto.DOUBLE, TensorProto.FLOAT),
         (TensorProto.BOOL, TensorProto.UINT8), (TensorProto.UINT16, TensorProto.BOOL)]


@pytest.mark.parametrize("src,dst", CASTS)
def test_cast(src, dst):
    _check(_model(helper.make_node("Cast", ["x"], ["y"], to=dst), [("x", src)], dst), [("x", src)])


def test_cast_like_takes_the_second_inputs_type():
    inputs = [("x", TensorProto.UINT16), ("like", TensorProto.DOUBLE)]
    _check(_model(helper.make_node("CastLike", ["x", "like"], ["y"]), inputs, TensorProto.DOUBLE), inputs)


@pytest.mark.parametrize("t", [TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift(t, direction):
    inputs = [("x", t), ("n", t)]
    model = _model(helper.make_node("BitShift", ["x", "n"], ["y"], direction=direction), inputs, t)
    rng = np.random.default_rng(1)
    x = _values(t, rng)
    n = rng.integers(0, np.dtype(NP[t]).itemsize * 8, (2, 9)).astype(NP[t])  # onnxruntime: below the width
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x, "n": n})
    np.testing.assert_array_equal(FsirBackend.prepare(model, "CPU").run([x, n])[0], want[0])


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("t", [TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT64])
def test_bitwise(op, t):
    inputs = [("a", t), ("b", t)]
    _check(_model(helper.make_node(op, ["a", "b"], ["y"]), inputs, t), inputs)


def test_bitwise_not():
    inputs = [("x", TensorProto.UINT16)]
    _check(_model(helper.make_node("BitwiseNot", ["x"], ["y"]), inputs, TensorProto.UINT16), inputs)


def test_float8_and_int4_are_refused_at_the_node():
    model = _model(helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E4M3FN), [("x", TensorProto.FLOAT)],
                   TensorProto.FLOAT8E4M3FN)
    with pytest.raises(UserError, match=r"node 'y' \(Cast\) has element type FLOAT8E4M3FN, which fsir does not "
                                        "support") as err:
        import_onnx(model.SerializeToString(), "m.onnx")
    assert str(err.value.loc) == "m.onnx:1:1"
    model = _model(helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT), [("x", TensorProto.INT4)],
                   TensorProto.FLOAT)
    with pytest.raises(UserError, match="input 'x' has element type INT4") as err:
        import_onnx(model.SerializeToString(), "m.onnx")
    assert str(err.value.loc) == "m.onnx:0:1"


def test_bit_shift_direction_and_types_are_checked():
    inputs = [("x", TensorProto.UINT8), ("n", TensorProto.UINT8)]
    model = _model(helper.make_node("BitShift", ["x", "n"], ["y"], direction="UP"), inputs, TensorProto.UINT8)
    with pytest.raises(UserError, match="direction must be LEFT or RIGHT, got 'UP'"):
        import_onnx(model.SerializeToString(), "m.onnx")
    floats = [("a", TensorProto.FLOAT), ("b", TensorProto.FLOAT)]
    model = _model(helper.make_node("BitwiseAnd", ["a", "b"], ["y"]), floats, TensorProto.FLOAT)
    with pytest.raises(UserError, match=r"\(BitwiseAnd\): needs integer tensors, got element type f32"):
        import_onnx(model.SerializeToString(), "m.onnx")
