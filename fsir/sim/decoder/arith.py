"""Integer and float arithmetic: add/sub/mul/mad/fma/div/rem, min/max, abs/neg, and the float
unary ops (ex2, lg2, sin, cos, tanh, rcp, sqrt, rsqrt, copysign, testp), with PTX's rounding,
saturation and flush-to-zero modifiers.
"""

from __future__ import annotations

import numpy as np

from fsir.sim.decoder.numeric import I64, NP, SINT, UINT, DecodeError, from_bf16, ftz32, kind, round_f32, sat01, to_bf16
from fsir.sim.decoder.operands import need_type, nops
from fsir.sim.parser import type_size


def unary_fn(D, ins, parts, ops, f, t=None, tout=None):
    t = t or need_type(parts, ins)
    nops(ops, 2, ins)
    w = D.wr(ops[0], tout or t)
    a = D.rd(ops[1], t)

    def fn(ch, idx):
        w(ch, idx, f(a(ch, idx)))
    return fn


def binary_fn(D, ins, parts, ops, f, t=None, tb=None, tout=None):
    t = t or need_type(parts, ins)
    nops(ops, 3, ins)
    w = D.wr(ops[0], tout or t)
    a = D.rd(ops[1], t)
    b = D.rd(ops[2], tb or t)

    def fn(ch, idx):
        w(ch, idx, f(a(ch, idx), b(ch, idx)))
    return fn


def ternary_fn(D, ins, parts, ops, f, t=None, tc=None, tout=None, tb=None):
    t = t or need_type(parts, ins)
    nops(ops, 4, ins)
    w = D.wr(ops[0], tout or t)
    a = D.rd(ops[1], t)
    b = D.rd(ops[2], tb or t)
    c = D.rd(ops[3], tc or t)

    def fn(ch, idx):
        w(ch, idx, f(a(ch, idx), b(ch, idx), c(ch, idx)))
    return fn


def _rmode(parts):
    for m in ("rn", "rz", "rm", "rp", "rna"):
        if m in parts:
            return m
    return "rn"


def _float_post(parts, t):
    """Compose .ftz and .sat post-processing for float results."""
    ftz = "ftz" in parts and t == "f32"
    sat = "sat" in parts
    if not ftz and not sat:
        return None

    def post(x):
        if ftz:
            x = ftz32(x)
        if sat:
            x = sat01(np.asarray(x))
        return x
    return post


def _wrap_float(f, parts, t, inputs_ftz=True):
    """Apply .ftz to inputs and .ftz/.sat to the output of float op `f`; handle f16x2/bf16/bf16x2."""
    post = _float_post(parts, t)
    ftz_in = "ftz" in parts and t == "f32" and inputs_ftz
    g = f
    if ftz_in:

        def flushed_inputs(*xs):
            return f(*[ftz32(x) for x in xs])

        g = flushed_inputs
    if post is not None:
        g2 = g

        def post_processed(*xs):
            return post(g2(*xs))

        g = post_processed
    if t == "bf16":
        g3 = g

        def on_bf16(*xs):
            return to_bf16(g3(*[from_bf16(x) for x in xs]))

        g = on_bf16
    elif t in ("f16x2", "bf16x2"):
        half = t == "f16x2"
        g4 = g

        def g(*xs):
            los = [unpack2(x, 0, half) for x in xs]
            his = [unpack2(x, 1, half) for x in xs]
            return pack2(g4(*los), g4(*his), half)
    return g


def unpack2(x, hi, half):
    x = np.asarray(x).astype(np.uint32)
    bits = ((x >> np.uint32(16)) if hi else x).astype(np.uint16)
    return bits.view(np.float16) if half else from_bf16(bits)


def pack2(lo, hi, half):
    if half:
        lb = np.asarray(lo).astype(np.float16).view(np.uint16)
        hb = np.asarray(hi).astype(np.float16).view(np.uint16)
    else:
        lb, hb = to_bf16(lo), to_bf16(hi)
    return lb.astype(np.uint32) | (hb.astype(np.uint32) << np.uint32(16))


def _ftype(t):
    """The numpy dtype arithmetic for PTX float type t happens in (packed types -> elements)."""
    return {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.float32,
            "f16x2": np.float16, "bf16x2": np.float32}[t]


def _directed(parts, t, f64op):
    """f32 op with a directed rounding mode: compute in float64, round with correction."""
    mode = _rmode(parts)
    if t == "f32" and mode in ("rz", "rm", "rp"):
        return lambda *xs: round_f32(f64op(*[np.asarray(x, np.float64) for x in xs]), mode)
    return None


