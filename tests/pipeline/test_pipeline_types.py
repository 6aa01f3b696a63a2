"""Element types beyond f32/i32: i8, i16, the unsigned ui8..ui64, f64 (and i1, f16, bf16
as conversion partners), compiled to PTX, run on the simulator and compared exactly with
the reference interpreter: arithmetic and bit ops, comparisons, reductions, and
`graph.convert` between every pair of types on values that include each type's edges
(min/max, NaN, infinities, out-of-range floats, bf16/f16 rounding ties)."""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fsir.dialects.graph import ELEMENTWISE, INT, INTEGER, NUMERIC, numpy_dtype
from fsir.errors import UserError
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute
from fsir.runtime.reference import run
from fsir.testing.pipeline import assemble_all, check

INTS = ["i8", "i16", "ui8", "ui16", "ui32", "ui64"]
ALL = ["i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "f16", "bf16", "f32", "f64"]
SHAPE = (3, 37)  # not a multiple of the block size


def _dtype(t: str) -> np.dtype:
    return numpy_dtype(parse_module(f"func.func @f(%x: tensor<{t}>) {{ func.return }}").body.block.ops.first
                       .function_type.inputs.data[0].element_type)


def _edges(t: str) -> np.ndarray:
    """Values at the edges of type `t`."""
    dt = _dtype(t)
    if dt == np.bool_:
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1, 7, 100 % (int(info.max) + 1)], dt)
    with np.errstate(over="ignore"):
        vals = [np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 127.9, 128.0, -129.0, 255.9, 256.0,
                65535.5, 65536.0, -32769.0, 2.0**31, -(2.0**31) - 1, 2.0**32, 2.0**63, -(2.0**63) * 1.5, 2.0**64,
                1e300, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-9, 1.0 + 2.0**-11 + 2.0**-40, 65520.0, 3.4e38]
        return np.array(vals).astype(dt)


def _values(t: str, rng: np.random.Generator, n: int) -> np.ndarray:
    dt = _dtype(t)
    if dt == np.bool_:
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    scale = 10.0 ** rng.integers(-3, 22, n)
    with np.errstate(over="ignore"):
        return (rng.standard_normal(n) * scale).astype(dt)


