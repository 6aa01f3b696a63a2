"""Bit manipulation: and/or/xor/not, shifts and funnel shifts, population count, leading zeros,
bit reversal, bit-field extract/insert, lop3, prmt, sad.
"""

from __future__ import annotations

import numpy as np

from fsir.sim.decoder.arith import binary_fn, ternary_fn, unary_fn
from fsir.sim.decoder.numeric import NP, UINT, DecodeError
from fsir.sim.decoder.operands import need_type, nops
from fsir.sim.parser import Imm, type_size


def op_bitwise(D, ins, parts, ops, f):
    t = need_type(parts, ins)
    return binary_fn(D, ins, parts, ops, f, t=t)


def op_not(D, ins, parts, ops):
    t = need_type(parts, ins)
    return unary_fn(D, ins, parts, ops, np.invert, t=t)


def op_cnot(D, ins, parts, ops):
    t = need_type(parts, ins)
    dt = NP[t]
    return unary_fn(D, ins, parts, ops, lambda a: (a == 0).astype(dt), t=t)


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
    t = need_type(parts, ins)
    return binary_fn(D, ins, parts, ops, _shift(np.left_shift, NP[t], True), t=t, tb="u32")


def op_shr(D, ins, parts, ops):
    t = need_type(parts, ins)
    return binary_fn(D, ins, parts, ops, _shift(np.right_shift, NP[t], t[0] != "s"), t=t, tb="u32")


def op_popc(D, ins, parts, ops):
    t = need_type(parts, ins)
    return unary_fn(D, ins, parts, ops, lambda a: np.bitwise_count(a).astype(np.uint32), t=t, tout="u32")


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
    t = need_type(parts, ins)
    n = type_size(t) * 8
    return unary_fn(D, ins, parts, ops, lambda a: (n - _bitlen(a)).astype(np.uint32), t=t, tout="u32")


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint8)


def op_brev(D, ins, parts, ops):
    t = need_type(parts, ins)
    dt = NP[t]
    nb = dt.itemsize

    def f(a0):
        a = np.ascontiguousarray(np.atleast_1d(a0))
        by = a.view(np.uint8).reshape(-1, nb)
        return _REV8[by[:, ::-1]].copy().view(dt).reshape(np.shape(a0))
    return unary_fn(D, ins, parts, ops, f, t=t)


def op_bfe(D, ins, parts, ops):
    t = need_type(parts, ins)
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
    return ternary_fn(D, ins, parts, ops, f, t=t, tb="u32", tc="u32")


def op_bfi(D, ins, parts, ops):
    t = need_type(parts, ins)
    dt = NP[t]
    n = dt.itemsize * 8
    nops(ops, 5, ins)
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
    return ternary_fn(D, ins, parts, ops, f, t="b32", tc="u32")


def op_bfind(D, ins, parts, ops):
    """Position of the most significant non-sign bit (0xffffffff if none); .shiftamt: N-1-pos."""
    t = need_type(parts, ins)
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
    return unary_fn(D, ins, parts, ops, f, t=t, tout="u32")


def op_lop3(D, ins, parts, ops):
    """lop3.b32 d, a, b, c, immLut: any 3-input bitwise function given by its truth table."""
    nops(ops, 5, ins)
    if not isinstance(ops[4], Imm):
        raise DecodeError("lop3 needs an immediate lookup table")
    lut = int(ops[4].value) & 0xFF
    t = need_type(parts, ins)
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
    return ternary_fn(D, ins, parts, ops, f, t="b32")


def op_sad(D, ins, parts, ops):
    t = need_type(parts, ins)
    dt = NP[t]
    return ternary_fn(D, ins, parts, ops, lambda a, b, c: (np.where(a > b, a - b, b - a) + c).astype(dt), t=t)
