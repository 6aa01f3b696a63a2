"""Warp-level instructions (shfl, vote, activemask, redux) and those without effect on lane state
(membar, fence, prefetch, nanosleep, pmevent) or that stop it (trap).
"""

from __future__ import annotations

import numpy as np

from fsir.sim.decoder.numeric import NP, DecodeError, Fault
from fsir.sim.decoder.operands import need_type, nops
from fsir.sim.parser import Pair, Reg


def op_shfl(D, ins, parts, ops):
    mode = next((p for p in parts if p in ("up", "down", "bfly", "idx")), None)
    if mode is None:
        raise DecodeError(f"'{ins.opcode}' needs a mode (up, down, bfly, idx)")
    if "sync" not in parts:
        raise DecodeError("shfl without .sync is not supported on sm_70+; use shfl.sync")
    nops(ops, 5, ins)
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
    t = need_type(parts, ins)
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
