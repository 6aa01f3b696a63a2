"""Warp-level matrix instructions: `mma.sync`, `ldmatrix` and the tf32 conversions they need.

Both are warp-collective (`.sync.aligned`): every one of the 32 lanes of a warp executes the same
instruction, and each lane contributes registers (or row addresses) that end up in other lanes.
The simulator executes them per warp, after checking that each executing warp is complete
(a lane of the warp that is missing — diverged, exited, or absent because the block size is not a
multiple of 32 — is an error naming the warp and the lanes).

Fragment layouts are the PTX ISA's ("Matrix Fragments for mma.m16n8k4 / m16n8k8 / m16n8k16"):
with g = %laneid >> 2 (groupID) and t = %laneid & 3 (threadID_in_group), lane (g, t) holds

  C/D (16x8, f32: 4 regs; f16: 2 regs of f16x2)   d[e] = D[g + 8*(e>>1), 2t + (e&1)],  e = 0..3
  A m16n8k16 f16/bf16 (4 regs, 8 halves)          a[e] = A[g + 8*((e>>1)&1), 2t + (e&1) + 8*(e>>2)]
  B m16n8k16 f16/bf16 (2 regs, 4 halves)          b[e] = B[2t + (e&1) + 8*(e>>1), g]
  A m16n8k8  f16/bf16 (2 regs, 4 halves)          a[e] = A[g + 8*(e>>1), 2t + (e&1)]
  B m16n8k8  f16/bf16 (1 reg, 2 halves)           b[e] = B[2t + e, g]
  A m16n8k8  tf32 (4 regs)                        a[e] = A[g + 8*(e&1), t + 4*(e>>1)]
  B m16n8k8  tf32 (2 regs)                        b[e] = B[t + 4e, g]
  A m16n8k4  tf32 (2 regs)                        a[e] = A[g + 8e, t]
  B m16n8k4  tf32 (1 reg)                         b[0] = B[t, g]

A .b32 register holding two 16-bit elements keeps element e (even) in its low half and e+1 in its
high half.

Arithmetic model of `mma` (what the simulator computes, and how hardware may differ):
  * Inputs are taken exactly: f16/bf16 halves as they are; a .tf32 operand register is read as an
    f32 bit pattern with its low 13 mantissa bits truncated (the ISA leaves them unspecified;
    programs round with `cvt.rna.tf32.f32` first).
  * Products are exact (at most 22 significant bits, exact in float64) and
    d = round(c + sum_k a_ik * b_kj) is the float64 sum rounded once to nearest-even f32 (f16 for an
    f16 accumulator) — a single rounding of the (nearly exact) dot product.
  * Hardware tensor cores also form the products exactly but add them after aligning to the largest
    exponent and truncating, so a GPU's result can differ by a few units in the last place per mma;
    docs/simulator.md gives the tolerance to use when comparing with anything but the simulator.

`ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16`: lanes 8j..8j+7 supply the 16-byte row
addresses of matrix j (the other lanes' addresses are ignored); lane l receives in its j-th register
the two b16 elements M_j[l>>2][2(l&3) .. 2(l&3)+1] — with `.trans`, M_j[2(l&3) .. 2(l&3)+1][l>>2].
"""

from __future__ import annotations

import numpy as np

from fsir.sim.decoder.loadstore import Addr
from fsir.sim.decoder.numeric import TYPES, DecodeError, Fault
from fsir.sim.decoder.operands import types_in
from fsir.sim.parser import Mem, Reg, Vec

_U32 = np.dtype(np.uint32)

# ------------------------------------------------------------------------ warp collectives


def check_whole_warps(ch, idx, what: str) -> None:
    """Fault unless the executing lanes (`idx`, None = all) are whole warps. Lanes come sorted by
    their position in the block, so then the lane arrays reshape to (warps, 32) in %laneid order."""
    if idx is None and ch.dense:
        return  # the whole chunk executes: every warp is complete
    lanes = ch.arange if idx is None else idx
    laneid = ch.sreg("%laneid")[lanes]
    warp = ch.lane_warp[lanes]
    n = lanes.size
    if n % 32 == 0:
        rows = laneid.reshape(-1, 32)
        wr = warp.reshape(-1, 32)
        if (rows == np.arange(32, dtype=rows.dtype)).all() and (wr[:, 0] == wr[:, 31]).all():
            return
    # the first warp that is not complete: name it and its missing lanes
    starts = np.flatnonzero(np.r_[True, warp[1:] != warp[:-1]])
    ends = np.r_[starts[1:], n]
    for s, e in zip(starts, ends):
        if e - s != 32:
            have = set(int(x) for x in laneid[s:e])
            missing = [i for i in range(32) if i not in have]
            shown = ", ".join(map(str, missing[:8])) + (", ..." if len(missing) > 8 else "")
            raise Fault(f"{what} is warp-collective, but lanes [{shown}] of the warp of "
                        f"{ch.describe_lane(int(lanes[s]))} do not execute it (diverged, exited, or "
                        f"not part of the block)")
    raise Fault(f"{what} is warp-collective, but its lanes are not whole warps")  # pragma: no cover


