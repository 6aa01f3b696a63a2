"""math → PTX, with the accuracy of every sequence.

Transcendentals are computed in f32: f16/bf16 inputs are widened exactly and the f32
result is rounded once to the narrow type. f64 has exp, exp2, log, log2, log10 and log1p
in real f64 arithmetic (below), and sqrt, rsqrt, fma, absf, copysign, floor, ceil,
trunc, roundeven and round; its other transcendentals are refused (F32_ONLY).

"HW" is the error of the GPU's approximate unit as documented by the PTX ISA:
`ex2.approx.ftz.f32` ≤ 2 ulp relative, `lg2.approx.ftz.f32` ≤ 2^-22.6 absolute,
`sin/cos.approx.f32` ≤ 2^-20.9 absolute on [-π, π]. ulp = ulp of the exact result in
f32. "sim" is the maximum error measured over ~400k points per op by
tests/ptx/test_ptx_accuracy.py (which asserts these bounds) on fsir's PTX simulator, whose
ex2/lg2/sin/cos are exact: it measures fsir's range reduction and polynomials. "GPU" is
the bound on hardware (sim + HW).

exp      n = rint(x·log2e); r = x − n·ln2 (Cody–Waite, 2 fmas); ex2.approx(r·log2e)·2^n
         with 2^n built from exponent bits in two exact halves, so denormal results
         and overflow come out right.                sim 1.3 ulp (1 ulp in the
         denormal range)                             GPU ≤ 3.5 ulp
exp2     n = rint(x); ex2.approx(x − n)·2^n.         sim 1.0 ulp   GPU ≤ 3 ulp
log      |x − 1| < 1/4: log1p(f) = f + f²·Q(f), f = x − 1 (exact), degree-8 minimax
log2     (0.66 ulp), times 1, log2e or log10e; otherwise lg2.approx(x) (denormal
log10    inputs pre-scaled by 2^24) times ln2, 1 or log10(2).
                                                     sim 2.3 / 2.0 / 3.2 ulp
                                                     GPU ≤ 3.5 ulp near 1, else
                                                     ≤ 5e-7 relative (HW/|log2 x|)
log1p    as log on u = 1 + x; the lg2 branch is corrected by x/(u − 1) for the
         rounding of u.                              sim 3.2 ulp   GPU as log
tanh     |x| < 0.625: x + x³·P(x²), degree-5 minimax (0.72 ulp); else
         sign(x)·(1 − 2/(exp(2|x|) + 1)) with rcp.rn. sim 1.3 ulp   GPU ≤ 4 ulp
erf      |x| < 0.75: x·P(x²), degree-6 minimax (2.4 ulp); else
         sign(x)·(1 − t·A(t)·exp(−x²)), t = 1/(1 + 0.3275911|x|) (Abramowitz–Stegun
         7.1.26, 1.5e-7).                            sim 2.3e-7 abs (3.9 ulp)
                                                     GPU ≤ 3e-7 absolute
sqrt     sqrt.rn.f32.                                0.5 ulp (correctly rounded)
rsqrt    rcp.rn.f32(sqrt.rn.f32(x)).                 sim 1.5 ulp   GPU ≤ 1.5 ulp
divf     div.rn.f32 (in arith_ops).                  0.5 ulp (correctly rounded)
powf     exp2(t + t_lo) where t + t_lo = y·log2|x|: |x| = 2^k·m, m in [0.75, 1.5),
         y·k and y·log2(m) are formed with their exact fma rounding errors and summed
         with Fast2Sum, so the error does not grow with |y·log2 x|.
         Special values follow C pow: pow(x, ±0) = pow(1, y) = 1 (even for NaN);
         x < 0: (−1)^y·|x|^y for integer y, NaN for non-integer y (except x = −inf);
         −0 keeps its sign for odd integer y; zeros, infinities and NaN as in C.
                                                     sim 5.3 ulp for |y| ≤ 8,
                                                     14 ulp for integer |y| ≤ 20
                                                     GPU ≤ 2.4e-7 + |y|·(8e-8 +
                                                     2^-22.6·ln2) relative
sin, cos k = rint(x/2π); r = x − k·2π (2 fmas); sin/cos.approx(r).
                                                     sim 1.5e-7 absolute
                                                     GPU ≤ 6e-7 absolute, |x| ≤ 1e4
fma      fma.rn.                                     0.5 ulp
exact    absf, absi, copysign, floor, ceil, trunc, roundeven, round (half away from
         zero), ctpop, ctlz.

f64 (no approximate unit; "sim" = GPU, measured against numpy by
tests/ptx/test_ptx_accuracy_f64.py, which asserts ≤ 2 ulp):
exp      n = rint(x·log2e); r = x − n·ln2 (fdlibm's ln2 split, 2 fmas); degree-13 Taylor
exp2     polynomial of e^r (|r| ≤ 0.35, truncation 2^-60); times 2^n in two halves
         (denormal results rounded once); inf / 0 selected beyond the range.
         exp2: r = (x − n)·ln2 with the product's fma error.    1.0 ulp
log      x = 2^k·m, m in [√½, √2] (denormals pre-scaled by 2^54); f = m − 1 exact;
log2     log(1+f) = f − (f²/2 − s·(f²/2 + R(s²))), s = f/(2+f), R the atanh series to
log10    z^10 (fdlibm's __ieee754_log form); + k·ln2 (exact hi part). log2/log10
log1p    multiply f (exact) and the small rest separately by a two-part log_b(e);
         log1p: log(1 + x) + c/(1 + x), c the rounding error of 1 + x.   1.0 ulp
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import factorial

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import Float64Type
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import Operation

from fsir.ptx import types as T
from fsir.ptx.arith_ops import (
    as8,
    f32_imm,
    f64_imm,
    float_op,
    is_half,
    narrow_f32,
    norm8,
    simple,
    to_f32,
)
from fsir.ptx.kernel import KernelEmitter, Lowering, rule, unsupported

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
LN2_HI = 0.693145751953125  # 0x3f317200: n·LN2_HI exact for |n| < 2^9
LN2_LO = 1.428606765330187e-06  # 0x35bfbe8e
LOG10_2 = 0.30102999566398120
LOG10E = 0.43429448190325176
INV_2PI = 0.15915494309189535
TWO_PI_HI = 6.28125
TWO_PI_LO = 0.0019353071795864769

# tanh(x) = x + x^3 * P(x^2) on [0, 0.625]
TANH_P = (
    -0.3333333134651184, 0.13333255052566528, -0.05395268276333809,
    0.021732022985816002, -0.008252730593085289, 0.0022103756200522184,
)  # fmt: skip
# log1p(f) = f + f^2 * Q(f) on [-0.25, 0.25]
LOG1P_Q = (
    -0.5, 0.33333322405815125, -0.25000104308128357, 0.20001521706581116,
    -0.16661451756954193, 0.14210064709186554, -0.12576641142368317,
    0.12567423284053802, -0.10259895026683807,
)  # fmt: skip
# erf(x) = x * P(x^2) on [0, 0.75]
ERF_P = (
    1.128379225730896, -0.37612637877464294, 0.11283784359693527,
    -0.02686520665884018, 0.005218324717134237, -0.0008381945663131773,
    9.623374353395775e-05,
)  # fmt: skip
# Abramowitz & Stegun 7.1.26: erfc(x) ~ t*(a1 + t*(a2 + ...)) * exp(-x^2)
AS_P = 0.3275911
AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


class F32:
    """Tiny builder for f32 instruction sequences."""

    REG = T.F32
    FT = "f32"

    def __init__(self, e: KernelEmitter):
        self.e = e

    def __call__(self, opcode: str, *args: str | float) -> str:
        d = self.e.new(self.REG)
        self.e.ins(f"{opcode} {d}, {', '.join(self._arg(a) for a in args)}")
        return d

    @staticmethod
    def _arg(a: str | float) -> str:
        return a if isinstance(a, str) else f32_imm(a)

    def pred(self, cmp: str, a: str | float, b: str | float) -> str:
        p = self.e.new(T.PRED)
        self.e.ins(f"setp.{cmp}.{self.FT} {p}, {self._arg(a)}, {self._arg(b)}")
        return p

    def sel(self, a: str | float, b: str | float, p: str) -> str:
        return self(f"selp.{self.FT}", a, b, p)

    def horner(self, coeffs: Sequence[float], x: str) -> str:
        acc = self(f"mov.{self.FT}", coeffs[-1])
        for c in coeffs[-2::-1]:
            acc = self(f"fma.rn.{self.FT}", acc, x, c)
        return acc

    def scale_pow2(self, v: str, n: str) -> str:
        """v * 2^n for an integral f32 n in [-150, 128], as two exact scalings."""
        e = self.e
        ni, n1, n2 = e.new(T.B32), e.new(T.B32), e.new(T.B32)
        e.ins(f"cvt.rzi.s32.f32 {ni}, {n}")
        e.ins(f"shr.s32 {n1}, {ni}, 1")
        e.ins(f"sub.s32 {n2}, {ni}, {n1}")
        out = v
        for k in (n1, n2):
            b, s = e.new(T.B32), e.new(T.B32)
            e.ins(f"add.s32 {b}, {k}, 127")
            e.ins(f"shl.b32 {s}, {b}, 23")
            f = e.new(T.F32)
            e.ins(f"mov.b32 {f}, {s}")
            out = self("mul.rn.f32", out, f)
        return out


def exp_f32(e: KernelEmitter, x: str) -> str:
    f = F32(e)
    t = f("mul.rn.f32", x, LOG2E)
    tc = f("max.f32", f("min.f32", t, 128.0), -150.0)
    n = f("cvt.rni.f32.f32", tc)
    r = f("fma.rn.f32", n, -LN2_HI, x)
    r = f("fma.rn.f32", n, -LN2_LO, r)
    u = f("mul.rn.f32", r, LOG2E)
    return f.scale_pow2(f("ex2.approx.ftz.f32", u), n)


def exp2_f32(e: KernelEmitter, x: str) -> str:
    f = F32(e)
    tc = f("max.f32", f("min.f32", x, 128.0), -150.0)
    n = f("cvt.rni.f32.f32", tc)
    u = f("sub.rn.f32", x, n)
    return f.scale_pow2(f("ex2.approx.ftz.f32", u), n)


def log_f32(e: KernelEmitter, x: str, far_scale: float, near_scale: float, one_plus: bool = False) -> str:
    """far_scale·log2(x) (log2 via lg2.approx) or, near 1, near_scale·log1p(x−1).

    With `one_plus`, x is the argument of log1p: the polynomial uses x itself.
    """
    f = F32(e)
    if one_plus:
        fr = x
        x = f("add.rn.f32", x, 1.0)
    else:
        fr = f("sub.rn.f32", x, 1.0)
    # far from 1: lg2.approx, with denormal inputs scaled into the normal range
    pd = f.pred("lt", x, 1.1754943508222875e-38)
    xs = f.sel(f("mul.rn.f32", x, 16777216.0), x, pd)
    k = f.sel(24.0, 0.0, pd)
    l2 = f("sub.rn.f32", f("lg2.approx.ftz.f32", xs), k)
    far = l2 if far_scale == 1.0 else f("mul.rn.f32", l2, far_scale)
    if one_plus:  # undo the rounding of 1 + x: log1p(x) = log(u)·x/(u − 1)
        corr = f("div.rn.f32", fr, f("sub.rn.f32", x, 1.0))
        far = f("mul.rn.f32", far, f.sel(corr, 1.0, f.pred("lt", x, 1e30)))
    # near 1: log1p polynomial
    q = f.horner(LOG1P_Q, fr)
    near = f("fma.rn.f32", f("mul.rn.f32", fr, fr), q, fr)
    if near_scale != 1.0:
        near = f("mul.rn.f32", near, near_scale)
    pn = f.pred("lt", f("abs.f32", fr), 0.25)
    return f.sel(near, far, pn)


def tanh_f32(e: KernelEmitter, x: str) -> str:
    f = F32(e)
    a = f("abs.f32", x)
    ex = exp_f32(e, f("add.rn.f32", a, a))
    q = f("rcp.rn.f32", f("add.rn.f32", ex, 1.0))
    big = f("sub.rn.f32", 1.0, f("add.rn.f32", q, q))
    big = f("copysign.f32", x, big)
    s = f("mul.rn.f32", x, x)
    small = f("fma.rn.f32", f("mul.rn.f32", s, x), f.horner(TANH_P, s), x)
    return f.sel(small, big, f.pred("lt", a, 0.625))


def erf_f32(e: KernelEmitter, x: str) -> str:
    f = F32(e)
    a = f("abs.f32", x)
    s = f("mul.rn.f32", x, x)
    small = f("mul.rn.f32", x, f.horner(ERF_P, s))
    t = f("rcp.rn.f32", f("fma.rn.f32", a, AS_P, 1.0))
    poly = f("mul.rn.f32", f.horner(AS_A, t), t)
    ex = exp_f32(e, f("neg.f32", s))
    big = f("fma.rn.f32", f("neg.f32", poly), ex, 1.0)
    big = f("copysign.f32", x, big)
    return f.sel(small, big, f.pred("lt", a, 0.75))


def _y_log2(e: KernelEmitter, ax: str, y: str) -> tuple[str, str]:
    """t + t_lo = y·log2(ax) to about 2^-24·|y| absolute, for ax ≥ 0.

    ax = 2^k·m with m in [0.75, 1.5): y·k and y·log2(m) are formed with their exact
    rounding errors (fma) and added with Fast2Sum (|y·k| ≥ |y·log2 m| when k ≠ 0),
    so the error no longer grows with |y·log2 ax|. Zero, inf and NaN take
    y·lg2.approx(ax).
    """
    f = F32(e)
    pd = f.pred("lt", ax, 1.1754943508222875e-38)
    xs = f.sel(f("mul.rn.f32", ax, 16777216.0), ax, pd)
    bits, ebits, mbits, kint = e.new(T.B32), e.new(T.B32), e.new(T.B32), e.new(T.B32)
    e.ins(f"mov.b32 {bits}, {xs}")
    e.ins(f"shr.u32 {ebits}, {bits}, 23")
    e.ins(f"and.b32 {mbits}, {bits}, 8388607")
    e.ins(f"or.b32 {mbits}, {mbits}, 1065353216")
    e.ins(f"add.s32 {kint}, {ebits}, -127")
    m = e.new(T.F32)
    e.ins(f"mov.b32 {m}, {mbits}")
    k = f("cvt.rn.f32.s32", kint)
    k = f("sub.rn.f32", k, f.sel(24.0, 0.0, pd))
    big = f.pred("ge", m, 1.5)
    m = f.sel(f("mul.rn.f32", m, 0.5), m, big)
    k = f.sel(f("add.rn.f32", k, 1.0), k, big)
    lm = log_f32(e, m, 1.0, LOG2E)
    a = f("mul.rn.f32", y, k)
    a_lo = f("fma.rn.f32", y, k, f("neg.f32", a))
    b = f("mul.rn.f32", y, lm)
    b_lo = f("fma.rn.f32", y, lm, f("neg.f32", b))
    t = f("add.rn.f32", a, b)
    t_err = f("add.rn.f32", f("sub.rn.f32", a, t), b)
    t_lo = f("add.rn.f32", t_err, f("add.rn.f32", a_lo, b_lo))
    # ax zero, inf or NaN, y inf or NaN, |t| huge: plain y·lg2(ax), no correction
    finite = e.new(T.PRED)
    e.ins(f"setp.gt.f32 {finite}, {ax}, {f32_imm(0.0)}")
    e.ins(f"setp.lt.and.f32 {finite}, {ax}, {f32_imm(float('inf'))}, {finite}")
    e.ins(f"setp.lt.and.f32 {finite}, {f('abs.f32', y)}, {f32_imm(float('inf'))}, {finite}")
    e.ins(f"setp.lt.and.f32 {finite}, {f('abs.f32', t)}, {f32_imm(1e30)}, {finite}")
    t_sp = f("mul.rn.f32", y, f("lg2.approx.ftz.f32", ax))
    return f.sel(t, t_sp, finite), f.sel(t_lo, 0.0, finite)


def pow_f32(e: KernelEmitter, x: str, y: str) -> str:
    f = F32(e)
    ax = f("abs.f32", x)
    t, t_lo = _y_log2(e, ax, y)
    r = exp2_f32(e, t)
    # 2^(t + t_lo) ≈ 2^t·(1 + t_lo·ln2), skipped when 2^t overflowed
    rc = f("fma.rn.f32", r, f("mul.rn.f32", t_lo, LN2), r)
    r = f.sel(rc, r, f.pred("lt", r, float("inf")))
    # pow(1, y) = pow(x, 0) = 1 (also for NaN operands)
    one = e.new(T.PRED)
    e.ins(f"setp.eq.or.f32 {one}, {ax}, {f32_imm(1.0)}, {f.pred('eq', y, 0.0)}")
    r = f.sel(1.0, r, one)
    # negative x: sign for odd integer y, NaN for non-integer y
    is_int = f.pred("eq", f("cvt.rni.f32.f32", y), y)
    h = f("mul.rn.f32", y, 0.5)
    odd = e.new(T.PRED)
    e.ins(f"setp.ne.and.f32 {odd}, {f('cvt.rmi.f32.f32', h)}, {h}, {is_int}")
    xb = e.new(T.B32)
    e.ins(f"mov.b32 {xb}, {x}")
    flip = e.new(T.PRED)
    e.ins(f"setp.lt.and.s32 {flip}, {xb}, 0, {odd}")
    r = f.sel(f("neg.f32", r), r, flip)
    nan = e.new(T.PRED)
    e.ins(f"setp.lt.and.f32 {nan}, {x}, {f32_imm(0.0)}, !{is_int}")
    e.ins(f"setp.gt.and.f32 {nan}, {x}, {f32_imm(float('-inf'))}, {nan}")  # pow(-inf, y) is not NaN
    return f.sel(float("nan"), r, nan)


def sincos_f32(e: KernelEmitter, x: str, which: str) -> str:
    f = F32(e)
    k = f("cvt.rni.f32.f32", f("mul.rn.f32", x, INV_2PI))
    r = f("fma.rn.f32", k, -TWO_PI_HI, x)
    r = f("fma.rn.f32", k, -TWO_PI_LO, r)
    return f(f"{which}.approx.f32", r)


# -- f64 -------------------------------------------------------------------------
# No approximate f64 unit exists: exp and log are range reduction + polynomial in f64
# arithmetic (as CUDA's libdevice __nv_exp/__nv_log and fdlibm compute them).

# fdlibm's split of ln 2: LN2_HI_64 has 21 trailing zero bits, so k·LN2_HI_64 is exact
LN2_HI_64 = 6.93147180369123816490e-01
LN2_LO_64 = 1.90821492927058770002e-10
EXP_TAYLOR = tuple(1.0 / factorial(k) for k in range(14))  # e^r, |r| ≤ ln2/2: 2^-60
# log(1+f) = f − (f²/2 − s·(f²/2 + R(s²))), s = f/(2+f), R(z) = Σ 2z^k/(2k+1), |f| ≤ √2−1
LOG_R = tuple(2.0 / (2 * k + 1) for k in range(1, 11))  # truncation 2^-60 relative
SQRT2 = 1.4142135623730951
LOG2E_LO = 2.0355273740931033e-17  # log2(e) − LOG2E
LOG10E_LO = 1.098319650216765e-17  # log10(e) − LOG10E


class F64(F32):
    """The same builder for f64 sequences."""

    REG = T.F64
    FT = "f64"

    @staticmethod
    def _arg(a: str | float) -> str:
        return a if isinstance(a, str) else f64_imm(a)

    def bits(self, x: str) -> str:
        b = self.e.new(T.B64)
        self.e.ins(f"mov.b64 {b}, {x}")
        return b

    def from_bits(self, b: str) -> str:
        f = self.e.new(T.F64)
        self.e.ins(f"mov.b64 {f}, {b}")
        return f

    def int_op(self, opcode: str, *args: str | int) -> str:
        d = self.e.new(T.B64)
        self.e.ins(f"{opcode} {d}, {', '.join(str(a) for a in args)}")
        return d

    def scale_pow2(self, v: str, n: str) -> str:
        """v * 2^n for an integral f64 n in [-1100, 1100], as two scalings by 2^(n/2)
        (each a normal f64): only the second can round, once, into the denormals."""
        ni = self.e.new(T.B64)
        self.e.ins(f"cvt.rzi.s64.f64 {ni}, {n}")
        n1 = self.int_op("shr.s64", ni, 1)
        n2 = self.int_op("sub.s64", ni, n1)
        out = v
        for k in (n1, n2):
            out = self("mul.rn.f64", out, self.from_bits(self.int_op("shl.b64", self.int_op("add.s64", k, 1023), 52)))
        return out


def exp_f64(e: KernelEmitter, x: str, base2: bool = False) -> str:
    """e^x (2^x with `base2`): n = rint(x·log2e), r = x − n·ln2 (two fmas, Cody–Waite),
    e^r by its degree-13 Taylor polynomial (|r| ≤ 0.35: truncation 2^-60), times 2^n.
    NaN propagates through r; results beyond the f64 range are selected as inf and 0."""
    f = F64(e)
    t = x if base2 else f("mul.rn.f64", x, LOG2E)
    n = f("cvt.rni.f64.f64", f("max.f64", f("min.f64", t, 1100.0), -1100.0))
    if base2:
        r = f("mul.rn.f64", f("sub.rn.f64", x, n), LN2)  # x − n exact (Sterbenz)
        r_lo = f("fma.rn.f64", f("sub.rn.f64", x, n), LN2, f("neg.f64", r))
        r = f("add.rn.f64", r, r_lo)
    else:
        r = f("fma.rn.f64", n, -LN2_HI_64, x)
        r = f("fma.rn.f64", n, -LN2_LO_64, r)
    y = f.scale_pow2(f.horner(EXP_TAYLOR, r), n)
    big, small = (1024.0, -1080.0) if base2 else (709.8, -745.2)
    y = f.sel(float("inf"), y, f.pred("gt", x, big))
    return f.sel(0.0, y, f.pred("lt", x, small))


def log_f64(e: KernelEmitter, x: str, base: str = "e", one_plus: bool = False) -> str:
    """log(x) (log2, log10 with `base`; log1p(x) with `one_plus`): x = 2^k·m with m in
    [√½, √2], f = m − 1 exact, log(1+f) as fdlibm's __ieee754_log (s = f/(2+f) and an
    odd series in s, truncated at 2^-60), plus k·ln2 (k·LN2_HI_64 exact). Denormal x
    is scaled by 2^54 first; x < 0 and NaN give NaN, 0 gives −inf, inf gives inf."""
    f = F64(e)
    arg = x
    if one_plus:
        x = f("add.rn.f64", arg, 1.0)
    tiny = f.pred("lt", x, 2.2250738585072014e-308)
    xs = f.sel(f("mul.rn.f64", x, 2.0**54), x, tiny)
    hx = f.bits(xs)
    m = f.from_bits(f.int_op("or.b64", f.int_op("and.b64", hx, 0xFFFFFFFFFFFFF), 0x3FF0000000000000))
    k = e.new(T.F64)
    e.ins(f"cvt.rn.f64.s64 {k}, {f.int_op('add.s64', f.int_op('shr.u64', hx, 52), -1023)}")
    k = f("sub.rn.f64", k, f.sel(54.0, 0.0, tiny))
    hi = f.pred("gt", m, SQRT2)
    m = f.sel(f("mul.rn.f64", m, 0.5), m, hi)
    k = f.sel(f("add.rn.f64", k, 1.0), k, hi)
    fr = f("sub.rn.f64", m, 1.0)
    s = f("div.rn.f64", fr, f("add.rn.f64", fr, 2.0))
    z = f("mul.rn.f64", s, s)
    r = f("mul.rn.f64", z, f.horner(LOG_R, z))
    hfsq = f("mul.rn.f64", f("mul.rn.f64", fr, fr), 0.5)
    corr = f("mul.rn.f64", s, f("add.rn.f64", hfsq, r))
    if one_plus:  # the rounding error of 1 + x, to first order: log(u + c) = log(u) + c/u
        c = f("sub.rn.f64", arg, f("sub.rn.f64", x, 1.0))
        corr = f("add.rn.f64", corr, f("div.rn.f64", c, x))
    t = f("sub.rn.f64", hfsq, corr)  # log(m) = fr − t, fr exact
    if base == "e":
        y = f("fma.rn.f64", k, LN2_HI_64, f("fma.rn.f64", k, LN2_LO_64, f("sub.rn.f64", fr, t)))
    else:  # (fr − t)·log_b(e): fr·log_b(e) inside fmas, log_b(e) split in two
        hi, lo = (LOG2E, LOG2E_LO) if base == "2" else (LOG10E, LOG10E_LO)
        small = f("fma.rn.f64", fr, lo, f("neg.f64", f("mul.rn.f64", t, hi)))
        y = f("fma.rn.f64", fr, hi, small)
        y = f("add.rn.f64", y, k) if base == "2" else f("fma.rn.f64", k, LOG10_2, y)
    y = f.sel(float("-inf"), y, f.pred("eq", x, 0.0))
    y = f.sel(float("inf"), y, f.pred("eq", x, float("inf")))
    return f.sel(float("nan"), y, f.pred("ltu", x, 0.0))  # negative or NaN


def _transcendental(seq: Callable[..., str], seq64: Callable[..., str] | None = None) -> Lowering:
    """Lower an f32 sequence `seq(e, *f32 registers) -> f32 register` (f16/bf16 widened
    exactly, the result rounded once); f64 operands take `seq64`, when there is one."""

    def lower(e: KernelEmitter, op: Operation) -> None:
        res = op.results[0]
        t = res.type
        if isinstance(t, Float64Type):
            if seq64 is None:
                raise unsupported(op, "f64 is not supported (f32, f16, bf16 are)")
            e.define(res, seq64(e, *(e.reg(v) for v in op.operands)))
            return
        r = seq(e, *(to_f32(e, v) for v in op.operands))
        if is_half(t):
            narrow_f32(e, e.define(res), r, t)
        else:
            e.define(res, r)

    if seq64 is None:
        lower.f32_only = True  # type: ignore[attr-defined]  # read by F32_ONLY
    return lower


def _rsqrt(e: KernelEmitter, dst: str, srcs: list[str], ft: str) -> None:
    s = e.new(T.F32 if ft == "f32" else T.F64)
    e.ins(f"sqrt.rn.{ft} {s}, {srcs[0]}")
    e.ins(f"rcp.rn.{ft} {dst}, {s}")


def _round(e: KernelEmitter, dst: str, srcs: list[str], ft: str) -> None:
    """Round half away from zero: trunc(x) + sign(x)·(|x − trunc(x)| ≥ 0.5)."""
    rf = T.F32 if ft == "f32" else T.F64
    x = srcs[0]
    imm = f32_imm if ft == "f32" else f64_imm
    t, d, ad, one, adj = (e.new(rf) for _ in range(5))
    p = e.new(T.PRED)
    e.ins(f"cvt.rzi.{ft}.{ft} {t}, {x}")
    e.ins(f"sub.rn.{ft} {d}, {x}, {t}")
    e.ins(f"abs.{ft} {ad}, {d}")
    e.ins(f"setp.ge.{ft} {p}, {ad}, {imm(0.5)}")
    e.ins(f"copysign.{ft} {one}, {x}, {imm(1.0)}")
    e.ins(f"selp.{ft} {adj}, {one}, {imm(0.0)}, {p}")
    e.ins(f"add.rn.{ft} {dst}, {t}, {adj}")


def _copysign(e: KernelEmitter, dst: str, srcs: list[str], ft: str) -> None:
    mag, sign = srcs
    e.ins(f"copysign.{ft} {dst}, {sign}, {mag}")  # PTX: sign of a onto b


def _absf(e: KernelEmitter, op: math.AbsFOp) -> None:
    if is_half(op.result.type):
        e.ins(f"and.b16 {e.define(op.result)}, {e.reg(op.operand)}, 0x7FFF")
    else:
        float_op(e, op, simple("abs"))


def _absi(e: KernelEmitter, op: math.AbsIOp) -> None:
    w = T.int_width(op.result.type)
    src = e.reg(op.operand)
    if w == 1:  # |x| of an i1 is itself
        e.mov(e.define(op.result), src, T.PRED)
        return
    if w == 8:
        src = as8(e, src, op.operand.type, True)
    dst = e.define(op.result)
    e.ins(f"abs.{T.int_suffix(w, True)} {dst}, {src}")
    if w == 8:
        norm8(e, dst, op.result.type)


def _bitcount(opcode: str) -> Lowering:
    def lower(e: KernelEmitter, op: Operation) -> None:
        w = T.int_width(op.results[0].type)
        src = e.reg(op.operands[0])
        if w not in (32, 64):
            raise unsupported(op, "only i32 and i64")
        c = e.new(T.B32)
        e.ins(f"{opcode}.b{w} {c}, {src}")
        if w == 64:
            e.ins(f"cvt.u64.u32 {e.define(op.results[0])}, {c}")
        else:
            e.define(op.results[0], c)

    return lower


def _log(far: float, near: float, base: str, one_plus: bool = False) -> Lowering:
    return _transcendental(lambda e, x: log_f32(e, x, far, near, one_plus),
                           lambda e, x: log_f64(e, x, base, one_plus))


def _round_to_integer(mode: str) -> Lowering:
    """floor, ceil, trunc and round-half-even: one `cvt` with rounding mode `mode` (rmi, rpi, rzi, rni)."""
    def lower(e: KernelEmitter, op: Operation) -> None:
        float_op(e, op, lambda e2, d, s, ft: e2.ins(f"cvt.{mode}.{ft}.{ft} {d}, {s[0]}"))

    return lower


_EXP2 = _transcendental(exp2_f32, lambda e, x: exp_f64(e, x, base2=True))
_EXP2_APPROX = _transcendental(lambda e, x: F32(e)("ex2.approx.ftz.f32", x))


def _exp2(e: KernelEmitter, op: Operation) -> None:
    """exp2; with the `afn` fast-math flag (approximate functions allowed) on an f32 or
    narrower value the unit's `ex2.approx.ftz.f32` alone: ≤ 2 ulp, results below 2^-126
    flushed to 0, where `exp2_f32`'s range reduction keeps them."""
    flags = op.properties.get("fastmath")
    if isinstance(flags, arith.FastMathFlagsAttr) and FastMathFlag.APPROX_FUNC in flags.data \
            and not isinstance(op.results[0].type, Float64Type):
        _EXP2_APPROX(e, op)
    else:
        _EXP2(e, op)