def _float_binary(D, ins, parts, ops, t, f):
    """A float binary op `f` (add, sub, mul, div) with its rounding mode and ftz/sat."""
    return binary_fn(D, ins, parts, ops, _wrap_float(_directed(parts, t, f) or f, parts, t), t=t)


def _add_sub(D, ins, parts, ops, f, carry: bool):
    """add or sub (`f`): floats with their rounding, s32 saturating with .sat, and no
    carry chains (.cc, or `carry` for the opcode's carry-in form)."""
    t = need_type(parts, ins)
    if kind(t) in ("f", "fx2"):
        return _float_binary(D, ins, parts, ops, t, f)
    if "sat" in parts and t == "s32":
        return binary_fn(
            D, ins, parts, ops, lambda a, b: np.clip(f(a.astype(I64), b), -(2**31), 2**31 - 1).astype(np.int32), t=t
        )
    if "cc" in parts or carry:
        raise DecodeError(f"unsupported instruction '{ins.opcode}' (carry chains)")
    return binary_fn(D, ins, parts, ops, f, t=t)


def op_add(D, ins, parts, ops):
    return _add_sub(D, ins, parts, ops, np.add, ins.opcode.startswith("addc"))


def op_sub(D, ins, parts, ops):
    return _add_sub(D, ins, parts, ops, np.subtract, False)


def _wide(t):
    return {"s16": "s32", "u16": "u32", "s32": "s64", "u32": "u64", "s64": "s64", "u64": "u64"}[t]


