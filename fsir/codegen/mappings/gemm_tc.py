"""The `gemm` mapping's tensor-core family: which math a dot gets, its candidate
configurations and their summary (the kernel is `fsir/lowering/mma.py`).

f16 and bf16 dots run on the tensor cores (`mma.sync` m16n8k16, f32 accumulation);
f32 dots keep exact f32 FMAs unless the precision option (`stitch-codegen{precision=tf32}`,
`fsir.compile(precision="tf32")`, `fs-run --precision tf32`) lets them round their
operands to tf32 (m16n8k8), as JAX's and PyTorch's matmul precision settings do. Dots of a
vector operand and other element types keep the FMA kernel.
"""

from __future__ import annotations

from collections import Counter

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type
from xdsl.ir import Operation, SSAValue

from fsir.codegen.latency import TF32_ROUNDING_MIX, UNKNOWN_TRIP_COUNT
from fsir.codegen.mappings.prologue import NO_PROLOGUE, PrologueLoads, prologue_loads
from fsir.codegen.summary import (
    Summary,
    distinct_bytes,
    element_bytes_of,
    element_counts,
    loaded_inputs,
    operand_staging,
    staged_from_inputs,
)
from fsir.dialects import graph
from fsir.dialects.graph import DYN
from fsir.dialects.schedule import WARP, GemmMath, GemmParamsAttr, KernelOp
from fsir.gpuspec import GpuSpec
from fsir.lowering.emit import elem_type
from fsir.lowering.mma import MAX_STAGES, STAGES, async_operand, chunk_elements

PRECISIONS = ("fp32", "tf32")
"""The `precision` option: what an f32 GEMM may compute in (fp32: exact FMAs)."""

# (bm, bn, bk, wm, wn): four warps per block, each a 16x16 to 64x64 warp tile.
TC_CANDIDATES = (
    (32, 32, 32, 16, 16),
    (64, 64, 32, 32, 32),
    (128, 64, 32, 64, 32),
    (128, 128, 32, 64, 64),
)
TC_DYNAMIC_DEFAULT = (64, 64, 32, 32, 32)
# tf32 also tries a tile twice as tall as wide: its B tile is staged by a 4-byte copy per
# element (transposed, `fsir/lowering/mma.py`), A's by 16-byte chunks, so a tall tile
# costs fewer staging instructions per multiply-add. Its large tiles have eight warps
# and re-read their operands from the L2 fewer times for few rows (M = 256: 128 x 128
# reads A N/128 times, 256 x 128 reads B once). 16 deep, their two stages fit the 48 KB
# of static shared arrays; 32 deep (half the k-steps, barriers and waits) two stages of
# 128 x 128 or 256 x 64 take 64 and 80 KB of dynamic shared memory. ptxas -v (sm_80, a
# 256 x 3072 x 768 product): 166 registers for 128 x 128 x 16, 236 for 128 x 128 x 32,
# 150 for 256 x 64 x 16, 204 for 256 x 64 x 32, 248 for 256 x 128 x 16, no spills
# (256 x 128 x 32 spills, as does a 64 x 64 warp tile in a 128 x 128 block of four warps).
TF32_CANDIDATES = ((64, 32, 32, 32, 16),
                   (128, 128, 16, 64, 32), (256, 64, 16, 64, 32), (256, 128, 16, 64, 64),
                   (128, 128, 32, 64, 32), (256, 64, 32, 64, 32))


# A tf32 k-step's integer work beyond its copies' and fragments': ptxas's sm_80 k-loops
# of seven candidate tiles (a 256 x 3072 x 768 product, read back with cuobjdump) have
# 36 to 78 machine instructions per step more than the summary's other counts (median
# 45): stage offsets and address updates. f16 k-loops, which stage no 4-byte copies,
# have 4 to 26 fewer and keep 4.
TF32_STEP_INT = 45


def tc_candidates(math: GemmMath) -> tuple[tuple[int, int, int, int, int], ...]:
    """The (bm, bn, bk, wm, wn) configurations the evaluator compares for `math`."""
    return TC_CANDIDATES + (TF32_CANDIDATES if math == GemmMath.TF32 else ())


def gemm_math(dot: graph.DotOp, precision: str) -> GemmMath:
    """The math of `dot`'s kernel under the precision option."""
    problem = dot.problem(graph.static_dims, graph.STATIC)
    if problem.lhs_vector or problem.rhs_vector:
        return GemmMath.FMA
    types = {elem_type(dot.lhs), elem_type(dot.rhs)}
    if len(types) != 1:
        return GemmMath.FMA
    (t,) = types
    if isinstance(t, Float16Type):
        return GemmMath.F16
    if isinstance(t, BFloat16Type):
        return GemmMath.BF16
    if isinstance(t, Float32Type) and precision == "tf32":
        return GemmMath.TF32
    return GemmMath.FMA


