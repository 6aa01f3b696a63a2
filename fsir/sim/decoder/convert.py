"""Moves and conversions: mov (including vector pack/unpack), cvt between every type pair with
its rounding and saturation modes, cvta between address spaces.
"""

from __future__ import annotations

import numpy as np

from fsir.sim.decoder.arith import pack2
from fsir.sim.decoder.numeric import NP, SINT, UINT, DecodeError, from_bf16, ftz32, kind, round_f32, sat01, to_bf16
from fsir.sim.decoder.operands import need_type, nops, types_in
from fsir.sim.decoder.tensorcore import op_cvt_tf32
from fsir.sim.memory import LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW
from fsir.sim.parser import Vec, type_size


def op_mov(D, ins, parts, ops):
    t = need_type(parts, ins)
    nops(ops, 2, ins)
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


_CVT_MODES = ("rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi")


def op_cvt(D, ins, parts, ops):
    ts = types_in(parts)
    if len(ts) != 2:
        raise DecodeError(f"'{ins.opcode}' needs destination and source types")
    if ts[0] == "tf32":
        return op_cvt_tf32(D, ins, parts, ops)
    dt_, st_ = ts
    if "pred" in ts:
        raise DecodeError(f"unsupported instruction '{ins.opcode}'")
    if dt_ in ("f16x2", "bf16x2") and st_ == "f32" and len(ops) == 3:
        return _cvt_pack2(D, ins, parts, ops, dt_ == "f16x2")
    nops(ops, 2, ins)
    w = D.wr(ops[0], dt_)
    r = D.rd(ops[1], st_)
    if "relu" in parts or dt_ in ("f16x2", "bf16x2", "tf32") or st_ in ("f16x2", "bf16x2"):
        raise DecodeError(f"unsupported instruction '{ins.opcode}'")
    mode = next((p for p in parts if p in _CVT_MODES), "")
    f = _cvt_values(dt_, st_, mode, "sat" in parts, "ftz" in parts)

    def fn(ch, idx):
        w(ch, idx, f(r(ch, idx)))
    return fn


def _cvt_pack2(D, ins, parts, ops, half: bool):
    """Two f32 conversions packed: d = {cvt(a) in the upper half, cvt(b) in the lower half}."""
    if "relu" in parts or "satfinite" in parts:
        raise DecodeError(f"unsupported instruction '{ins.opcode}'")
    w2 = D.wr(ops[0], "b32")
    ra2, rb2 = D.rd(ops[1], "f32"), D.rd(ops[2], "f32")

    def fn2(ch, idx):
        w2(ch, idx, pack2(np.asarray(rb2(ch, idx)), np.asarray(ra2(ch, idx)), half))
    return fn2


def _cvt_values(dt_: str, st_: str, mode: str, sat: bool, ftz: bool):
    """The value function of a conversion from PTX type st_ to dt_, by the kinds of the two."""
    dk, sk = kind(dt_), kind(st_)
    if dk == "f" and sk == "f":
        return _float_to_float(dt_, st_, mode, sat, ftz)
    if dk == "f":
        return _int_to_float(dt_, mode, sat)
    if sk == "f":
        return _float_to_int(dt_, st_, mode, ftz)
    return _int_to_int(dt_, st_, sat)


def _source_float(st_: str, x):
    """A float source value as float32/64 (bf16 bits widened)."""
    if st_ == "bf16":
        return from_bf16(x)
    return x


def _float_to_float(dt_: str, st_: str, mode: str, sat: bool, ftz: bool):
    def float_to_float(x):
        x = _source_float(st_, np.asarray(x))
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
    return float_to_float


def _int_to_float(dt_: str, mode: str, sat: bool):
    dd = NP[dt_]

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
    return int_to_float


def _float_to_int(dt_: str, st_: str, mode: str, ftz: bool):
    """Round, NaN -> 0, saturate to the destination range."""
    dd = NP[dt_]
    info = np.iinfo(dd)
    lo, hi = float(info.min), float(info.max)

    def float_to_int(x):
        x = _source_float(st_, np.asarray(x)).astype(np.float64)
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
    return float_to_int


def _int_to_int(dt_: str, st_: str, sat: bool):
    """The reader gives the source type; extend by its signedness or truncate."""
    dd = NP[dt_]
    if sat:
        info = np.iinfo(dd)

        def int_to_int_sat(x):
            x = np.asarray(x)
            if x.dtype == np.uint64:  # may not fit int64
                return np.minimum(x, np.uint64(info.max)).astype(dd)
            return np.clip(x.astype(np.int64), info.min, min(info.max, 2**63 - 1)).astype(dd)
        return int_to_int_sat

    def int_to_int(x):
        x = np.asarray(x)
        if dd.itemsize > x.dtype.itemsize:
            return x.astype(SINT[dd.itemsize] if st_[0] == "s" else UINT[dd.itemsize]).view(dd)
        if dd.itemsize < x.dtype.itemsize:
            return x.view(UINT[x.dtype.itemsize]).astype(UINT[dd.itemsize]).view(dd)
        return x.view(dd).copy()
    return int_to_int


def op_cvta(D, ins, parts, ops):
    t = need_type(parts, ins)
    nops(ops, 2, ins)
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
