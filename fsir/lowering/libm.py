"""The libm part of the scalar lowering: exact fmod and the f32 trigonometric and hyperbolic
functions, built from arith and math ops so they are as accurate on a GPU as on the simulator.

`ScalarBuilder` (scalar.py) reaches these through `fmod` and the `TRIG` table.
"""

from __future__ import annotations

import math as _m
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, IntegerType, f32
from xdsl.ir import Attribute, SSAValue

if TYPE_CHECKING:  # scalar.py imports this module; the builder is only a parameter here
    from fsir.lowering.scalar import ScalarBuilder


def float_bits(t: Attribute) -> int:
    return {Float16Type: 16, BFloat16Type: 16, Float32Type: 32, Float64Type: 64}[type(t)]


# fmod reduces |x| modulo |y| in steps that each divide the quotient by up to 2^51;
# enough steps for the largest exponent gap of the type (f32: 2^128 / 2^-149,
# f64: 2^1024 / 2^-1074)
_FMOD_STEP = 51
_FMOD_STEPS = {32: 6, 64: 42}


def fmod(b: ScalarBuilder, x: SSAValue, y: SSAValue) -> SSAValue:
    """C fmod, exact (MLIR's arith.remf is missing in xDSL 0.74 and PTX has no
    remainder instruction). Computed in f64 (f32 operands widened): with d = |y|·2^j,
    j from the exponent gap, r <- r - trunc(r / d)·d is exact while r / d < 2^53 (the
    quotient is then an exact integer, at most one too large, which adding d back
    fixes; the fma forms the exact difference), so each step takes r below d and d
    shrinks by 2^51 per step down to |y|. NaN for an infinite x or a zero or NaN y;
    x itself for an infinite y; the sign is x's."""
    t = x.type
    f64 = Float64Type()
    if t == f32:
        x = b.c.value(arith.ExtFOp(x, f64))
        y = b.c.value(arith.ExtFOp(y, f64))
    i64t = IntegerType(64)
    ax, ay = b.math("absf", x), b.math("absf", y)

    def exponent(v: SSAValue) -> SSAValue:  # the unbiased exponent of a positive normal v
        bits = b.c.value(arith.BitcastOp(v, i64t))
        field = b.c.value(arith.AndIOp(b.c.value(arith.ShRUIOp(bits, b.const(52, i64t))),
                                       b.const(0x7FF, i64t)))
        return b.c.value(arith.SubiOp(field, b.const(1023, i64t)))

    def pow2(k: SSAValue) -> SSAValue:  # 2^k for 0 <= k <= 1023
        biased = b.c.value(arith.AddiOp(k, b.const(1023, i64t)))
        return b.c.value(arith.BitcastOp(b.c.value(arith.ShLIOp(biased, b.const(52, i64t))), f64))

    # exponents: a subnormal |y| is scaled into the normal range first; a subnormal
    # |x| reads as 2^-1022, which only makes the first steps do nothing
    tiny = b.c.value(arith.CmpfOp(ay, b.const(2.0**-1000, f64), "olt"))
    scaled = b.c.value(arith.SelectOp(tiny, b.c.value(arith.MulfOp(ay, b.const(2.0**64, f64))), ay))
    ey = b.c.value(arith.SubiOp(exponent(scaled), b.c.value(
        arith.SelectOp(tiny, b.const(64, i64t), b.const(0, i64t)))))
    gap = b.c.value(arith.SubiOp(exponent(ax), ey))
    j = b.c.value(arith.MaxSIOp(b.c.value(arith.SubiOp(gap, b.const(_FMOD_STEP, i64t))),
                                b.const(0, i64t)))
    d = ay  # |y|·2^j in three exact power-of-two factors (each at most 2^700)
    for _ in range(3):
        k = b.c.value(arith.MinSIOp(j, b.const(700, i64t)))
        d = b.c.value(arith.MulfOp(d, pow2(k)))
        j = b.c.value(arith.SubiOp(j, k))
    r = ax
    zero = b.const(0.0, f64)
    for step in range(_FMOD_STEPS[float_bits(t)]):
        if step:
            smaller = b.c.value(arith.MulfOp(d, b.const(2.0**-_FMOD_STEP, f64)))
            d = b.c.value(arith.SelectOp(b.c.value(arith.CmpfOp(smaller, ay, "olt")), ay, smaller))
        q = b.c.value(math.TruncOp(b.c.value(arith.DivfOp(r, d))))
        r = b.c.value(math.FmaOp(b.c.value(arith.NegfOp(q)), d, r))
        negative = b.c.value(arith.CmpfOp(r, zero, "olt"))
        r = b.c.value(arith.SelectOp(negative, b.c.value(arith.AddfOp(r, d)), r))
    r = b.c.value(math.CopySignOp(r, x))
    # |x| < |y| (an infinite y included) gives x; an infinite x, a zero y or a NaN give NaN
    r = b.c.value(arith.SelectOp(b.c.value(arith.CmpfOp(ax, ay, "olt")), x, r))
    invalid = b.c.value(arith.OrIOp(
        b.c.value(arith.CmpfOp(x, y, "uno")),
        b.c.value(arith.OrIOp(b.c.value(arith.CmpfOp(ax, b.const(_m.inf, f64), "oeq")),
                              b.c.value(arith.CmpfOp(ay, zero, "oeq"))))))
    r = b.c.value(arith.SelectOp(invalid, b.const(float("nan"), f64), r))
    return b.c.value(arith.TruncFOp(r, t)) if t == f32 else r


