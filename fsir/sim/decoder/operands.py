"""Operand readers and register writers: the closures each decoded instruction reads its inputs
with and writes its result through, resolved once per instruction.
"""

from __future__ import annotations

import numpy as np

from fsir.sim.decoder.numeric import NP, SIGNED, TYPES, UINT, DecodeError, reinterpret, to_bf16
from fsir.sim.parser import Imm, NotReg, Reg


class Operands:
    """Operand readers and writers over one kernel's layout `K` (registers, symbols); table.Decoder
    adds the decoding of whole instructions."""

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
                        return reinterpret(a if idx is None or a.ndim == 0 else a[idx], wd, signed)
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
                v = reinterpret(np.asarray(v), sd, src_signed)
            if idx is None:
                ch.regs[ri] = v  # (n,) or 0-d (uniform); ops always return fresh arrays
            else:
                a = ch.regs[ri]
                if a is None or a.ndim == 0:  # materialise a uniform register before a partial write
                    a = ch.regs[ri] = np.full(ch.n, 0 if a is None else a, sd)
                a[idx] = v
        return w



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


def types_in(parts):
    return [p for p in parts if p in TYPES]


def need_type(parts, ins):
    ts = types_in(parts)
    if not ts:
        raise DecodeError(f"'{ins.opcode}' has no type")
    return ts[-1]


def nops(ops, n, ins):
    if len(ops) != n:
        raise DecodeError(f"'{ins.opcode}' expects {n} operands, got {len(ops)}")
