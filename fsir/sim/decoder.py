"""Decode PTX instructions into closures the simulator's engine calls once per lane group.

Every decoded instruction is a function `fn(ch, idx)`: `ch` is the executing chunk (registers are
numpy arrays over its lanes, see chunk.Chunk) and `idx` the sorted lane indices of the group
executing it, or None when every lane of the chunk executes it (then no gather/scatter happens).
All operand parsing, type dispatch and symbol resolution happens here, once per instruction, so
the Python work per executed instruction does not depend on the number of lanes.

Numeric semantics: f32 is computed in float32 (add/sub/mul/div/sqrt are IEEE correctly rounded by
numpy); `fma`/`mad` on f32 are computed in float64 and rounded once (exact for the product, so
equal to a true fma except in rare double-rounding cases); directed rounding modifiers (.rz .rm .rp)
on f32 add/sub/mul/fma/div/cvt are honoured by correcting the float64 result. The `.approx`
transcendental ops (ex2, lg2, sin, cos, tanh, rsqrt, rcp.approx, div.approx) use numpy's exact
float32 functions: they are more accurate than the hardware, not bit-identical to it.
"""

from __future__ import annotations

import numpy as np

from fsir.sim.memory import LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW
from fsir.sim.parser import Imm, Instr, Mem, NotReg, Pair, Reg, Vec, type_size

# ------------------------------------------------------------------------------- types

NP = {
    "pred": np.dtype(np.bool_), "b8": np.dtype(np.uint8), "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8),
    "b16": np.dtype(np.uint16), "u16": np.dtype(np.uint16), "s16": np.dtype(np.int16),
    "f16": np.dtype(np.float16), "bf16": np.dtype(np.uint16),
    "b32": np.dtype(np.uint32), "u32": np.dtype(np.uint32), "s32": np.dtype(np.int32), "f32": np.dtype(np.float32),
    "f16x2": np.dtype(np.uint32), "bf16x2": np.dtype(np.uint32), "tf32": np.dtype(np.uint32),
    "b64": np.dtype(np.uint64), "u64": np.dtype(np.uint64), "s64": np.dtype(np.int64), "f64": np.dtype(np.float64),
}
TYPES = set(NP)
UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
SINT = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
FLOAT = {"f16", "bf16", "f32", "f64"}
SIGNED = {"s8", "s16", "s32", "s64"}
LOG2 = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4, 32: 5}
F32_MIN_NORMAL = np.float32(np.finfo(np.float32).tiny)
I64 = np.dtype(np.int64)


def kind(t: str) -> str:
    if t == "pred":
        return "pred"
    if t in FLOAT:
        return "f"
    if t in ("f16x2", "bf16x2"):
        return "fx2"
    return t[0]  # b, u, s


class Fault(Exception):
    """An invalid access found while executing; the engine adds kernel and PTX line."""


class DecodeError(Exception):
    """Unsupported or malformed instruction; the decoder adds kernel and PTX line."""


# ------------------------------------------------------------------------ conversions