def _per_lane(v, n):
    """Register value `v` (array over the executing lanes or uniform 0-d) as an (n,) array."""
    v = np.asarray(v)
    return v if v.ndim else np.broadcast_to(v, (n,))


# ----------------------------------------------------------------------------- fragments


def _frag(fn, count):
    """Index tables (rows, cols) of shape (count, 32): element e of lane l sits at (rows[e,l], cols[e,l])."""
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    rc = [fn(e, g, t) for e in range(count)]
    return np.array([r for r, _ in rc]), np.array([c for _, c in rc])


_C_FRAG = _frag(lambda e, g, t: (g + 8 * (e >> 1), 2 * t + (e & 1)), 4)

# (shape, input type) -> (k, A elements per lane, A table, B elements per lane, B table)
_MMA = {
    ("m16n8k16", "f16"): (16, 8, _frag(lambda e, g, t: (g + 8 * ((e >> 1) & 1), 2 * t + (e & 1) + 8 * (e >> 2)), 8),
                          4, _frag(lambda e, g, t: (2 * t + (e & 1) + 8 * (e >> 1), g), 4)),
    ("m16n8k8", "f16"): (8, 4, _frag(lambda e, g, t: (g + 8 * (e >> 1), 2 * t + (e & 1)), 4),
                         2, _frag(lambda e, g, t: (2 * t + e, g), 2)),
    ("m16n8k8", "tf32"): (8, 4, _frag(lambda e, g, t: (g + 8 * (e & 1), t + 4 * (e >> 1)), 4),
                          2, _frag(lambda e, g, t: (t + 4 * e, g), 2)),
    ("m16n8k4", "tf32"): (4, 2, _frag(lambda e, g, t: (g + 8 * e, t), 2),
                          1, _frag(lambda e, g, t: (t, g), 1)),
}
_MMA[("m16n8k16", "bf16")] = _MMA[("m16n8k16", "f16")]
_MMA[("m16n8k8", "bf16")] = _MMA[("m16n8k8", "f16")]


