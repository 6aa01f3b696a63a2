"""Comparison and selection: setp, set, selp, slct."""

from __future__ import annotations

import numpy as np

from fsir.sim.decoder.numeric import NP, UINT, DecodeError, from_bf16, ftz32, kind
from fsir.sim.decoder.operands import need_type, nops, types_in
from fsir.sim.parser import Pair, Reg, type_size

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
    t = need_type(parts, ins)
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
    ts = types_in(parts)
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
    t = need_type(parts, ins)
    nops(ops, 4, ins)
    w = D.wr(ops[0], t)
    a, b, c = D.rd(ops[1], t), D.rd(ops[2], t), D.pred(ops[3])
    dt = NP[t]

    def fn(ch, idx):
        w(ch, idx, np.where(c(ch, idx), a(ch, idx), b(ch, idx)).astype(dt, copy=False))
    return fn


def op_slct(D, ins, parts, ops):
    ts = types_in(parts)
    t, ct = ts[0], ts[-1]
    nops(ops, 4, ins)
    w = D.wr(ops[0], t)
    a, b, c = D.rd(ops[1], t), D.rd(ops[2], t), D.rd(ops[3], ct)
    dt = NP[t]

    def fn(ch, idx):
        cond = c(ch, idx) >= 0  # f32: -0.0 selects a, NaN selects b
        w(ch, idx, np.where(cond, a(ch, idx), b(ch, idx)).astype(dt, copy=False))
    return fn