def _inputs(t: str, seed: int, zeros: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = _values(t, rng, int(np.prod(SHAPE)))
    edges = _edges(t)
    x[: edges.size] = edges
    if zeros:
        x[::5] = 0
    return x.reshape(SHAPE)


# -------------------------------------------------------------- arithmetic and bit ops


def _accepted(kind: str, t: str) -> bool:
    if kind == NUMERIC:
        return t != "i1"
    if kind in (INTEGER, INT):
        return t[0] in "iu" and (kind == INTEGER or t != "i1")
    return t[0] in "fb"


@pytest.mark.parametrize("t", INTS + ["f64"])
def test_elementwise_ops(t):
    """Every elementwise op accepting `t` (f64: those the code generator has in f64), in
    one kernel per type; divisors include zeros (x / 0 = 0, x % 0 = x)."""
    names = [n for n, spec in ELEMENTWISE.items() if _accepted(spec.types, t)]
    if t == "f64":
        names = [n for n in names if n in ("neg", "abs", "floor", "ceil", "sqrt", "rsqrt", "add", "sub", "mul",
                                           "max", "min", "div", "rem")]
    ty = f"tensor<3x37x{t}>"
    lines = []
    for n in names:
        operands = "%x" if ELEMENTWISE[n].arity == 1 else "%x, %y"
        lines.append(f"  %{n} = graph.{n} {operands} : {ty}")
    outs = ", ".join(f"%{n}" for n in names)
    text = (f"func.func @f(%x: {ty}, %y: {ty}) -> ({', '.join([ty] * len(names))}) {{\n" + "\n".join(lines)
            + f"\n  func.return {outs} : {', '.join([ty] * len(names))}\n}}")
    x, y = _inputs(t, 1), _inputs(t, 2, zeros=True)
    if t == "f64":
        x, y = np.abs(x), np.abs(y)  # sqrt / rsqrt domains
    with np.errstate(all="ignore"):
        check(text, inputs=[x, y], fusion="stitch")


@pytest.mark.parametrize("t", INTS)
def test_shift_amounts(t):
    """Shift amounts of 0, 1, width - 1, width, width + 1 and 'negative' (huge as unsigned)."""
    ty = f"tensor<3x37x{t}>"
    text = f"""func.func @f(%x: {ty}, %n: {ty}) -> ({ty}, {ty}) {{
  %l = graph.shl %x, %n : {ty}
  %r = graph.shr %x, %n : {ty}
  func.return %l, %r : {ty}, {ty}
}}"""
    dt = _dtype(t)
    bits = dt.itemsize * 8
    amounts = np.resize(np.array([0, 1, bits - 1, bits, bits + 1, 3, -1, -bits]).astype(dt), SHAPE)
    check(text, inputs=[_inputs(t, 3), amounts])


@pytest.mark.parametrize("t", INTS + ["f64"])
def test_compare(t):
    ty, cy = f"tensor<3x37x{t}>", "tensor<3x37xi1>"
    dirs = ["eq", "ne", "lt", "le", "gt", "ge"]
    lines = "\n".join(f"  %{d} = graph.compare {d} %x, %y : ({ty}, {ty}) -> {cy}" for d in dirs)
    text = (f"func.func @f(%x: {ty}, %y: {ty}) -> ({', '.join([cy] * 6)}) {{\n{lines}\n"
            f"  func.return {', '.join('%' + d for d in dirs)} : {', '.join([cy] * 6)}\n}}")
    x = _inputs(t, 4)
    y = x.copy()
    y[1] = _inputs(t, 5)[1]  # equal in row 0 and 2, mostly different in row 1
    check(text, inputs=[x, y])


@pytest.mark.parametrize("t", ["i8", "ui8", "ui16", "ui64", "f64"])
@pytest.mark.parametrize("rows", ["thread", "warp", "block"])
def test_reductions(t, rows):
    """Row sums (wrapping), maxima and minima: unsigned ones start from 0 and all ones,
    warp shuffles move narrow and 64-bit values."""
    ty, ry = f"tensor<6x300x{t}>", f"tensor<6x{t}>"
    text = f"""func.func @f(%x: {ty}) -> ({ry}, {ry}, {ry}) {{
  %s = graph.reduce sum %x dims [1] : ({ty}) -> {ry}
  %a = graph.reduce max %x dims [1] : ({ty}) -> {ry}
  %b = graph.reduce min %x dims [1] : ({ty}) -> {ry}
  func.return %s, %a, %b : {ry}, {ry}, {ry}
}}"""
    x = _values(t, np.random.default_rng(6), 6 * 300).reshape(6, 300)
    if t == "f64":
        x = np.random.default_rng(6).standard_normal((6, 300))
    check(text, inputs=[x], rows=rows, fusion="stitch")


def test_unsigned_gather_ids():
    """ui8 ids above 127 are row numbers, not negative ones."""
    text = """func.func @f(%t: tensor<300x4xf32>, %i: tensor<5xui8>) -> tensor<5x4xf32> {
  %g = graph.gather %t, %i : (tensor<300x4xf32>, tensor<5xui8>) -> tensor<5x4xf32>
  func.return %g : tensor<5x4xf32>
}"""
    table = np.arange(1200, dtype=np.float32).reshape(300, 4)
    check(text, inputs=[table, np.array([0, 127, 128, 200, 255], np.uint8)])


def test_f64_transcendental_refused_with_location():
    text = """func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %y = graph.tanh %x : tensor<4xf64>
  func.return %y : tensor<4xf64>
}"""
    with pytest.raises(UserError, match="'graph.tanh' op on f64 needs 'math.tanh'") as err:
        lower(parse_module(text, "t.mlir"), PipelineOptions())
    assert err.value.loc is not None and err.value.loc.line == 2


# ---------------------------------------------------------------------- conversions


@functools.cache
def _converter(src: str):
    """One compiled kernel converting a `src` tensor to every other type."""
    outs = [t for t in ALL if t != src]
    ty = f"tensor<64x{src}>"
    lines = "\n".join(f"  %{t} = graph.convert %x : ({ty}) -> tensor<64x{t}>" for t in outs)
    types = ", ".join(f"tensor<64x{t}>" for t in outs)
    text = (f"func.func @f(%x: {ty}) -> ({types}) {{\n{lines}\n"
            f"  func.return {', '.join('%' + t for t in outs)} : {types}\n}}")
    module = parse_module(text, "<test>")
    lowered = lower(module, PipelineOptions(fusion="stitch"))
    assemble_all(lowered)
    return module, lowered, outs


def _run_conversions(src: str, x: np.ndarray) -> None:
    module, lowered, outs = _converter(src)
    got, _ = execute(lowered, [x])
    with np.errstate(all="ignore"):
        want = run(module, [x])
    for t, g, w in zip(outs, got, want):
        assert g.dtype == w.dtype
        if w.dtype == ml_dtypes.bfloat16 or w.dtype.kind == "f":
            g, w = g.astype(np.float64), w.astype(np.float64)
            same = (g == w) | (np.isnan(g) & np.isnan(w))
            same &= (np.signbit(g) == np.signbit(w)) | np.isnan(w)
        else:
            same = g == w
        bad = ~same
        assert not bad.any(), f"{src} -> {t}: {x[bad][:4]} gave {g[bad][:4]}, expected {w[bad][:4]}"


@pytest.mark.parametrize("src", ALL)
def test_convert_edges(src):
    """Every pair: the source's edge values and random ones."""
    x = _values(src, np.random.default_rng(7), 64)
    e = _edges(src)
    x[: e.size] = e
    _run_conversions(src, x)


@pytest.mark.parametrize("src", ["f32", "f64", "i64", "ui64", "f16"])
# (hypothesis's own f16 array generation discards many draws: seen failing the
# filter_too_much health check in CI with 9 kept of 59; the test itself filters nothing)
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])
@given(data=st.data())
def test_convert_random(src, data):
    """Hypothesis picks the source values (floats of every magnitude, NaN and infinities,
    integers over their whole range) for a compiled all-pairs conversion kernel."""
    x = data.draw(arrays(_dtype(src), 64))
    _run_conversions(src, x)


