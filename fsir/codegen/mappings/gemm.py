"""The `gemm` mapping: a `graph.dot` (its light producers inlined into the tile loads) as
a tiled shared-memory GEMM, each thread computing a micro-tile of outputs in registers.
Elementwise consumers of the dot's result (bias, GELU, residual add, scale) are a
stitched epilogue on the accumulators (`epilogue.py`, shared with the `conv` mapping).

A configuration (`GemmConfig`) is a block tile of `bm` x `bn` outputs, a k-step of `bk`
(the operand tiles staged in shared memory per step are `bm` x `bk` and `bk` x `bn`) and
a register micro-tile of `tm` x `tn` outputs per thread, so a block has (bm / tm) x
(bn / tn) threads. Larger tiles read each operand element from global memory fewer times
(every element of A is loaded N / bn times, of B M / bm times) and larger micro-tiles do
more multiply-adds per shared-memory load (tm x tn per tm + tn loads), at the price of
registers, shared memory and blocks to fill the GPU with. `gemm_candidates` lists the
ones worth scoring for a problem; each is lowered and scored with the dependence-aware
L_warp (`estimate(ilp=True)`: a micro-tile's multiply-adds are independent, and charging
each its full latency would always favour one output per thread), unless `gemm=` forces
one. Written `64x64x16/4x4` (the kernel's `cost` says `config = "gemm/64x64x16/4x4"`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping as _Table
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from xdsl.dialects.builtin import (
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    i64,
)
from xdsl.ir import Operation, SSAValue

from fsir.codegen.gemm_config import GemmConfig
from fsir.codegen.latency import UNKNOWN_TRIP_COUNT
from fsir.codegen.mappings.base import (
    FusionContext,
    GroupSpec,
    Mapping,
    accumulator_type,
    leanest,
    numel,
    op_error,
    unique,
)
from fsir.codegen.mappings.epilogue import (
    add_moment_costs,
    epilogue_problem,
    moment_configs,
    row_reduction_counts,
    row_reduction_cycles,
    row_store_chain,
    row_tile_problem,
    statistics_buffer,
)
from fsir.codegen.mappings.gemm_tc import (
    TC_CANDIDATES,
    TC_DYNAMIC_DEFAULT,
    gemm_math,
    mma_summary,
    pipeline_stages,
    tc_candidates,
    tile_bytes,
)
from fsir.codegen.mappings.prologue import NO_PROLOGUE, PrologueLoads, prologue_loads
from fsir.codegen.summary import (
    OperandStaging,
    Summary,
    chain_cycles,
    distinct_bytes,
    element_bytes_of,
    element_counts,
    loaded_inputs,
    operand_staging,
    staged_from_inputs,
)
from fsir.dialects import graph, schedule
from fsir.dialects.graph import DYN, shape_of
from fsir.dialects.schedule import (
    DYNAMIC,
    Composition,
    GemmMath,
    GemmParamsAttr,
    KernelOp,
    SharedOp,
    Storage,
    TiledParamsAttr,
    element_bytes,
)
from fsir.gpuspec import STATIC_SHARED_LIMIT, GpuSpec
from fsir.lowering.emit import elem_type
from fsir.lowering.gemm import (
    GemmLowering,
    a_tile_stride,
    product_problem,
    product_root,
    vector_fragments,
)
from fsir.lowering.kernels import KernelInterface, lower
from fsir.lowering.ln_partials import tile_moments_of
from fsir.lowering.mma import STAGES, MmaGemmLowering, tile_element_type
from fsir.lowering.row_epilogue import row_reductions
from fsir.lowering.scalar import Index
from fsir.lowering.shapes import ShapeCalc
from fsir.lowering.split_k import buffer_sizes

CpiTable = _Table[str, float]  # cycles per instruction, by class (`GpuSpec.cpi`)

# Scored for every static GEMM (those larger than the problem are dropped, see below):
# micro-tiles from 1x1 to 4x4 (transposed shapes such as 32x64 score like their mirror
# image, so only one is listed); k-steps of 16 keep a block's two tiles at 2-12 KB of
# shared memory. Micro-tiles of 8 rows are left out: ptxas -v gives them 25-35 more
# registers than the evaluator estimates (it keeps more of the unrolled k-step's shared
# loads in flight), so their occupancy would be misjudged; they can still be forced.
# Each candidate is lowered to be scored, so the list is kept short.
CANDIDATES = (
    GemmConfig(16, 16, 16, 1, 1),
    GemmConfig(32, 32, 16, 2, 2),
    GemmConfig(64, 32, 16, 4, 2),
    GemmConfig(64, 64, 16, 4, 4),
    GemmConfig(128, 64, 16, 4, 4),
)
# The gemm mapping's (not conv's) micro-tiles of multiples of 4 x 4 read their
# fragments as 4-vectors (`fsir/lowering/gemm.py`, `vector_fragments`): 8 x 8 then
# does 64 multiply-adds per 4 shared loads, where the scalar 4 x 4 does 16 per 8. Their
# register estimates are within a few of ptxas -v's (tests/codegen/test_gemm_cost.py).
VECTOR_CANDIDATES = (
    GemmConfig(32, 32, 16, 4, 4),
    GemmConfig(64, 32, 16, 4, 4),
    GemmConfig(64, 64, 16, 8, 8),
    GemmConfig(128, 64, 16, 8, 8),
)
# A row-normalising (LayerNorm) epilogue needs a block tile spanning the row
# (`row_tile_problem`): tiles as wide as 128 columns, short ones for few rows; a tile
# row's 16 lanes combine the row's partials by shuffles within their warp.
ROW_CANDIDATES = (
    GemmConfig(16, 64, 16, 1, 4),
    GemmConfig(32, 64, 16, 2, 4),
    GemmConfig(64, 64, 16, 4, 4),
    GemmConfig(16, 128, 16, 1, 8),
    GemmConfig(32, 128, 16, 2, 8),
)
# For `?` sizes (the evaluator cannot count waves): a middle-sized tile.
DYNAMIC_DEFAULT = GemmConfig(32, 32, 16, 2, 2)


def covering(n: int, least: int = 16) -> int:
    """The smallest power of two at least `n` (and at least `least`)."""
    return max(least, 1 << max(0, n - 1).bit_length())


def gemm_candidates(m: int, n: int, spec: GpuSpec, vector: bool = False) -> list[GemmConfig]:
    """The candidates whose block tile is not larger than the power of two covering the
    problem (a 128-row tile for 20 rows only idles threads) and whose shared memory a
    block may have on `spec`; with `vector` (the gemm mapping's vectorised fragments)
    also `VECTOR_CANDIDATES`."""
    listed = CANDIDATES + (VECTOR_CANDIDATES if vector else ())
    out = [c for c in dict.fromkeys(listed) if c.bm <= covering(m) and c.bn <= covering(n)
           and shared_bytes(c, 4, vector) <= block_smem(spec)]
    return out


def block_smem(spec: GpuSpec) -> int:
    """The shared memory a GEMM block may have on `spec`: tiles beyond the static
    arrays' limit are dynamic shared memory (`fsir.lowering.kernels.shared_layout`)."""
    return spec.smem_per_block


def tile_stages(config: GemmConfig) -> int:
    """The k-steps a configuration's shared tiles hold: on the tensor cores as many as
    fit the static shared arrays' limit, and at least two (`pipeline_stages`; two
    stages of a large tile are dynamic shared memory) unless the configuration fixes
    its depth (`GemmConfig.stages`), on the FMA pipes 1."""
    if config.math == GemmMath.FMA:
        return 1
    if config.stages:
        return config.stages
    return pipeline_stages(config.bm, config.bn, config.bk, config.math, STATIC_SHARED_LIMIT)


def shared_bytes(config: GemmConfig, acc_bytes: int, vector: bool = False) -> int:
    """The two operand tiles a block stages per k-step (in the accumulator type; on the
    tensor cores in the operands' type, `tile_stages` k-steps of them); with `vector`
    a micro-tile with vectorised fragments has its A tile transposed and padded
    (`a_tile_stride`)."""
    if config.math != GemmMath.FMA:
        return tile_stages(config) * (config.bm + config.bn) * config.bk * tile_bytes(config.math)
    return (a_tile_rows(config, vector) + config.bn) * config.bk * acc_bytes


def a_tile_rows(config: GemmConfig, vector: bool) -> int:
    """The FMA A tile's extent per k: bm, or its padded stride when transposed."""
    return a_tile_stride(config.bm) if vector and vector_fragments(config.tm, config.tn) else config.bm


def root_problem(dots: Sequence[graph.DotOp], reduces: Sequence[Operation]) -> str | None:
    """Why a fusion with `dots` is not one GEMM kernel: a dot must be its only root."""
    if len(dots) > 1 or reduces:
        return "a dot must be the only root of its fusion (no other dot or reduction)"
    return None


def gemm_problem(ops: Sequence[Operation], outputs: Sequence[SSAValue], light_only: bool = True) -> str | None:
    """Why `ops` (with a dot, their `outputs` used outside) are not one GEMM kernel: the
    dot, its producers inlined into the tile loads (light ones only with `light_only`),
    and a stitched epilogue of elementwise consumers ending in the one output
    (`epilogue.py`); None: they are."""
    dots = [op for op in ops if isinstance(op, graph.DotOp)]
    rows = row_reductions(dots[0], ops) if len(dots) == 1 else []  # a LayerNorm epilogue's
    why = root_problem(dots, [op for op in ops if isinstance(op, graph.ReduceOp) and op not in rows])
    return why or epilogue_problem(dots[0], ops, outputs, "dot", light_only, rows=True) or \
        row_tile_problem(dots[0], rows, max(c.bn for c in ROW_CANDIDATES))


# Registers of a GEMM thread besides its accumulators and operand fragments: addresses,
# tile positions, loop state and ptxas's base (calibrated against the gpu-IR
# evaluator's liveness on the candidates of the examples' GEMMs).
GEMM_BASE_REGISTERS = 26


class GemmMapping(Mapping):
    PARAMS = schedule.GemmParamsAttr
    # a micro-tile's multiply-adds are independent: L_warp follows dependences
    ilp = True
    fuses_epilogue = True
    lowering = GemmLowering

    def claims(self, ops: Sequence[Operation]) -> bool:
        return any(isinstance(op, graph.DotOp) for op in ops)

    def accepts(self, ops: Sequence[Operation]) -> str | None:
        # Producers are recomputed in every tile load (N / bn and M / bm times per
        # element): codegen makes any (`build`), the explorer proposes only light ones.
        inside = set(ops)
        outputs = [r for op in ops for r in op.results if any(u.operation not in inside for u in r.uses)]
        return gemm_problem(ops, outputs)

    def build(self, ctx: FusionContext) -> KernelOp:
        dot = next(op for op in ctx.ops if isinstance(op, graph.DotOp))
        outputs = unique(ctx.yields)
        why = gemm_problem(ctx.ops, outputs, light_only=False) if len(ctx.ops) > 1 else None
        if why is not None:
            raise op_error(dot, f"cannot be generated with the ops fused with it: {why}")
        moments = tile_moments_of(dot, ctx.ops)  # a second output: its rows' partial moments
        out = next(v for v in outputs if moments is None or v is not moments.result)
        problem = product_problem(dot, ctx.ops)
        m, n = problem.m, problem.n
        sizes = (m, n, numel(shape_of(dot.result.type)))
        spec = ctx.spec
        forced = ctx.gemm_config
        # a row-normalising epilogue runs on the FMA tiles whose block spans the row
        rows = row_reductions(dot, ctx.ops)
        math = GemmMath.FMA if rows else gemm_math(dot, ctx.precision)
        if forced is not None and forced.math != GemmMath.FMA and forced.math != math:
            forced = None  # a forced tensor-core configuration applies to the dots of its math
        if forced is not None:
            configs = [forced]
            need = shared_bytes(forced, element_bytes(accumulator_type(dot.result.type.element_type)), True)
            if need > block_smem(spec):
                raise op_error(dot, f"cannot run as gemm={forced.text()}: its tiles need {need} bytes of "
                                    f"shared memory, more than a block may have on "
                                    f"{spec.name} ({block_smem(spec)})")
        elif math != GemmMath.FMA:
            configs = [c for c in (GemmConfig(*t, math=math) for t in tc_candidates(math))
                       if c.bm <= covering(m) and c.bn <= covering(n) and shared_bytes(c, 4) <= block_smem(spec)]
            configs = configs or [GemmConfig(*TC_CANDIDATES[0], math=math)]
        else:
            # vector-fragment tiles only where the operands are staged as loads of
            # kernel inputs (`staged_from_inputs`): their summaries do not count other
            # fused producers' recomputation in the transposed staging
            inside = set(ctx.ops)

            def is_input(v: SSAValue) -> bool:
                return v.owner not in inside

            configs = gemm_candidates(m, n, spec)
            configs += [c for c in gemm_candidates(m, n, spec, vector=True) if c not in configs and
                        all(staged_from_inputs(v, is_input, c.bn if v is dot.rhs else None) for v in dot.operands)]
        if rows:
            configs = [c for c in ([forced] if forced else ROW_CANDIDATES) if c.bn >= n and
                       (forced or c.bn == max(64, covering(n))) and shared_bytes(c, 4) <= block_smem(spec)]
            small = [c for c in configs if c.bm <= covering(m)]
            configs = small or configs[:1]
            if not configs:
                tile = forced.text() if forced else "auto"
                raise op_error(dot, f"cannot run as gemm={tile} with the LayerNorm epilogue fused with it: its "
                                    f"block tile must span the {n} columns of a row")
        if moments is not None:
            configs = moment_configs(dot, moments, configs, forced)
        splits = []
        if forced is None and not rows and moments is None and DYN not in (m, n, problem.k) and None not in sizes:
            splits = split_candidates(configs, m, n, problem.k, numel(problem.batch) or 1, spec)
        if DYN in sizes or None in sizes:
            # `?` sizes: the evaluator cannot count waves
            default = configs[0] if rows else DYNAMIC_DEFAULT if math == GemmMath.FMA else \
                GemmConfig(*TC_DYNAMIC_DEFAULT, math=math)
            config = forced or default
            kernel = self.kernel(ctx, dot, out, config)
            assert kernel.cost is not None  # `FusionContext.kernel` gives every kernel its static cost
            kernel.cost = DictionaryAttr({**kernel.cost.data, "config": StringAttr(config.describe())})
            return kernel
        slack = ctx.traffic_slack
        best = self.choose(configs, lambda c: self.kernel(ctx, dot, out, c), spec, slack)
        if not splits:
            return best
        split = self.choose(splits, lambda c: self.kernel(ctx, dot, out, c), spec, slack)
        keep, drop = (split, best) if split_wins(split, best, slack) else (best, split)
        self._discard(drop)
        assert keep.cost is not None
        keep.cost = DictionaryAttr({**keep.cost.data, "candidates": IntegerAttr(len(configs) + len(splits), i64)})
        return keep

    def summarize(self, k: KernelOp, spec: GpuSpec) -> Summary:
        (g,) = k.groups()
        dot = product_root(g)
        assert isinstance(dot, graph.DotOp)
        out = g.yielded()[0]
        problem = product_problem(dot, list(g.block.ops))
        p = k.params
        assert isinstance(p, GemmParamsAttr)
        sizes = (problem.m, problem.n, slice_k(problem.k, p.tile_k, p.split_k))
        if p.tensor_cores:
            s = mma_summary(k, spec, sizes, dot.lhs, dot.rhs, dot.result, out)
        else:
            s = tiled_summary(k, spec, sizes, dot.lhs, dot.rhs, dot.result, out, vector=True)
        add_moment_costs(s, k, g.block.ops, p)
        if p.split_k == 1:
            return s
        inputs: set[SSAValue] = set(k.block.args)
        fused = [v for v in loaded_inputs(out, inputs) if v not in loaded_inputs(dot.result, inputs)]
        return add_split_reduction(s, k, spec, sum(map(element_bytes_of, [out, *fused])))

    def lower(self, k: KernelOp) -> KernelInterface:
        """The tensor-core kernels have their own lowering (`fsir/lowering/mma.py`)."""
        if isinstance(k.params, GemmParamsAttr) and k.params.tensor_cores:
            self.check_lowerable(k)
            return lower(k, MmaGemmLowering)
        return super().lower(k)

    def kernel(self, ctx: FusionContext, dot: graph.DotOp, out: SSAValue, config: GemmConfig) -> KernelOp:
        """The schedule.kernel under one configuration: a block per bm x bn output tile
        (batch dims on grid z unless folded into the rows, `folds_batch`), (bm / tm) x
        (bn / tn) threads; `out` is the dot's result or its fused epilogue's."""
        problem = product_problem(dot, ctx.ops)
        m, n = problem.m, problem.n
        nb = numel(problem.batch)
        grid = tuple(DYNAMIC if s == DYN else max(1, -(-s // t)) for s, t in ((n, config.bn), (m, config.bm))) + (
            DYNAMIC if nb is None else max(1, nb) * config.split,)
        acc = accumulator_type(dot.result.type.element_type)
        stages = 1
        if config.math != GemmMath.FMA:
            acc, stages = tile_element_type(config.math), tile_stages(config)
        space = IntegerAttr(3, i64)
        a_rows = config.bm if config.math != GemmMath.FMA else a_tile_rows(config, True)
        shared = [SharedOp("a_tile", MemRefType(acc, [stages * a_rows * config.bk], memory_space=space)),
                  SharedOp("b_tile", MemRefType(acc, [stages * config.bk * config.bn], memory_space=space))]
        shared += statistics_buffer(dot, ctx.ops, config.bm)
        moments = [v for v in ctx.yields if v is not out and isinstance(v.owner, graph.TileMomentsOp)]
        groups = [GroupSpec([out, *moments], Composition.BLOCK, Storage.GLOBAL)]
        return ctx.kernel(config.params(), grid, (config.threads, 1, 1), groups, shared)

    def grid(self, k: KernelOp, axis: int, shapes: ShapeCalc) -> Index:
        ib = shapes.ib
        (g,) = k.groups()
        dot = product_root(g)
        p = k.params
        assert isinstance(dot, graph.DotOp) and isinstance(p, GemmParamsAttr)
        problem = product_problem(dot, list(g.block.ops), shapes.dims, ib)
        if axis == 0:
            return ib.max(ib.ceildiv(problem.n, p.tile_n), 1)
        if axis == 1:
            return ib.max(ib.ceildiv(problem.m, p.tile_m), 1)
        return ib.mul(ib.max(ib.prod(problem.batch), 1), p.split_k)

    def check_kernel(self, k: KernelOp) -> None:
        groups = k.groups()
        dots = [op for g in groups for op in g.block.ops if isinstance(op, graph.DotOp)]
        if len(groups) != 1 or len(dots) != 1:
            raise self.cannot_lower(k, "a gemm kernel has one group computing a graph.dot")
        p = k.params
        assert isinstance(p, GemmParamsAttr)
        bm, bn, bk = p.tile_m, p.tile_n, p.tile_k
        why = GemmConfig(bm, bn, bk, p.thread_m, p.thread_n, p.math).problem()
        if why is not None:
            raise self.cannot_lower(k, why)
        if p.split_k > 1:
            grid, _ = k.launch()
            if DYNAMIC in grid:
                raise self.cannot_lower(k, "split_k needs a static grid (its semaphores are one per tile)")
            if grid[2] % p.split_k:
                raise self.cannot_lower(k, f"grid z ({grid[2]}) must be the batch times split_k ({p.split_k})")
        stages = 1
        if p.tensor_cores:
            dot = dots[0]
            assert isinstance(dot, graph.DotOp)
            problem = dot.problem(graph.static_dims, graph.STATIC)
            if problem.lhs_vector or problem.rhs_vector:
                raise self.cannot_lower(k, "a tensor-core gemm multiplies matrices (a vector operand needs math = fma)")
            operand_types = {elem_type(dot.lhs), elem_type(dot.rhs)}
            want = {GemmMath.F16: "f16", GemmMath.BF16: "bf16", GemmMath.TF32: "f32"}[p.math]
            if {str(t) for t in operand_types} != {want}:
                raise self.cannot_lower(k, f"math = {p.math.value} needs {want} operands, got "
                                           f"{', '.join(sorted(str(t) for t in operand_types))}")
            stages = STAGES
            for name in ("a_tile", "b_tile"):
                buf = k.shared_buffers().get(name)
                if buf is not None and buf.buffer_type.element_type != tile_element_type(p.math):
                    raise self.cannot_lower(k, f"@{name} must hold {tile_element_type(p.math)} for math = "
                                               f"{p.math.value}")
        for name, size in (("a_tile", stages * bm * bk), ("b_tile", stages * bk * bn)):
            buf = k.shared_buffers().get(name)
            if buf is None:
                raise self.cannot_lower(k, f"a gemm kernel needs the shared buffer @{name}")
            if buf.buffer_type.element_count() < size:
                raise self.cannot_lower(k, f"@{name} has {buf.buffer_type.element_count()} elements; "
                                           f"the tiles need {size}")


SPLITS = (2, 3, 4, 6, 8)
# A split configuration must be this much faster than the best unsplit one: its slices'
# waits depend on how the blocks progress, which the model only bounds, and it needs a
# workspace.
SPLIT_MARGIN = 0.05


def split_wins(split: KernelOp, best: KernelOp, slack: float = 0.0) -> bool:
    """Whether the split-K kernel is taken over the best unsplit one: it is faster by
    `SPLIT_MARGIN`, or (`traffic_slack`, `Mapping.choose`) its time counted so is
    within the slack of the faster and it requests fewer global bytes."""
    t_split, t_best = estimate_us(split) / (1 - SPLIT_MARGIN), estimate_us(best)
    if slack > 0:
        return leanest([(t_best, requested_bytes(best), t_best, False),
                        (t_split, requested_bytes(split), t_split, True)], slack)
    return t_split < t_best


def requested_bytes(k: KernelOp) -> int:
    """The global bytes a chosen kernel's threads request (its recorded cost)."""
    assert k.cost is not None
    attr = k.cost.data["requested_bytes"]
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def estimate_us(k: KernelOp) -> float:
    """The evaluator's estimate recorded in a chosen kernel's cost (-1: none fits)."""
    assert k.cost is not None
    est = k.cost.data["estimate_us"]
    assert isinstance(est, FloatAttr)
    return est.value.data if est.value.data >= 0 else float("inf")
# a slice keeps at least this many k-steps: fewer leave the reduction and the waits
# for the previous slice as much work as the slice's product
MIN_SLICE_STEPS = 4


def split_candidates(configs: Sequence[GemmConfig], m: int, n: int, k: int, batch: int,
                     spec: GpuSpec) -> list[GemmConfig]:
    """Split-K variants (`fsir/lowering/split_k.py`) of the configurations whose grid
    leaves SMs idle (fewer tiles than SMs) and whose k-steps make slices of at least
    `MIN_SLICE_STEPS`; the evaluator weighs their fuller waves against their
    workspace traffic and serialised reductions (`add_split_reduction`)."""
    out = []
    for c in configs:
        tiles = -(-m // c.bm) * -(-n // c.bn) * batch
        steps = -(-k // c.bk)
        if tiles >= spec.sms:
            continue
        out += [replace(c, split=s) for s in SPLITS if steps >= s * MIN_SLICE_STEPS]
    return out


def slice_k(k: int, bk: int, split: int) -> int:
    """The k extent of a split kernel's (longest) slice: ceil(steps / split) k-steps
    (`SplitK.k_range`); K itself unsplit or unknown."""
    if split == 1 or k == DYN:
        return k
    steps = -(-k // bk)
    return -(-steps // split) * bk


def add_split_reduction(s: Summary, k: KernelOp, spec: GpuSpec, epilogue_bytes: int) -> Summary:
    """A split kernel's thread (`s`: the thread of one slice's product, storing its
    outputs through the epilogue, which reads and writes `epilogue_bytes` per output)
    plus the reduction of the slices: only the last slice runs the epilogue; per
    output element, slices after the first load the running sum (from the output, or
    the f32 workspace: `fsir/lowering/split_k.py`) and all but the last store it back,
    i.e. 2 (S - 1) / S accesses of 4 bytes on average; the ticket, the wait and the
    post are a few instructions and a global round trip each. Slices reduce one after
    the other, and a tile's slices run in the same wave and finish their products
    together, so the wave lasts until the last slice has waited for the S - 1
    reductions before its own (`split_wait_cycles`). The workspace, if any (bm x bn
    floats per tile, written and re-read), and the semaphores count once in the
    distinct bytes."""
    p = k.params
    assert isinstance(p, GemmParamsAttr)
    split = p.split_k
    outs = p.tile_m * p.tile_n // p.threads
    share = 2 * (split - 1) / split
    s.counts["global"] += round(outs * share) + 3  # running sums, ticket, wait, post
    s.counts["int"] += 4 * outs + 16  # running sums' offsets, slice tests, tile ids
    s.counts["barrier"] += 3
    s.registers += 20  # ticket, tile ids, slice tests, the partial sums loaded (the gpu IR's liveness)
    s.global_bytes += round(outs * share * 4 - outs * epilogue_bytes * (split - 1) / split)
    s.ilp_cycles = (s.ilp_cycles or 0.0) + split_reduction_cycles(k, spec) + split_wait_cycles(k, spec)
    if s.distinct_bytes is not None:
        s.distinct_bytes += 4 * sum(buffer_sizes(k))
    return s


def split_reduction_cycles(k: KernelOp, spec: GpuSpec) -> float:
    """One slice's reduction (`add_split_reduction`): a load and a store of its
    elements at global latency (they issue together) and the additions."""
    p = k.params
    assert isinstance(p, GemmParamsAttr)
    return 2 * spec.cpi["global"] + p.tile_m * p.tile_n // p.threads * spec.cpi["alu"]


def split_wait_cycles(k: KernelOp, spec: GpuSpec) -> float:
    """How long the last slice of a tile waits (`add_split_reduction`): the ticket,
    wait and post round trips, and the S - 1 reductions before its own. Blocks
    waiting on each other are beyond what one thread's instructions show (the gpu
    IR's evaluator counts the reduction, not these waits)."""
    p = k.params
    assert isinstance(p, GemmParamsAttr)
    cpi = spec.cpi
    return 3 * cpi["global"] + 3 * cpi["barrier"] + (p.split_k - 1) * split_reduction_cycles(k, spec)


class _TileStage(NamedTuple):
    """One k-step's staging of an operand tile: its instructions, the cycles of its
    guarded elements, the dependence chain of an unguarded one, its bytes, and how the
    operand is staged."""

    counts: Counter[str]
    branch_cycles: float
    chain: float
    nbytes: int
    how: OperandStaging


def _stage_tile(operand: SSAValue, rows: int, cols: int, crossing: bool, threads: int, inputs: set[SSAValue],
                cpi: CpiTable, index: int = 0, holes: bool = False, pro: PrologueLoads = NO_PROLOGUE,
                tile_cols: int | None = None) -> _TileStage:
    """A rows x cols tile staged by `threads` threads, guarded where it `crossing`s the
    operand's edge (or has `holes`); a prologue's statistics are loaded before the
    k-loop, its column vectors once per k-step (`pro`); `tile_cols`: the tile's width
    along a concat it may be staged from per tile (`operand_staging`)."""
    per = -(-rows * cols // threads)
    partial = per * threads > rows * cols
    pro = pro.staged(threads, cols, holes or crossing)
    how = operand_staging(operand, inputs, tile_cols, pro.skipped)
    guarded = holes or how.branches or crossing
    loads = how.element
    nbytes = how.nbytes
    elem: Counter[str] = Counter(loads)
    elem["int"] += 2 + index  # tile position and shared address
    elem["smem"] += 1
    if guarded:
        elem["int"] += 3  # compares, and, the branch
    out: Counter[str] = Counter()
    for cls, c in elem.items():
        out[cls] = c * per
    if partial:
        out["int"] += 2
    out += pro.step_counts() + how.per_tile
    chain_one = pro.chain(loads, cpi) + 2 * cpi["alu"] + cpi["smem"]
    if guarded:  # every element its own branch: no overlap between them
        return _TileStage(out, per * (chain_one + cpi["alu"]), 0.0, per * nbytes + pro.step_bytes(), how)
    return _TileStage(out, 0.0, chain_one, per * nbytes + pro.step_bytes(), how)


def _staging_run(a: _TileStage, b: _TileStage, cpi: CpiTable) -> float:
    """Cycles of a k-step's staging outside the guarded branches: the unguarded elements
    of both tiles form one straight run before the barrier; a tile staged from a
    concat's piece runs alone, inside the branches choosing it."""
    together = [(c, chain) for c, chain, alone in ((a.counts, a.chain, False), (b.counts, b.chain, b.how.own_run))
                if chain and not alone]
    run = max([chain for _, chain in together] + [sum(sum(c.values()) for c, _ in together)]) if together else 0.0
    if b.how.own_run:
        levels = b.how.per_tile["int"] // 2
        run += levels * cpi["alu"] + (max(b.chain, sum(b.counts.values())) if b.chain else 0.0)
    return run


def _tiled_epilogue(s: Summary, k: KernelOp, product: SSAValue, out: SSAValue, inputs: set[SSAValue],
                    p: TiledParamsAttr, guarded_out: bool, cpi: CpiTable) -> tuple[float, list[SSAValue]]:
    """Adds the tm x tn output stores of a thread to `s`, each through the fused
    epilogue computing `out` from the `product` (and a row reduction's partial sums);
    returns their cycles and the inputs only the epilogue loads."""
    tm, tn, bn = p.thread_m, p.thread_n, p.tile_n
    outs = tm * tn
    s.counts["global"] += outs
    store = cpi["global"] + 3 * cpi["alu"]
    fused: Counter[str] = Counter()
    fused_inputs: list[SSAValue] = []
    reductions = row_reductions(product.owner, k.block.walk()) if isinstance(product.owner, graph.GraphOp) else []
    if out is not product:
        fused = element_counts([out], inputs, seen={product.owner} if isinstance(product.owner, Operation) else None)
        fused_inputs = [v for v in loaded_inputs(out, inputs) if v not in loaded_inputs(product, inputs)]
        s.add(fused, outs)
        store += row_store_chain(fused, cpi) if reductions else chain_cycles(fused, cpi)
    epilogue = outs * (store + cpi["alu"]) if guarded_out else max(store, outs * (4 + sum(fused.values())))
    s.add(row_reduction_counts(reductions, tm, bn // tn))
    epilogue += row_reduction_cycles(reductions, tm, tn, bn // tn, cpi)
    return epilogue, fused_inputs


def tiled_summary(k: KernelOp, spec: GpuSpec, sizes: tuple[int, int, int], a: SSAValue, b: SSAValue,
                  product: SSAValue, out: SSAValue, a_index: int = 0, a_guarded: bool = False,
                  vector: bool = False) -> Summary:
    """A register-blocked GEMM kernel's thread (`fsir/lowering/gemm.py`) for the
    product (M, N, K) = `sizes` of operands `a` and `b` into `out`: per k-step it stages
    its share of the bm x bk and bk x bn operand tiles (one global load, inlined
    producers and a shared store per element, guarded where a tile can cross the
    operand's edge; `a_index` more instructions per element of A to find it and
    `a_guarded` when A has holes, as a convolution's padding), waits at a barrier, then
    for each of the bk columns loads tm + tn fragments from shared memory and issues
    tm x tn multiply-adds; finally it stores its tm x tn outputs, each through the
    fused epilogue computing the kernel's output `out` from the `product` (the
    elementwise ops between them, their other operands loaded per output). With
    `vector` (the gemm mapping), micro-tiles of multiples of 4 x 4 load their
    fragments as (tm + tn) / 4 vectors per k (`vector_fragments`)."""
    p = k.params
    assert isinstance(p, TiledParamsAttr)
    bm, bn, bk, tm, tn = p.tile_m, p.tile_n, p.tile_k, p.thread_m, p.thread_n
    threads = p.threads
    m, n, kk = sizes
    steps = UNKNOWN_TRIP_COUNT if kk == DYN else -(-kk // bk)
    crosses = {name: size == DYN or size % tile != 0
               for name, size, tile in (("m", m, bm), ("n", n, bn), ("k", kk, bk))}
    inputs: set[SSAValue] = set(k.block.args)
    cpi = spec.cpi
    pro = prologue_loads(product, inputs)
    ta = _stage_tile(a, bm, bk, crosses["m"] or crosses["k"], threads, inputs, cpi, a_index, a_guarded, pro)
    tb = _stage_tile(b, bk, bn, crosses["k"] or crosses["n"], threads, inputs, cpi, tile_cols=bn)
    step: Counter[str] = ta.counts + tb.counts
    run = _staging_run(ta, tb, cpi)
    step["barrier"] += 2
    fragments = (tm + tn) // 4 if vector and vector_fragments(tm, tn) else tm + tn
    step["smem"] += bk * fragments
    step["alu"] += bk * tm * tn
    step["int"] += 2
    compute_issue = bk * (fragments + tm * tn)
    compute_cycles = max(cpi["smem"] + bk * cpi["alu"], compute_issue)
    step_cycles = ta.branch_cycles + tb.branch_cycles + run + compute_cycles + 2 * cpi["barrier"] + 2 * cpi["alu"]
    s = Summary()
    s.add(step, steps)
    outs = tm * tn
    guarded_out = crosses["m"] or crosses["n"]
    s.counts["int"] += 12 + 2 * (tm + tn) + bk * fragments + outs * (3 + (3 if guarded_out else 0))
    epilogue, fused_inputs = _tiled_epilogue(s, k, product, out, inputs, p, guarded_out, cpi)
    s.ilp_cycles = 12 * cpi["alu"] + steps * step_cycles + epilogue
    # an inlined producer reading further inputs keeps their addresses and values live
    # (a prologue's row statistics are values held across the loop instead: `add_row_loads`)
    extra = len(loaded_inputs(a, inputs)) + len(loaded_inputs(b, inputs)) - 2 + len(fused_inputs) - len(pro.rows)
    s.registers = GEMM_BASE_REGISTERS + outs + 2 * (tm + tn) + 4 * max(0, extra)
    s.shared_bytes = k.shared_bytes()
    s.global_bytes = (steps * (ta.nbytes + tb.nbytes) + outs * element_bytes_of(out)
                      + outs * sum(element_bytes_of(v) for v in fused_inputs))
    pro.add_row_loads(s, -(-bm * bk // threads), -(-bm // threads))
    # an unguarded tile's loads are one straight run before the barrier; a guarded
    # element is a branch of its own, as is a tile staged from a concat's piece, and
    # either splits the step's loads into runs
    runs = [t.nbytes if t.chain else t.nbytes / max(1, -(-rows * cols // threads))
            for t, rows, cols in ((ta, bm, bk), (tb, bk, bn))]
    split = tb.how.own_run or tb.how.branches
    s.bytes_in_flight = max(runs) if split else sum(runs)
    s.distinct_bytes = distinct_bytes([*loaded_inputs(a, inputs), *loaded_inputs(b, inputs), *fused_inputs, out])
    return s
