"""ONNX Cast, CastLike, BitShift and Bitwise*: imported, compiled, run on the simulator
and compared with onnxruntime; unsupported element types refused at the node."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.numpy_helper import _pack_4bitx2, saturate_cast, to_float8e8m0

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


def test_narrow_types_are_read_by_cast_only():
    """float8/int4 values are storage only: another op on them is refused at the node."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT8E4M3FN), helper.make_node("Neg", ["h"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(UserError, match=r"node 'y' \(Neg\) reads 'h' of element type FLOAT8E4M3FN, which fsir holds "
                                        "as storage only: only Cast and CastLike take it") as err:
        import_onnx(model.SerializeToString(), "m.onnx")
    assert str(err.value.loc) == "m.onnx:2:1"
    model = _model(helper.make_node("Abs", ["x"], ["y"]), [("x", TensorProto.INT4)], TensorProto.INT4)
    with pytest.raises(UserError, match=r"reads 'x' of element type INT4") as err:
        import_onnx(model.SerializeToString(), "m.onnx")
    assert str(err.value.loc) == "m.onnx:1:1"


def test_string_is_refused_at_the_node():
    model = _model(helper.make_node("Cast", ["x"], ["y"], to=TensorProto.STRING), [("x", TensorProto.FLOAT)],
                   TensorProto.STRING)
    with pytest.raises(UserError, match=r"node 'y' \(Cast\) has element type STRING, which fsir does not support") \
            as err:
        import_onnx(model.SerializeToString(), "m.onnx")
    assert str(err.value.loc) == "m.onnx:1:1"


# -- narrow types: bit-exact against ONNX's reference (ml_dtypes, onnx.numpy_helper) ----

FLOAT8 = {TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
          TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
          TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn}


def _casts(inputs, casts):
    """A model of Cast nodes: casts = [(input, output, output type, attrs)]."""
    nodes = [helper.make_node("Cast", [i], [o], to=t, **attrs) for i, o, t, attrs in casts]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, [s]) for n, t, s in inputs],
                              [helper.make_tensor_value_info(o, t, None) for _, o, t, _ in casts])
    return FsirBackend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)]), "CPU")


def _probe_values(dtype) -> np.ndarray:
    """Every finite value of a format, the midpoints between neighbours (ties) and
    their f32 neighbours, values beyond its range, zeros, infinities, NaN, denormals."""
    codes = np.arange(256 if dtype != ml_dtypes.float4_e2m1fn else 16, dtype=np.uint8)
    values = np.unique(codes.view(dtype).astype(np.float32))
    values = values[np.isfinite(values)]
    mids = (values[:-1] + values[1:]) / 2
    near = np.concatenate([np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))])
    top = float(ml_dtypes.finfo(dtype).max)
    extra = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-30, top * 1.0625, top * 1.2, -top * 1.2,
                      top * 4, 3e38, -3e38], np.float32)
    rng = np.random.default_rng(8)
    rand = (rng.standard_normal(500) * top / 3).astype(np.float32)
    return np.concatenate([values, mids, near, extra, rand]).astype(np.float32)


def _same_bits(got, want, x):
    """Bits equal, or both NaN (a NaN's payload is free)."""
    g, w = got.astype(np.float32), want.astype(np.float32)
    ok = (got.view(np.uint8) == want.view(np.uint8)) | (np.isnan(g) & np.isnan(w))
    assert ok.all(), list(zip(x[~ok], g[~ok], w[~ok]))


@pytest.mark.parametrize("fmt", FLOAT8, ids=[TensorProto.DataType.Name(t) for t in FLOAT8])
def test_minifloat_casts_round_to_nearest_even_saturate_and_decode(fmt):
    dtype = FLOAT8[fmt]
    x = _probe_values(dtype)
    with np.errstate(over="ignore"):
        h = x.astype(np.float16)
    codes = np.arange(256 if fmt != TensorProto.FLOAT4E2M1 else 16, dtype=np.uint8).view(dtype)
    rep = _casts([("x", TensorProto.FLOAT, x.size), ("h", TensorProto.FLOAT16, x.size),
                  ("c", fmt, codes.size)],
                 [("x", "sat", fmt, {}), ("x", "raw", fmt, {"saturate": 0}), ("h", "hsat", fmt, {}),
                  ("c", "f", TensorProto.FLOAT, {}), ("c", "f16", TensorProto.FLOAT16, {})])
    sat, raw, hsat, f, f16 = rep.run([x, h, codes])
    assert sat.dtype == dtype and f.dtype == np.float32
    real = ~np.isnan(x)  # FLOAT4E2M1 has no NaN: fsir gives 0, ml_dtypes a sign-flipped 0
    want = saturate_cast(x, dtype) if fmt != TensorProto.FLOAT4E2M1 else x.astype(dtype)
    _same_bits(sat[real], want[real], x[real])
    with np.errstate(over="ignore"):
        _same_bits(raw[real], x[real].astype(dtype), x[real])
    _same_bits(hsat[real], (saturate_cast(h, dtype) if fmt != TensorProto.FLOAT4E2M1 else h.astype(dtype))[real],
               h[real])
    if fmt == TensorProto.FLOAT4E2M1:
        assert (sat[~real].view(np.uint8) == 0).all()
    else:
        assert np.isnan(sat[~real].astype(np.float32)).all()
    np.testing.assert_array_equal(f, codes.astype(np.float32))  # (NaN equal to NaN)
    np.testing.assert_array_equal(f16, codes.astype(np.float16))