def tile_bytes(math: GemmMath) -> int:
    return 4 if math == GemmMath.TF32 else 2


def pipeline_stages(bm: int, bn: int, bk: int, math: GemmMath, limit: int) -> int:
    """How many k-steps a tensor-core kernel's shared tiles hold (`fsir/lowering/mma.py`
    computes one while refilling the one before it): the most, up to `MAX_STAGES`,
    whose tiles fit in `limit` bytes, and at least double buffering."""
    per_stage = (bm + bn) * bk * tile_bytes(math)
    return max(STAGES, min(MAX_STAGES, limit // per_stage))


def _stage_operands(step: Counter[str], p: GemmParamsAttr, a: SSAValue, b: SSAValue, inputs: set[SSAValue],
                    pipelined: bool, pro: PrologueLoads) -> int:
    """Adds a k-step's staging of the A and B tiles to `step`: 16-byte chunks by
    cp.async when `pipelined`, else element loads and shared stores (A's with the
    prologue `pro`); returns the step's bytes."""
    bm, bn, bk, threads = p.tile_m, p.tile_n, p.tile_k, p.threads
    epc = chunk_elements(p.math)
    nbytes = 0
    for operand, elems in ((a, bm * bk), (b, bk * bn)):
        if pipelined:
            chunks = -(-elems // epc // threads)
            step["global"] += chunks
            step["int"] += 8 * chunks  # position, swizzle, bounds, src-size
            if operand not in inputs:
                # copied in the branch of the tile's piece (`operand_staging`), where the
                # chunks' offsets are recomputed each step rather than kept from the first
                # (measured: 16 more index instructions per chunk)
                step["int"] += 16 * chunks
                step.update(operand_staging(operand, inputs, bn).per_tile)
            nbytes += chunks * epc * element_bytes_of(operand)
        else:
            per = -(-elems // threads)
            op_pro = pro if operand is a else NO_PROLOGUE
            how = operand_staging(operand, inputs, bn if operand is b else None, op_pro.skipped)
            step.update({cls: c * per for cls, c in how.element.items()})
            step.update(how.per_tile)
            step["int"] += 8 * per
            step["smem"] += per
            step.update(op_pro.step_counts())
            nbytes += per * how.nbytes
            nbytes += op_pro.step_bytes()
    return nbytes


def _fragment_loads(step: Counter[str], p: GemmParamsAttr, pieces: int) -> None:
    """Adds the warp tile's fragment loads of a k-step's 16-deep `pieces` to `step`."""
    wm, wn = p.thread_m, p.thread_n
    if p.math == GemmMath.TF32:
        # A: an ldmatrix per 8-deep half of a 16-row piece; B: a scalar load per
        # register of an 8-column tile; each register rounded
        a_elements, b_elements = (wm // 16) * 8, (wn // 8) * 4
        step["smem"] += pieces * ((wm // 16) * 2 + b_elements)
        step.update({cls: n * pieces * (a_elements + b_elements) for cls, n in TF32_ROUNDING_MIX.items()})
    else:
        step["smem"] += pieces * (wm // 16 + wn // 16)
        step["int"] += pieces * 4 * (wm // 16 + wn // 16)


def mma_summary(k: KernelOp, spec: GpuSpec, sizes: tuple[int, int, int], a: SSAValue, b: SSAValue,
                product: SSAValue, out: SSAValue) -> Summary:
    """A tensor-core GEMM thread (`fsir/lowering/mma.py`) for the product (M, N, K) =
    `sizes`: per k-step its share of the tiles' 16-byte chunks (a cp.async each, or
    element loads and shared stores when staged synchronously), a barrier (two when
    staged synchronously), and per
    16-deep k piece the warp tile's ldmatrix (tf32 registers rounded) and mma
    instructions (tf32's B fragments by four scalar shared loads per 8-column tile);
    then its accumulators through the epilogue."""
    p = k.params
    assert isinstance(p, GemmParamsAttr) and p.tensor_cores
    bm, bn, bk, wm, wn = p.tile_m, p.tile_n, p.tile_k, p.thread_m, p.thread_n
    m, n, kk = sizes
    threads = p.threads
    steps = UNKNOWN_TRIP_COUNT if kk == DYN else -(-kk // bk)
    inputs: set[SSAValue] = set(k.block.args)
    # (a B concatenated from inputs is copied from each tile's piece, `operand_staging`)
    pipelined = (a in inputs and staged_from_inputs(b, inputs.__contains__, bn)
                 and async_operand(p.math, kk if kk != DYN else None)
                 and async_operand(p.math, n if n != DYN else None))
    step: Counter[str] = Counter()
    pro = NO_PROLOGUE if pipelined else prologue_loads(product, inputs).staged(
        threads, bk, m == DYN or m % bm != 0 or kk == DYN or kk % bk != 0)
    nbytes = _stage_operands(step, p, a, b, inputs, pipelined, pro)
    pieces = bk // 16
    mmas = (wm // 16) * (wn // 8) * (2 if p.math == GemmMath.TF32 else 1)
    _fragment_loads(step, p, pieces)
    step["tensor"] += pieces * mmas
    step["barrier"] += 1 if pipelined else 2  # (pipelined: one barrier publishes a stage and frees the last)
    step["int"] += TF32_STEP_INT if p.math == GemmMath.TF32 else 4  # (the loop's own)
    a_type = k.shared_buffers()["a_tile"].buffer_type
    stages = max(STAGES, a_type.element_count() // (bm * bk))
    if pipelined:
        step["global"] += 2  # the step's commit_group and wait_group
    s = Summary()
    s.add(step, steps)
    if pipelined:  # the prologue's stages - 1 commits and the final wait
        s.counts["global"] += stages
    accs = (wm // 16) * (wn // 8) * 4
    s.counts["int"] += 16 + 4 * accs
    s.counts["global"] += accs
    fused_inputs: list[SSAValue] = []
    if out is not product:
        fused = element_counts([out], inputs, seen={product.owner} if isinstance(product.owner, Operation) else None)
        fused_inputs = [v for v in loaded_inputs(out, inputs) if v not in loaded_inputs(product, inputs)]
        s.add(fused, accs)
    precision = "tf32" if p.math == GemmMath.TF32 else "f16"
    mma_fmas = 16 * 8 * (8 if p.math == GemmMath.TF32 else 16)  # a warp's multiply-adds per mma
    s.tensor_fmas[precision] = steps * step["tensor"] * mma_fmas // WARP
    s.ilp_cycles = steps * mma_step_cycles(step, pieces, mma_fmas, precision, pipelined, spec) \
        + spec.cpi["global"] + accs * spec.cpi["alu"]
    if p.math == GemmMath.TF32:
        # fitted to ptxas -v (sm_80) of nine tf32 candidate tiles of a 256 x 3072 x 768
        # product (76 to 224 registers, within 7): each 16-deep piece keeps an 8-deep
        # half's fragments live; the copies' and fragments' offsets are the 57
        s.registers = 57 + accs + pieces * ((wm // 16) * 4 + (wn // 8) * 2)
    else:
        s.registers = 32 + accs + (wm // 16) * 4 + (wn // 8) * 2
    s.shared_bytes = k.shared_bytes()
    s.global_bytes = (steps * nbytes + accs * element_bytes_of(out)
                      + accs * sum(element_bytes_of(v) for v in fused_inputs))
    pro.add_row_loads(s, -(-bm * bk // threads), -(-bm // threads))
    # the prologue requests the first stages - 1 k-steps (those there are) before the
    # warp first waits
    s.bytes_in_flight = nbytes * (min(stages - 1, steps) if pipelined else 1)
    s.distinct_bytes = distinct_bytes([*loaded_inputs(a, inputs), *loaded_inputs(b, inputs), *fused_inputs, out])
    return s


def mma_step_cycles(step: Counter[str], pieces: int, mma_fmas: int, precision: str, pipelined: bool,
                    spec: GpuSpec) -> float:
    """One warp's k-step on the tensor cores, its instructions overlapping as far as
    their dependences let them: the longest of its issue slots (one per instruction),
    its sub-partition's tensor pipe (an mma's multiply-adds at a quarter of the SM's
    rate) and the chain of a fragment load followed by the pieces' dependent mmas on one
    accumulator; then the step's barriers, and the operands' load latency unless
    cp.async stages them a step ahead."""
    cpi = spec.cpi
    rate = spec.tensor_fma_per_cycle.get(precision, 0) / spec.issue_per_cycle
    pipe = step["tensor"] * mma_fmas / rate if rate > 0 else float("inf")
    chain = cpi["smem"] + pieces * cpi["tensor"]
    issue = sum(n for cls, n in step.items() if cls != "barrier")
    staging = 0.0 if pipelined else cpi["global"]
    return max(issue, pipe, chain) + step["barrier"] * cpi["barrier"] + staging