def _mul_hi(t):
    n = type_size(t) * 8
    if n < 64:
        wt = SINT[2 * n // 8] if t[0] == "s" else UINT[2 * n // 8]
        dt = NP[t]
        sh = wt.type(n)
        return lambda a, b: ((np.asarray(a).astype(wt) * np.asarray(b).astype(wt)) >> sh).astype(dt)

    def hi64(a, b):
        ua = np.asarray(a).view(np.uint64) if np.ndim(a) else np.uint64(np.asarray(a).view(np.uint64))
        ub = np.asarray(b).view(np.uint64) if np.ndim(b) else np.uint64(np.asarray(b).view(np.uint64))
        m32 = np.uint64(0xFFFFFFFF)
        s32 = np.uint64(32)
        b0, b1 = ub & m32, ub >> s32
        if t == "u64" and np.ndim(ub) == 0 and np.max(ua, initial=0) <= m32:
            # a 32-bit index times a constant (the printer's division by a constant):
            # a * b1 + (a * b0 >> 32) does not overflow
            return (ua * b1 + ((ua * b0) >> s32)) >> s32
        a0, a1 = ua & m32, ua >> s32
        p00 = a0 * b0
        p01 = a0 * b1
        p10 = a1 * b0
        p11 = a1 * b1
        mid = (p00 >> s32) + (p01 & m32) + (p10 & m32)
        hi = p11 + (p01 >> s32) + (p10 >> s32) + (mid >> s32)
        if t == "s64":
            sa = np.asarray(a).view(np.int64) < 0 if np.ndim(a) else a < 0
            sb = np.asarray(b).view(np.int64) < 0 if np.ndim(b) else b < 0
            hi = hi - np.where(sa, ub, np.uint64(0)) - np.where(sb, ua, np.uint64(0))
            return np.asarray(hi).view(np.int64)
        return hi
    return hi64


def op_mul(D, ins, parts, ops):
    t = need_type(parts, ins)
    if kind(t) in ("f", "fx2"):
        return _float_binary(D, ins, parts, ops, t, np.multiply)
    if "wide" in parts:
        wt = _wide(t)
        wd = NP[wt]
        return binary_fn(
            D,
            ins,
            parts,
            ops,
            lambda a, b: np.multiply(np.asarray(a).astype(wd), np.asarray(b).astype(wd)),
            t=t,
            tout=wt,
        )
    if "hi" in parts:
        return binary_fn(D, ins, parts, ops, _mul_hi(t), t=t)
    return binary_fn(D, ins, parts, ops, np.multiply, t=t)


def op_mad(D, ins, parts, ops):
    t = need_type(parts, ins)
    if kind(t) in ("f", "fx2"):
        return op_fma(D, ins, parts, ops)
    if "wide" in parts:
        wt = _wide(t)
        wd = NP[wt]
        return ternary_fn(D, ins, parts, ops, lambda a, b, c: np.asarray(a).astype(wd) * np.asarray(b).astype(wd) + c,
                           t=t, tc=wt, tout=wt)
    if "hi" in parts:
        hi = _mul_hi(t)
        return ternary_fn(D, ins, parts, ops, lambda a, b, c: hi(a, b) + c, t=t)
    if "cc" in parts:
        raise DecodeError(f"unsupported instruction '{ins.opcode}' (carry chains)")
    return ternary_fn(D, ins, parts, ops, lambda a, b, c: a * b + c, t=t)


def _s24(x, t):
    x = np.asarray(x).astype(np.int64)
    x = x & 0xFFFFFF
    if t == "s32":
        x = np.where(x & 0x800000, x - 0x1000000, x)
    return x


def op_mul24(D, ins, parts, ops):
    t = need_type(parts, ins)
    dt = NP[t]
    if "hi" in parts:

        def f(a, b):
            return ((_s24(a, t) * _s24(b, t)) >> 16).astype(np.int64).astype(dt)
    else:

        def f(a, b):
            return (_s24(a, t) * _s24(b, t)).astype(dt)

    return binary_fn(D, ins, parts, ops, f, t=t)


def op_mad24(D, ins, parts, ops):
    t = need_type(parts, ins)
    dt = NP[t]
    if "hi" in parts:

        def f(a, b, c):
            return ((_s24(a, t) * _s24(b, t)) >> 16).astype(dt) + c
    else:

        def f(a, b, c):
            return (_s24(a, t) * _s24(b, t)).astype(dt) + c

    return ternary_fn(D, ins, parts, ops, f, t=t)


def _fma_fn(t, mode):
    """a * b + c for PTX type t: float types compute in f64 and round once to t (bf16 in _wrap_float)."""
    if t == "f32":
        return lambda a, b, c: round_f32(np.asarray(a, np.float64) * b + np.asarray(c, np.float64), mode)
    if t in ("f16", "f16x2"):
        return lambda a, b, c: (np.asarray(a, np.float64) * b + c).astype(np.float16)
    if t in ("bf16", "bf16x2"):
        return lambda a, b, c: np.asarray(a, np.float64) * b + c  # rounded by _wrap_float's to_bf16
    if t == "f64":
        return fma_f64
    return lambda a, b, c: a * b + c


_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitting constant for float64


def fma_f64(a, b, c):
    """a * b + c rounded once (round to nearest even), as fma.rn.f64 computes it. numpy
    has no fma: where the product is exact in float64 (Dekker's error term is 0) one
    rounded addition is the fma; the other lanes are computed exactly in rationals."""
    a, b, c = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                  np.asarray(c, np.float64))
    with np.errstate(all="ignore"):
        p = a * b
        out = p + c

        def split(x):
            t = _SPLIT * x
            hi = t - (t - x)
            return hi, x - hi

        ah, al = split(a)
        bh, bl = split(b)
        err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        inexact = finite & ~((err == 0) & np.isfinite(p) & ((np.abs(p) >= 2.0**-960) | (p == 0)))
    if not inexact.any():
        return out
    from fractions import Fraction

    shape = out.shape
    out, inexact = np.array(out, np.float64).reshape(-1), inexact.reshape(-1)
    a, b, c = a.reshape(-1), b.reshape(-1), c.reshape(-1)
    for i in np.flatnonzero(inexact):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        try:
            out[i] = float(exact) if exact else (a[i] * b[i] + c[i])  # (a zero keeps IEEE's sign rule)
        except OverflowError:
            out[i] = np.inf if exact > 0 else -np.inf
    return out.reshape(shape)


def op_fma(D, ins, parts, ops):
    t = need_type(parts, ins)
    f = _fma_fn(t, _rmode(parts))
    return ternary_fn(D, ins, parts, ops, _wrap_float(f, parts, t), t=t)


def _trunc_div(a, b):
    q = a // np.where(b == 0, 1, b)
    fix = (q < 0) & (q * b != a)
    return np.where(b == 0, -1, q + fix).astype(np.asarray(a).dtype)


