"""The `attention` mapping: softmax(Q·Kᵀ·scale + mask)·V as one FlashAttention-style
kernel that never writes the score matrix to global memory.

The graph spells attention as two dots around a softmax over the last dim (what the
HLO and ONNX importers produce and `examples/bert_layer.mlir` writes by hand):

    s = graph.dot q, kt                          [*B, Sq, Dk] x [*B, Dk, Sk] -> [*B, Sq, Sk]
    x = per-element ops of s                     scale, additive or causal mask (iota /
                                                 compare / select), converts
    m = graph.reduce max x dims [last]           (optionally max(m, -inf))
    e = graph.exp (x - broadcast m)
    p = e / broadcast (graph.reduce sum e dims [last])
                                                 (optionally select(p != p, 0, p))
    o = graph.dot p, v                           [*B, Sq, Sk] x [*B, Sk, Dv] -> [*B, Sq, Dv]

`match_attention` recognises it from the second dot; `attention_ops` adds the light
producers of Q, K, V and of the mask that only the attention reads (head reshapes and
transposes, bias adds, the mask's broadcast, iota and compares), which the kernel
computes per element by index propagation. The explorer makes that set one fusion
(`fsir.fusion.patterns.attention_patterns`); anything else (a softmax over another dim,
a score or probability read by another op, `?` dims) is not matched and fuses as
before.

A kernel (`fsir/lowering/attention.py`) gives a block `block_q` query rows of one batch
entry (batch dims on grid y). For each tile of `block_k` keys the block stages K and V
tiles in shared memory, computes the tile's scores (rounded to the score type as the
graph's dot result is), applies the per-element ops, and updates online (Milakov and
Gimelshein's online softmax, FlashAttention's tiling): m' = max(m, max_j x_j),
α = exp(m - m'), l' = α·l + Σ_j exp(x_j - m'), acc' = α·acc + Σ_j exp(x_j - m')·V_j; the
result is acc / l. Where the precision allows the tensor cores (f16 and bf16; f32 under
precision=tf32) a warp computes 16 rows with `mma.sync` (FlashAttention-2: the
probabilities stay in registers as the second product's A fragments); exact f32 uses a
warp per 2 or 4 rows on the FMA pipes (lanes split the keys for Q·Kᵀ and the value
columns for P·V). The candidates of each schedule are scored by their summaries
(`warp_summary`, `mma_summary`, which reuses the GEMM's mma step cost); a thread per
row remains a candidate of exact f32.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerAttr,
    IntegerType,
    MemRefType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from fsir.analysis.attention import (
    AttentionMatch,
    attention_output,
    is_light,
    match_attention,
    output_transpose,
)
from fsir.codegen.latency import TF32_ROUNDING_MIX
from fsir.codegen.mappings.base import FusionContext, GroupSpec, Mapping, op_error
from fsir.codegen.mappings.gemm import GemmMapping
from fsir.codegen.mappings.gemm_tc import mma_step_cycles
from fsir.codegen.summary import (
    Summary,
    chain_cycles,
    distinct_bytes,
    element_bytes_of,
    element_counts,
    loaded_inputs,
    op_mix,
)
from fsir.dialects import graph, schedule
from fsir.dialects.graph import shape_of
from fsir.dialects.schedule import (
    AttentionParamsAttr,
    Composition,
    GemmMath,
    KernelOp,
    SharedOp,
    Storage,
    inner_value,
)
from fsir.gpuspec import STATIC_SHARED_LIMIT, GpuSpec
from fsir.lowering.attention import (
    EXP_MIX,
    AttentionLowering,
    key_layout,
    mma_math,
    mma_pitches,
    q_in_registers,
    staging_unroll,
)
from fsir.lowering.emit import elem_type
from fsir.lowering.invariants import invariant_inputs
from fsir.lowering.scalar import Index
from fsir.lowering.shapes import ShapeCalc

# Q and output rows live in registers: head dims above this would spill.
MAX_HEAD_DIM = 128
MAX_GRID_Y = 65535
# (block_q, block_k) scored for every attention; those with more query rows than the
# power of two covering Sq (at least 32) are dropped.
CANDIDATES = ((32, 16), (64, 16), (128, 16), (32, 32), (64, 32))
ATTENTION_BASE_REGISTERS = 24
WARP = AttentionParamsAttr.WARP
# (block_q, warp_rows) of the warp schedule: a warp per warp_rows rows, block_q / warp_rows warps
# (ptxas -v, sm_80, dk = dv = 64: 78 to 124 registers at 2 rows a warp, 102 at (64, 4),
# no spill; (32, 4) and 8 rows a warp spill or need 200 and more)
WARP_CANDIDATES = ((16, 2), (32, 2), (64, 4))
MMA_ROWS = AttentionParamsAttr.MMA_ROWS
# (block_q, block_k) of the tensor-core schedule: a warp per 16 rows; the more warps a
# block has, the more rows share each staged K and V tile (64 rows read them a quarter
# as often as 16). ptxas -v at head dim 64: at most 128 registers, no spill on sm_80 and
# sm_90 (ptxas holds 4-warp blocks to 128 registers on sm_80); 64-key tiles need 250 for
# f16 and spill; the tiles stay within static shared arrays (`STATIC_SHARED_LIMIT`), which
# 128-row blocks exceed.
MMA_CANDIDATES = ((16, 32), (32, 32), (64, 32))
_FLOATS = (Float32Type, Float16Type, BFloat16Type)


def attention_ops(pv: Operation) -> list[Operation] | None:
    """The ops of the attention ending in `pv` that one kernel computes: its `core`
    and the light producers (constants aside) whose results only the attention reads.
    None: `pv` ends no attention the mapping can make."""
    m = match_attention(pv)
    if m is None or _problem(m) is not None:
        return None
    ops = set(m.core)
    frontier = list(m.core)
    while frontier:
        grown = []
        for op in frontier:
            for o in op.operands:
                w = o.owner
                if (isinstance(w, Operation) and w not in ops and is_light(w) and not isinstance(w, graph.ConstantOp)
                        and all(u.operation in ops for r in w.results for u in r.uses)):
                    ops.add(w)
                    grown.append(w)
        frontier = grown
    t = output_transpose(pv)
    return list(ops) + ([t] if t is not None else [])


def _problem(m: AttentionMatch) -> str | None:
    """Why the kernel cannot compute a matched attention (None: it can)."""
    sq, sk, dk, dv = m.sizes
    if max(dk, dv) > MAX_HEAD_DIM:
        return f"head dims {dk} and {dv} (at most {MAX_HEAD_DIM}: a row is kept in registers)"
    if math.prod(m.batch) > MAX_GRID_Y:
        return f"{math.prod(m.batch)} batch entries (at most {MAX_GRID_Y} on grid y)"
    if min(sq, sk, dk, dv) < 1:
        return "an empty dim"
    for v in (m.qk.lhs, m.qk.rhs, m.pv.rhs, m.pv.result, m.scores):
        if not isinstance(elem_type(v), _FLOATS):
            return f"element type {elem_type(v)} (f32, f16 or bf16)"
    return None


def find_attention(ops: Sequence[Operation]) -> AttentionMatch | None:
    """The attention among `ops` whose core they all hold."""
    inside = set(ops)
    for op in ops:
        if isinstance(op, graph.DotOp):
            m = match_attention(op)
            if m is not None and inside.issuperset(m.core):
                return m
    return None


def tile_sizes(bq: int, bk: int, dk: int, dv: int, warp_rows: int = 0, mma: bool = False) -> dict[str, int]:
    """The kernel's shared f32 buffers. A thread per row: the block's Q rows and each
    thread's row of probabilities (padded by one, so a warp's rows fall into different
    banks), the key and value tiles. A warp per rows: the block's Q rows and the
    probabilities of a key tile (read by a whole warp at one address), the key tile
    with padded rows (lane l reads key l: `key_layout`) and the value tile (lanes read
    consecutive columns)."""
    if mma:  # rows padded (`mma_pitches`); the probabilities stay in registers
        qp, kp, vp = mma_pitches(dk, dv)
        return {"q_tile": bq * qp, "k_tile": bk * kp, "v_tile": bk * vp}
    if warp_rows:
        _, pitch, _ = key_layout(dk, dv)
        return {"q_tile": bq * dk, "k_tile": bk * pitch, "v_tile": bk * dv, "p_tile": bq * bk}
    return {"q_tile": bq * (dk + 1), "k_tile": bk * dk, "v_tile": bk * dv, "p_tile": bq * (bk + 1)}


def tile_types(m: AttentionMatch, mma: bool) -> dict[str, Attribute]:
    """The element types of the kernel's shared buffers: f32, but the tf32 mma
    schedule's K and V tiles hold their elements rounded to tf32 as i32 bit patterns,
    the mma's operand registers, loaded without a move (`stage_keys`)."""
    bits = mma and mma_math(elem_type(m.qk.lhs)) == GemmMath.TF32
    return {name: IntegerType(32) if bits and name in ("k_tile", "v_tile") else Float32Type()
            for name in ("q_tile", "k_tile", "v_tile", "p_tile")}


