"""Differential tests: PTX printed for every generated op/type kernel (fsir/testing/ptx_cases.py)
runs on fsir's PTX simulator and must agree with a numpy model of MLIR's semantics.

Lanes where MLIR gives poison/UB (division by zero, INT_MIN / -1, shifts >= width,
out-of-range float->int) are not compared. Buffers: i1 as uint8 0/1, bf16 as uint16 bits.
"""

from __future__ import annotations

import math
import re
import zlib
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from fsir import sim
from fsir.ptx import print_ptx
from fsir.testing.ptx import parse
from fsir.testing.ptx_cases import Case, cases, cases_module, width

N = 512
INT_DT = {"i1": np.uint8, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64}
FLOAT_DT = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64}
FLOAT_BITS = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}  # significand bits


def is_float(t: str) -> bool:
    return t in FLOAT_DT


def dtype(t: str):
    return FLOAT_DT[t] if is_float(t) else INT_DT[t]


# ---------------------------------------------------------------- value model


def bf16_to_f64(bits: np.ndarray) -> np.ndarray:
    f = ((np.asarray(bits).astype(np.int64) & 0xFFFF).astype(np.uint32) << 16).view(np.float32)
    with np.errstate(invalid="ignore"):  # signalling NaN patterns
        return f.astype(np.float64)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(np.asarray(x, np.float32)), np.uint16(0x7FC0), r)


def to_f64(a: np.ndarray, t: str) -> np.ndarray:
    return bf16_to_f64(a) if t == "bf16" else a.astype(np.float64)


def from_f64(v: np.ndarray, t: str) -> np.ndarray:
    """Round float64 values to type t (bf16: via f32, as the printer does)."""
    with np.errstate(all="ignore"):
        if t == "bf16":
            return f32_to_bf16(v.astype(np.float32))
        return v.astype(FLOAT_DT[t])


def to_int(a: np.ndarray, t: str, signed: bool) -> list[int]:
    w = width(t)
    vals = [int(v) & ((1 << w) - 1) for v in a.astype(np.int64)]
    if signed:
        vals = [v - (1 << w) if v >= 1 << (w - 1) else v for v in vals]
    return vals


def from_int(vals: list[int], t: str) -> np.ndarray:
    w = width(t)
    out = []
    for v in vals:
        v &= (1 << w) - 1
        if t != "i1" and v >= 1 << (w - 1):
            v -= 1 << w
        out.append(v)
    return np.array(out, dtype(t))


def random_inputs(t: str, rng: np.random.Generator) -> np.ndarray:
    if t == "i1":
        return rng.integers(0, 2, N).astype(np.uint8)
    if not is_float(t):
        w = width(t)
        lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
        edge = [0, 1, -1, 2, -2, lo, hi, lo + 1, hi - 1, 7, w - 1]
        full = rng.integers(lo, hi, N, endpoint=True, dtype=np.int64)
        small = rng.integers(-9, 10, N)
        v = np.where(rng.random(N) < 0.4, small, full)
        v[: len(edge)] = edge
        return v.astype(dtype(t))
    v = rng.standard_normal(N) * np.exp(rng.uniform(-6, 6, N))
    v = np.where(rng.random(N) < 0.2, np.round(v), v)
    special = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.5, -2.5, 3.0, 1e-3, 65504.0]
    v[: len(special)] = special
    return from_f64(v, t)


# ---------------------------------------------------------------- reference


