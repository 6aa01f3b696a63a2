"""Memory instructions: ld/ldu, st, atom and red over the global, shared, local and param spaces."""

from __future__ import annotations

import numpy as np

from fsir.sim.decoder.numeric import NP, DecodeError
from fsir.sim.decoder.operands import need_type, nops
from fsir.sim.memory import PARAM_WINDOW
from fsir.sim.parser import Mem, Reg, Vec, type_size


class Addr:
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
    t = need_type(parts, ins)
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
    nops(ops, 2, ins)
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
        addr = Addr(D, m, "param")

        def fn(ch, idx):
            a = addr(ch, idx) - PARAM_WINDOW
            vals = ch.load_param(a, dt, nv, ins.line)
            for i, w in enumerate(ws):
                w(ch, idx, vals if nv == 1 else np.ascontiguousarray(vals[:, i]))
        return fn
    addr = Addr(D, m, space)
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
    addr = Addr(D, m, space)
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
    t = need_type(parts, ins)
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
    addr = Addr(D, m, space)
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