def test_f64_to_float8_rounds_once():
    """f64 sources round on their own 64 bits: values just above a tie, which an f32
    intermediate would round onto the tie (and then to even), round up."""
    tie = 1.0 + 2.0**-4  # between 1 and 1.125 in E4M3FN
    x = np.array([tie + 2.0**-40, tie - 2.0**-40, tie, -tie - 2.0**-40, 1e300, -1e-300, np.inf], np.float64)
    got = _casts([("x", TensorProto.DOUBLE, x.size)], [("x", "y", TensorProto.FLOAT8E4M3FN, {})]).run([x])[0]
    assert list(got.astype(np.float64)) == [1.125, 1.0, 1.0, -1.125, 448.0, -0.0, 448.0]
    assert np.signbit(got.astype(np.float32)[5])


@pytest.mark.parametrize("saturate", [1, 0])
def test_e8m0_rounding_modes(saturate):
    rng = np.random.default_rng(3)
    x = np.concatenate([np.exp2(rng.uniform(-130, 128, 600)), -np.exp2(rng.uniform(-10, 10, 50)),
                        np.array([0, 1, 1.5, 3, 0.75, 2.0**127, 1.9 * 2.0**127, 3e38, np.inf, np.nan, 1e-45, 2.0**-127,
                                  1.25 * 2.0**-127])]).astype(np.float32)
    modes = ["up", "down", "nearest"]
    rep = _casts([("x", TensorProto.FLOAT, x.size)],
                 [("x", m, TensorProto.FLOAT8E8M0, {"saturate": saturate, "round_mode": m}) for m in modes])
    for mode, got in zip(modes, rep.run([x])):
        want = to_float8e8m0(x, bool(saturate), mode)
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=mode)
    codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    back = _casts([("c", TensorProto.FLOAT8E8M0, 256)], [("c", "f", TensorProto.FLOAT, {})]).run([codes])[0]
    np.testing.assert_array_equal(back, codes.astype(np.float32))


NARROW_INTS = {TensorProto.INT4: ml_dtypes.int4, TensorProto.UINT4: ml_dtypes.uint4,
               TensorProto.INT2: ml_dtypes.int2, TensorProto.UINT2: ml_dtypes.uint2}


def test_int4_and_int2_wrap_and_widen():
    x = np.arange(-40, 40).astype(np.float32)
    i = np.arange(-300, 300, 3).astype(np.int64)
    types = list(NARROW_INTS)
    casts = [("x", f"f{t}", t, {}) for t in types] + [("i", f"i{t}", t, {}) for t in types]
    outs = _casts([("x", TensorProto.FLOAT, x.size), ("i", TensorProto.INT64, i.size)], casts).run([x, i])
    for (src, _, t, _), got in zip(casts, outs):
        want = (x if src == "x" else i).astype(NARROW_INTS[t])
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64), err_msg=f"{src} {t}")
    values = np.arange(-8, 8).astype(ml_dtypes.int4)
    back = _casts([("v", TensorProto.INT4, 16)], [("v", "f", TensorProto.FLOAT, {}), ("v", "u", TensorProto.UINT8, {}),
                                                  ("v", "e", TensorProto.FLOAT8E5M2, {})]).run([values])
    np.testing.assert_array_equal(back[0], np.arange(-8, 8, dtype=np.float32))
    np.testing.assert_array_equal(back[1], np.arange(-8, 8).astype(np.uint8))
    np.testing.assert_array_equal(back[2].astype(np.float32), np.arange(-8, 8, dtype=np.float32))