def _convert(v, dst: np.dtype, src_signed: bool):
    """Reinterpret/extend/truncate value array `v` into dtype `dst` by PTX register rules."""
    sd = v.dtype
    if sd == dst:
        return v
    if dst == np.bool_:
        return v != 0
    if sd == np.bool_:
        return v.astype(dst)
    if sd.itemsize == dst.itemsize:
        return v.view(dst)
    if sd.itemsize > dst.itemsize:  # truncate: keep the low bits
        return v.view(UINT[sd.itemsize]).astype(UINT[dst.itemsize]).view(dst)
    if src_signed and sd.kind == "i":
        return v.astype(SINT[dst.itemsize]).view(dst)
    return v.view(UINT[sd.itemsize]).astype(UINT[dst.itemsize]).view(dst)


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bits (uint16), round to nearest even, NaN stays NaN."""
    x = np.asarray(x, np.float32)
    u = x.view(np.uint32)
    r = ((u >> np.uint32(16)) & np.uint32(1)) + np.uint32(0x7FFF)
    out = ((u + r) >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(x)
    if np.any(nan):
        out = np.where(nan, np.uint16(0x7FC0) | ((u >> np.uint32(16)).astype(np.uint16) & np.uint16(0x8000)), out)
    return out


def from_bf16(b) -> np.ndarray:
    return (np.asarray(b).astype(np.uint32) << np.uint32(16)).view(np.float32)


def round_f32(x64, mode: str):
    """Round float64 values to float32 with PTX rounding mode rn/rz/rm/rp."""
    y = np.asarray(x64).astype(np.float32)
    if mode in ("rn", "", "rna"):
        return y
    y64 = y.astype(np.float64)
    x64 = np.asarray(x64)
    if mode == "rz":
        adj = np.abs(y64) > np.abs(x64)
        toward = np.float32(0)
    elif mode == "rm":
        adj = y64 > x64
        toward = np.float32(-np.inf)
    else:  # rp
        adj = y64 < x64
        toward = np.float32(np.inf)
    if np.ndim(y) == 0:
        return np.nextafter(y, toward) if adj else y
    if adj.any():
        y = np.where(adj, np.nextafter(y, toward), y)
    return y


def ftz32(x):
    """Flush float32 subnormals to sign-preserving zero."""
    if np.ndim(x) == 0:
        return x if not (0 < abs(x) < F32_MIN_NORMAL) else np.copysign(np.float32(0), x)
    sub = (np.abs(x) < F32_MIN_NORMAL) & (x != 0)
    if sub.any():
        x = np.where(sub, np.copysign(np.float32(0), x), x)
    return x


def sat01(x):
    """`.sat` for floats: clamp to [0, 1], NaN -> 0."""
    x = np.where(np.isnan(x), x.dtype.type(0) if hasattr(x, "dtype") else 0, x)
    return np.clip(x, 0, 1).astype(np.asarray(x).dtype)


# -------------------------------------------------------------------------- readers


class Decoder:
    """Decodes the instructions of one kernel. `K` is the kernel layout (registers, symbols)."""

    def __init__(self, K):
        self.K = K
        # The role of the instruction being decoded in inter-block synchronisation, set by the
        # kernel layout's spin-loop analysis (loader.py): "wait" (a load or atomic read inside a
        # spin loop), "head" (the first of those in its loop: one execution = one wait), "post"
        # (a release/acq_rel atomic, reduction or store outside spin loops), or None.
        self.sync_role: str | None = None

    # --- operand readers ----------------------------------------------------------
    def rd(self, op, t: str):
        """Reader for operand `op` interpreted as PTX type `t`: fn(ch, idx) -> array or scalar."""
        K = self.K
        wd = NP[t]
        if isinstance(op, Imm):
            return _const(self.imm(op, t))
        if isinstance(op, NotReg):
            r = self.rd(Reg(op.name), "pred")
            return lambda ch, idx: ~r(ch, idx)
        if isinstance(op, Reg):
            name = op.name
            if name in K.regs:
                ri, rt = K.regs[name]
                sd = NP[rt]
                signed = rt in SIGNED
                # a register holds an array over the chunk's lanes, or a 0-d array when every
                # lane holds the same value (a "uniform" register: constants, parameters)
                if sd == wd:
                    def r(ch, idx):
                        a = ch.regs[ri]
                        if a is None:
                            a = ch.zero_reg(ri)
                        return a if idx is None or a.ndim == 0 else a[idx]
                elif sd.itemsize == wd.itemsize and wd != np.bool_ and sd != np.bool_:
                    def r(ch, idx):
                        a = ch.regs[ri]
                        if a is None:
                            a = ch.zero_reg(ri)
                        return (a if idx is None or a.ndim == 0 else a[idx]).view(wd)
                else:
                    def r(ch, idx):
                        a = ch.regs[ri]
                        if a is None:
                            a = ch.zero_reg(ri)
                        return _convert(a if idx is None or a.ndim == 0 else a[idx], wd, signed)
                return r
            if name in SPECIAL:
                return self.special(name, wd)
            sym = K.symbol_address(name)
            if sym is not None:
                return _const(
                    np.array(sym & 0xFFFFFFFFFFFFFFFF, np.uint64).astype(wd) if wd.kind in "ui" else wd.type(sym)
                )
            if name == "WARP_SZ":
                return _const(wd.type(32))
            raise DecodeError(f"unknown register or symbol '{name}'")
        raise DecodeError(f"unexpected operand {op!r}")

    def imm(self, op: Imm, t: str):
        wd = NP[t]
        v = op.value
        if t == "pred":
            return np.bool_(v)
        if wd.kind == "f":
            if op.kind == "f32" and wd == np.float64:
                return np.float64(np.float32(v))
            return wd.type(v)
        if t == "bf16":
            return to_bf16(np.asarray(v, np.float32))[()] if op.kind != "int" else np.uint16(int(v) & 0xFFFF)
        # integer / bit types
        if op.kind == "f32":
            bits = int(np.float32(v).view(np.uint32))
        elif op.kind in ("f64", "float"):
            bits = int(np.float64(v).view(np.uint64))
        else:
            bits = int(v)
        bits &= (1 << (8 * wd.itemsize)) - 1
        return np.array(bits, UINT[wd.itemsize]).view(wd)[()]

    def special(self, name: str, wd):
        if name in LANE_SPECIAL:
            def r(ch, idx):
                a = ch.sreg(name)
                a = a if idx is None else a[idx]
                return a if a.dtype == wd else a.astype(wd)
            return r
        if name in SPECIAL:
            return lambda ch, idx: wd.type(ch.sconst[name])
        raise DecodeError(f"unsupported special register {name}")

    def pred(self, op):
        if isinstance(op, NotReg):
            return self.rd(op, "pred")
        return self.rd(op, "pred")

    # --- writers --------------------------------------------------------------------
    def wr(self, op, t: str):
        """Writer fn(ch, idx, value) storing a value of PTX type `t` into register `op`."""
        K = self.K
        if isinstance(op, Reg) and op.name == "_":
            return lambda ch, idx, v: None
        if not isinstance(op, Reg) or op.name not in K.regs:
            raise DecodeError(f"destination must be a declared register, got {_fmt(op)}")
        ri, rt = K.regs[op.name]
        sd = NP[rt]
        src_signed = t in SIGNED

        def w(ch, idx, v):
            if type(v) is not np.ndarray or v.dtype != sd:
                v = _convert(np.asarray(v), sd, src_signed)
            if idx is None:
                ch.regs[ri] = v  # (n,) or 0-d (uniform); ops always return fresh arrays
            else:
                a = ch.regs[ri]
                if a is None or a.ndim == 0:  # materialise a uniform register before a partial write
                    a = ch.regs[ri] = np.full(ch.n, 0 if a is None else a, sd)
                a[idx] = v
        return w

    # --- decode one instruction ------------------------------------------------------
    def decode(self, ins: Instr):
        parts = ins.opcode.split(".")
        base = parts[0]
        h = _OPS.get(base)
        if h is None:
            raise DecodeError(f"unsupported instruction '{ins.opcode}'")
        return h(self, ins, parts[1:], ins.operands)


def _const(v):
    return lambda ch, idx: v


def _fmt(op) -> str:
    if isinstance(op, Reg):
        return op.name
    if isinstance(op, Imm):
        return op.text
    return repr(op)


SPECIAL = {
    "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z",
    "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
    "%gridid", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt",
    "%clock", "%clock64", "%globaltimer", "%dynamic_smem_size", "%total_smem_size"
}
LANE_SPECIAL = {
    "%tid.x", "%tid.y", "%tid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z", "%laneid", "%warpid",
    "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%clock", "%clock64",
}


def _types_in(parts):
    return [p for p in parts if p in TYPES]


def _need_type(parts, ins):
    ts = _types_in(parts)
    if not ts:
        raise DecodeError(f"'{ins.opcode}' has no type")
    return ts[-1]


def _nops(ops, n, ins):
    if len(ops) != n:
        raise DecodeError(f"'{ins.opcode}' expects {n} operands, got {len(ops)}")


# ------------------------------------------------------------------- arithmetic ops


def _unary_fn(D, ins, parts, ops, f, t=None, tout=None):
    t = t or _need_type(parts, ins)
    _nops(ops, 2, ins)
    w = D.wr(ops[0], tout or t)
    a = D.rd(ops[1], t)

    def fn(ch, idx):
        w(ch, idx, f(a(ch, idx)))
    return fn


def _binary_fn(D, ins, parts, ops, f, t=None, tb=None, tout=None):
    t = t or _need_type(parts, ins)
    _nops(ops, 3, ins)
    w = D.wr(ops[0], tout or t)
    a = D.rd(ops[1], t)
    b = D.rd(ops[2], tb or t)

    def fn(ch, idx):
        w(ch, idx, f(a(ch, idx), b(ch, idx)))
    return fn


def _ternary_fn(D, ins, parts, ops, f, t=None, tc=None, tout=None, tb=None):
    t = t or _need_type(parts, ins)
    _nops(ops, 4, ins)
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
            los = [_unpack2(x, 0, half) for x in xs]
            his = [_unpack2(x, 1, half) for x in xs]
            return _pack2(g4(*los), g4(*his), half)
    return g


def _unpack2(x, hi, half):
    x = np.asarray(x).astype(np.uint32)
    bits = ((x >> np.uint32(16)) if hi else x).astype(np.uint16)
    return bits.view(np.float16) if half else from_bf16(bits)


def _pack2(lo, hi, half):
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
    return _binary_fn(D, ins, parts, ops, _wrap_float(_directed(parts, t, f) or f, parts, t), t=t)


def _add_sub(D, ins, parts, ops, f, carry: bool):
    """add or sub (`f`): floats with their rounding, s32 saturating with .sat, and no
    carry chains (.cc, or `carry` for the opcode's carry-in form)."""
    t = _need_type(parts, ins)
    if kind(t) in ("f", "fx2"):
        return _float_binary(D, ins, parts, ops, t, f)
    if "sat" in parts and t == "s32":
        return _binary_fn(
            D, ins, parts, ops, lambda a, b: np.clip(f(a.astype(I64), b), -(2**31), 2**31 - 1).astype(np.int32), t=t
        )
    if "cc" in parts or carry:
        raise DecodeError(f"unsupported instruction '{ins.opcode}' (carry chains)")
    return _binary_fn(D, ins, parts, ops, f, t=t)


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
    t = _need_type(parts, ins)
    if kind(t) in ("f", "fx2"):
        return _float_binary(D, ins, parts, ops, t, np.multiply)
    if "wide" in parts:
        wt = _wide(t)
        wd = NP[wt]
        return _binary_fn(
            D,
            ins,
            parts,
            ops,
            lambda a, b: np.multiply(np.asarray(a).astype(wd), np.asarray(b).astype(wd)),
            t=t,
            tout=wt,
        )
    if "hi" in parts:
        return _binary_fn(D, ins, parts, ops, _mul_hi(t), t=t)
    return _binary_fn(D, ins, parts, ops, np.multiply, t=t)


def op_mad(D, ins, parts, ops):
    t = _need_type(parts, ins)
    if kind(t) in ("f", "fx2"):
        return op_fma(D, ins, parts, ops)
    if "wide" in parts:
        wt = _wide(t)
        wd = NP[wt]
        return _ternary_fn(D, ins, parts, ops, lambda a, b, c: np.asarray(a).astype(wd) * np.asarray(b).astype(wd) + c,
                           t=t, tc=wt, tout=wt)
    if "hi" in parts:
        hi = _mul_hi(t)
        return _ternary_fn(D, ins, parts, ops, lambda a, b, c: hi(a, b) + c, t=t)
    if "cc" in parts:
        raise DecodeError(f"unsupported instruction '{ins.opcode}' (carry chains)")
    return _ternary_fn(D, ins, parts, ops, lambda a, b, c: a * b + c, t=t)


def _s24(x, t):
    x = np.asarray(x).astype(np.int64)
    x = x & 0xFFFFFF
    if t == "s32":
        x = np.where(x & 0x800000, x - 0x1000000, x)
    return x


def op_mul24(D, ins, parts, ops):
    t = _need_type(parts, ins)
    dt = NP[t]
    if "hi" in parts:

        def f(a, b):
            return ((_s24(a, t) * _s24(b, t)) >> 16).astype(np.int64).astype(dt)
    else:

        def f(a, b):
            return (_s24(a, t) * _s24(b, t)).astype(dt)

    return _binary_fn(D, ins, parts, ops, f, t=t)


def op_mad24(D, ins, parts, ops):
    t = _need_type(parts, ins)
    dt = NP[t]
    if "hi" in parts:

        def f(a, b, c):
            return ((_s24(a, t) * _s24(b, t)) >> 16).astype(dt) + c
    else:

        def f(a, b, c):
            return (_s24(a, t) * _s24(b, t)).astype(dt) + c

    return _ternary_fn(D, ins, parts, ops, f, t=t)


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
    t = _need_type(parts, ins)
    f = _fma_fn(t, _rmode(parts))
    return _ternary_fn(D, ins, parts, ops, _wrap_float(f, parts, t), t=t)


def _trunc_div(a, b):
    q = a // np.where(b == 0, 1, b)
    fix = (q < 0) & (q * b != a)
    return np.where(b == 0, -1, q + fix).astype(np.asarray(a).dtype)


def op_div(D, ins, parts, ops):
    t = _need_type(parts, ins)
    if kind(t) == "f":
        return _float_binary(D, ins, parts, ops, t, np.divide)
    if t[0] == "s":
        return _binary_fn(D, ins, parts, ops, _trunc_div, t=t)
    dt = NP[t]
    allones = dt.type(np.iinfo(dt).max)

    def udiv(a, b):
        if np.ndim(b) == 0 and b != 0:  # uniform divisor: numpy's fast scalar division
            return a // b[()] if isinstance(b, np.ndarray) else a // b
        return np.where(b == 0, allones, a // np.where(b == 0, 1, b)).astype(dt)
    return _binary_fn(D, ins, parts, ops, udiv, t=t)


def op_rem(D, ins, parts, ops):
    t = _need_type(parts, ins)
    dt = NP[t]
    if t[0] == "s":
        return _binary_fn(
            D, ins, parts, ops, lambda a, b: np.where(b == 0, a, np.fmod(a, np.where(b == 0, 1, b))).astype(dt), t=t
        )

    def urem(a, b):
        if np.ndim(b) == 0 and b != 0:
            return a % b[()] if isinstance(b, np.ndarray) else a % b
        return np.where(b == 0, a, a % np.where(b == 0, 1, b)).astype(dt)
    return _binary_fn(D, ins, parts, ops, urem, t=t)


def op_abs(D, ins, parts, ops):
    t = _need_type(parts, ins)
    if kind(t) in ("f", "fx2"):
        if t in ("bf16", "bf16x2", "f16x2"):
            mask = {"bf16": np.uint16(0x7FFF), "bf16x2": np.uint32(0x7FFF7FFF), "f16x2": np.uint32(0x7FFF7FFF)}[t]
            return _unary_fn(D, ins, parts, ops, lambda a: a & mask, t=t)
        return _unary_fn(D, ins, parts, ops, _wrap_float(np.abs, parts, t), t=t)
    return _unary_fn(D, ins, parts, ops, np.abs, t=t)


def op_neg(D, ins, parts, ops):
    t = _need_type(parts, ins)
    if t in ("bf16", "bf16x2", "f16x2"):
        mask = {"bf16": np.uint16(0x8000), "bf16x2": np.uint32(0x80008000), "f16x2": np.uint32(0x80008000)}[t]
        return _unary_fn(D, ins, parts, ops, lambda a: a ^ mask, t=t)
    if kind(t) == "f":
        return _unary_fn(D, ins, parts, ops, _wrap_float(np.negative, parts, t), t=t)
    return _unary_fn(D, ins, parts, ops, np.negative, t=t)


def op_minmax(D, ins, parts, ops, is_max):
    t = _need_type(parts, ins)
    if kind(t) in ("f", "fx2"):
        if "NaN" in parts:
            f = np.maximum if is_max else np.minimum
        else:
            f = np.fmax if is_max else np.fmin
        if len(ops) == 4:  # min.f32 d, a, b, c (sm_100 three-input form)
            return _ternary_fn(D, ins, parts, ops, _wrap_float(lambda a, b, c: f(f(a, b), c), parts, t), t=t)
        return _binary_fn(D, ins, parts, ops, _wrap_float(f, parts, t), t=t)
    f = np.maximum if is_max else np.minimum
    if "relu" in parts:
        z = NP[t].type(0)
        return _binary_fn(D, ins, parts, ops, lambda a, b: np.maximum(f(a, b), z), t=t)
    return _binary_fn(D, ins, parts, ops, f, t=t)


def op_bitwise(D, ins, parts, ops, f):
    t = _need_type(parts, ins)
    return _binary_fn(D, ins, parts, ops, f, t=t)


def op_not(D, ins, parts, ops):
    t = _need_type(parts, ins)
    return _unary_fn(D, ins, parts, ops, np.invert, t=t)


def op_cnot(D, ins, parts, ops):
    t = _need_type(parts, ins)
    dt = NP[t]
    return _unary_fn(D, ins, parts, ops, lambda a: (a == 0).astype(dt), t=t)


def _shift(shift, dt, fill_zero: bool):
    """`shift` of values of `dt` by a u32 amount, which PTX clamps to the width: a shift
    by the width or more gives 0 (`fill_zero`) or the sign (an arithmetic right shift,
    which numpy gives by shifting width - 1)."""
    n = dt.itemsize * 8
    z = dt.type(0)

    def f(a, b):
        b = np.asarray(b).astype(np.uint32)
        out = shift(a, np.minimum(b, n - 1).astype(dt))
        return (np.where(b >= n, z, out) if fill_zero else out).astype(dt)
    return f


def op_shl(D, ins, parts, ops):
    t = _need_type(parts, ins)
    return _binary_fn(D, ins, parts, ops, _shift(np.left_shift, NP[t], True), t=t, tb="u32")


def op_shr(D, ins, parts, ops):
    t = _need_type(parts, ins)
    return _binary_fn(D, ins, parts, ops, _shift(np.right_shift, NP[t], t[0] != "s"), t=t, tb="u32")


def op_popc(D, ins, parts, ops):
    t = _need_type(parts, ins)
    return _unary_fn(D, ins, parts, ops, lambda a: np.bitwise_count(a).astype(np.uint32), t=t, tout="u32")


def _bitlen(x):
    """bit_length of unsigned ints (uint32/uint64 arrays)."""
    x = np.asarray(x)
    if x.dtype.itemsize == 8:
        hi = (x >> np.uint64(32)).astype(np.uint32)
        lo = (x & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        return np.where(hi != 0, 32 + _bitlen(hi), _bitlen(lo))
    _, e = np.frexp(x.astype(np.float64))
    return np.where(x == 0, 0, e).astype(np.int64)


def op_clz(D, ins, parts, ops):
    t = _need_type(parts, ins)
    n = type_size(t) * 8
    return _unary_fn(D, ins, parts, ops, lambda a: (n - _bitlen(a)).astype(np.uint32), t=t, tout="u32")


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint8)


def op_brev(D, ins, parts, ops):
    t = _need_type(parts, ins)
    dt = NP[t]
    nb = dt.itemsize

    def f(a0):
        a = np.ascontiguousarray(np.atleast_1d(a0))
        by = a.view(np.uint8).reshape(-1, nb)
        return _REV8[by[:, ::-1]].copy().view(dt).reshape(np.shape(a0))
    return _unary_fn(D, ins, parts, ops, f, t=t)


def op_bfe(D, ins, parts, ops):
    t = _need_type(parts, ins)
    dt = NP[t]
    n = dt.itemsize * 8
    ud = UINT[dt.itemsize]
    signed = t[0] == "s"

    def f(a, b, c):
        ua = np.asarray(a).view(ud) if np.ndim(a) else np.asarray(a).view(ud)[()]
        pos = np.asarray(b).astype(np.int64) & 0xFF
        ln = np.asarray(c).astype(np.int64) & 0xFF
        eff = np.clip(np.minimum(ln, n - np.minimum(pos, n)), 0, n)
        sh = np.minimum(pos, n - 1).astype(ud)
        field = np.where(pos >= n, ud.type(0), ua >> sh)
        # mask of eff bits (eff may be n)
        mask = np.where(
            eff >= n, ud.type(np.iinfo(ud).max), (ud.type(1) << np.minimum(eff, n - 1).astype(ud)) - ud.type(1)
        )
        v = field & mask
        if signed:
            sbit_pos = np.minimum(pos + ln - 1, n - 1)
            sbit = np.where(ln == 0, False, ((ua >> np.maximum(sbit_pos, 0).astype(ud)) & ud.type(1)) == 1)
            v = np.where(sbit, v | ~mask, v)
        return np.asarray(v).astype(ud).view(dt)
    return _ternary_fn(D, ins, parts, ops, f, t=t, tb="u32", tc="u32")


def op_bfi(D, ins, parts, ops):
    t = _need_type(parts, ins)
    dt = NP[t]
    n = dt.itemsize * 8
    _nops(ops, 5, ins)
    w = D.wr(ops[0], t)
    fr, br = D.rd(ops[1], t), D.rd(ops[2], t)
    pr, lr = D.rd(ops[3], "u32"), D.rd(ops[4], "u32")

    def fn(ch, idx):
        f_, b_ = fr(ch, idx), br(ch, idx)
        pos = np.asarray(pr(ch, idx)).astype(np.int64) & 0xFF
        ln = np.asarray(lr(ch, idx)).astype(np.int64) & 0xFF
        ln = np.minimum(ln, np.maximum(n - pos, 0))
        full = (1 << n) - 1
        pos_c = np.minimum(pos, n - 1)
        mask = (
            np.where(
                pos >= n,
                0,
                ((np.left_shift(np.uint64(1), ln.astype(np.uint64)) - np.uint64(1)) << pos_c.astype(np.uint64)).astype(
                    np.uint64
                ),
            )
            if n < 64
            else np.where(
                pos >= n,
                np.uint64(0),
                np.where(
                    ln >= 64,
                    np.uint64(full),
                    (np.left_shift(np.uint64(1), np.minimum(ln, 63).astype(np.uint64)) - np.uint64(1)),
                )
                << pos_c.astype(np.uint64),
            )
        )
        mask = np.asarray(mask).astype(np.uint64)
        uf = np.asarray(f_).view(UINT[dt.itemsize]).astype(np.uint64)
        ub = np.asarray(b_).view(UINT[dt.itemsize]).astype(np.uint64)
        v = (ub & ~mask) | ((uf << pos_c.astype(np.uint64)) & mask)
        w(ch, idx, (v & np.uint64(full)).astype(UINT[dt.itemsize]).view(dt))
    return fn


def op_shf(D, ins, parts, ops):
    """Funnel shift: shf.{l,r}.{wrap,clamp}.b32 d, a, b, c over the 64-bit value b:a."""
    left = "l" in parts
    wrap = "wrap" in parts

    def f(a, b, c):
        x = (np.asarray(b).astype(np.uint64) << np.uint64(32)) | np.asarray(a).astype(np.uint64)
        c = np.asarray(c).astype(np.uint64)
        n = (c & np.uint64(31)) if wrap else np.minimum(c, np.uint64(32))
        if left:
            return ((x << n) >> np.uint64(32)).astype(np.uint32)
        return (x >> n).astype(np.uint32)
    return _ternary_fn(D, ins, parts, ops, f, t="b32", tc="u32")


def op_bfind(D, ins, parts, ops):
    """Position of the most significant non-sign bit (0xffffffff if none); .shiftamt: N-1-pos."""
    t = _need_type(parts, ins)
    n = type_size(t) * 8
    ud = UINT[n // 8]
    shiftamt = "shiftamt" in parts

    def f(a):
        u = np.asarray(a).view(ud)
        if t[0] == "s":
            neg = np.asarray(a) < 0
            u = np.where(neg, ~u, u)
        pos = _bitlen(u) - 1
        none = pos < 0
        r = (n - 1 - pos) if shiftamt else pos
        return np.where(none, np.uint32(0xFFFFFFFF), np.asarray(r).astype(np.uint32)).astype(np.uint32)
    return _unary_fn(D, ins, parts, ops, f, t=t, tout="u32")


def op_lop3(D, ins, parts, ops):
    """lop3.b32 d, a, b, c, immLut: any 3-input bitwise function given by its truth table."""
    _nops(ops, 5, ins)
    if not isinstance(ops[4], Imm):
        raise DecodeError("lop3 needs an immediate lookup table")
    lut = int(ops[4].value) & 0xFF
    t = _need_type(parts, ins)
    dt = NP[t]

    def f(a, b, c):
        a, b, c = (np.asarray(x).astype(dt) for x in (a, b, c))
        out: np.ndarray = np.zeros(np.broadcast(a, b, c).shape, dt)
        for k in range(8):  # minterm k: bit2 = a, bit1 = b, bit0 = c (a = 0xF0, b = 0xCC, c = 0xAA)
            if lut >> k & 1:
                ta = a if k & 4 else ~a
                tb = b if k & 2 else ~b
                tc = c if k & 1 else ~c
                out |= ta & tb & tc
        return out
    w = D.wr(ops[0], t)
    ra, rb, rc = D.rd(ops[1], t), D.rd(ops[2], t), D.rd(ops[3], t)

    def fn(ch, idx):
        w(ch, idx, f(ra(ch, idx), rb(ch, idx), rc(ch, idx)))
    return fn


def op_createpolicy(D, ins, parts, ops):
    w = D.wr(ops[0], "b64")  # cache policies do not change results
    return lambda ch, idx: w(ch, idx, np.uint64(0))


def op_prmt(D, ins, parts, ops):
    if any(m in parts for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")):
        raise DecodeError(f"unsupported instruction '{ins.opcode}' (prmt modes)")

    def f(a, b, c):
        x = (np.asarray(b).astype(np.uint64) << np.uint64(32)) | np.asarray(a).astype(np.uint64)
        c = np.asarray(c).astype(np.uint64)
        out = np.zeros(np.broadcast(x, c).shape, np.uint64)
        for i in range(4):
            sel = (c >> np.uint64(4 * i)) & np.uint64(0xF)
            byte = (x >> ((sel & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
            byte = np.where(
                (sel & np.uint64(8)) != 0, np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0)), byte
            )
            out |= byte << np.uint64(8 * i)
        return out.astype(np.uint32)
    return _ternary_fn(D, ins, parts, ops, f, t="b32")


def op_sad(D, ins, parts, ops):
    t = _need_type(parts, ins)
    dt = NP[t]
    return _ternary_fn(D, ins, parts, ops, lambda a, b, c: (np.where(a > b, a - b, b - a) + c).astype(dt), t=t)


# ------------------------------------------------------------- transcendental / float


def op_simple_float(D, ins, parts, ops, fn):
    t = _need_type(parts, ins)
    return _unary_fn(D, ins, parts, ops, _wrap_float(fn, parts, t), t=t)


def op_rcp(D, ins, parts, ops):
    t = _need_type(parts, ins)
    one = _ftype(t)(1)
    f = _directed(parts, t, lambda a: 1.0 / a) or (lambda a: one / a)
    return _unary_fn(D, ins, parts, ops, _wrap_float(f, parts, t), t=t)


def op_sqrt(D, ins, parts, ops):
    t = _need_type(parts, ins)
    f = _directed(parts, t, np.sqrt) or np.sqrt
    return _unary_fn(D, ins, parts, ops, _wrap_float(f, parts, t), t=t)


def op_rsqrt(D, ins, parts, ops):
    t = _need_type(parts, ins)
    one = _ftype(t)(1)
    return _unary_fn(D, ins, parts, ops, _wrap_float(lambda a: one / np.sqrt(a), parts, t), t=t)


def op_copysign(D, ins, parts, ops):
    t = _need_type(parts, ins)
    # copysign.type d, a, b: d = |b| with the sign of a
    return _binary_fn(D, ins, parts, ops, lambda a, b: np.copysign(b, a), t=t)


def op_testp(D, ins, parts, ops):
    t = _need_type(parts, ins)
    tests = {
        "finite": np.isfinite, "infinite": np.isinf, "number": lambda a: ~np.isnan(a),
        "notanumber": np.isnan,
        "normal": lambda a: np.isfinite(a) & (np.abs(a) >= np.finfo(a.dtype).tiny),
        "subnormal": lambda a: (a != 0) & (np.abs(a) < np.finfo(a.dtype).tiny),
    }
    f = next((tests[p] for p in parts if p in tests), None)
    if f is None:
        raise DecodeError(f"'{ins.opcode}' needs a test (finite, infinite, number, notanumber, normal, subnormal)")
    return _unary_fn(D, ins, parts, ops, lambda a: f(np.asarray(a)), t=t, tout="pred")


# ------------------------------------------------------------------ compare / select

_CMP_INT = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}


def _float_cmp(op):
    def nan2(a, b):
        return np.isnan(a) | np.isnan(b)
    ordered = {"eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
    if op in ordered:
        return ordered[op]  # numpy comparisons with NaN are already False
    if op == "ne":
        return lambda a, b: np.not_equal(a, b) & ~nan2(a, b)
    if op == "num":
        return lambda a, b: ~nan2(a, b)
    if op == "nan":
        return nan2
    if op.endswith("u") and op[:-1] in ordered:
        f = ordered[op[:-1]]
        return lambda a, b: f(a, b) | nan2(a, b)
    if op == "neu":
        return np.not_equal  # True with NaN
    return None


def _cmp_fn(cmp, t, ins):
    k = kind(t)
    if k == "fx2":
        raise DecodeError(f"unsupported instruction '{ins.opcode}' (packed comparisons)")
    if k == "f":
        f = _float_cmp(cmp)
        if f is None:
            raise DecodeError(f"unknown float comparison '{cmp}' in '{ins.opcode}'")
        if t == "bf16":
            return lambda a, b: f(from_bf16(a), from_bf16(b))
        return f
    if cmp not in _CMP_INT:
        raise DecodeError(f"unknown integer comparison '{cmp}' in '{ins.opcode}'")
    if cmp in ("lo", "ls", "hi", "hs") and t[0] == "s":
        ud = UINT[type_size(t)]
        f = _CMP_INT[cmp]
        return lambda a, b: f(np.asarray(a).view(ud), np.asarray(b).view(ud))
    return _CMP_INT[cmp]


_BOOL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def op_setp(D, ins, parts, ops):
    t = _need_type(parts, ins)
    cmp = parts[0]
    boolop = next((p for p in parts[1:] if p in _BOOL), None)
    f = _cmp_fn(cmp, t, ins)
    if "ftz" in parts and t == "f32":
        f0 = f

        def flushed(a, b):
            return f0(ftz32(a), ftz32(b))

        f = flushed
    d = ops[0]
    if isinstance(d, Pair):
        wp = D.wr(Reg(d.first), "pred")
        wq = D.wr(Reg(d.second), "pred")
    else:
        wp, wq = D.wr(d, "pred"), None
    a, b = D.rd(ops[1], t), D.rd(ops[2], t)
    if boolop:
        if len(ops) != 4:
            raise DecodeError(f"'{ins.opcode}' needs a fourth (predicate) operand")
        c = D.pred(ops[3])
        bf = _BOOL[boolop]

        def fn_bool(ch, idx):
            r = f(a(ch, idx), b(ch, idx))
            cc = c(ch, idx)
            p = bf(r, cc)
            q = bf(~r, cc) if wq else None
            wp(ch, idx, p)
            if wq:
                wq(ch, idx, q)
        return fn_bool
    if len(ops) != 3:
        raise DecodeError(f"'{ins.opcode}' expects 3 operands")

    def fn(ch, idx):
        r = f(a(ch, idx), b(ch, idx))
        q = ~r if wq else None
        wp(ch, idx, r)
        if wq:
            wq(ch, idx, q)
    return fn


def op_set(D, ins, parts, ops):
    # set.CmpOp{.BoolOp}.dtype.stype d, a, b{, c}: d = all ones (or 1.0f) if true
    ts = _types_in(parts)
    if len(ts) != 2:
        raise DecodeError(f"'{ins.opcode}' needs a destination and a source type")
    dt_, st_ = ts
    f = _cmp_fn(parts[0], st_, ins)
    boolop = next((p for p in parts[1:] if p in _BOOL), None)
    w = D.wr(ops[0], dt_)
    a, b = D.rd(ops[1], st_), D.rd(ops[2], st_)
    dd = NP[dt_]
    true = dd.type(1.0) if dd.kind == "f" else dd.type(np.iinfo(dd).max if dd.kind == "u" else -1)
    if boolop:
        if len(ops) != 4:
            raise DecodeError(f"'{ins.opcode}' needs a fourth (predicate) operand")
        c = D.pred(ops[3])
        bf = _BOOL[boolop]

        def fn_bool(ch, idx):
            r = bf(f(a(ch, idx), b(ch, idx)), c(ch, idx))
            w(ch, idx, np.where(r, true, dd.type(0)))
        return fn_bool

    def fn(ch, idx):
        r = f(a(ch, idx), b(ch, idx))
        w(ch, idx, np.where(r, true, dd.type(0)))
    return fn


def op_selp(D, ins, parts, ops):
    t = _need_type(parts, ins)
    _nops(ops, 4, ins)
    w = D.wr(ops[0], t)
    a, b, c = D.rd(ops[1], t), D.rd(ops[2], t), D.pred(ops[3])
    dt = NP[t]

    def fn(ch, idx):
        w(ch, idx, np.where(c(ch, idx), a(ch, idx), b(ch, idx)).astype(dt, copy=False))
    return fn


def op_slct(D, ins, parts, ops):
    ts = _types_in(parts)
    t, ct = ts[0], ts[-1]
    _nops(ops, 4, ins)
    w = D.wr(ops[0], t)
    a, b, c = D.rd(ops[1], t), D.rd(ops[2], t), D.rd(ops[3], ct)
    dt = NP[t]

    def fn(ch, idx):
        cond = c(ch, idx) >= 0  # f32: -0.0 selects a, NaN selects b
        w(ch, idx, np.where(cond, a(ch, idx), b(ch, idx)).astype(dt, copy=False))
    return fn


# ---------------------------------------------------------------------- mov / cvt


def op_mov(D, ins, parts, ops):
    t = _need_type(parts, ins)
    _nops(ops, 2, ins)
    d, s = ops
    if isinstance(d, Vec):  # unpack: mov.b64 {lo, hi}, %rd
        n = len(d.items)
        part_t = {2: "b" + str(type_size(t) * 4), 4: "b" + str(type_size(t) * 2)}[n]
        pd = NP[part_t]
        ws = [D.wr(x, part_t) for x in d.items]
        r = D.rd(s, t)
        ud = UINT[type_size(t)]
        sh = [ud.type(i * pd.itemsize * 8) for i in range(n)]

        def fn(ch, idx):
            v = np.asarray(r(ch, idx)).view(ud)
            for i, w in enumerate(ws):
                w(ch, idx, (v >> sh[i]).astype(pd))
        return fn
    if isinstance(s, Vec):  # pack: mov.b64 %rd, {lo, hi}
        n = len(s.items)
        part_t = "b" + str(type_size(t) * 8 // n)
        rs = [D.rd(x, part_t) for x in s.items]
        ud = UINT[type_size(t)]
        dt = NP[t]
        shifts = [ud.type(i * type_size(t) * 8 // n) for i in range(n)]
        w = D.wr(d, t)

        def fn(ch, idx):
            acc = None
            for r, sh in zip(rs, shifts):
                v = np.asarray(r(ch, idx)).astype(ud) << sh
                acc = v if acc is None else acc | v
            w(ch, idx, np.asarray(acc).view(dt))
        return fn
    w = D.wr(d, t)
    r = D.rd(s, t)

    def fn(ch, idx):
        v = r(ch, idx)
        if type(v) is np.ndarray and idx is None:
            v = v.copy()
        w(ch, idx, v)
    return fn


def _int_round(x, mode):
    if mode == "rni":
        return np.rint(x)
    if mode == "rmi":
        return np.floor(x)
    if mode == "rpi":
        return np.ceil(x)
    return np.trunc(x)


def op_cvt(D, ins, parts, ops):
    ts = _types_in(parts)
    if len(ts) != 2:
        raise DecodeError(f"'{ins.opcode}' needs destination and source types")
    dt_, st_ = ts
    if "pred" in ts:
        raise DecodeError(f"unsupported instruction '{ins.opcode}'")
    if dt_ in ("f16x2", "bf16x2") and st_ == "f32" and len(ops) == 3:
        # pack two conversions: d = {cvt(a) in the upper half, cvt(b) in the lower half}
        if "relu" in parts or "satfinite" in parts:
            raise DecodeError(f"unsupported instruction '{ins.opcode}'")
        w2 = D.wr(ops[0], "b32")
        ra2, rb2 = D.rd(ops[1], "f32"), D.rd(ops[2], "f32")
        half = dt_ == "f16x2"

        def fn2(ch, idx):
            w2(ch, idx, _pack2(np.asarray(rb2(ch, idx)), np.asarray(ra2(ch, idx)), half))
        return fn2
    _nops(ops, 2, ins)
    w = D.wr(ops[0], dt_)
    r = D.rd(ops[1], st_)
    mode = next((p for p in parts if p in ("rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi")), "")
    sat = "sat" in parts
    ftz = "ftz" in parts
    dk, sk = kind(dt_), kind(st_)
    dd = NP[dt_]
    if "relu" in parts or dt_ in ("f16x2", "bf16x2", "tf32") or st_ in ("f16x2", "bf16x2"):
        raise DecodeError(f"unsupported instruction '{ins.opcode}'")

    def to_f32(x):  # source float -> float32/64 value
        if st_ == "bf16":
            return from_bf16(x)
        return x

    if dk == "f" and sk == "f":
        def float_to_float(x):
            x = to_f32(np.asarray(x))
            if ftz and st_ == "f32":
                x = ftz32(x)
            if mode in ("rni", "rzi", "rmi", "rpi"):
                x = _int_round(x, mode)
            if dt_ == "f32":
                y = round_f32(x.astype(np.float64), mode) if mode in ("rz", "rm", "rp") else x.astype(np.float32)
            elif dt_ == "f64":
                y = x.astype(np.float64)
            elif dt_ == "f16":
                y = x.astype(np.float16)
            else:  # bf16
                y = x.astype(np.float32)
            if ftz and dt_ == "f32":
                y = ftz32(y)
            if sat:
                y = sat01(np.asarray(y))
            if dt_ == "bf16":
                y = to_bf16(y)
            return y
        f = float_to_float
    elif dk == "f":  # int -> float
        def int_to_float(x):
            x = np.asarray(x)
            if dt_ == "bf16":
                y = to_bf16(x.astype(np.float32))
            else:
                y = x.astype(dd)
                if dt_ == "f32" and mode in ("rz", "rm", "rp"):
                    y = round_f32(x.astype(np.float64), mode)
            if sat:
                y = sat01(np.asarray(y))
            return y
        f = int_to_float
    elif sk == "f":  # float -> int: round, NaN -> 0, saturate to the destination range
        info = np.iinfo(dd)
        lo, hi = float(info.min), float(info.max)

        def float_to_int(x):
            x = to_f32(np.asarray(x)).astype(np.float64)
            if ftz and st_ == "f32":
                x = ftz32(x.astype(np.float32)).astype(np.float64)
            x = _int_round(x, mode or "rzi")
            x = np.where(np.isnan(x), 0.0, x)
            x = np.clip(x, lo, hi)
            if dd.itemsize == 8:  # float64 cannot hold 2**63-1 / 2**64-1 exactly
                big = x >= hi
                y = np.where(big, 0, x).astype(dd)
                return np.where(big, dd.type(info.max), y)
            return x.astype(dd)
        f = float_to_int
    else:  # int -> int: the reader gives the source type; extend by its signedness or truncate
        if sat:
            info = np.iinfo(dd)

            def int_to_int_sat(x):
                x = np.asarray(x)
                if x.dtype == np.uint64:  # may not fit int64
                    return np.minimum(x, np.uint64(info.max)).astype(dd)
                return np.clip(x.astype(np.int64), info.min, min(info.max, 2**63 - 1)).astype(dd)
            f = int_to_int_sat
        else:
            def int_to_int(x):
                x = np.asarray(x)
                if dd.itemsize > x.dtype.itemsize:
                    return x.astype(SINT[dd.itemsize] if st_[0] == "s" else UINT[dd.itemsize]).view(dd)
                if dd.itemsize < x.dtype.itemsize:
                    return x.view(UINT[x.dtype.itemsize]).astype(UINT[dd.itemsize]).view(dd)
                return x.view(dd).copy()
            f = int_to_int

    def fn(ch, idx):
        w(ch, idx, f(r(ch, idx)))
    return fn


def op_cvta(D, ins, parts, ops):
    t = _need_type(parts, ins)
    _nops(ops, 2, ins)
    to = "to" in parts
    space = next((p for p in parts if p in ("global", "shared", "local", "const", "param")), None)
    if space is None:
        raise DecodeError(f"'{ins.opcode}' needs a state space")
    win = {"global": 0, "const": 0, "shared": SHARED_WINDOW, "local": LOCAL_WINDOW, "param": PARAM_WINDOW}[space]
    dt = NP[t]
    w = D.wr(ops[0], t)
    r = D.rd(ops[1], t)
    delta = dt.type(win % (1 << (8 * dt.itemsize)))

    def fn(ch, idx):
        v = r(ch, idx)
        w(ch, idx, (v - delta) if to else (v + delta))
    return fn


# ------------------------------------------------------------------------- memory


class _Addr:
    """A decoded address operand: fn(ch, idx) -> int64 array of addresses (space-relative)."""

    def __init__(self, D, m: Mem, space: str):
        K = D.K
        self.const = None
        self.reader = None
        off = m.offset
        if m.base is None:
            self.const = off
        elif m.base in K.regs:
            rt = K.regs[m.base][1]
            r = D.rd(Reg(m.base), "u64" if type_size(rt) == 8 else "u32")
            if off:
                o = np.int64(off)
                self.reader = lambda ch, idx: r(ch, idx).astype(np.int64) + o
            else:
                self.reader = lambda ch, idx: r(ch, idx).astype(np.int64)
        else:
            a = K.symbol_address(m.base, space)
            if a is None:
                raise DecodeError(f"unknown symbol '{m.base}' in address")
            self.const = a + off
            self.symbol = m.base

    def __call__(self, ch, idx):
        if self.reader is not None:
            a = self.reader(ch, idx)
            if a.ndim:
                return a
            c = a
        else:
            c = self.const
        return np.full(ch.n if idx is None else idx.size, c, np.int64)


def _space(parts):
    for s in ("global", "shared", "local", "param", "const"):
        if s in parts:
            return s
    return "generic"


def _vec(parts):
    for p in parts:
        if p in ("v2", "v4", "v8"):
            return int(p[1:])
    return 1


def _access_type(parts, ins) -> str:
    """The element type of a ld/st (b128 moves are not modelled)."""
    t = _need_type(parts, ins)
    if t == "b128":
        raise DecodeError("unsupported type .b128")
    return t


def _access_operands(ins, parts, ops, mem_first: bool, what: str) -> tuple[Mem, list, int]:
    """The address, the register operands (one, or the items of a `{..}` vector) and the
    vector width of a ld (`d, [a]`) or st (`[a], s`); an L2 cache-policy operand is
    dropped, as it does not change results."""
    nv = _vec(parts)
    if len(ops) == 3 and any(p.startswith("L2::cache_hint") for p in parts):
        ops = ops[:2]
    _nops(ops, 2, ins)
    m, v = ops if mem_first else ops[::-1]
    if not isinstance(m, Mem):
        raise DecodeError(f"'{ins.opcode}' needs an address operand [..]")
    regs = list(v.items) if isinstance(v, Vec) else [v]
    if len(regs) != nv:
        raise DecodeError(f"'{ins.opcode}' needs {nv} {what}")
    return m, regs, nv


def op_ld(D, ins, parts, ops):
    t = _access_type(parts, ins)
    space = _space(parts)
    if space == "const":
        raise DecodeError("the .const state space is not supported")
    m, dsts, nv = _access_operands(ins, parts, ops, False, "destination registers")
    ws = [D.wr(x, t) for x in dsts]
    dt = NP[t]
    esz = dt.itemsize
    if space == "param":
        if m.base is not None and m.base not in D.K.regs:
            poff = D.K.param_offset(m.base)
            if poff is None:
                raise DecodeError(f"unknown parameter '{m.base}'")
            po = poff + m.offset

            def fn(ch, idx):
                vals = np.frombuffer(ch.params, dt, count=nv, offset=po)
                for i, w in enumerate(ws):
                    w(ch, idx, vals[i].copy())
            return fn
        addr = _Addr(D, m, "param")

        def fn(ch, idx):
            a = addr(ch, idx) - PARAM_WINDOW
            vals = ch.load_param(a, dt, nv, ins.line)
            for i, w in enumerate(ws):
                w(ch, idx, vals if nv == 1 else np.ascontiguousarray(vals[:, i]))
        return fn
    addr = _Addr(D, m, space)
    line = ins.line
    D.K.note_access(space, esz)
    role = D.sync_role
    if role in ("wait", "head") and space in ("global", "generic"):
        head = role == "head"

        def fn(ch, idx):
            a = addr(ch, idx)
            vals = ch.mem_load(space, a, idx, dt, nv, line)
            ch.note_sync_read(a, idx, head)
            _write_loaded(ws, ch, idx, vals)
        return fn

    def fn(ch, idx):
        _write_loaded(ws, ch, idx, ch.mem_load(space, addr(ch, idx), idx, dt, nv, line))
    return fn


def _write_loaded(ws, ch, idx, vals) -> None:
    """Write the loaded values (one per lane, or a column per register of a vector) to the
    destination registers."""
    if len(ws) == 1:
        ws[0](ch, idx, vals)
    else:
        for i, w in enumerate(ws):
            w(ch, idx, np.ascontiguousarray(vals[:, i]))


def op_st(D, ins, parts, ops):
    t = _access_type(parts, ins)
    space = _space(parts)
    if space == "param":
        raise DecodeError("stores to .param outside a call sequence are not supported")
    if space == "const":
        raise DecodeError("stores to .const are not allowed")
    m, srcs, nv = _access_operands(ins, parts, ops, True, "source values")
    rs = [D.rd(x, t) for x in srcs]
    dt = NP[t]
    addr = _Addr(D, m, space)
    line = ins.line
    D.K.note_access(space, dt.itemsize)
    post = D.sync_role == "post" and space in ("global", "generic")

    def fn(ch, idx):
        a = addr(ch, idx)
        n = a.size
        if nv == 1:
            v = rs[0](ch, idx)
            v = np.broadcast_to(np.asarray(v, dt), (n,))
        else:
            v = np.empty((n, nv), dt)
            for i, r in enumerate(rs):
                v[:, i] = r(ch, idx)
        ch.mem_store(space, a, idx, dt, nv, v, line)
        if post:
            ch.note_post(a, idx)
    return fn


_ATOM_OPS = {"add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec"}


def op_atom(D, ins, parts, ops, is_red=False):
    t = _need_type(parts, ins)
    space = _space(parts)
    if space not in ("global", "shared", "generic"):
        raise DecodeError(f"atomics on .{space} are not supported")
    op = next((p for p in parts if p in _ATOM_OPS), None)
    if op is None:
        raise DecodeError(f"'{ins.opcode}' has no atomic operation")
    if t in ("f16", "bf16", "f16x2", "bf16x2") or _vec(parts) > 1:
        raise DecodeError(f"unsupported instruction '{ins.opcode}'")
    dt = NP[t]
    if is_red:
        m, rest = ops[0], ops[1:]
        w = None
    else:
        w = D.wr(ops[0], t)
        m, rest = ops[1], ops[2:]
    if not isinstance(m, Mem):
        raise DecodeError(f"'{ins.opcode}' needs an address operand [..]")
    need = 2 if op == "cas" else 1
    if len(rest) != need:
        raise DecodeError(f"'{ins.opcode}' expects {need + (1 if is_red else 2)} operands")
    rb = D.rd(rest[0], t)
    rc = D.rd(rest[1], t) if op == "cas" else None
    addr = _Addr(D, m, space)
    line = ins.line
    is_float = dt.kind == "f"
    if is_float and op not in ("add", "min", "max", "exch"):
        raise DecodeError(f"unsupported instruction '{ins.opcode}'")
    D.K.note_access(space, dt.itemsize)
    role = D.sync_role if space != "shared" else None
    post = role == "post"
    wait = role in ("wait", "head")
    head = role == "head"

    def fn(ch, idx):
        a = addr(ch, idx)
        b = rb(ch, idx)
        c = rc(ch, idx) if rc is not None else None
        old = ch.mem_atomic(space, a, idx, dt, op, b, c, is_float, line)
        if w is not None:
            w(ch, idx, old)
        if post:
            ch.note_post(a, idx)
        elif wait:
            ch.note_sync_read(a, idx, head)
    return fn


def op_red(D, ins, parts, ops):
    return op_atom(D, ins, parts, ops, is_red=True)


# --------------------------------------------------------------------- warp level


def op_shfl(D, ins, parts, ops):
    mode = next((p for p in parts if p in ("up", "down", "bfly", "idx")), None)
    if mode is None:
        raise DecodeError(f"'{ins.opcode}' needs a mode (up, down, bfly, idx)")
    if "sync" not in parts:
        raise DecodeError("shfl without .sync is not supported on sm_70+; use shfl.sync")
    _nops(ops, 5, ins)
    d = ops[0]
    if isinstance(d, Pair):
        wd_, wp = D.wr(Reg(d.first), "b32"), D.wr(Reg(d.second), "pred")
    else:
        wd_, wp = D.wr(d, "b32"), None
    src = ops[1]
    ra = D.rd(src, "b32")
    rb, rc = D.rd(ops[2], "u32"), D.rd(ops[3], "u32")
    rm = D.rd(ops[4], "u32")

    def fn(ch, idx):
        b = rb(ch, idx)
        c = rc(ch, idx)
        if idx is None and ch.dense:
            bu, cu = _uniform(b), _uniform(c)
            if bu is not None and cu is not None:  # one permutation for every warp
                perm, pv = _shfl_table(mode, bu, cu)
                full = ra(ch, None)
                if np.ndim(full):
                    v = full.reshape(-1, 32)[:, perm].reshape(-1)
                else:
                    v = np.full(ch.n, full, np.uint32)
                wd_(ch, None, v)
                if wp is not None:
                    wp(ch, None, np.tile(pv, ch.n // 32))
                return
        lane = ch.sreg("%laneid")
        lane = (lane if idx is None else lane[idx]).astype(np.int64)
        if idx is not None or ch.alive is not None or _uniform(rm(ch, idx)) != 0xFFFFFFFF:
            _check_membermask(ch, idx, lane, rm(ch, idx))
        b = np.asarray(b).astype(np.int64) & 31
        c = np.asarray(c).astype(np.int64)
        j, pval = _shfl_source(mode, lane, b, c)
        me = ch.arange if idx is None else idx
        slot = ch.lane_slot if idx is None else ch.lane_slot[idx]
        src_slot = (slot & ~31) | np.where(pval, j, lane)
        srcl = ch.slot2lane[src_slot]
        ok = srcl >= 0
        if ch.alive is not None:  # exited lanes are not valid sources
            ok &= ch.alive[np.maximum(srcl, 0)]
        pval = pval & ok
        srcl = np.where(pval, srcl, me)
        full = ra(ch, None)
        v = full[srcl] if np.ndim(full) else np.full(srcl.size, full, np.uint32)
        wd_(ch, idx, v)
        if wp is not None:
            wp(ch, idx, pval)
    return fn


def _check_membermask(ch, idx, lane, mask):
    """shfl.sync contract: the executing lane is in membermask, and every live lane named in
    membermask executes this same shfl.sync (otherwise the hardware hangs or is undefined)."""
    n = lane.size
    mask = np.broadcast_to(np.asarray(mask).astype(np.int64), (n,))
    bits = np.int64(1) << lane
    out = (mask & bits) == 0
    if out.any():
        k = int(np.flatnonzero(out)[0])
        me = int((ch.arange if idx is None else idx)[k])
        raise Fault(f"shfl.sync executed by {ch.describe_lane(me)}, which is not in membermask {int(mask[k]):#010x}")
    active = _warp_reduce(ch, idx, bits, np.bitwise_or, np.int64, 0)
    live_lanes = ch.arange if ch.alive is None else np.flatnonzero(ch.alive)
    live = np.zeros(ch.nwarp_slots, np.int64)
    np.bitwise_or.at(live, ch.lane_warp[live_lanes], np.int64(1) << (ch.sreg("%laneid")[live_lanes].astype(np.int64)))
    warp = ch.lane_warp if idx is None else ch.lane_warp[idx]
    missing = mask & live[warp] & ~active
    if missing.any():
        k = int(np.flatnonzero(missing)[0])
        me = int((ch.arange if idx is None else idx)[k])
        lanes = [i for i in range(32) if int(missing[k]) >> i & 1]
        raise Fault(f"divergent shfl.sync: lanes {lanes} of the warp of {ch.describe_lane(me)} are named in "
                    f"membermask {int(mask[k]):#010x} but do not execute this shfl.sync")


def _uniform(x):
    """The single value of `x` if all lanes hold the same value, else None."""
    if np.ndim(x) == 0:
        return int(x)
    if x.size == 0:
        return None
    v = x[0]
    if x.min() == v and x.max() == v:
        return int(v)
    return None


_SHFL_TABLES: dict = {}


def _shfl_source(mode, lane, b, c):
    """PTX shfl.sync's source lane j and its validity for each `lane` (b already masked
    to 5 bits; c packs the clamp value and the segment mask)."""
    cval, segmask = c & 31, (c >> 8) & 31
    max_lane = (lane & segmask) | (cval & ~segmask)
    if mode == "up":
        j = lane - b
        return j, j >= max_lane
    if mode == "down":
        j = lane + b
    elif mode == "bfly":
        j = lane ^ b
    else:
        j = (lane & segmask) | (b & ~segmask)
    return j, j <= max_lane


def _shfl_table(mode, b, c):
    """Source lane and validity for each of the 32 lanes of a warp (uniform b and c)."""
    key = (mode, b & 31, c & 0x1F1F)
    t = _SHFL_TABLES.get(key)
    if t is None:
        lane = np.arange(32)
        j, pval = _shfl_source(mode, lane, b & 31, c)
        t = _SHFL_TABLES[key] = (np.where(pval, j, lane), pval)
    return t


def _warp_reduce(ch, idx, vals, uf, dtype, identity):
    """Per-warp reduction of `vals` over the active lanes, broadcast back to them."""
    vals = np.asarray(vals).astype(dtype)
    if idx is None and ch.dense:  # whole warps are rows of 32 lanes
        return np.repeat(uf.reduce(vals.reshape(-1, 32), axis=1), 32)
    warp = ch.lane_warp if idx is None else ch.lane_warp[idx]
    acc = np.full(ch.nwarp_slots, identity, dtype)
    uf.at(acc, warp, vals)
    return acc[warp]


def op_vote(D, ins, parts, ops):
    mode = next((p for p in parts if p in ("all", "any", "uni", "ballot")), None)
    if mode is None:
        raise DecodeError(f"'{ins.opcode}' needs a mode")
    w = D.wr(ops[0], "b32" if mode == "ballot" else "pred")
    p = D.pred(ops[1])

    def fn(ch, idx):
        pv = np.asarray(p(ch, idx))
        n = ch.n if idx is None else idx.size
        pv = np.broadcast_to(pv, (n,))
        if mode == "ballot":
            lane = ch.sreg("%laneid")
            lane = lane if idx is None else lane[idx]
            bits = np.where(pv, np.uint32(1) << lane, np.uint32(0))
            w(ch, idx, _warp_reduce(ch, idx, bits, np.bitwise_or, np.uint32, 0))
        elif mode == "all":
            w(ch, idx, _warp_reduce(ch, idx, pv, np.logical_and, np.bool_, True))
        elif mode == "any":
            w(ch, idx, _warp_reduce(ch, idx, pv, np.logical_or, np.bool_, False))
        else:
            a = _warp_reduce(ch, idx, pv, np.logical_and, np.bool_, True)
            o = _warp_reduce(ch, idx, pv, np.logical_or, np.bool_, False)
            w(ch, idx, a | ~o)
    return fn


def op_activemask(D, ins, parts, ops):
    w = D.wr(ops[0], "b32")

    def fn(ch, idx):
        lane = ch.sreg("%laneid")
        lane = lane if idx is None else lane[idx]
        w(ch, idx, _warp_reduce(ch, idx, np.uint32(1) << lane, np.bitwise_or, np.uint32, 0))
    return fn


def op_redux(D, ins, parts, ops):
    t = _need_type(parts, ins)
    op = next((p for p in parts if p in ("add", "min", "max", "and", "or", "xor")), None)
    if op is None or t not in ("u32", "s32", "b32"):
        raise DecodeError(f"unsupported instruction '{ins.opcode}'")
    dt = NP[t]
    info = np.iinfo(dt)
    uf, ident = {"add": (np.add, 0), "min": (np.minimum, info.max), "max": (np.maximum, info.min),
                 "and": (np.bitwise_and, -1 if t == "s32" else info.max), "or": (np.bitwise_or, 0),
                 "xor": (np.bitwise_xor, 0)}[op]
    w = D.wr(ops[0], t)
    a = D.rd(ops[1], t)

    def fn(ch, idx):
        n = ch.n if idx is None else idx.size
        v = np.broadcast_to(np.asarray(a(ch, idx)), (n,))
        w(ch, idx, _warp_reduce(ch, idx, v, uf, dt, ident))
    return fn


def op_nop(D, ins, parts, ops):
    return lambda ch, idx: None


def op_trap(D, ins, parts, ops):
    def fn(ch, idx):
        raise Fault("trap instruction executed")
    return fn


# ------------------------------------------------------------------------ table

_OPS = {
    "add": op_add, "sub": op_sub, "mul": op_mul, "mad": op_mad, "fma": op_fma, "div": op_div,
    "rem": op_rem, "abs": op_abs, "neg": op_neg, "mul24": op_mul24, "mad24": op_mad24, "sad": op_sad,
    "min": lambda D, i, p, o: op_minmax(D, i, p, o, False),
    "max": lambda D, i, p, o: op_minmax(D, i, p, o, True),
    "and": lambda D, i, p, o: op_bitwise(D, i, p, o, np.bitwise_and),
    "or": lambda D, i, p, o: op_bitwise(D, i, p, o, np.bitwise_or),
    "xor": lambda D, i, p, o: op_bitwise(D, i, p, o, np.bitwise_xor),
    "not": op_not, "cnot": op_cnot, "shl": op_shl, "shr": op_shr, "popc": op_popc, "clz": op_clz,
    "brev": op_brev, "bfe": op_bfe, "bfi": op_bfi, "prmt": op_prmt, "shf": op_shf, "bfind": op_bfind,
    "lop3": op_lop3, "createpolicy": op_createpolicy,
    "ex2": lambda D, i, p, o: op_simple_float(D, i, p, o, np.exp2),
    "lg2": lambda D, i, p, o: op_simple_float(D, i, p, o, np.log2),
    "sin": lambda D, i, p, o: op_simple_float(D, i, p, o, np.sin),
    "cos": lambda D, i, p, o: op_simple_float(D, i, p, o, np.cos),
    "tanh": lambda D, i, p, o: op_simple_float(D, i, p, o, np.tanh),
    "rcp": op_rcp, "sqrt": op_sqrt, "rsqrt": op_rsqrt, "copysign": op_copysign, "testp": op_testp,
    "setp": op_setp, "set": op_set, "selp": op_selp, "slct": op_slct, "mov": op_mov, "cvt": op_cvt,
    "cvta": op_cvta, "ld": op_ld, "ldu": op_ld, "st": op_st, "atom": op_atom, "red": op_red,
    "shfl": op_shfl, "vote": op_vote, "activemask": op_activemask, "redux": op_redux,
    "membar": op_nop, "fence": op_nop, "prefetch": op_nop, "prefetchu": op_nop, "nanosleep": op_nop,
    "pmevent": op_nop, "trap": op_trap,
}
# control flow (bra, ret, exit, bar, barrier) is decoded by the engine itself.


def _warp_matrix_and_async_ops():
    """mma/ldmatrix/tf32 cvt (tensorcore.py) and cp.async (asynccopy.py): modules of their own that
    build on this one's readers and writers (tensorcore's `cvt` handles .tf32 destinations and hands
    every other conversion to op_cvt)."""
    from fsir.sim import asynccopy, tensorcore  # noqa: PLC0415 - both import this module

    return {**tensorcore.OPS, **asynccopy.OPS}


_OPS.update(_warp_matrix_and_async_ops())