MATH_LOWERINGS: dict[type[Operation], Lowering] = dict([
    rule(math.ExpOp, _transcendental(exp_f32, exp_f64)),
    rule(math.Exp2Op, lambda e, op: _exp2(e, op)),
    rule(math.LogOp, _log(LN2, 1.0, "e")),
    rule(math.Log2Op, _log(1.0, LOG2E, "2")),
    rule(math.Log10Op, _log(LOG10_2, LOG10E, "10")),
    rule(math.Log1pOp, _log(LN2, 1.0, "e", one_plus=True)),
    rule(math.TanhOp, _transcendental(tanh_f32)),
    rule(math.ErfOp, _transcendental(erf_f32)),
    rule(math.PowFOp, _transcendental(pow_f32)),
    rule(math.SinOp, _transcendental(lambda e, x: sincos_f32(e, x, "sin"))),
    rule(math.CosOp, _transcendental(lambda e, x: sincos_f32(e, x, "cos"))),
    rule(math.SqrtOp, lambda e, op: float_op(e, op, simple("sqrt.rn"))),
    rule(math.RsqrtOp, lambda e, op: float_op(e, op, _rsqrt)),
    rule(math.FmaOp, lambda e, op: float_op(e, op, simple("fma.rn"))),
    rule(math.AbsFOp, _absf),
    rule(math.AbsIOp, _absi),
    rule(math.CopySignOp, lambda e, op: float_op(e, op, _copysign)),
    rule(math.FloorOp, _round_to_integer("rmi")),
    rule(math.CeilOp, _round_to_integer("rpi")),
    rule(math.TruncOp, _round_to_integer("rzi")),
    rule(math.RoundEvenOp, _round_to_integer("rni")),
    rule(math.RoundOp, lambda e, op: float_op(e, op, _round)),
    rule(math.CtPopOp, _bitcount("popc")),
    rule(math.CountLeadingZerosOp, _bitcount("clz")),
])

# The math ops lowered in f32 only (no f64 sequence): the code generator refuses f64
# graph ops whose scalar code needs one, with the op's location.
F32_ONLY: frozenset[type[Operation]] = frozenset(
    op for op, lower in MATH_LOWERINGS.items() if getattr(lower, "f32_only", False))