@pytest.mark.parametrize("t", ["ui8", "i8", "ui16"])
def test_vector_access(t):
    """4-wide loads and stores of narrow integers (ld.global.v4.u8 / .s8 / .b16)."""
    ty = f"tensor<8x64x{t}>"
    text = f"""func.func @f(%x: {ty}, %y: {ty}) -> {ty} {{
  %m = graph.max %x, %y : {ty}
  func.return %m : {ty}
}}"""
    rng = np.random.default_rng(8)
    lowered = check(text, inputs=[_values(t, rng, 512).reshape(8, 64), _values(t, rng, 512).reshape(8, 64)],
                    vector=4)
    from fsir.ptx import print_ptx

    mem = {"ui8": "u8", "i8": "s8", "ui16": "b16"}[t]
    assert f"ld.global.v4.{mem}" in print_ptx(lowered)


BITCASTS = [("f32", "ui32"), ("ui32", "f32"), ("f16", "i16"), ("i16", "bf16"), ("bf16", "f16"), ("f64", "i64"),
            ("ui64", "f64"), ("i8", "ui8"), ("ui8", "i8"), ("i1", "ui8"), ("ui8", "i1")]


@pytest.mark.parametrize("src,dst", BITCASTS, ids=[f"{s}-{d}" for s, d in BITCASTS])
def test_bitcast(src, dst):
    """Bits kept exactly, NaN payloads and negative zeros included (f16/bf16 values are
    computed in f32 and must come back to their own bits)."""
    text = f"""func.func @f(%x: tensor<64x{src}>) -> tensor<64x{dst}> {{
  %b = graph.bitcast %x : (tensor<64x{src}>) -> tensor<64x{dst}>
  func.return %b : tensor<64x{dst}>
}}"""
    dt = _dtype(src)
    rng = np.random.default_rng(9)
    if dt == np.bool_:
        x = rng.random(64) < 0.5
    elif dt == np.uint8 and dst == "i1":
        x = rng.integers(0, 2, 64).astype(np.uint8)  # ONNX's bools are the bytes 0 and 1
    else:  # every bit pattern, NaNs with payloads among them
        x = rng.integers(0, 256, 64 * dt.itemsize, dtype=np.uint8).view(dt)
    module = parse_module(text, "<test>")
    lowered = lower(module, PipelineOptions())
    got = execute(lowered, [x])[0][0]
    want = run(module, [x])[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assemble_all(lowered)
