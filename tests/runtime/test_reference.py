"""The reference interpreter, op by op, on small hand-computed cases: it is the oracle
for every other level, so its semantics (dtypes, rounding, integer division, clamping,
NaN) are pinned down here."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fsir.errors import UserError
from fsir.parse import parse_module
from fsir.runtime.reference import run

bf16 = ml_dtypes.bfloat16
NAN = np.nan


def run_op(op: str, types: list[str], result: str, *inputs):
    """Run `%r = <op>` with arguments %a, %b, %c of `types`; returns %r."""
    names = "abc"
    args = ", ".join(f"%{names[i]}: {t}" for i, t in enumerate(types))
    text = f"func.func @f({args}) -> {result} {{\n  %r = {op}\n  func.return %r : {result}\n}}\n"
    (out,) = run(parse_module(text, "test.mlir"), [np.asarray(x) for x in inputs])
    return out


def f32(*values):
    return np.array(values, dtype=np.float32)


def i32(*values):
    return np.array(values, dtype=np.int32)


# -- elementwise: dtypes and rounding ----------------------------------------------


def test_f32_stays_f32():
    x = f32(0.1, 1.0, 2.5)
    out = run_op("graph.exp %a : tensor<3xf32>", ["tensor<3xf32>"], "tensor<3xf32>", x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.exp(x))  # no detour through f64
    out = run_op("graph.add %a, %b : tensor<3xf32>", ["tensor<3xf32>"] * 2, "tensor<3xf32>", x, x)
    assert out.dtype == np.float32


def test_f16_rounds_to_nearest_even():
    one = np.float16(1)
    ulp_half = np.float16(2.0**-11)  # half an ulp of 1.0 in f16
    out = run_op("graph.add %a, %b : tensor<2xf16>", ["tensor<2xf16>"] * 2, "tensor<2xf16>",
                 np.array([one, one], np.float16), np.array([ulp_half, 3 * ulp_half], np.float16))
    assert out.dtype == np.float16
    # 1 + 2^-11 is a tie and goes to the even 1.0; 1 + 3*2^-11 goes to 1 + 2^-9.
    np.testing.assert_array_equal(out, np.array([1.0, 1.0 + 2.0**-9], np.float16))


def test_f16_rounds_after_every_op():
    # 300 * 300 = 90000 overflows f16 (max 65504): inf, and stays inf after / 300.
    text = """
    func.func @f(%x: tensor<1xf16>) -> tensor<1xf16> {
      %sq = graph.mul %x, %x : tensor<1xf16>
      %q = graph.div %sq, %x : tensor<1xf16>
      func.return %q : tensor<1xf16>
    }"""
    (out,) = run(parse_module(text), [np.array([300], np.float16)])
    assert out.dtype == np.float16 and np.isinf(out[0])


def test_bf16_rounds():
    out = run_op("graph.add %a, %b : tensor<2xbf16>", ["tensor<2xbf16>"] * 2, "tensor<2xbf16>",
                 np.array([1, 1], bf16), np.array([2.0**-8, 3 * 2.0**-8], bf16))
    assert out.dtype == bf16
    # bf16 keeps 7 mantissa bits: 1 + 2^-8 ties to 1.0, 1 + 3*2^-8 goes to 1 + 2^-6.
    np.testing.assert_array_equal(out.astype(np.float32), f32(1.0, 1.0 + 2.0**-6))


@pytest.mark.parametrize("op, x, expected", [
    ("neg", f32(1.5, -2.0), f32(-1.5, 2.0)),
    ("abs", f32(-1.5, 2.0), f32(1.5, 2.0)),
    ("floor", f32(-1.5, 2.7), f32(-2.0, 2.0)),
    ("ceil", f32(-1.5, 2.2), f32(-1.0, 3.0)),
    ("exp", f32(0.0, 1.0), f32(1.0, np.e)),
    ("log", f32(1.0, np.e), f32(0.0, 1.0)),
    ("tanh", f32(0.0, 100.0), f32(0.0, 1.0)),
    ("erf", f32(0.0, 0.5), f32(0.0, 0.5204999)),
    ("sqrt", f32(4.0, 2.25), f32(2.0, 1.5)),
    ("rsqrt", f32(4.0, 0.25), f32(0.5, 2.0)),
    ("sigmoid", f32(0.0, -100.0), f32(0.5, 0.0)),
])
def test_unary_float(op, x, expected):
    out = run_op(f"graph.{op} %a : tensor<2xf32>", ["tensor<2xf32>"], "tensor<2xf32>", x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op, expected", [
    ("add", f32(5.0, 1.0)), ("sub", f32(1.0, -5.0)), ("mul", f32(6.0, -6.0)),
    ("div", f32(1.5, -2.0 / 3.0)), ("rem", f32(1.0, -2.0)), ("pow", f32(9.0, 1.0 / 8.0)),
    ("max", f32(3.0, 3.0)), ("min", f32(2.0, -2.0)),
])
def test_binary_float(op, expected):
    x, y = f32(3.0, -2.0), f32(2.0, 3.0)
    if op == "pow":
        x, y = f32(3.0, 2.0), f32(2.0, -3.0)
    out = run_op(f"graph.{op} %a, %b : tensor<2xf32>", ["tensor<2xf32>"] * 2, "tensor<2xf32>", x, y)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_integer_division_truncates_toward_zero():
    a, b = i32(7, -7, 7, -7, 5), i32(2, 2, -2, -2, 0)
    div = run_op("graph.div %a, %b : tensor<5xi32>", ["tensor<5xi32>"] * 2, "tensor<5xi32>", a, b)
    rem = run_op("graph.rem %a, %b : tensor<5xi32>", ["tensor<5xi32>"] * 2, "tensor<5xi32>", a, b)
    assert div.dtype == np.int32
    np.testing.assert_array_equal(div[:4], [3, -3, -3, 3])  # numpy's // would give -4
    np.testing.assert_array_equal(rem[:4], [1, -1, 1, -1])  # the dividend's sign
    assert div[4] == 0  # x / 0 is defined as 0


def test_integer_add_wraps():
    out = run_op("graph.add %a, %b : tensor<1xi32>", ["tensor<1xi32>"] * 2, "tensor<1xi32>",
                 i32(2**31 - 1), i32(1))
    assert out.dtype == np.int32 and out[0] == -(2**31)


def test_bitwise_and_logical():
    a, b = i32(0b1100, -1), i32(0b1010, 0)
    assert list(run_op("graph.and %a, %b : tensor<2xi32>", ["tensor<2xi32>"] * 2, "tensor<2xi32>", a, b)) == [0b1000, 0]
    assert list(run_op("graph.or %a, %b : tensor<2xi32>", ["tensor<2xi32>"] * 2, "tensor<2xi32>", a, b)) == [0b1110, -1]
    assert list(run_op("graph.xor %a, %b : tensor<2xi32>", ["tensor<2xi32>"] * 2, "tensor<2xi32>", a, b)) == [0b0110, -1]
    assert list(run_op("graph.not %a : tensor<2xi32>", ["tensor<2xi32>"], "tensor<2xi32>", a)) == [~0b1100, 0]
    p = np.array([True, False])
    out = run_op("graph.not %a : tensor<2xi1>", ["tensor<2xi1>"], "tensor<2xi1>", p)
    assert out.dtype == np.bool_ and list(out) == [False, True]  # logical, not ~1 == -2


def test_max_min_propagate_nan():
    x, y = f32(NAN, 1.0, 2.0), f32(0.0, NAN, 1.0)
    mx = run_op("graph.max %a, %b : tensor<3xf32>", ["tensor<3xf32>"] * 2, "tensor<3xf32>", x, y)
    mn = run_op("graph.min %a, %b : tensor<3xf32>", ["tensor<3xf32>"] * 2, "tensor<3xf32>", x, y)
    np.testing.assert_array_equal(mx, f32(NAN, NAN, 2.0))
    np.testing.assert_array_equal(mn, f32(NAN, NAN, 1.0))


# -- compare, select, convert ------------------------------------------------------


@pytest.mark.parametrize("direction, expected", [
    ("eq", [False, True, False, False]), ("ne", [True, False, True, True]),
    ("lt", [True, False, False, False]), ("le", [True, True, False, False]),
    ("gt", [False, False, True, False]), ("ge", [False, True, True, False]),
])
def test_compare(direction, expected):
    x, y = f32(1.0, 2.0, 3.0, NAN), f32(2.0, 2.0, 2.0, NAN)
    out = run_op(f"graph.compare {direction} %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>",
                 ["tensor<4xf32>"] * 2, "tensor<4xi1>", x, y)
    assert out.dtype == np.bool_
    assert list(out) == expected  # ordered compares are false on NaN; ne is true


def test_select():
    out = run_op("graph.select %a, %b, %c : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>",
                 ["tensor<3xi1>", "tensor<3xf32>", "tensor<3xf32>"], "tensor<3xf32>",
                 np.array([True, False, True]), f32(1, 2, 3), f32(-1, -2, -3))
    np.testing.assert_array_equal(out, f32(1, -2, 3))


def test_convert_float_to_int_truncates_and_saturates():
    x = f32(1.7, -1.7, NAN, 1e10, -1e10, np.inf, 2.0**31, -(2.0**31))
    out = run_op("graph.convert %a : (tensor<8xf32>) -> tensor<8xi32>", ["tensor<8xf32>"], "tensor<8xi32>", x)
    assert out.dtype == np.int32
    imax, imin = 2**31 - 1, -(2**31)
    np.testing.assert_array_equal(out, [1, -1, 0, imax, imin, imax, imax, imin])
    big = f32(1e30, -1e30, 2.0**40)
    out = run_op("graph.convert %a : (tensor<3xf32>) -> tensor<3xi64>", ["tensor<3xf32>"], "tensor<3xi64>", big)
    np.testing.assert_array_equal(out, [2**63 - 1, -(2**63), 2**40])


def test_convert_to_and_from_i1():
    x = f32(0.0, 0.5, -0.0, NAN)
    out = run_op("graph.convert %a : (tensor<4xf32>) -> tensor<4xi1>", ["tensor<4xf32>"], "tensor<4xi1>", x)
    assert list(out) == [False, True, False, True]  # x != 0
    back = run_op("graph.convert %a : (tensor<2xi1>) -> tensor<2xf32>", ["tensor<2xi1>"], "tensor<2xf32>",
                  np.array([True, False]))
    np.testing.assert_array_equal(back, f32(1.0, 0.0))


def test_convert_to_f16_and_bf16_rounds():
    x = f32(65520.0, 1.0 + 2.0**-12, 3.0)
    h = run_op("graph.convert %a : (tensor<3xf32>) -> tensor<3xf16>", ["tensor<3xf32>"], "tensor<3xf16>", x)
    assert h.dtype == np.float16 and np.isinf(h[0]) and h[1] == 1.0 and h[2] == 3.0
    b = run_op("graph.convert %a : (tensor<3xf32>) -> tensor<3xbf16>", ["tensor<3xf32>"], "tensor<3xbf16>", x)
    assert b.dtype == bf16 and float(b[0]) == 65536.0 and float(b[1]) == 1.0


# -- index ops ----------------------------------------------------------------------


def test_broadcast():
    v = f32(1, 2, 3)
    out = run_op("graph.broadcast %a dims [1] : (tensor<3xf32>) -> tensor<2x3xf32>", ["tensor<3xf32>"], "tensor<2x3xf32>", v)
    np.testing.assert_array_equal(out, [[1, 2, 3], [1, 2, 3]])
    out = run_op("graph.broadcast %a dims [0] : (tensor<3xf32>) -> tensor<3x2xf32>", ["tensor<3xf32>"], "tensor<3x2xf32>", v)
    np.testing.assert_array_equal(out, [[1, 1], [2, 2], [3, 3]])
    one = np.array([[5.0, 6.0]], np.float32)
    out = run_op("graph.broadcast %a dims [0, 2] : (tensor<1x2xf32>) -> tensor<3x4x2xf32>", ["tensor<1x2xf32>"],
                 "tensor<3x4x2xf32>", one)
    assert out.shape == (3, 4, 2) and (out[..., 0] == 5).all() and (out[..., 1] == 6).all()
    out = run_op("graph.broadcast %a dims [] : (tensor<f32>) -> tensor<2x2xf32>", ["tensor<f32>"], "tensor<2x2xf32>",
                 np.float32(7))
    np.testing.assert_array_equal(out, np.full((2, 2), 7, np.float32))


def test_reshape_and_transpose():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    r = run_op("graph.reshape %a : (tensor<2x3x4xf32>) -> tensor<6x4xf32>", ["tensor<2x3x4xf32>"], "tensor<6x4xf32>", x)
    np.testing.assert_array_equal(r[5], [20, 21, 22, 23])  # row-major
    t = run_op("graph.transpose %a perm [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>",
               ["tensor<2x3x4xf32>"], "tensor<4x2x3xf32>", x)
    assert t.shape == (4, 2, 3)
    assert t[3, 1, 2] == x[1, 2, 3]  # result dim i is operand dim perm[i]


def test_slice_with_strides():
    x = np.arange(20, dtype=np.int32).reshape(4, 5)
    out = run_op("graph.slice %a start [1, 0] limit [4, 5] strides [2, 3] : (tensor<4x5xi32>) -> tensor<2x2xi32>",
                 ["tensor<4x5xi32>"], "tensor<2x2xi32>", x)
    np.testing.assert_array_equal(out, [[5, 8], [15, 18]])


def test_concat():
    a, b = f32(1, 2).reshape(1, 2), f32(3, 4, 5, 6).reshape(2, 2)
    out = run_op("graph.concat %a, %b, %a dim 0 : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>",
                 ["tensor<1x2xf32>", "tensor<2x2xf32>"], "tensor<4x2xf32>", a, b)
    np.testing.assert_array_equal(out, [[1, 2], [3, 4], [5, 6], [1, 2]])


def test_iota_and_constant():
    out = run_op("graph.iota dim 1 : tensor<2x3xi32>", [], "tensor<2x3xi32>")
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [[0, 1, 2], [0, 1, 2]])
    out = run_op("graph.iota dim 0 : tensor<3xf32>", [], "tensor<3xf32>")
    np.testing.assert_array_equal(out, f32(0, 1, 2))
    out = run_op("graph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>", [], "tensor<2x2xi64>")
    assert out.dtype == np.int64 and out.tolist() == [[1, 2], [3, 4]]
    out = run_op("graph.constant dense<0.5> : tensor<2x3xbf16>", [], "tensor<2x3xbf16>")
    assert out.dtype == bf16 and out.shape == (2, 3) and (out.astype(np.float32) == 0.5).all()


# -- reductions -----------------------------------------------------------------------


def test_reduce_kinds_and_dims():
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)  # [[1 2 3] [4 5 6]]
    def red(kind, dims, out_type):
        return run_op(f"graph.reduce {kind} %a dims {dims} : (tensor<2x3xf32>) -> {out_type}",
                      ["tensor<2x3xf32>"], out_type, x)
    np.testing.assert_array_equal(red("sum", "[1]", "tensor<2xf32>"), f32(6, 15))
    np.testing.assert_array_equal(red("max", "[0]", "tensor<3xf32>"), f32(4, 5, 6))
    np.testing.assert_array_equal(red("min", "[1]", "tensor<2xf32>"), f32(1, 4))
    np.testing.assert_array_equal(red("prod", "[0]", "tensor<3xf32>"), f32(4, 10, 18))
    total = red("sum", "[1, 0]", "tensor<f32>")
    assert total.shape == () and total.dtype == np.float32 and total == 21


def test_reduce_f16_accumulates_in_f32():
    # Accumulating in f16 would lose each +1 next to 2048 (f16 spacing there is 2).
    x = np.array([2048, 1, 1], np.float16)
    out = run_op("graph.reduce sum %a dims [0] : (tensor<3xf16>) -> tensor<f16>", ["tensor<3xf16>"], "tensor<f16>", x)
    assert out.dtype == np.float16 and float(out) == 2050.0


def test_reduce_max_propagates_nan():
    out = run_op("graph.reduce max %a dims [0] : (tensor<3xf32>) -> tensor<f32>", ["tensor<3xf32>"], "tensor<f32>",
                 f32(1.0, NAN, 3.0))
    assert np.isnan(out)


def test_reduce_integers():
    out = run_op("graph.reduce sum %a dims [0] : (tensor<3xi32>) -> tensor<i32>", ["tensor<3xi32>"], "tensor<i32>",
                 i32(1, -5, 7))
    assert out.dtype == np.int32 and out == 3


# -- gather, dot ----------------------------------------------------------------------


def test_gather_clamps_ids():
    table = f32(10, 11, 20, 21, 30, 31).reshape(3, 2)
    out = run_op("graph.gather %a, %b : (tensor<3x2xf32>, tensor<2x2xi32>) -> tensor<2x2x2xf32>",
                 ["tensor<3x2xf32>", "tensor<2x2xi32>"], "tensor<2x2x2xf32>", table, i32(-1, 0, 2, 5).reshape(2, 2))
    np.testing.assert_array_equal(out, [[[10, 11], [10, 11]], [[30, 31], [30, 31]]])


def test_gather_i64_ids_rank1_table():
    out = run_op("graph.gather %a, %b : (tensor<4xf32>, tensor<3xi64>) -> tensor<3xf32>",
                 ["tensor<4xf32>", "tensor<3xi64>"], "tensor<3xf32>", f32(5, 6, 7, 8), np.array([3, 0, 1], np.int64))
    np.testing.assert_array_equal(out, f32(8, 5, 6))


def test_dot():
    a = f32(1, 2, 3, 4, 5, 6).reshape(2, 3)
    b = f32(1, 0, 0, 1, 1, 1).reshape(3, 2)
    out = run_op("graph.dot %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>",
                 ["tensor<2x3xf32>", "tensor<3x2xf32>"], "tensor<2x2xf32>", a, b)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[4, 5], [10, 11]])
    v = run_op("graph.dot %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>",
               ["tensor<3xf32>", "tensor<3xf32>"], "tensor<f32>", f32(1, 2, 3), f32(4, 5, 6))
    assert v.shape == () and v == 32


def test_dot_batched_broadcasts_the_weight():
    a = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    w = f32(1, 1, 1).reshape(3, 1)
    out = run_op("graph.dot %a, %b : (tensor<2x2x3xf32>, tensor<3x1xf32>) -> tensor<2x2x1xf32>",
                 ["tensor<2x2x3xf32>", "tensor<3x1xf32>"], "tensor<2x2x1xf32>", a, w)
    np.testing.assert_array_equal(out[..., 0], [[3, 12], [21, 30]])


def test_dot_f16_accumulates_in_f32():
    out = run_op("graph.dot %a, %b : (tensor<3xf16>, tensor<3xf16>) -> tensor<f16>",
                 ["tensor<3xf16>", "tensor<3xf16>"], "tensor<f16>",
                 np.array([2048, 1, 1], np.float16), np.ones(3, np.float16))
    assert out.dtype == np.float16 and float(out) == 2050.0


# -- dynamic shapes and inputs -------------------------------------------------------


DYNAMIC = """
func.func @f(%x: tensor<?x3xf32>, %v: tensor<?xf32>) -> (tensor<?xf32>, tensor<?x3xf32>, tensor<?xf32>) {
  %s = graph.reduce sum %x dims [1] : (tensor<?x3xf32>) -> tensor<?xf32>
  %b = graph.broadcast %v dims [0] : (tensor<?xf32>) -> tensor<?x3xf32>
  %m = graph.mul %x, %b : tensor<?x3xf32>
  %r = graph.reshape %m : (tensor<?x3xf32>) -> tensor<?xf32>
  func.return %s, %m, %r : tensor<?xf32>, tensor<?x3xf32>, tensor<?xf32>
}
"""


@pytest.mark.parametrize("rows", [1, 2, 5])
def test_dynamic_shapes_take_sizes_from_the_inputs(rows):
    module = parse_module(DYNAMIC)
    x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
    v = np.arange(rows, dtype=np.float32)
    s, m, r = run(module, [x, v])
    np.testing.assert_array_equal(s, x.sum(1))
    np.testing.assert_array_equal(m, x * v[:, None])  # the `?` result dim is the operand's
    assert r.shape == (rows * 3,)


def test_inputs_by_name_and_entry():
    text = DYNAMIC + "func.func @g(%y: tensor<2xi32>) -> tensor<2xi32> {\n  func.return %y : tensor<2xi32>\n}\n"
    module = parse_module(text)
    (y,) = run(module, {"y": i32(4, 5)}, entry="g")
    assert y.tolist() == [4, 5]
    with pytest.raises(UserError, match="no function @h"):
        run(module, [], entry="h")


@pytest.mark.parametrize("inputs, message", [
    ([np.zeros((2, 4), np.float32), np.zeros(2, np.float32)], "expected shape \\?x3, got 2x4"),
    ([np.zeros((2, 3), np.int32), np.zeros(2, np.float32)], "expected element type f32"),
    ([np.zeros((2, 3), np.float32)], "takes 2 arguments, got 1"),
])
def test_bad_inputs_are_user_errors(inputs, message):
    with pytest.raises(UserError, match=message):
        run(parse_module(DYNAMIC), inputs)


def test_float64_inputs_are_converted_to_f32():
    (s, m, r) = run(parse_module(DYNAMIC), [np.ones((1, 3)), np.ones(1)])
    assert s.dtype == np.float32 and m.dtype == np.float32


MISMATCH = """
func.func @f(%x: tensor<?x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = graph.add %x, %y : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %a : tensor<4x8xf32>
}
"""


@pytest.mark.parametrize("rows", [1, 3])
def test_dynamic_size_mismatch_is_a_located_user_error(rows):
    # rows=1 would silently broadcast in numpy; rows=3 would be a raw numpy ValueError.
    with pytest.raises(UserError, match="operand shapes differ at run time") as info:
        run(parse_module(MISMATCH, "m.mlir"), [np.ones((rows, 8), np.float32), np.ones((4, 8), np.float32)])
    assert str(info.value.loc) == "m.mlir:3:3"


def test_dynamic_dot_mismatch_is_a_user_error():
    text = """
    func.func @f(%a: tensor<2x?xf32>, %b: tensor<?x3xf32>) -> tensor<2x3xf32> {
      %d = graph.dot %a, %b : (tensor<2x?xf32>, tensor<?x3xf32>) -> tensor<2x3xf32>
      func.return %d : tensor<2x3xf32>
    }"""
    with pytest.raises(UserError, match="contracting dims differ"):
        run(parse_module(text), [np.ones((2, 4), np.float32), np.ones((5, 3), np.float32)])


def test_results_must_keep_their_static_dims():
    text = """
    func.func @f(%x: tensor<?xf32>) -> tensor<4xf32> {
      %e = graph.exp %x : (tensor<?xf32>) -> tensor<4xf32>
      func.return %e : tensor<4xf32>
    }"""
    with pytest.raises(UserError, match="result has shape 5 at run time but type tensor<4xf32>"):
        run(parse_module(text), [np.ones(5, np.float32)])


@pytest.mark.parametrize("result", ["tensor<4xf32>", "tensor<?x2xf32>"])
def test_reshape_element_count_is_checked_at_run_time(result):
    text = f"""
    func.func @f(%x: tensor<?xf32>) -> {result} {{
      %r = graph.reshape %x : (tensor<?xf32>) -> {result}
      func.return %r : {result}
    }}"""
    with pytest.raises(UserError, match="cannot reshape 5 \\(5 elements\\) at run time"):
        run(parse_module(text), [np.ones(5, np.float32)])