# -- trigonometric and hyperbolic functions --------------------------------------------
#
# Built from f32 arithmetic, so they are as accurate on a GPU as on the simulator (no
# approximate unit on a large argument). sin/cos/tan: Cody–Waite reduction by π/2 in
# three parts (k·PIO2_1 is exact for |k| < 2^16, i.e. |x| < 1e5), then Cephes' minimax
# polynomials on [-π/4, π/4] (≤ 1 ulp there), chosen and signed by the quadrant k mod 4.
# atan: Cephes' reduction to |t| ≤ tan(π/8) and its degree-9 odd polynomial; asin and
# acos go through atan. The hyperbolic functions use exp, log and log1p (fsir/ptx/
# math_ops.py gives their accuracy), with small arguments on polynomials or log1p so the
# result keeps its relative accuracy near 0.

_PIO2 = (1.5703125, 4.837512969970703125e-4, 7.54978995489188216e-8)
_SIN_P = (-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4)
_COS_P = (4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5)
_ATAN_P = (-3.33329491539e-1, 1.99777106478e-1, -1.38776856032e-1, 8.05374449538e-2)
_TAN_3PI_8 = 2.414213562373095
_TAN_PI_8 = 0.4142135623730950


class TrigBuilder:
    """f32 sequences for the trigonometric and hyperbolic ELEMENTWISE rows."""

    def __init__(self, b: ScalarBuilder):
        self.b = b
        self.c = b.c

    def k(self, v: float, like: SSAValue) -> SSAValue:
        return self.b.const(v, like.type)

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.c.value(arith.AddfOp(x, y))

    def sub(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.c.value(arith.SubfOp(x, y))

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.c.value(arith.MulfOp(x, y))

    def div(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.c.value(arith.DivfOp(x, y))

    def fma(self, x: SSAValue, y: SSAValue, z: SSAValue) -> SSAValue:
        return self.c.value(math.FmaOp(x, y, z))

    def lt(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.c.value(arith.CmpfOp(x, y, "olt"))

    def sel(self, p: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.c.value(arith.SelectOp(p, x, y))

    def horner(self, coeffs: Sequence[float], z: SSAValue) -> SSAValue:
        acc = self.k(coeffs[-1], z)
        for c in coeffs[-2::-1]:
            acc = self.fma(acc, z, self.k(c, z))
        return acc

    def reduce_pio2(self, x: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(r, odd, q) with x = k·π/2 + r, |r| ≤ π/4: odd is k's parity (i1), q = k mod 4 (f32)."""
        kf = self.c.value(math.RoundEvenOp(self.mul(x, self.k(2 / _m.pi, x))))
        r = x
        for part in _PIO2:
            r = self.fma(kf, self.k(-part, x), r)
        quarter = self.c.value(math.FloorOp(self.mul(kf, self.k(0.25, x))))
        q = self.fma(quarter, self.k(-4.0, x), kf)  # k mod 4 in {0, 1, 2, 3}, exact
        half = self.c.value(math.FloorOp(self.mul(q, self.k(0.5, x))))
        odd = self.c.value(arith.CmpfOp(self.fma(half, self.k(-2.0, x), q), self.k(1.0, x), "oeq"))
        return r, odd, q

    def sin_poly(self, r: SSAValue) -> SSAValue:
        z = self.mul(r, r)
        return self.fma(self.mul(z, r), self.horner(_SIN_P, z), r)

    def cos_poly(self, r: SSAValue) -> SSAValue:
        z = self.mul(r, r)
        inner = self.fma(self.mul(z, z), self.horner(_COS_P, z), self.mul(z, self.k(-0.5, r)))
        return self.add(inner, self.k(1.0, r))

    def sin(self, x: SSAValue) -> SSAValue:
        r, odd, q = self.reduce_pio2(x)
        v = self.sel(odd, self.cos_poly(r), self.sin_poly(r))
        neg = self.c.value(arith.CmpfOp(q, self.k(2.0, x), "oge"))  # quadrants 2, 3
        return self.sel(neg, self.b.neg(v), v)

    def cos(self, x: SSAValue) -> SSAValue:
        r, odd, q = self.reduce_pio2(x)
        v = self.sel(odd, self.sin_poly(r), self.cos_poly(r))
        # cos is negative in quadrants 1 and 2: q·(3 − q) = 2 exactly there
        neg = self.c.value(arith.CmpfOp(self.mul(q, self.sub(self.k(3.0, x), q)), self.k(2.0, x), "oeq"))
        return self.sel(neg, self.b.neg(v), v)

    def tan(self, x: SSAValue) -> SSAValue:
        r, odd, _ = self.reduce_pio2(x)
        s, c = self.sin_poly(r), self.cos_poly(r)
        return self.sel(odd, self.b.neg(self.div(c, s)), self.div(s, c))

    def atan(self, x: SSAValue) -> SSAValue:
        a = self.c.value(math.AbsFOp(x))
        one = self.k(1.0, x)
        big = self.c.value(arith.CmpfOp(a, self.k(_TAN_3PI_8, x), "ogt"))
        mid = self.c.value(arith.CmpfOp(a, self.k(_TAN_PI_8, x), "ogt"))
        t = self.sel(big, self.b.neg(self.div(one, a)),
                     self.sel(mid, self.div(self.sub(a, one), self.add(a, one)), a))
        base = self.sel(big, self.k(_m.pi / 2, x), self.sel(mid, self.k(_m.pi / 4, x), self.k(0.0, x)))
        z = self.mul(t, t)
        y = self.add(base, self.fma(self.mul(z, t), self.horner(_ATAN_P, z), t))
        return self.c.value(math.CopySignOp(y, x))

    def asin(self, x: SSAValue) -> SSAValue:
        """atan(x / sqrt((1 − x)(1 + x))); ±1 gives ±π/2 through atan(±inf)."""
        one = self.k(1.0, x)
        d = self.c.value(math.SqrtOp(self.mul(self.sub(one, x), self.add(one, x))))
        return self.atan(self.div(x, d))

    def acos(self, x: SSAValue) -> SSAValue:
        """2·atan(sqrt((1 − x) / (1 + x))): no cancellation near x = 1."""
        one = self.k(1.0, x)
        t = self.c.value(math.SqrtOp(self.div(self.sub(one, x), self.add(one, x))))
        return self.mul(self.k(2.0, x), self.atan(t))

    def sinh(self, x: SSAValue) -> SSAValue:
        """|x| < 1/2: x + x³/3! + ... + x⁹/9! (relative error < 1e-9); else (e^x − e^−x)/2."""
        z = self.mul(x, x)
        small = self.fma(self.mul(z, x), self.horner([1 / 6, 1 / 120, 1 / 5040, 1 / 362880], z), x)
        e = self.c.value(math.ExpOp(x))
        big = self.mul(self.sub(e, self.div(self.k(1.0, x), e)), self.k(0.5, x))
        return self.sel(self.lt(self.c.value(math.AbsFOp(x)), self.k(0.5, x)), small, big)

    def cosh(self, x: SSAValue) -> SSAValue:
        e = self.c.value(math.ExpOp(self.c.value(math.AbsFOp(x))))
        return self.mul(self.add(e, self.div(self.k(1.0, x), e)), self.k(0.5, x))

    def asinh(self, x: SSAValue) -> SSAValue:
        """sign(x)·log1p(a + a²/(1 + sqrt(1 + a²))), a = |x|; a > 2^60: log(a) + ln 2."""
        a = self.c.value(math.AbsFOp(x))
        one = self.k(1.0, x)
        z = self.mul(a, a)
        near = self.c.value(math.Log1pOp(self.add(a, self.div(z, self.add(one, self.c.value(
            math.SqrtOp(self.add(one, z))))))))
        far = self.add(self.c.value(math.LogOp(a)), self.k(_m.log(2), x))
        y = self.sel(self.lt(a, self.k(2.0**60, x)), near, far)
        return self.c.value(math.CopySignOp(y, x))

    def acosh(self, x: SSAValue) -> SSAValue:
        """log1p(t + sqrt(t·(t + 2))), t = x − 1 (exact near 1); x > 2^60: log(x) + ln 2.
        NaN for x < 1, as sqrt of a negative number."""
        t = self.sub(x, self.k(1.0, x))
        s = self.c.value(math.SqrtOp(self.mul(t, self.add(t, self.k(2.0, x)))))
        near = self.c.value(math.Log1pOp(self.add(t, s)))
        far = self.add(self.c.value(math.LogOp(x)), self.k(_m.log(2), x))
        return self.sel(self.lt(x, self.k(2.0**60, x)), near, far)

    def atanh(self, x: SSAValue) -> SSAValue:
        """sign(x)·log1p(2a / (1 − a)) / 2, a = |x|."""
        a = self.c.value(math.AbsFOp(x))
        u = self.div(self.add(a, a), self.sub(self.k(1.0, x), a))
        y = self.mul(self.c.value(math.Log1pOp(u)), self.k(0.5, x))
        return self.c.value(math.CopySignOp(y, x))


TRIG: dict[str, Callable[[TrigBuilder, SSAValue], SSAValue]] = {
    "sin": TrigBuilder.sin, "cos": TrigBuilder.cos, "tan": TrigBuilder.tan, "asin": TrigBuilder.asin,
    "acos": TrigBuilder.acos, "atan": TrigBuilder.atan, "sinh": TrigBuilder.sinh, "cosh": TrigBuilder.cosh,
    "asinh": TrigBuilder.asinh, "acosh": TrigBuilder.acosh, "atanh": TrigBuilder.atanh,
}