@dataclass(frozen=True)
class AttentionConfig:
    block_q: int
    block_k: int
    warp_rows: int = 0
    mma: bool = False

    def describe(self) -> str:
        rows = f"/{self.warp_rows}rows" if self.warp_rows else ""
        return f"attention/{self.block_q}x{self.block_k}{rows}{'/mma' if self.mma else ''}"


class AttentionMapping(Mapping):
    PARAMS = schedule.AttentionParamsAttr
    lowering = AttentionLowering
    # the unrolled dot products of a key tile are independent: L_warp follows dependences
    ilp = True

    # -- the explorer's capability query ---------------------------------------------

    def claims(self, ops: Sequence[Operation]) -> bool:
        return sum(isinstance(op, graph.DotOp) for op in ops) >= 2

    def accepts(self, ops: Sequence[Operation]) -> str | None:
        m = find_attention(ops)
        if m is None:
            return GemmMapping().accepts(ops)  # two dots that are no attention: the gemm rules say why
        why = _problem(m)
        if why is not None:
            return f"an attention kernel cannot take {why}"
        inside = set(ops)
        core = set(m.core)
        for op in ops:
            escapes = any(u.operation not in inside for r in op.results for u in r.uses)
            if op is m.pv or op is output_transpose(m.pv):
                continue
            if op not in core and not is_light(op):
                return f"an attention kernel computes only light producers of Q, K, V and the mask, not '{op.name}'"
            if escapes:
                return f"an attention kernel writes only its output ('{op.name}' is read by another kernel)"
        return None

    # -- stitch -> schedule ------------------------------------------------------------

    def build(self, ctx: FusionContext) -> KernelOp:
        m = find_attention(ctx.ops)
        if m is None:
            return GemmMapping().build(ctx)  # the gemm mapping's diagnostics for other dot sets
        t = output_transpose(m.pv)
        out = t.result if t is not None and t in ctx.ops else m.pv.result
        if len(ctx.yields) != 1 or ctx.yields[0] != out or _problem(m) is not None:
            return GemmMapping().build(ctx)
        sq, sk, _, _ = m.sizes
        covering_q = max(32, 1 << max(0, sq - 1).bit_length())
        covering_k = max(16, 1 << max(0, sk - 1).bit_length())
        _, _, dk, dv = m.sizes
        configs = [AttentionConfig(q, k) for q, k in CANDIDATES if q <= covering_q and k <= covering_k]
        configs += [AttentionConfig(q, WARP, r) for q, r in WARP_CANDIDATES if q <= max(covering_q, 4 * r)]
        def fits(c: AttentionConfig) -> bool:
            return 4 * sum(tile_sizes(c.block_q, c.block_k, dk, dv, c.warp_rows, c.mma).values()) \
                <= min(ctx.spec.smem_per_block, STATIC_SHARED_LIMIT)

        # where the precision allows the tensor cores (f16, bf16; f32 under tf32) they
        # compute, as the gemm mapping's do
        tensor = [AttentionConfig(q, k, MMA_ROWS, True) for q, k in MMA_CANDIDATES
                  if tensor_math(m, ctx.precision) is not None and q <= covering_q and k <= max(32, covering_k)]
        configs = [c for c in tensor if fits(c)] or [c for c in configs if fits(c)]
        if not configs:
            raise op_error(m.pv, f"cannot run as an attention kernel: the smallest tiles need more shared "
                                 f"memory than a block has on {ctx.spec.name}")
        return self.choose(configs, lambda c: self.kernel(ctx, m, c, out), ctx.spec)

    def kernel(self, ctx: FusionContext, m: AttentionMatch, config: AttentionConfig, out: SSAValue) -> KernelOp:
        sq, _, dk, dv = m.sizes
        grid = (-(-sq // config.block_q), max(1, math.prod(m.batch)), 1)
        space = IntegerAttr(3, i64)
        types = tile_types(m, config.mma)
        shared = [SharedOp(name, MemRefType(types[name], [size], memory_space=space))
                  for name, size in tile_sizes(config.block_q, config.block_k, dk, dv, config.warp_rows,
                                               config.mma).items()]
        groups = [GroupSpec([out], Composition.BLOCK, Storage.GLOBAL)]
        params = AttentionParamsAttr(config.block_q, config.block_k, config.warp_rows, config.mma)
        return ctx.kernel(params, grid, (params.threads, 1, 1), groups, shared)

    def summarize(self, k: KernelOp, spec: GpuSpec) -> Summary:
        """A thread's work (`fsir/lowering/attention.py`): its share of staging the Q
        rows; per key tile its share of staging K and V, the block_k dot products (a
        loop over Dk: a Q load, block_k K loads and FMAs), the score chain per key,
        block_k + 1 exponentials, its probabilities to shared memory and the output row
        (a loop over block_k: a p load, Dv V loads and FMAs); at the end Dv divisions
        and stores."""
        m = self.match(k)
        p = k.params
        assert isinstance(p, AttentionParamsAttr)
        if p.mma:
            return mma_summary(k, m, p, spec)
        if p.warp_rows:
            return warp_summary(k, m, p, spec)
        bq, bk = p.block_q, p.block_k
        _, sk, dk, dv = m.sizes
        tiles = -(-sk // bk)
        inputs: set[SSAValue] = set(k.block.args)
        per_k, per_v = -(-bk * dk // bq), -(-bk * dv // bq)
        chain = element_counts([m.scores], inputs, seen={m.qk})
        tile: Counter[str] = Counter()
        tile.update({cls: n * per_k for cls, n in element_counts([m.qk.rhs], inputs).items()})
        tile.update({cls: n * per_v for cls, n in element_counts([m.pv.rhs], inputs).items()})
        tile["smem"] += per_k + per_v + dk * (1 + bk) + 2 * bk + bk * (1 + dv)
        # the FMAs and the softmax's arithmetic on the FMA pipes, addresses and loop
        # control on the integer pipe
        tile["alu"] += dk * bk + bk * dv + 8 * bk + dv
        tile["int"] += 4 * (per_k + per_v) + 3 * dk + 3 * bk + 8
        tile["sfu"] += bk + 1
        tile["barrier"] += 2
        tile.update({cls: n * bk for cls, n in chain.items()})
        s = Summary()
        s.add(tile, tiles)
        s.add(element_counts([m.qk.lhs], inputs), dk)
        s.counts["smem"] += dk
        s.counts["int"] += 4 * dk + 16
        s.counts["alu"] += 3 * dv
        s.counts["global"] += dv
        s.counts["div"] += dv
        # fitted to ptxas -v (sm_80): it keeps a step's K and V loads and its
        # scores in flight, up to the 255 a thread may have
        s.registers = min(255, ATTENTION_BASE_REGISTERS + 2 * (dk + dv) + 3 * bk)
        s.shared_bytes = k.shared_bytes()
        elem_q, elem_k, elem_v = (element_bytes_of(v) for v in (m.qk.lhs, m.qk.rhs, m.pv.rhs))
        s.global_bytes = (dk * elem_q + dv * element_bytes_of(m.pv.result)
                          + tiles * (per_k * elem_k + per_v * elem_v))
        # per tile: staging, then the dot products (Dk steps of a Q load and block_k
        # independent FMAs), the running max and exponentials (dependent), then block_k
        # steps of Dv independent FMAs
        cpi = spec.cpi
        per_tile = ((per_k + per_v) * (cpi["global"] + cpi["smem"]) / 2 + 2 * cpi["barrier"]
                    + dk * max(cpi["smem"] + cpi["alu"], 2 * bk) + 2 * bk * cpi["alu"] + 2 * cpi["sfu"]
                    + sum(chain.values()) * bk + bk * max(cpi["smem"] + cpi["alu"], 2 * dv))
        s.ilp_cycles = tiles * per_tile + cpi["global"] + dk * 4 + dv * 4
        return s

    @staticmethod
    def match(k: KernelOp) -> AttentionMatch:
        (g,) = k.groups()
        pv, _ = attention_output(inner_value(g.results[0]))
        assert isinstance(pv, Operation)
        m = match_attention(pv)
        assert m is not None  # `check_kernel`
        return m

    # -- schedule -> gpu -----------------------------------------------------------------

    def grid(self, k: KernelOp, axis: int, shapes: ShapeCalc) -> Index:
        m = self.match(k)
        p = k.params
        assert isinstance(p, AttentionParamsAttr)
        if axis == 0:
            return -(-m.sizes[0] // p.block_q)
        return max(1, math.prod(m.batch)) if axis == 1 else 1

    def check_kernel(self, k: KernelOp) -> None:
        groups = k.groups()
        pv = attention_output(inner_value(groups[0].results[0]))[0] \
            if len(groups) == 1 and len(groups[0].results) == 1 else None
        m = match_attention(pv) if isinstance(pv, Operation) else None
        if m is None:
            raise self.cannot_lower(k, "an attention kernel has one group yielding softmax(q·kᵀ ...)·v "
                                       "(two graph.dot around a softmax over the last dim)")
        why = _problem(m)
        if why is not None:
            raise self.cannot_lower(k, f"an attention kernel cannot take {why}")
        p = k.params
        assert isinstance(p, AttentionParamsAttr)
        _, _, dk, dv = m.sizes
        if p.mma and tensor_math(m, "tf32") is None:
            raise self.cannot_lower(k, f"an attention kernel on the tensor cores needs f16, bf16 or f32 operands "
                                       f"of one type, a head dim a multiple of 16 and a value dim a multiple "
                                       f"of 8, got {dk} and {dv}")
        types = tile_types(m, bool(p.mma))
        for name, size in tile_sizes(p.block_q, p.block_k, dk, dv, p.warp_rows, p.mma).items():
            buf = k.shared_buffers().get(name)
            if buf is None:
                raise self.cannot_lower(k, f"an attention kernel needs the shared buffer @{name}")
            if buf.buffer_type.element_count() < size or buf.buffer_type.element_type != types[name]:
                raise self.cannot_lower(k, f"@{name} must hold {size} {types[name]} elements")


def warp_summary(k: KernelOp, m: AttentionMatch, p: AttentionParamsAttr, spec: GpuSpec) -> Summary:
    """A thread's work in the warp schedule (`AttentionLowering.warp_schedule`): its
    share of staging the block's Q rows; per key tile its share of staging K and V, the
    Dk steps of the warp_rows dot products (a Q load per row, the lane's K load, an FMA
    per row), per row the score chain, a max butterfly (5 shuffles), two exponentials,
    the probabilities to shared memory, then P·V (per 4 keys a 4-wide probability
    load per row, per key the lane's V columns and an FMA per row and column); at the
    end a sum butterfly per row, the divisions and stores. Q and K are read 4 wide
    (`key_layout`)."""
    rw, bq, bk = p.warp_rows, p.block_q, p.block_k
    _, sk, dk, dv = m.sizes
    threads = p.threads
    tiles = -(-sk // bk)
    cols = -(-dv // bk)
    steps = (bk - 1).bit_length()  # a butterfly's shuffles
    inputs: set[SSAValue] = set(k.block.args)
    per_q, per_k, per_v = (-(-n // threads) for n in (bq * dk, bk * dk, bk * dv))
    chain = element_counts([m.scores], inputs, seen={m.qk})
    exp = EXP_MIX
    tile: Counter[str] = Counter()
    (k_each, v_each, q_each), once = staged_loads(m, inputs, threads, sk % bk == 0)
    tile.update({cls: n * per_k for cls, n in k_each.items()})
    tile.update({cls: n * per_v for cls, n in v_each.items()})
    vq, _, vv = key_layout(dk, dv)
    d_steps, j_steps = dk // vq, bk // 4
    v_loads = 1 if vv > 1 else cols
    tile["smem"] += per_k + per_v + d_steps * (rw + 1) + rw + j_steps * (rw + 4 * v_loads)
    tile["alu"] += d_steps * rw * vq + rw * (steps + 8 + cols) + j_steps * 4 * rw * cols
    tile["int"] += 4 * (per_k + per_v) + 3 * d_steps + 6 * j_steps  # addresses, loop control
    tile["shuffle"] += rw * steps
    tile["barrier"] += 3
    tile.update({cls: n * rw for cls, n in chain.items()})
    tile.update({cls: n * rw for cls, n in exp.items()})
    alpha_exp = op_mix(next(op for op in m.core if op.name == "graph.exp"))  # the rescaling's
    tile.update({cls: n * rw for cls, n in alpha_exp.items()})
    s = Summary()
    s.add(tile, tiles)
    s.add(q_each, per_q)
    s.add(once, 1)
    s.counts["smem"] += per_q
    s.counts["int"] += 4 * per_q + 16
    s.counts["alu"] += rw * (steps + 4 + 3 * cols)
    s.counts["shuffle"] += rw * steps
    stores = rw * min(dv, bk * cols) * cols // (bk * cols) if dv % bk else rw * cols
    s.counts["global"] += max(1, stores)
    s.counts["div"] += rw * cols
    # fitted to ptxas -v (sm_80, dk = dv = 64, WARP_CANDIDATES): ptxas unrolls the
    # key and head-dim loops and keeps a row's 4-wide Q loads of several steps in flight
    s.registers = 32 + 24 * rw
    s.shared_bytes = k.shared_bytes()
    elem_q, elem_k, elem_v = (element_bytes_of(v) for v in (m.qk.lhs, m.qk.rhs, m.pv.rhs))
    s.global_bytes = round(block_global_bytes(m, p, inputs) / threads)
    # a straight run of loads is what a thread has in flight (`latency.bytes_in_flight`):
    # the unguarded part of staging Q, or of a key tile (each load guarded past Sk)
    def run(total: int, elem: int) -> int:
        return max(1, total // threads) * elem

    tile_run = 0 if sk % bk else run(bk * dk, elem_k) + run(bk * dv, elem_v)
    s.bytes_in_flight = max(run(bq * dk, elem_q), tile_run, elem_k, elem_v)
    # every block re-reads its head's K and V (served by the L2): DRAM sees each once
    s.distinct_bytes = distinct_bytes([*k.operands, *k.results])
    cpi = spec.cpi
    butterfly = steps * (cpi["shuffle"] + cpi["alu"])
    # per tile: staging; the dot products, whose loads do not depend on the previous
    # step (only the FMAs are carried); per row the chain, the butterfly and the
    # exponentials (rows independent); then P·V (loads independent, FMAs carried)
    per_tile = ((per_k + per_v) * (cpi["global"] + cpi["smem"]) / 2 + 3 * cpi["barrier"]
                + cpi["smem"] + d_steps * max(vq * cpi["alu"], rw * (vq + 1) + 1)
                + butterfly + chain_cycles(chain, cpi) + chain_cycles(exp, cpi) + chain_cycles(alpha_exp, cpi)
                + 4 * cpi["alu"]
                + rw * (sum(chain.values()) + steps + 8)
                + cpi["smem"] + j_steps * max(4 * cpi["alu"], rw * (1 + 4 * cols) + 4 * v_loads))
    s.ilp_cycles = tiles * per_tile + per_q * (cpi["global"] + cpi["smem"]) + butterfly + cpi["div"] + cpi["global"]
    return s


def staged_loads(m: AttentionMatch, inputs: set[SSAValue], threads: int,
                 whole_tiles: bool) -> tuple[tuple[Counter[str], Counter[str], Counter[str]], Counter[str]]:
    """The instructions staging one element of K, V and Q costs in the warp and mma
    schedules, and those made once per thread: where the threads are a multiple of a
    tile's width each thread stages one column (`AttentionLowering.tile_position`), so
    the inputs read at an index not depending on the row (`invariant_inputs`: a bias of
    the rows) are loaded once, before the loops (K's and V's when no tile is ragged:
    elements past Sk are guarded one by one)."""
    _, _, dk, dv = m.sizes
    rank = len(shape_of(m.qk.rhs.type))
    once: set[SSAValue] = set()
    each = []
    for v, row, width, hoisted in ((m.qk.rhs, rank - 1, dk, whole_tiles), (m.pv.rhs, rank - 2, dv, whole_tiles),
                                   (m.qk.lhs, rank - 2, dk, True)):
        fixed = invariant_inputs(v, inputs, row) if hoisted and threads % width == 0 else set()
        once |= fixed
        each.append(element_counts([v], inputs, loaded=set(fixed)))
    k_each, v_each, q_each = each
    return (k_each, v_each, q_each), Counter({"global": len(once), "int": len(once)})


def tensor_math(m: AttentionMatch, precision: str) -> GemmMath | None:
    """The tensor-core math of an attention (None: FMAs only): its Q, K, V and
    probabilities of one type, f16 or bf16, or f32 under precision=tf32; head dims
    whole mma tiles (Dk a multiple of the mma's k, Dv of its n = 8)."""
    types = {type(elem_type(v)) for v in (m.qk.lhs, m.qk.rhs, m.pv.lhs, m.pv.rhs)}
    if len(types) != 1:
        return None
    math = mma_math(elem_type(m.qk.lhs))
    if math == GemmMath.TF32 and (precision != "tf32" or types != {Float32Type}):
        return None
    _, _, dk, dv = m.sizes
    return math if dk % (8 if math == GemmMath.TF32 else 16) == 0 and dv % 8 == 0 else None


def _operand_regs(tf32: bool, regs: int) -> Counter[str]:
    """Making `regs` operand registers from f32 values: a tf32 rounding each, or two
    conversions to f16 / bf16, their widenings to 32 bits (conversions too) and the
    moves, shift and or packing them (`operand_registers`)."""
    if tf32:
        return Counter({cls: n * regs for cls, n in TF32_ROUNDING_MIX.items()})
    return Counter({"sfu": 4 * regs, "int": 4 * regs})


def block_global_bytes(m: AttentionMatch, p: AttentionParamsAttr, inputs: set[SSAValue]) -> int:
    """A block's global traffic in the warp and tensor-core schedules: its Q rows, every
    key tile's K and V and the scores' other loaded inputs (a mask) over its rows, its
    output rows (at most the problem's)."""
    bq, bk = p.block_q, p.block_k
    sq, sk, dk, dv = m.sizes
    tiles = -(-sk // bk)
    elem_q, elem_k, elem_v, elem_o = (element_bytes_of(v) for v in (m.qk.lhs, m.qk.rhs, m.pv.rhs, m.pv.result))
    mask = sum(element_bytes_of(v) for v in loaded_inputs(m.scores, inputs)
               if v not in loaded_inputs(m.qk.result, inputs))
    return (bq * dk * elem_q + sk * (dk * elem_k + dv * elem_v) + bq * tiles * bk * mask
            + min(bq, sq) * dv * elem_o)


def _mma_traffic(s: Summary, k: KernelOp, m: AttentionMatch, p: AttentionParamsAttr, inputs: set[SSAValue]) -> None:
    """The tensor-core schedule's global traffic per thread: the block's Q rows, every
    key tile's K and V (and mask), its output rows; and its longest straight run of loads."""
    bq, bk, threads = p.block_q, p.block_k, p.threads
    _, _, dk, dv = m.sizes
    elem_q, elem_k, elem_v = (element_bytes_of(v) for v in (m.qk.lhs, m.qk.rhs, m.pv.rhs))
    s.global_bytes = round(block_global_bytes(m, p, inputs) / threads)
    s.distinct_bytes = distinct_bytes([*k.operands, *k.results])
    # a straight run of loads (`latency.bytes_in_flight`): a step of a staging loop
    s.bytes_in_flight = max(staging_unroll(n // threads) * elem
                            for n, elem in ((bq * dk, elem_q), (bk * dk, elem_k), (bk * dv, elem_v)))


def mma_summary(k: KernelOp, m: AttentionMatch, p: AttentionParamsAttr, spec: GpuSpec) -> Summary:
    """A thread's work in the tensor-core schedule (`AttentionLowering.mma_schedule`):
    its share of staging Q, and Q's A fragments once when they stay in registers
    (`q_in_registers`); per key tile its share of staging K and V (in loops; tf32
    elements rounded as they are stored), per head-dim step of S its Q fragment unless
    held, per 8 keys a K fragment and an mma, the score chain and two exponentials per
    accumulator, the quad's max (2 shuffles a row), the P fragments converted from the
    accumulators, the V fragments and the P·V mmas; at the end the quad's sums, the
    divisions and stores. Index arithmetic and the operands' packing are `int`, f16 and
    bf16 conversions `sfu`, roundings to tf32 `TF32_ROUNDING_MIX`, the softmax's
    arithmetic `alu`."""
    bq, bk = p.block_q, p.block_k
    _, sk, dk, dv = m.sizes
    threads = p.threads
    tiles = -(-sk // bk)
    math = mma_math(elem_type(m.qk.lhs))
    tf32 = math == GemmMath.TF32
    kq = 8 if tf32 else 16
    per_reg = 2 if tf32 else 4  # elements (loads) per B fragment: 2 registers
    q_frag = 4 * (1 if tf32 else 2)  # elements of a Q fragment
    nt, dt, ks, kc = bk // 8, dv // 8, dk // kq, bk // kq
    held = q_in_registers(dk, kq)
    inputs: set[SSAValue] = set(k.block.args)
    per_q, per_k, per_v = (-(-n // threads) for n in (bq * dk, bk * dk, bk * dv))
    chain = element_counts([m.scores], inputs, seen={m.qk})
    exp = EXP_MIX

    def operand_regs(regs: int) -> Counter[str]:
        return _operand_regs(tf32, regs)

    tile: Counter[str] = Counter()
    valid = sk / (tiles * bk)  # of the staged keys: the rest are zeros, not loaded
    (k_each, v_each, q_each), once = staged_loads(m, inputs, threads, sk % bk == 0)
    tile.update({cls: n * per_k * valid for cls, n in k_each.items()})
    tile.update({cls: n * per_v * valid for cls, n in v_each.items()})
    b_regs = (nt * ks + kc * dt) * 2
    frag_loads = b_regs * per_reg // 2 + (0 if held else ks * q_frag)
    tile["smem"] += per_k + per_v + frag_loads
    tile["tensor"] += nt * ks + kc * dt
    tile["int"] += 6 * (per_k + per_v) + 2 * frag_loads + (0 if held else 3 * ks) + 4
    if tf32:  # K and V rounded when staged; their fragments' registers are their bits
        tile.update({cls: n * (per_k + per_v) for cls, n in TF32_ROUNDING_MIX.items()})
    else:
        tile.update(operand_regs(b_regs))
    tile.update(operand_regs(4 * kc + (0 if held else 4 * ks)))
    tile["alu"] += 2 * (2 * nt + 8) + 4 * nt + 4 * dt + 4
    tile["shuffle"] += 4
    tile["barrier"] += 2
    cpi = spec.cpi
    stage = staging_cycles(bk * dk, threads, cpi) + staging_cycles(bk * dv, threads, cpi)
    tile.update({cls: n * 4 * nt for cls, n in chain.items()})
    tile.update({cls: n * (4 * nt + 2) for cls, n in exp.items()})
    s = Summary()
    s.add(tile, tiles)
    s.add(q_each, per_q)
    s.add(once, 1)
    s.counts["smem"] += per_q
    s.counts["int"] += 6 * per_q + 16
    s.counts["alu"] += 4 * dt
    if held:
        s.counts["smem"] += ks * q_frag
        s.counts["int"] += 2 * ks * q_frag
        s.add(operand_regs(4 * ks), 1)
    s.counts["shuffle"] += 4
    s.counts["global"] += 4 * dt
    s.counts["div"] += 4 * dt
    precision = "tf32" if tf32 else "f16"
    mma_fmas = 16 * 8 * kq  # a warp's multiply-adds per mma
    s.tensor_fmas[precision] = tiles * tile["tensor"] * mma_fmas // WARP
    # the O accumulators, the Q fragments, a tile's scores and probabilities, addresses
    s.registers = min(255, 32 + 4 * dt + 4 * ks + 8 * nt)
    s.shared_bytes = k.shared_bytes()
    _mma_traffic(s, k, m, p, inputs)
    softmax = (chain_cycles(chain, cpi) + 2 * chain_cycles(exp, cpi) + 2 * (cpi["shuffle"] + cpi["alu"])
               + 6 * cpi["alu"])
    s.ilp_cycles = (tiles * (mma_step_cycles(tile, ks, mma_fmas, precision, True, spec) + stage + softmax)
                    + staging_cycles(bq * dk, threads, cpi) + cpi["div"] + cpi["global"])
    return s


def staging_cycles(total: int, threads: int, cpi) -> float:
    """A thread's dependence-bound cycles staging its share of `total` elements in the
    mma schedule's loops (`staging_unroll` loads in flight per step, then their stores)."""
    per = -(-total // threads)
    return -(-per // staging_unroll(total // threads or 1)) * (cpi["global"] + cpi["smem"]) + per
