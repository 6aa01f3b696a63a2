"""Unsigned integer division and remainder by a constant, as multiplies and shifts.

ptxas compiles `div.u64` and `rem.u64` to a call of a division routine (about forty
machine instructions) and `div.u32` to a reciprocal sequence, even when the divisor is
an immediate: the front end (NVVM) is expected to have strength-reduced them. Kernel
index arithmetic divides by tile and shape sizes everywhere, so the printer does it:
a power of two is a shift or a mask, another divisor d a multiply-high by a magic
number m and a shift (Granlund and Montgomery, "Division by invariant integers using
multiplication", PLDI 1994, §4), and the remainder n - q d.

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


def sequence_length(d: int, width: int, remainder: bool) -> int:
    """The instructions `divide` emits for a `width`-bit division (or remainder) by `d`."""
    if d & (d - 1) == 0:
        return 1
    mg = magic(d, width)
    return 1 + (4 if mg.add else 1) + (2 if remainder else 0)


def reducible(d: int | None, width: int) -> int | None:
    """The divisor `d` (a constant, or None) of a `width`-bit unsigned division that is
    printed as shifts and multiplies: of 16 bits or more and not zero (i8 and i1
    operands keep `div` / `rem`)."""
    if width < 16 or d is None:
        return None
    d &= (1 << width) - 1  # (a constant's attribute may hold the signed value)
    return d or None


def constant_divisor(e: KernelEmitter, op: Operation) -> int | None:
    """`op`'s divisor when `divide` prints it (`reducible`)."""
    return reducible(e.const_int(op.operands[1]), T.int_width(op.operands[0].type))


def divide(e: KernelEmitter, op: Operation, d: int, remainder: bool) -> None:
    """`op` (arith.divui or arith.remui by the constant `d`) as shifts and multiplies."""
    w = T.int_width(op.operands[0].type)
    rf = T.reg_file_for_bits(w)
    u, b = f"u{w}", f"b{w}"
    n = e.reg(op.operands[0])
    dst = e.define(op.results[0])
    if d & (d - 1) == 0:
        if remainder:
            e.ins(f"and.{b} {dst}, {n}, {d - 1}")
        else:
            e.ins(f"shr.{u} {dst}, {n}, {d.bit_length() - 1}")
        return
    mg = magic(d, w)
    q = e.new(rf) if remainder else dst
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
    if remainder:
        p = e.new(rf)
        e.ins(f"mul.lo.{u} {p}, {q}, {d}")
        e.ins(f"sub.{u} {dst}, {n}, {p}")