def op_div(D, ins, parts, ops):
    t = need_type(parts, ins)
    if kind(t) == "f":
        return _float_binary(D, ins, parts, ops, t, np.divide)
    if t[0] == "s":
        return binary_fn(D, ins, parts, ops, _trunc_div, t=t)
    dt = NP[t]
    allones = dt.type(np.iinfo(dt).max)

    def udiv(a, b):
        if np.ndim(b) == 0 and b != 0:  # uniform divisor: numpy's fast scalar division
            return a // b[()] if isinstance(b, np.ndarray) else a // b
        return np.where(b == 0, allones, a // np.where(b == 0, 1, b)).astype(dt)
    return binary_fn(D, ins, parts, ops, udiv, t=t)


def op_rem(D, ins, parts, ops):
    t = need_type(parts, ins)
    dt = NP[t]
    if t[0] == "s":
        return binary_fn(
            D, ins, parts, ops, lambda a, b: np.where(b == 0, a, np.fmod(a, np.where(b == 0, 1, b))).astype(dt), t=t
        )

    def urem(a, b):
        if np.ndim(b) == 0 and b != 0:
            return a % b[()] if isinstance(b, np.ndarray) else a % b
        return np.where(b == 0, a, a % np.where(b == 0, 1, b)).astype(dt)
    return binary_fn(D, ins, parts, ops, urem, t=t)


def op_abs(D, ins, parts, ops):
    t = need_type(parts, ins)
    if kind(t) in ("f", "fx2"):
        if t in ("bf16", "bf16x2", "f16x2"):
            mask = {"bf16": np.uint16(0x7FFF), "bf16x2": np.uint32(0x7FFF7FFF), "f16x2": np.uint32(0x7FFF7FFF)}[t]
            return unary_fn(D, ins, parts, ops, lambda a: a & mask, t=t)
        return unary_fn(D, ins, parts, ops, _wrap_float(np.abs, parts, t), t=t)
    return unary_fn(D, ins, parts, ops, np.abs, t=t)


def op_neg(D, ins, parts, ops):
    t = need_type(parts, ins)
    if t in ("bf16", "bf16x2", "f16x2"):
        mask = {"bf16": np.uint16(0x8000), "bf16x2": np.uint32(0x80008000), "f16x2": np.uint32(0x80008000)}[t]
        return unary_fn(D, ins, parts, ops, lambda a: a ^ mask, t=t)
    if kind(t) == "f":
        return unary_fn(D, ins, parts, ops, _wrap_float(np.negative, parts, t), t=t)
    return unary_fn(D, ins, parts, ops, np.negative, t=t)


def op_minmax(D, ins, parts, ops, is_max):
    t = need_type(parts, ins)
    if kind(t) in ("f", "fx2"):
        if "NaN" in parts:
            f = np.maximum if is_max else np.minimum
        else:
            f = np.fmax if is_max else np.fmin
        if len(ops) == 4:  # min.f32 d, a, b, c (sm_100 three-input form)
            return ternary_fn(D, ins, parts, ops, _wrap_float(lambda a, b, c: f(f(a, b), c), parts, t), t=t)
        return binary_fn(D, ins, parts, ops, _wrap_float(f, parts, t), t=t)
    f = np.maximum if is_max else np.minimum
    if "relu" in parts:
        z = NP[t].type(0)
        return binary_fn(D, ins, parts, ops, lambda a, b: np.maximum(f(a, b), z), t=t)
    return binary_fn(D, ins, parts, ops, f, t=t)


# ------------------------------------------------------------- transcendental / float


def op_simple_float(D, ins, parts, ops, fn):
    t = need_type(parts, ins)
    return unary_fn(D, ins, parts, ops, _wrap_float(fn, parts, t), t=t)


def op_rcp(D, ins, parts, ops):
    t = need_type(parts, ins)
    one = _ftype(t)(1)
    f = _directed(parts, t, lambda a: 1.0 / a) or (lambda a: one / a)
    return unary_fn(D, ins, parts, ops, _wrap_float(f, parts, t), t=t)


def op_sqrt(D, ins, parts, ops):
    t = need_type(parts, ins)
    f = _directed(parts, t, np.sqrt) or np.sqrt
    return unary_fn(D, ins, parts, ops, _wrap_float(f, parts, t), t=t)


def op_rsqrt(D, ins, parts, ops):
    t = need_type(parts, ins)
    one = _ftype(t)(1)
    return unary_fn(D, ins, parts, ops, _wrap_float(lambda a: one / np.sqrt(a), parts, t), t=t)


def op_copysign(D, ins, parts, ops):
    t = need_type(parts, ins)
    # copysign.type d, a, b: d = |b| with the sign of a
    return binary_fn(D, ins, parts, ops, lambda a, b: np.copysign(b, a), t=t)


def op_testp(D, ins, parts, ops):
    t = need_type(parts, ins)
    tests = {
        "finite": np.isfinite, "infinite": np.isinf, "number": lambda a: ~np.isnan(a),
        "notanumber": np.isnan,
        "normal": lambda a: np.isfinite(a) & (np.abs(a) >= np.finfo(a.dtype).tiny),
        "subnormal": lambda a: (a != 0) & (np.abs(a) < np.finfo(a.dtype).tiny),
    }
    f = next((tests[p] for p in parts if p in tests), None)
    if f is None:
        raise DecodeError(f"'{ins.opcode}' needs a test (finite, infinite, number, notanumber, normal, subnormal)")
    return unary_fn(D, ins, parts, ops, lambda a: f(np.asarray(a)), t=t, tout="pred")
