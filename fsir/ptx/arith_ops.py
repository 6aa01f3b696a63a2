"""arith → PTX.

Integers: i1 in predicates, i8/i16 in 16-bit registers (i8 sign-extended, ui8
zero-extended, both re-normalised after wrapping ops; an op reading an 8-bit value
with the other signedness extends a copy), i32, i64/index in 64-bit registers. The
signedness of an op (divui, cmpi ult, extui, uitofp, ...) decides how it reads its
operands; the operand type (signless or unsigned) only how they sit in registers.
Floats: f32/f64 natively, f16/bf16 computed in f32 and rounded back to nearest-even
(bf16→f32 by a 16-bit shift, as sm_80 has no `cvt.f32.bf16`). `addf`/`subf`/`mulf`
use `.rn` (no FMA contraction), `divf` uses `div.rn` (correctly rounded, 0.5 ulp).
`maximumf`/`minimumf` propagate NaN (`max.NaN`), `maxnumf`/`minnumf` return the
number (`max`).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from fsir.ptx import types as T
from fsir.ptx.divide import constant_divisor, divide, quotient, rem_of
from fsir.ptx.kernel import KernelEmitter, Lowering, rule, unsupported

# ------------------------------------------------------------------ floats

FloatFn = Callable[[KernelEmitter, str, list[str], str], None]
"""Emits dst := f(srcs) for compute type 'f32' or 'f64'."""


def f32_bits(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f32_imm(v: float) -> str:
    return f"0f{f32_bits(v):08X}"


def f64_imm(v: float) -> str:
    return f"0d{struct.unpack('<Q', struct.pack('<d', v))[0]:016X}"


def bf16_bits(v: float) -> int:
    if v != v:
        return 0x7FC0
    b = f32_bits(v)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


def f16_bits(v: float) -> int:
    with np.errstate(over="ignore"):
        return int(np.array(v, dtype=np.float16).view(np.uint16))


def is_half(t: Attribute) -> bool:
    return isinstance(t, Float16Type | BFloat16Type)


def to_f32(e: KernelEmitter, value: SSAValue) -> str:
    """The value as an f32 register (exact widening from f16/bf16)."""
    t = value.type
    r = e.reg(value)
    if isinstance(t, Float32Type):
        return r
    return widen_half(e, r, t)


def widen_half(e: KernelEmitter, r: str, t: Attribute) -> str:
    f = e.new(T.F32)
    if isinstance(t, Float16Type):
        e.ins(f"cvt.f32.f16 {f}, {r}")
    elif isinstance(t, BFloat16Type):
        w, s = e.new(T.B32), e.new(T.B32)
        e.ins(f"cvt.u32.u16 {w}, {r}")
        e.ins(f"shl.b32 {s}, {w}, 16")
        e.ins(f"mov.b32 {f}, {s}")
    else:
        raise AssertionError(t)
    return f


def narrow_f32(e: KernelEmitter, dst: str, f: str, t: Attribute) -> None:
    """dst (16-bit) := round-to-nearest-even(f) as f16/bf16."""
    if isinstance(t, Float16Type):
        e.ins(f"cvt.rn.f16.f32 {dst}, {f}")
    else:
        e.ins(f"cvt.rn.bf16.f32 {dst}, {f}")


def float_op(e: KernelEmitter, op: Operation, fn: FloatFn, operands: list[SSAValue] | None = None) -> None:
    """Lower a float op computing in f32 (f16/bf16/f32) or f64."""
    operands = list(op.operands) if operands is None else operands
    res = op.results[0]
    t = res.type
    if isinstance(t, Float64Type):
        fn(e, e.define(res), [e.reg(v) for v in operands], "f64")
    elif isinstance(t, Float32Type):
        fn(e, e.define(res), [e.reg(v) for v in operands], "f32")
    elif is_half(t):
        srcs = [to_f32(e, v) for v in operands]
        tmp = e.new(T.F32)
        fn(e, tmp, srcs, "f32")
        narrow_f32(e, e.define(res), tmp, t)
    else:
        raise unsupported(op, f"type {t}")


def simple(opcode: str) -> FloatFn:
    def fn(e: KernelEmitter, dst: str, srcs: list[str], ft: str) -> None:
        e.ins(f"{opcode}.{ft} {dst}, {', '.join(srcs)}")

    return fn


def _max_nan(kind: str) -> FloatFn:
    def fn(e: KernelEmitter, dst: str, srcs: list[str], ft: str) -> None:
        a, b = srcs
        if ft == "f32":
            e.ins(f"{kind}.NaN.f32 {dst}, {a}, {b}")
            return
        m, s, p = e.new(T.F64), e.new(T.F64), e.new(T.PRED)
        e.ins(f"{kind}.f64 {m}, {a}, {b}")
        e.ins(f"add.rn.f64 {s}, {a}, {b}")
        e.ins(f"setp.nan.f64 {p}, {a}, {b}")
        e.ins(f"selp.f64 {dst}, {s}, {m}, {p}")

    return fn


def _float_lowering(fn: FloatFn) -> Lowering:
    return lambda e, op: float_op(e, op, fn)


def _negf(e: KernelEmitter, op: arith.NegfOp) -> None:
    t = op.result.type
    if is_half(t):
        e.ins(f"xor.b16 {e.define(op.result)}, {e.reg(op.operand)}, 0x8000")
    else:
        float_op(e, op, simple("neg"))


_CMPF = {
    "oeq": "eq", "ogt": "gt", "oge": "ge", "olt": "lt", "ole": "le", "one": "ne",
    "ord": "num", "ueq": "equ", "ugt": "gtu", "uge": "geu", "ult": "ltu",
    "ule": "leu", "une": "neu", "uno": "nan",
}  # fmt: skip


def _cmpf(e: KernelEmitter, op: arith.CmpfOp) -> None:
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    dst = e.define(op.result)
    if pred in ("false", "true"):
        e.ins(f"setp.{'ne' if pred == 'false' else 'eq'}.s32 {dst}, 0, 0")
        return
    t = op.lhs.type
    if isinstance(t, Float64Type):
        a, b, ft = e.reg(op.lhs), e.reg(op.rhs), "f64"
    else:
        a, b, ft = to_f32(e, op.lhs), to_f32(e, op.rhs), "f32"
    e.ins(f"setp.{_CMPF[pred]}.{ft} {dst}, {a}, {b}")


def _constant(e: KernelEmitter, op: arith.ConstantOp) -> None:
    v = op.value
    t = op.result.type
    if isinstance(v, IntegerAttr):
        w = T.int_width(t)
        val = v.value.data
        if w == 1:
            e.ins(f"setp.ne.s32 {e.define(op.result)}, {val & 1}, 0")
            return
        # normalise to the value of the type (signed for signless types)
        val &= (1 << w) - 1
        unsigned = T.is_unsigned(t)
        if val >= 1 << (w - 1) and not unsigned:
            val -= 1 << w
        e.ins(f"mov.{T.int_suffix(w, not unsigned)} {e.define(op.result)}, {val}")
        return
    if isinstance(v, FloatAttr):
        x = v.value.data
        dst = e.define(op.result)
        if isinstance(t, Float32Type):
            e.ins(f"mov.f32 {dst}, {f32_imm(x)}")
        elif isinstance(t, Float64Type):
            e.ins(f"mov.f64 {dst}, {f64_imm(x)}")
        elif isinstance(t, Float16Type):
            e.ins(f"mov.b16 {dst}, 0x{f16_bits(x):04X}")
        elif isinstance(t, BFloat16Type):
            e.ins(f"mov.b16 {dst}, 0x{bf16_bits(x):04X}")
        else:
            raise unsupported(op, f"type {t}")
        return
    raise unsupported(op, f"only scalar integer and float constants, got {v}")


# ------------------------------------------------------------------ integers


def zero_extended(t: Attribute) -> bool:
    """Whether an 8-bit value of type `t` sits zero-extended in its 16-bit register
    (ui8) rather than sign-extended (i8)."""
    return T.is_unsigned(t) and T.int_width(t) == 8


def as8(e: KernelEmitter, r: str, t: Attribute, signed: bool) -> str:
    """The 8-bit value of type `t` in `r` extended as a signed or an unsigned byte."""
    if signed != zero_extended(t):
        return r
    x = e.new(T.B16)
    e.ins(f"cvt.s16.s8 {x}, {r}" if signed else f"and.b16 {x}, {r}, 255")
    return x


def norm8(e: KernelEmitter, r: str, t: Attribute | None = None) -> None:
    """Re-normalise an 8-bit result of type `t` in place (after a wrapping op)."""
    e.ins(f"and.b16 {r}, {r}, 255" if t is not None and zero_extended(t) else f"cvt.s16.s8 {r}, {r}")


def convert_int(e: KernelEmitter, src: str, sw: int, dw: int, signed: bool,
                src_t: Attribute | None = None, dst_t: Attribute | None = None) -> str:
    """Convert a `sw`-bit integer register to `dw` bits (sign- or zero-extend/truncate);
    `src_t`/`dst_t` say how 8-bit values sit in their registers (default: signless)."""
    if sw == dw:
        return src
    if sw == 1:
        d = e.new(T.B16 if dw <= 16 else T.B32 if dw == 32 else T.B64)
        e.ins(f"selp.{T.int_suffix(dw, True)} {d}, {-1 if signed else 1}, 0, {src}")
        return d
    sb = 16 if sw <= 16 else sw
    if dw == 1:
        t, p = e.new(T.reg_file_for_bits(sb)), e.new(T.PRED)
        e.ins(f"and.b{sb} {t}, {src}, 1")
        e.ins(f"setp.ne.b{sb} {p}, {t}, 0")
        return p
    db = 16 if dw <= 16 else dw
    if dw > sw:
        if sw == 8:
            src = as8(e, src, src_t if src_t is not None else IntegerType(8), signed)
        if sb == db:
            return src
        d = e.new(T.reg_file_for_bits(db))
        e.ins(f"cvt.{'s' if signed else 'u'}{db}.{'s' if signed else 'u'}{sb} {d}, {src}")
        return d
    # truncation
    if sb == db:
        d = e.new(T.B16)
        e.ins(f"mov.b16 {d}, {src}")
    else:
        d = e.new(T.reg_file_for_bits(db))
        e.ins(f"cvt.u{db}.u{sb} {d}, {src}")
    if dw == 8:
        norm8(e, d, dst_t)
    return d


def _int_args(e: KernelEmitter, op: Operation, signed: bool, agnostic: bool = False) -> tuple[int, list[str]]:
    """The operands' registers, 8-bit ones extended as the op reads them (`agnostic`:
    the op's low 8 bits do not depend on it, as for add or and). A constant second
    operand of 16 bits or more is an immediate rather than a register holding it."""
    t = op.operands[0].type
    w = T.int_width(t)
    regs = [e.reg(v) for v in op.operands]
    if w > 8 and len(regs) == 2:
        regs[1] = e.operand(op.operands[1])
    if w == 1:
        regs = [convert_int(e, r, 1, 32, signed) for r in regs]
    elif w == 8 and not agnostic:
        regs = [as8(e, r, v.type, signed) for r, v in zip(regs, op.operands)]
    return w, regs


def _finish_int(e: KernelEmitter, op: Operation, w: int, emit: Callable[[str], None]) -> None:
    """Run `emit(dst)` at the compute width and store into the result (narrowing i1/i8)."""
    res = op.results[0]
    if w == 1:
        tmp = e.new(T.B32)
        emit(tmp)
        e.define(res, convert_int(e, tmp, 32, 1, False))
        return
    dst = e.define(res)
    emit(dst)
    if w == 8:
        norm8(e, dst, res.type)


def int_binop(opcode: str, signed: bool = True, typed: str = "int", pred_op: str | None = None) -> Lowering:
    """`opcode.<type>`; typed = "int" (s/u), "bit" (b) or "lo" (mul.lo)."""

    def lower(e: KernelEmitter, op: Operation) -> None:
        w = T.int_width(op.operands[0].type)
        if w == 1 and pred_op is not None:
            a, b = (e.reg(v) for v in op.operands)
            e.ins(f"{pred_op}.pred {e.define(op.results[0])}, {a}, {b}")
            return
        cw, regs = _int_args(e, op, signed, agnostic=typed in ("bit", "lo") or opcode in ("add", "sub"))
        cw = 32 if w == 1 else w
        sfx = T.bit_suffix(cw) if typed == "bit" else T.int_suffix(cw, signed)
        _finish_int(e, op, w, lambda d: e.ins(f"{opcode}.{sfx} {d}, {', '.join(regs)}"))

    return lower


def _shift(opcode: str, signed: bool) -> Lowering:
    def lower(e: KernelEmitter, op: Operation) -> None:
        w = T.int_width(op.operands[0].type)
        cw, (a, b) = _int_args(e, op, signed, agnostic=opcode == "shl")
        cw = 32 if w == 1 else w
        if cw != 32:  # shift amounts are u32 registers
            b32 = e.new(T.B32)
            e.ins(f"cvt.u32.u{16 if cw <= 16 else cw} {b32}, {b}")
            b = b32
        sfx = f"b{16 if cw <= 16 else cw}" if opcode == "shl" else T.int_suffix(cw, signed)
        _finish_int(e, op, w, lambda d: e.ins(f"{opcode}.{sfx} {d}, {a}, {b}"))

    return lower


def _int_div(remainder: bool, signed: bool) -> Lowering:
    """divui / remui / divsi / remsi: by a constant as shifts and multiplies
    (`fsir.ptx.divide`)."""
    general = int_binop("rem" if remainder else "div", signed=signed)

    def lower(e: KernelEmitter, op: Operation) -> None:
        d = constant_divisor(e, op, signed)
        if d is None:
            general(e, op)
        else:
            divide(e, op, d, remainder, signed)

    return lower


def _floor_ceil_div(kind: str) -> Lowering:
    """floordivsi / ceildivsi / ceildivui from div and rem."""

    def lower(e: KernelEmitter, op: Operation) -> None:
        w = T.int_width(op.operands[0].type)
        signed = kind != "ceilu"
        cw, (a, b) = _int_args(e, op, signed)
        cw = 32 if w == 1 else w
        sfx = T.int_suffix(cw, signed)
        rf = T.reg_file_for_bits(16 if cw <= 16 else cw)

        const = constant_divisor(e, op, signed)

        def emit(d: str) -> None:
            r = e.new(rf)
            if const is None:
                q = e.new(rf)
                e.ins(f"div.{sfx} {q}, {a}, {b}")
                e.ins(f"rem.{sfx} {r}, {a}, {b}")
            else:  # (`fsir.ptx.divide`; i1 and i8 operands are never `const`)
                q = quotient(e, a, const, cw, signed)
                rem_of(e, a, q, const, cw, r, sfx[0])
            nz = e.new(T.PRED)
            e.ins(f"setp.ne.{sfx} {nz}, {r}, 0")
            if kind == "ceilu":
                adj = nz
            else:
                x, sp = e.new(rf), e.new(T.PRED)
                e.ins(f"xor.b{16 if cw <= 16 else cw} {x}, {r}, {b}")
                e.ins(f"setp.{'lt' if kind == 'floor' else 'ge'}.{sfx} {sp}, {x}, 0")
                adj = e.new(T.PRED)
                e.ins(f"and.pred {adj}, {nz}, {sp}")
            one = e.new(rf)
            e.ins(f"selp.{sfx} {one}, {-1 if kind == 'floor' else 1}, 0, {adj}")
            e.ins(f"add.{sfx} {d}, {q}, {one}")

        _finish_int(e, op, w, emit)

    return lower


_CMPI = {"eq": "eq", "ne": "ne", "slt": "lt", "sle": "le", "sgt": "gt", "sge": "ge",
         "ult": "lt", "ule": "le", "ugt": "gt", "uge": "ge"}  # fmt: skip


def _cmpi(e: KernelEmitter, op: arith.CmpiOp) -> None:
    pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    w = T.int_width(op.lhs.type)
    signed = not pred.startswith("u")
    dst = e.define(op.result)
    if w == 1 and pred in ("eq", "ne"):
        a, b = e.reg(op.lhs), e.reg(op.rhs)
        if pred == "ne":
            e.ins(f"xor.pred {dst}, {a}, {b}")
        else:
            x = e.new(T.PRED)
            e.ins(f"xor.pred {x}, {a}, {b}")
            e.ins(f"not.pred {dst}, {x}")
        return
    cw, (a, b) = _int_args(e, op, signed, agnostic=pred in ("eq", "ne"))
    cw = 32 if w == 1 else w
    e.ins(f"setp.{_CMPI[pred]}.{T.int_suffix(cw, signed)} {dst}, {a}, {b}")


def _select(e: KernelEmitter, op: arith.SelectOp) -> None:
    rf = e.regfile(op.result.type, op)
    c, a, b = e.reg(op.cond), e.reg(op.lhs), e.reg(op.rhs)
    dst = e.define(op.result)
    if rf is T.PRED:
        e.ins(f"@{c} mov.pred {dst}, {a}")
        e.ins(f"@!{c} mov.pred {dst}, {b}")
    else:
        e.ins(f"selp.{rf.mov} {dst}, {a}, {b}, {c}")


def _int_cast(signed: bool) -> Lowering:
    def lower(e: KernelEmitter, op: Operation) -> None:
        src, res = op.operands[0], op.results[0]
        sw, dw = T.int_width(src.type), T.int_width(res.type)
        r = convert_int(e, e.reg(src), sw, dw, signed, src.type, res.type)
        if r == e.reg(src):  # same width: still give the result its own register
            rf = e.regfile(res.type, op)
            e.mov(e.define(res), r, rf)
        else:
            e.define(res, r)

    return lower


def _int_to_float(signed: bool) -> Lowering:
    def lower(e: KernelEmitter, op: Operation) -> None:
        src, res = op.operands[0], op.results[0]
        sw = T.int_width(src.type)
        r = e.reg(src)
        if sw == 1:
            r, sw = convert_int(e, r, 1, 32, signed), 32
        elif sw == 8:
            r = as8(e, r, src.type, signed)
        it = T.int_suffix(sw, signed)
        t = res.type
        if isinstance(t, Float32Type | Float64Type | Float16Type):
            ft = {Float32Type: "f32", Float64Type: "f64", Float16Type: "f16"}[type(t)]
            e.ins(f"cvt.rn.{ft}.{it} {e.define(res)}, {r}")
        elif isinstance(t, BFloat16Type):
            f = e.new(T.F32)
            e.ins(f"cvt.rn.f32.{it} {f}, {r}")
            narrow_f32(e, e.define(res), f, t)
        else:
            raise unsupported(op, f"type {t}")

    return lower


def _float_to_int(signed: bool) -> Lowering:
    def lower(e: KernelEmitter, op: Operation) -> None:
        src, res = op.operands[0], op.results[0]
        dw = T.int_width(res.type)
        st = src.type
        if isinstance(st, Float64Type):
            r, ft = e.reg(src), "f64"
        else:
            r, ft = to_f32(e, src), "f32"
        if dw == 1:
            raise unsupported(op, "to i1 (compare with 0 instead)")
        # cvt saturates to the range of its destination type, so convert straight to it
        # (8-bit results land in a 16-bit register, then kept sign-extended)
        dst = e.define(res)
        e.ins(f"cvt.rzi.{'s' if signed else 'u'}{dw}.{ft} {dst}, {r}")
        if dw == 8:
            norm8(e, dst, res.type)

    return lower


def _extf(e: KernelEmitter, op: arith.ExtFOp) -> None:
    st, dt = op.input.type, op.result.type
    if isinstance(dt, Float32Type):
        e.define(op.result, to_f32(e, op.input))
    elif isinstance(dt, Float64Type):
        f = e.reg(op.input) if isinstance(st, Float32Type) else to_f32(e, op.input)
        e.ins(f"cvt.f64.f32 {e.define(op.result)}, {f}")
    elif is_half(dt):  # f16 <-> bf16 through f32 (one rounding)
        narrow_f32(e, e.define(op.result), to_f32(e, op.input), dt)
    else:
        raise unsupported(op, f"{st} -> {dt}")


def _truncf(e: KernelEmitter, op: arith.TruncFOp) -> None:
    st, dt = op.input.type, op.result.type
    if isinstance(st, Float64Type):
        if isinstance(dt, Float32Type):
            e.ins(f"cvt.rn.f32.f64 {e.define(op.result)}, {e.reg(op.input)}")
        elif isinstance(dt, Float16Type):
            e.ins(f"cvt.rn.f16.f64 {e.define(op.result)}, {e.reg(op.input)}")
        else:  # f64 -> bf16 in one rounding (sm_80 has no cvt.bf16.f64)
            narrow_f32(e, e.define(op.result), f64_to_f32_odd(e, e.reg(op.input)), dt)
    elif is_half(dt):
        narrow_f32(e, e.define(op.result), to_f32(e, op.input), dt)
    else:
        raise unsupported(op, f"{st} -> {dt}")


def f64_to_f32_odd(e: KernelEmitter, x: str) -> str:
    """x rounded to f32 by round-to-odd (truncate, then set the last bit if inexact):
    rounding that to a format of at most 22 significand bits to nearest-even gives the
    correctly rounded value of x itself, with no double rounding. NaN stays NaN."""
    f, back, res = e.new(T.F32), e.new(T.F64), e.new(T.F32)
    bits, odd, rounded = e.new(T.B32), e.new(T.B32), e.new(T.B32)
    inexact = e.new(T.PRED)
    e.ins(f"cvt.rz.f32.f64 {f}, {x}")
    e.ins(f"cvt.f64.f32 {back}, {f}")
    e.ins(f"setp.neu.f64 {inexact}, {back}, {x}")
    e.ins(f"mov.b32 {bits}, {f}")
    e.ins(f"or.b32 {odd}, {bits}, 1")
    e.ins(f"selp.b32 {rounded}, {odd}, {bits}, {inexact}")
    e.ins(f"mov.b32 {res}, {rounded}")
    return res


def _bitcast(e: KernelEmitter, op: arith.BitcastOp) -> None:
    st, dt = op.input.type, op.result.type
    size = T.byte_size(st) * 8
    if size != T.byte_size(dt) * 8 or T.reg_file(st) is None or (size < 16 and not T.is_int(st)):
        raise unsupported(op, f"{st} -> {dt}")
    dst = e.define(op.result)
    e.ins(f"mov.b{max(size, 16)} {dst}, {e.reg(op.input)}")
    if size == 8:  # i8 <-> ui8: sign- or zero-extended in the register
        norm8(e, dst, dt)


def _pred_or_int(int_lowering: Lowering, pred_op: str) -> Lowering:
    def lower(e: KernelEmitter, op: Operation) -> None:
        if T.int_width(op.operands[0].type) == 1:
            a, b = (e.reg(v) for v in op.operands)
            e.ins(f"{pred_op}.pred {e.define(op.results[0])}, {a}, {b}")
        else:
            int_lowering(e, op)

    return lower


ARITH_LOWERINGS: dict[type[Operation], Lowering] = dict([
    rule(arith.ConstantOp, _constant),
    rule(arith.AddiOp, int_binop("add", pred_op="xor")),
    rule(arith.SubiOp, int_binop("sub", pred_op="xor")),
    rule(arith.MuliOp, int_binop("mul.lo", pred_op="and")),
    rule(arith.DivSIOp, _int_div(remainder=False, signed=True)),
    rule(arith.DivUIOp, _int_div(remainder=False, signed=False)),
    rule(arith.RemSIOp, _int_div(remainder=True, signed=True)),
    rule(arith.RemUIOp, _int_div(remainder=True, signed=False)),
    rule(arith.FloorDivSIOp, _floor_ceil_div("floor")),
    rule(arith.CeilDivSIOp, _floor_ceil_div("ceil")),
    rule(arith.CeilDivUIOp, _floor_ceil_div("ceilu")),
    rule(arith.MaxSIOp, int_binop("max", signed=True)),
    rule(arith.MinSIOp, int_binop("min", signed=True)),
    rule(arith.MaxUIOp, int_binop("max", signed=False)),
    rule(arith.MinUIOp, int_binop("min", signed=False)),
    rule(arith.AndIOp, int_binop("and", typed="bit", pred_op="and")),
    rule(arith.OrIOp, int_binop("or", typed="bit", pred_op="or")),
    rule(arith.XOrIOp, int_binop("xor", typed="bit", pred_op="xor")),
    rule(arith.ShLIOp, _shift("shl", True)),
    rule(arith.ShRSIOp, _shift("shr", True)),
    rule(arith.ShRUIOp, _shift("shr", False)),
    rule(arith.CmpiOp, _cmpi),
    rule(arith.CmpfOp, _cmpf),
    rule(arith.SelectOp, _select),
    rule(arith.IndexCastOp, _int_cast(True)),
    rule(arith.ExtSIOp, _int_cast(True)),
    rule(arith.ExtUIOp, _int_cast(False)),
    rule(arith.TruncIOp, _int_cast(False)),
    rule(arith.SIToFPOp, _int_to_float(True)),
    rule(arith.UIToFPOp, _int_to_float(False)),
    rule(arith.FPToSIOp, _float_to_int(True)),
    rule(arith.FPToUIOp, _float_to_int(False)),
    rule(arith.ExtFOp, _extf),
    rule(arith.TruncFOp, _truncf),
    rule(arith.BitcastOp, _bitcast),
    rule(arith.AddfOp, _float_lowering(simple("add.rn"))),
    rule(arith.SubfOp, _float_lowering(simple("sub.rn"))),
    rule(arith.MulfOp, _float_lowering(simple("mul.rn"))),
    rule(arith.DivfOp, _float_lowering(simple("div.rn"))),
    rule(arith.NegfOp, _negf),
    rule(arith.MaximumfOp, _float_lowering(_max_nan("max"))),
    rule(arith.MinimumfOp, _float_lowering(_max_nan("min"))),
    rule(arith.MaxnumfOp, _float_lowering(simple("max"))),
    rule(arith.MinnumfOp, _float_lowering(simple("min"))),
])