def _unpack_elements(regs, itype):
    """Registers (nregs, W, 32) uint32 -> elements (nregs * per_reg, W, 32) float64."""
    if itype == "tf32":
        return (regs & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    lo = (regs & np.uint32(0xFFFF)).astype(np.uint16)
    hi = (regs >> np.uint32(16)).astype(np.uint16)
    halves = np.stack((lo, hi), axis=1).reshape(-1, *regs.shape[1:])  # element 2i low, 2i+1 high
    if itype == "f16":
        return halves.view(np.float16).astype(np.float64)
    return (halves.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def _regs(ops, n, what, ins):
    if not isinstance(ops, Vec) or len(ops.items) != n or not all(isinstance(x, Reg) for x in ops.items):
        raise DecodeError(f"'{ins.opcode}' needs {n} registers in braces for {what}")
    return list(ops.items)


def op_mma(D, ins, parts, ops):
    shape = next((p for p in parts if p.startswith("m") and "n" in p and "k" in p), "")
    ts = [p for p in parts if p in TYPES]
    if "sync" not in parts or "aligned" not in parts or len(ts) != 4:
        raise DecodeError(f"unsupported instruction '{ins.opcode}': only mma.sync.aligned with four types "
                          "(d, a, b, c) is supported")
    dtype_, atype, btype, ctype = ts
    spec = _MMA.get((shape, atype))
    if spec is None or btype != atype or dtype_ not in ("f32", "f16") or ctype not in ("f32", "f16") \
            or (atype != "f16" and (dtype_, ctype) != ("f32", "f32")):
        raise DecodeError(f"unsupported instruction '{ins.opcode}': the simulator executes mma.sync m16n8k16 and "
                          "m16n8k8 with f16/bf16 inputs, m16n8k8 and m16n8k4 with tf32 inputs, f32 accumulators "
                          "(f16 accumulators for f16 inputs)")
    if "row" not in parts or "col" not in parts or any(p in parts for p in ("satfinite", "sp")):
        raise DecodeError(f"unsupported instruction '{ins.opcode}': {shape} needs .row.col")
    k, na, (ar, ac), nb, (br, bc) = spec
    per = 1 if atype == "tf32" else 2
    if len(ops) != 4:
        raise DecodeError(f"'{ins.opcode}' expects 4 operands: {{d}}, {{a}}, {{b}}, {{c}}")
    dn = 4 if dtype_ == "f32" else 2
    cn = 4 if ctype == "f32" else 2
    wd = [D.wr(r, "f32" if dtype_ == "f32" else "b32") for r in _regs(ops[0], dn, "d", ins)]
    ra = [D.rd(r, "b32") for r in _regs(ops[1], na // per, "a", ins)]
    rb = [D.rd(r, "b32") for r in _regs(ops[2], nb // per, "b", ins)]
    rc = [D.rd(r, "f32" if ctype == "f32" else "b32") for r in _regs(ops[3], cn, "c", ins)]
    cr, cc = _C_FRAG
    what = f"'{ins.opcode}'"
    flops = 2 * 16 * 8 * k

    def fn(ch, idx):
        check_whole_warps(ch, idx, what)
        n = ch.n if idx is None else idx.size
        W = n // 32
        st = ch.stats
        st.mma_instructions += W
        st.tensor_flops += W * flops
        a = _unpack_elements(np.stack([_per_lane(r(ch, idx), n) for r in ra]).astype(_U32).reshape(-1, W, 32), atype)
        b = _unpack_elements(np.stack([_per_lane(r(ch, idx), n) for r in rb]).astype(_U32).reshape(-1, W, 32), atype)
        if ctype == "f32":
            c = np.stack([_per_lane(r(ch, idx), n) for r in rc]).astype(np.float64).reshape(4, W, 32)
        else:
            c = _unpack_elements(np.stack([_per_lane(r(ch, idx), n) for r in rc]).astype(_U32).reshape(2, W, 32),
                                 "f16")
        A = np.zeros((W, 16, k))
        A[:, ar, ac] = a.transpose(1, 0, 2)
        B = np.zeros((W, k, 8))
        B[:, br, bc] = b.transpose(1, 0, 2)
        C = np.zeros((W, 16, 8))
        C[:, cr, cc] = c.transpose(1, 0, 2)
        d = (np.matmul(A, B) + C)[:, cr, cc].transpose(1, 0, 2)  # (4, W, 32)
        if dtype_ == "f32":
            for i, w in enumerate(wd):
                w(ch, idx, d[i].astype(np.float32).reshape(n))
        else:
            h = d.astype(np.float16).view(np.uint16).astype(np.uint32)
            for i, w in enumerate(wd):
                w(ch, idx, (h[2 * i] | (h[2 * i + 1] << np.uint32(16))).reshape(n))
    return fn


# ------------------------------------------------------------------------------- ldmatrix


def _matrix_form(ins, parts, ops, loads: bool):
    """The common form of ldmatrix (`loads`: `{d...}, [address]`) and stmatrix
    (`[address], {r...}`): (matrix count, space, trans, registers, address operand)."""
    name = "ldmatrix" if loads else "stmatrix"
    parts = [p.split("::")[0] for p in parts]
    num = next((int(p[1:]) for p in parts if p in ("x1", "x2", "x4")), None)
    if "sync" not in parts or "aligned" not in parts or "m8n8" not in parts or "b16" not in parts or num is None:
        raise DecodeError(f"unsupported instruction '{ins.opcode}': the simulator executes "
                          f"{name}.sync.aligned.m8n8.{{x1,x2,x4}}{{.trans}}.shared.b16")
    if len(ops) != 2 or not isinstance(ops[1 if loads else 0], Mem):
        raise DecodeError(f"'{ins.opcode}' expects " + ("{d...}, [address]" if loads else "[address], {r...}"))
    regs, mem = ops if loads else ops[::-1]
    regs = regs.items if isinstance(regs, Vec) else (regs,)
    if len(regs) != num:
        raise DecodeError(f"'{ins.opcode}' needs {num} {'destination' if loads else 'source'} registers")
    return num, "shared" if "shared" in parts else "generic", "trans" in parts, regs, mem


def op_ldmatrix(D, ins, parts, ops):
    num, space, trans, dst, mem = _matrix_form(ins, parts, ops, loads=True)
    ws = [D.wr(r, "b32") for r in dst]
    addr = Addr(D, mem, space)
    D.K.note_access(space, 16)
    line = ins.line
    lane = np.arange(32)
    row, col = (2 * (lane & 3), lane >> 2) if trans else (lane >> 2, 2 * (lane & 3))
    step = (1, 0) if trans else (0, 1)  # where the second element of a lane's pair is
    what = f"'{ins.opcode}'"

    def fn(ch, idx):
        check_whole_warps(ch, idx, what)
        lanes = ch.arange if idx is None else idx
        W = lanes.size // 32
        a = addr(ch, idx).reshape(W, 32)[:, : 8 * num].reshape(-1)
        src = lanes.reshape(W, 32)[:, : 8 * num].reshape(-1)
        rows = ch.mem_load(space, a, src, _U32, 4, line)  # (W * 8 * num, 4): one 16-byte row per lane
        m = rows.view(np.uint16).reshape(W, num, 8, 8)
        lo = m[:, :, row, col].astype(np.uint32)
        hi = m[:, :, row + step[0], col + step[1]].astype(np.uint32)
        v = lo | (hi << np.uint32(16))  # (W, num, 32)
        for j, w in enumerate(ws):
            w(ch, idx, np.ascontiguousarray(v[:, j, :]).reshape(-1))
    return fn


def op_stmatrix(D, ins, parts, ops):
    """stmatrix (sm_90): the inverse of ldmatrix — lane l's j-th register holds the pair of matrix j
    that ldmatrix would give it, and lanes 8j..8j+7 supply the row addresses matrix j is stored to."""
    num, space, trans, src, mem = _matrix_form(ins, parts, ops, loads=False)
    rs = [D.rd(r, "b32") for r in src]
    addr = Addr(D, mem, space)
    D.K.note_access(space, 16)
    line = ins.line
    what = f"'{ins.opcode}'"

    def fn(ch, idx):
        check_whole_warps(ch, idx, what)
        lanes = ch.arange if idx is None else idx
        n = lanes.size
        W = n // 32
        v = np.stack([_per_lane(r(ch, idx), n).astype(_U32).reshape(W, 32) for r in rs], axis=1)  # (W, num, 32)
        halves = v.view(np.uint16).reshape(W, num, 8, 8)  # [lane >> 2][2 (lane & 3) + half]
        m = halves.swapaxes(-1, -2) if trans else halves  # rows of the stored matrices
        a = addr(ch, idx).reshape(W, 32)[:, : 8 * num].reshape(-1)
        who = lanes.reshape(W, 32)[:, : 8 * num].reshape(-1)
        rows = np.ascontiguousarray(m).reshape(-1, 8).view(np.uint32)  # (W * num * 8, 4)
        ch.mem_store(space, a, who, _U32, 4, rows, line)
    return fn


# ------------------------------------------------------------------------------- tf32


def to_tf32(x, mode: str = "rna", satfinite: bool = False):
    """f32 values -> tf32 bit patterns (f32 layout, low 13 bits zero). mode: rna (to nearest, ties
    away from zero), rn (ties to even) or rz; NaN stays a (quiet) NaN; `satfinite` turns results
    beyond the largest finite tf32 (infinities included) into +-max."""
    u = np.asarray(x, np.float32).view(np.uint32)
    keep = np.uint32(0xFFFFE000)
    if mode == "rna":
        r = (u + np.uint32(0x1000)) & keep
    elif mode == "rn":
        r = (u + np.uint32(0xFFF) + ((u >> np.uint32(13)) & np.uint32(1))) & keep
    else:  # rz
        r = u & keep
    mag = u & np.uint32(0x7FFFFFFF)
    nan = mag > np.uint32(0x7F800000)
    r = np.where(nan, (u & keep) | np.uint32(0x00400000), r)
    if satfinite:
        inf = (r & np.uint32(0x7FFFFFFF)) == np.uint32(0x7F800000)
        r = np.where(inf & ~nan, (r & np.uint32(0x80000000)) | np.uint32(0x7F7FE000), r)
    return r.astype(np.uint32)


def op_cvt_tf32(D, ins, parts, ops):
    """`cvt` with a .tf32 destination (convert.op_cvt hands those here)."""
    ts = types_in(parts)
    mode = next((p for p in parts if p in ("rna", "rn", "rz")), None)
    if ts[1] != "f32" or mode is None or any(p in parts for p in ("rm", "rp", "ftz", "sat")):
        raise DecodeError(f"unsupported instruction '{ins.opcode}': tf32 conversions are "
                          "cvt.{rna,rn,rz}{.satfinite}{.relu}.tf32.f32")
    if len(ops) != 2:
        raise DecodeError(f"'{ins.opcode}' expects 2 operands")
    w = D.wr(ops[0], "b32")
    r = D.rd(ops[1], "f32")
    sat = "satfinite" in parts
    relu = "relu" in parts

    def fn(ch, idx):
        x = np.asarray(r(ch, idx))
        if relu:  # NaN stays NaN
            x = np.where(x < 0, np.float32(0), x)
        w(ch, idx, to_tf32(x, mode, sat))
    return fn