def _int_bin(op: str, a: int, b: int, w: int) -> int | None:
    """MLIR integer op on signed (a, b) interpreted at width w; None = poison."""
    ua, ub = a & ((1 << w) - 1), b & ((1 << w) - 1)
    smin = -(1 << (w - 1)) if w > 1 else -1
    if op in ("addi", "subi", "muli", "andi", "ori", "xori"):
        return {"addi": a + b, "subi": a - b, "muli": a * b, "andi": ua & ub, "ori": ua | ub, "xori": ua ^ ub}[op]
    if op in ("divsi", "remsi", "floordivsi", "ceildivsi"):
        if b == 0 or (a == smin and b == -1):
            return None
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        if op == "divsi":
            return q
        if op == "remsi":
            return a - q * b
        if op == "floordivsi":
            return a // b
        return -((-a) // b)
    if op in ("divui", "remui", "ceildivui"):
        if ub == 0:
            return None
        return {"divui": ua // ub, "remui": ua % ub, "ceildivui": -((-ua) // ub)}[op]
    if op in ("maxsi", "minsi"):
        return max(a, b) if op == "maxsi" else min(a, b)
    if op in ("maxui", "minui"):
        return max(ua, ub) if op == "maxui" else min(ua, ub)
    if op in ("shli", "shrsi", "shrui"):
        if not 0 <= ub < w:
            return None
        return {"shli": ua << ub, "shrsi": a >> ub, "shrui": ua >> ub}[op]
    raise NotImplementedError(op)


def _cmpi(pred: str, a: int, b: int, w: int) -> int:
    ua, ub = a & ((1 << w) - 1), b & ((1 << w) - 1)
    x, y = (ua, ub) if pred.startswith("u") else (a, b)
    p = pred.lstrip("su") if pred not in ("eq", "ne") else pred
    return int({"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[p])


def _cmpf(pred: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    unord = np.isnan(a) | np.isnan(b)
    with np.errstate(invalid="ignore"):
        base = {"eq": a == b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b, "ne": a != b}
    if pred == "false":
        return np.zeros_like(unord)
    if pred == "true":
        return np.ones_like(unord)
    if pred == "ord":
        return ~unord
    if pred == "uno":
        return unord
    p = pred[1:]
    r = base[p] & ~unord
    return r | unord if pred[0] == "u" else r


_FLOAT_BIN = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide,
    "maximumf": np.maximum, "minimumf": np.minimum, "maxnumf": np.fmax, "minnumf": np.fmin,
}  # fmt: skip
_MATH = {
    "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v), "absf": np.abs, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "roundeven": np.round, "round": lambda v: np.trunc(v + np.copysign(0.5, v)),
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "tanh": np.tanh, "erf": np.vectorize(math.erf, otypes=[float]), "sin": np.sin, "cos": np.cos,
}  # fmt: skip
_EXACT_MATH = {"sqrt", "absf", "floor", "ceil", "trunc", "roundeven", "round"}

_EXPR = re.compile(r"(\w+)\.(\w+) (.*)")


def reference(expr: str, ins: list[np.ndarray], in_types: list[str], out: str):
    """(expected output array, valid mask, tolerance in ulps of the output type)."""
    m = _EXPR.match(expr)
    assert m, expr
    op, rest = m.group(2), m.group(3)
    ones = np.ones(N, bool)
    if op == "constant":
        if rest == "true":
            return np.ones(N, np.uint8), ones, 0
        lit = rest.split(" : ")[0]
        if is_float(out):
            v = struct_float(lit)
            return from_f64(np.full(N, v), out), ones, 0
        return from_int([int(lit)] * N, out), ones, 0
    t0 = in_types[0]
    if op in _FLOAT_BIN or op in ("negf", "copysign", "fma") or (op in _MATH and is_float(out)) or op == "powf":
        vals = [to_f64(a, t) for a, t in zip(ins, in_types)]
        with np.errstate(all="ignore"):
            if op in _FLOAT_BIN:
                r = _FLOAT_BIN[op](vals[0], vals[1])
            elif op == "negf":
                r = -vals[0]
            elif op == "copysign":
                r = np.copysign(vals[0], vals[1])
            elif op == "fma":
                r = vals[0] * vals[1] + vals[0]
                if out == "f64":  # float64 cannot hold the product: exact rationals, one rounding
                    r = np.array([float(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(a)))
                                  if np.isfinite(x) else x for a, b, x in zip(vals[0], vals[1], r)])
            elif op == "powf":
                r = np.power(vals[0], vals[1])
            else:
                r = _MATH[op](vals[0])
        exact = op in _FLOAT_BIN or op in ("negf", "copysign") or op in _EXACT_MATH
        if op == "rsqrt" or op == "fma":
            tol = 1.0
        elif exact:
            tol = 0.5 if out == "f64" or op in _EXACT_MATH or op in _FLOAT_BIN else 0
        else:  # transcendental: f32 accuracy, then one rounding to the narrow type
            tol = 6.0 if out == "f32" else 1.0
        valid = ones
        if op in ("sin", "cos"):  # absolute bound: compare where the result is not tiny
            valid = (np.abs(vals[0]) < 1e4) & (np.abs(r) > 0.25)
        if op == "powf":
            valid = np.abs(vals[1]) < 16  # larger |y|: see test_ptx_accuracy (bound grows with |y|)
        return from_f64(r, out), valid, tol
    if op == "cmpf":
        pred = rest.split(",")[0]
        return _cmpf(pred, to_f64(ins[0], t0), to_f64(ins[1], t0)).astype(np.uint8), ones, 0
    if op == "select":
        c = ins[0].astype(bool)
        return np.where(c, ins[1], ins[2]), ones, 0
    if op == "cmpi":
        pred = rest.split(",")[0]
        w = width(t0)
        a, b = to_int(ins[0], t0, True), to_int(ins[1], t0, True)
        return np.array([_cmpi(pred, x, y, w) for x, y in zip(a, b)], np.uint8), ones, 0
    if op in ("extsi", "extui", "trunci", "index_cast"):
        vals = to_int(ins[0], t0, op != "extui")  # index_cast sign-extends (i1 true -> -1)
        return from_int(vals, out), ones, 0
    if op in ("sitofp", "uitofp"):
        vals = to_int(ins[0], t0, op == "sitofp")
        if out == "bf16":
            f = np.array([np.float32(v) for v in vals], np.float32).astype(np.float64)
        elif out == "f32":
            f = np.array([np.float32(v) for v in vals], np.float64)
        else:
            f = np.array([float(v) for v in vals], np.float64)
        return from_f64(f, out), ones, 0
    if op in ("fptosi", "fptoui"):
        v = to_f64(ins[0], t0)
        w = width(out)
        lo, hi = (-(2 ** (w - 1)), 2 ** (w - 1) - 1) if op == "fptosi" else (0, 2**w - 1)
        with np.errstate(invalid="ignore"):
            tv = np.trunc(v)
            valid = (tv >= lo) & (tv <= hi) & np.isfinite(v)
        vals = [int(x) if ok else 0 for x, ok in zip(tv, valid)]
        return from_int(vals, out), valid, 0
    if op in ("extf", "truncf"):
        v = to_f64(ins[0], t0)
        if out == "bf16" and t0 == "f64":  # one rounding, straight from f64
            with np.errstate(all="ignore"):
                bits = v.astype(ml_dtypes.bfloat16).view(np.uint16)
            return np.where(np.isnan(v), np.uint16(0x7FC0), bits), ones, 0
        return from_f64(v, out), ones, 0
    if op == "bitcast":
        return ins[0].view(dtype(out)), ones, 0
    if op == "absi":
        return from_int([abs(v) for v in to_int(ins[0], t0, True)], out), ones, 0
    if op in ("ctpop", "ctlz"):
        w = width(t0)
        vals = to_int(ins[0], t0, False)
        r = [v.bit_count() if op == "ctpop" else w - v.bit_length() for v in vals]
        return from_int(r, out), ones, 0
    # integer binary ops
    w = width(t0)
    a, b = to_int(ins[0], t0, True), to_int(ins[1], t0, True)
    if t0 == "i1":  # i1 is signed -1/0 for signed ops
        a = [-v for v in to_int(ins[0], t0, False)]
        b = [-v for v in to_int(ins[1], t0, False)]
    res = [_int_bin(op, x, y, w) for x, y in zip(a, b)]
    valid = np.array([r is not None for r in res])
    return from_int([0 if r is None else r for r in res], out), valid, 0


def struct_float(lit: str) -> float:
    if lit.startswith("0x"):
        return float(np.array(int(lit, 16), np.uint32).view(np.float32))
    return float(lit)


def ulp_diff(got: np.ndarray, want: np.ndarray, t: str) -> np.ndarray:
    g, w = to_f64(got, t), to_f64(want, t)
    both_nan = np.isnan(g) & np.isnan(w)
    same_inf = np.isinf(g) & np.isinf(w) & (g == w)
    with np.errstate(all="ignore"):
        ulp = np.spacing(np.abs(w).astype(FLOAT_DT[t] if t != "bf16" else np.float32)).astype(np.float64)
    if t == "bf16":
        ulp *= 2.0**16
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(g - w) / np.maximum(ulp, 1e-300)
    d[both_nan | same_inf | (g == w)] = 0
    d[np.isnan(d)] = np.inf
    return d


# ---------------------------------------------------------------- the test

ALL = cases()


@pytest.fixture(scope="module")
def sim_module():
    return sim.load_module(print_ptx(parse(cases_module(ALL))))


@pytest.mark.parametrize("case", ALL, ids=[c.name for c in ALL])
def test_case_matches_numpy(sim_module, case: Case):
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    ins = [random_inputs(t, rng) for t in case.in_types]
    y = np.zeros(N * len(case.exprs), dtype(case.out_type))
    sim.launch(sim_module, case.name, (N // 128,), (128,), [*(a.copy() for a in ins), y, np.uint64(N)])
    for k, expr in enumerate(case.exprs):
        got = y[k * N : (k + 1) * N]
        want, valid, tol = reference(expr, ins, case.in_types, case.out_type)
        if is_float(case.out_type):
            bad = valid & (ulp_diff(got, want, case.out_type) > tol)
        else:
            bad = valid & (got != want.astype(got.dtype))
        idx = np.flatnonzero(bad)[:5]
        assert not idx.size, f"{expr}: " + "; ".join(
            f"inputs {[a[i] for a in ins]} got {got[i]} want {want[i]}" for i in idx
        )
