"""Integer division and remainder by a constant, as multiplies and shifts.

ptxas compiles `div.u64` and `rem.u64` to a call of a division routine (about forty
machine instructions) and `div.u32` to a reciprocal sequence, even when the divisor is
an immediate: the front end (NVVM) is expected to have strength-reduced them. Kernel
index arithmetic divides by tile and shape sizes everywhere, so the printer does it:
a power of two is a shift or a mask, another divisor d a multiply-high by a magic
number m and a shift (Granlund and Montgomery, "Division by invariant integers using
multiplication", PLDI 1994, §4), and the remainder n - q d. A signed division by a
positive constant truncates towards zero: a power of two adds d - 1 to a negative n
before the arithmetic shift, another d takes a signed multiply-high by a magic number
(GM94 §5; Warren, "Hacker's Delight", §10-4), an arithmetic shift and adds n's sign bit.

```
%q = arith.divui %n, %c12 : index      mul.hi.u64 %rd2, %rd1, 0xaaaaaaaaaaaaaaab;
                                    -> shr.u64 %rd3, %rd2, 3;
```
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from xdsl.ir import Operation

from fsir.ptx import types as T
from fsir.ptx.kernel import KernelEmitter


@dataclass(frozen=True)
class Magic:
    """floor(n / d) for every `width`-bit n: mulhi(n, m) >> shift, or with `add` (m
    then the low `width` bits of a multiplier one bit wider) (t + ((n - t) >> 1)) >>
    (shift - 1), t = mulhi(n, m)."""

    m: int
    shift: int
    add: bool

    def quotient(self, n: int, width: int) -> int:
        """What the emitted sequence computes (a reference for tests)."""
        t = (n * self.m) >> width
        if not self.add:
            return t >> self.shift
        return (t + ((n - t) >> 1)) >> (self.shift - 1)


@cache
def magic(d: int, width: int) -> Magic:
    """The multiplier of an unsigned `width`-bit division by `d` (not a power of two):
    the smallest shift s whose m = ceil(2^(width + s) / d) fits `width` bits with an
    error m d - 2^(width + s) of at most 2^s (GM94 Theorem 4.2), else the
    (width + 1)-bit multiplier of s = ceil(log2 d) (GM94 Figure 4.1)."""
    assert d > 1 and d & (d - 1), d
    top = (d - 1).bit_length()  # ceil(log2 d)
    for s in range(top + 1):
        m = -(-(1 << (width + s)) // d)
        if m < 1 << width and m * d - (1 << (width + s)) <= 1 << s:
            return Magic(m, s, False)
    m = ((1 << width) * ((1 << top) - d)) // d + 1
    return Magic(m, top, True)


@dataclass(frozen=True)
class SignedMagic:
    """trunc(n / d) for every signed `width`-bit n and a d >= 2 not a power of two:
    t = mulhi(n, m) (m a signed `width`-bit value), plus n when m < 0, then t >> shift
    (arithmetic) plus 1 when n < 0."""

    m: int
    shift: int

    def quotient(self, n: int, width: int) -> int:
        """What the emitted sequence computes (a reference for tests)."""
        t = (n * self.m) >> width
        if self.m < 0:
            t += n
        return (t >> self.shift) + (1 if n < 0 else 0)


@cache
def signed_magic(d: int, width: int) -> SignedMagic:
    """The multiplier of a signed `width`-bit division by `d` >= 2, not a power of two
    (Hacker's Delight, Figure 10-1): the smallest p >= width with 2^p > nc (d - 2^p mod d)
    for nc the largest n with n mod d = d - 1, m = floor(2^p / d) + 1."""
    assert d > 2 and d & (d - 1), d
    top = 1 << (width - 1)
    anc = top - 1 - top % d  # |nc|
    p = width - 1
    q1, r1 = divmod(top, anc)
    q2, r2 = divmod(top, d)
    while True:
        p += 1
        q1, r1 = 2 * q1, 2 * r1
        if r1 >= anc:
            q1, r1 = q1 + 1, r1 - anc
        q2, r2 = 2 * q2, 2 * r2
        if r2 >= d:
            q2, r2 = q2 + 1, r2 - d
        delta = d - r2
        if not (q1 < delta or (q1 == delta and r1 == 0)):
            break
    m = q2 + 1
    return SignedMagic(m - (1 << width) if m >= top else m, p - width)


def sequence_length(d: int, width: int, remainder: bool, signed: bool = False) -> int:
    """The instructions `divide` emits for a `width`-bit division (or remainder) by `d`."""
    if not signed:
        if d & (d - 1) == 0:
            return 1
        mg = magic(d, width)
        return 1 + (4 if mg.add else 1) + (2 if remainder else 0)
    if d & (d - 1) == 0:
        return 4 + (2 if remainder else 0)
    smg = signed_magic(d, width)
    return 3 + (smg.m < 0) + (smg.shift > 0) + (2 if remainder else 0)


def reducible(d: int | None, width: int, signed: bool = False) -> int | None:
    """The divisor `d` (a constant, or None) of a `width`-bit division that is printed
    as shifts and multiplies: of 16 bits or more, and not zero (unsigned) or at least 2
    (signed: negative divisors keep `div` / `rem`); i8 and i1 operands keep them."""
    if width < 16 or d is None:
        return None
    d &= (1 << width) - 1  # (a constant's attribute may hold the signed value)
    if signed:
        return d if 2 <= d < 1 << (width - 1) else None
    return d or None


def constant_divisor(e: KernelEmitter, op: Operation, signed: bool = False) -> int | None:
    """`op`'s divisor when `divide` prints it (`reducible`)."""
    return reducible(e.const_int(op.operands[1]), T.int_width(op.operands[0].type), signed)


def divide(e: KernelEmitter, op: Operation, d: int, remainder: bool, signed: bool = False) -> None:
    """`op` (arith.divui / remui, or divsi / remsi, by the constant `d`) as shifts and
    multiplies."""
    w = T.int_width(op.operands[0].type)
    n = e.reg(op.operands[0])
    dst = e.define(op.results[0])
    if signed:
        q = signed_quotient(e, n, d, w, None if remainder else dst)
        if remainder:
            rem_of(e, n, q, d, w, dst, "s")
        return
    if d & (d - 1) == 0:
        if remainder:
            e.ins(f"and.b{w} {dst}, {n}, {d - 1}")
        else:
            e.ins(f"shr.u{w} {dst}, {n}, {d.bit_length() - 1}")
        return
    q = unsigned_quotient(e, n, d, w, None if remainder else dst)
    if remainder:
        rem_of(e, n, q, d, w, dst, "u")


def quotient(e: KernelEmitter, n: str, d: int, w: int, signed: bool) -> str:
    """A new register holding n / d (truncated) of the `w`-bit register `n`."""
    if signed:
        return signed_quotient(e, n, d, w)
    if d & (d - 1) == 0:
        q = e.new(T.reg_file_for_bits(w))
        e.ins(f"shr.u{w} {q}, {n}, {d.bit_length() - 1}")
        return q
    return unsigned_quotient(e, n, d, w)


def unsigned_quotient(e: KernelEmitter, n: str, d: int, w: int, dst: str | None = None) -> str:
    """The register (`dst`, or a new one) holding floor(n / d) of the unsigned `w`-bit
    register `n` by the constant `d`, not a power of two."""
    rf = T.reg_file_for_bits(w)
    u = f"u{w}"
    mg = magic(d, w)
    q = dst or e.new(rf)
    t = e.new(rf)
    e.ins(f"mul.hi.{u} {t}, {n}, {mg.m:#x}")
    if mg.add:
        x = e.new(rf)
        e.ins(f"sub.{u} {x}, {n}, {t}")
        e.ins(f"shr.{u} {x}, {x}, 1")
        e.ins(f"add.{u} {x}, {x}, {t}")
        e.ins(f"shr.{u} {q}, {x}, {mg.shift - 1}")
    elif mg.shift:
        e.ins(f"shr.{u} {q}, {t}, {mg.shift}")
    else:
        e.mov(q, t, rf)
    return q


def rem_of(e: KernelEmitter, n: str, q: str, d: int, w: int, dst: str, sign: str) -> None:
    """dst = n - q d."""
    p = e.new(T.reg_file_for_bits(w))
    e.ins(f"mul.lo.{sign}{w} {p}, {q}, {d}")
    e.ins(f"sub.{sign}{w} {dst}, {n}, {p}")


def signed_quotient(e: KernelEmitter, n: str, d: int, w: int, dst: str | None = None) -> str:
    """The register (`dst`, or a new one) holding trunc(n / d) of the signed `w`-bit
    register `n` by the constant `d` >= 2."""
    rf = T.reg_file_for_bits(w)
    s = f"s{w}"
    q = dst or e.new(rf)
    t = e.new(rf)
    if d & (d - 1) == 0:
        k = d.bit_length() - 1
        e.ins(f"shr.{s} {t}, {n}, {w - 1}")  # all ones for a negative n
        e.ins(f"shr.u{w} {t}, {t}, {w - k}")  # d - 1 for a negative n
        e.ins(f"add.{s} {t}, {n}, {t}")
        e.ins(f"shr.{s} {q}, {t}, {k}")
        return q
    mg = signed_magic(d, w)
    e.ins(f"mul.hi.{s} {t}, {n}, {mg.m}")
    if mg.m < 0:
        e.ins(f"add.{s} {t}, {t}, {n}")
    if mg.shift:
        e.ins(f"shr.{s} {t}, {t}, {mg.shift}")
    sign = e.new(rf)
    e.ins(f"shr.u{w} {sign}, {n}, {w - 1}")
    e.ins(f"add.{s} {q}, {t}, {sign}")
    return q