def test_narrow_initializer_and_cast_like():
    """A float8 initializer (packed by ONNX: raw bytes) and an int4 one (two per byte),
    and CastLike to a float8 input's type."""
    w8 = np.array([0.5, -3, 448, 1e-3], np.float32).astype(ml_dtypes.float8_e4m3fn)
    w4 = np.array([-8, 7, 3], ml_dtypes.int4)
    inits = [helper.make_tensor("w8", TensorProto.FLOAT8E4M3FN, [4], w8.view(np.uint8).tobytes(), raw=True),
             helper.make_tensor("w4", TensorProto.INT4, [3], _pack_4bitx2(w4).tobytes(), raw=True)]
    nodes = [helper.make_node("Cast", ["w8"], ["a"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["w4"], ["b"], to=TensorProto.FLOAT),
             helper.make_node("CastLike", ["x", "like"], ["c"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
                                           helper.make_tensor_value_info("like", TensorProto.FLOAT8E5M2, [0])],
                              [helper.make_tensor_value_info(n, t, None) for n, t in
                               [("a", TensorProto.FLOAT), ("b", TensorProto.FLOAT), ("c", TensorProto.FLOAT8E5M2)]],
                              initializer=inits)
    rep = FsirBackend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)]), "CPU")
    x = np.array([1.1, -70000, 0.3], np.float32)
    a, b, c = rep.run([x, np.zeros(0, ml_dtypes.float8_e5m2)])
    np.testing.assert_array_equal(a, w8.astype(np.float32))
    np.testing.assert_array_equal(b, [-8, 7, 3])
    assert c.dtype == ml_dtypes.float8_e5m2
    np.testing.assert_array_equal(c.view(np.uint8), saturate_cast(x, ml_dtypes.float8_e5m2).view(np.uint8))


def test_bit_shift_direction_and_types_are_checked():
    inputs = [("x", TensorProto.UINT8), ("n", TensorProto.UINT8)]
    model = _model(helper.make_node("BitShift", ["x", "n"], ["y"], direction="UP"), inputs, TensorProto.UINT8)
    with pytest.raises(UserError, match="direction must be LEFT or RIGHT, got 'UP'"):
        import_onnx(model.SerializeToString(), "m.onnx")
    floats = [("a", TensorProto.FLOAT), ("b", TensorProto.FLOAT)]
    model = _model(helper.make_node("BitwiseAnd", ["a", "b"], ["y"]), floats, TensorProto.FLOAT)
    with pytest.raises(UserError, match=r"\(BitwiseAnd\): needs integer tensors, got element type f32"):
        import_onnx(model.SerializeToString(), "m.onnx")


@pytest.mark.parametrize("t", [TensorProto.INT4, TensorProto.FLOAT8E5M2])
def test_narrow_initializer_that_does_not_fill_its_dims_is_refused(t):
    w = helper.make_tensor("w", t, [1], b"\x01", raw=True)
    w.dims[0] = 9
    graph = helper.make_graph([helper.make_node("Cast", ["w"], ["y"], to=TensorProto.FLOAT)], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[w])
    with pytest.raises(UserError, match="initializer 'w': its data does not match its dims 9") as err:
        import_onnx(helper.make_model(graph).SerializeToString(), "m.onnx")
    assert str(err.value.loc) == "m.onnx:1:1"


@pytest.mark.parametrize("declared,cast_to,message", [
    (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT, "declared FLOAT8E4M3FN but computed as f32"),
    (TensorProto.FLOAT, TensorProto.INT4, "declared FLOAT but computed as INT4"),
    (99, TensorProto.FLOAT8E5M2, r"declared 99 \(not an ONNX data type\) but computed as FLOAT8E5M2"),
])
def test_narrow_output_types_must_match_their_declaration(declared, cast_to, message):
    """The backend reads a narrow output's bytes by its declared type: they must agree."""
    model = _model(helper.make_node("Cast", ["x"], ["y"], to=cast_to), [("x", TensorProto.FLOAT)], declared)
    with pytest.raises(UserError, match=f"graph output 'y' is {message}") as err:
        import_onnx(model.SerializeToString(), "m.onnx")
    assert str(err.value.loc) == "m.onnx:1:1"


def test_narrow_initializer_read_by_another_op_is_refused():
    w = helper.make_tensor("w", TensorProto.FLOAT8E4M3FN, [2], b"\x01\x02", raw=True)
    graph = helper.make_graph([helper.make_node("Relu", ["w"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, None)], initializer=[w])
    with pytest.raises(UserError, match=r"\(Relu\) reads 'w' of element type FLOAT8E4M3FN") as err:
        import_onnx(helper.make_model(graph).SerializeToString(), "m.onnx")
    assert str(err.value.loc) == "m.onnx:1:1"
