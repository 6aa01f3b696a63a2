"""Stitched epilogues of the tiled-GEMM kernels (`gemm`, `conv`): which consumers of a
product a kernel may compute on its accumulators before the one store.

An epilogue op reads every operand at the product's own index (elementwise ops,
compares, selects, converts on the product's shape): a bias add of a broadcast
vector, GELU in its tanh or erf form, a residual add, a scale, ReLU/clip. Each
accumulator is then the only product element a thread needs, in registers
(`TiledGemmLowering.epilogue`). A reshape of a static product may sit in between (the
HLO and ONNX exports multiply [B·S, H] matrices and reshape the result to [B, S, H]
before the bias): it keeps every element's row-major position, so the accumulator of
product element i is element i of the reshaped value, and the epilogue's later ops
work on that shape. The epilogue's other operands (the broadcast bias,
the residual) and the product's inlined producers are light ops, computed by index
propagation where they are read, so every op of the kernel that is not the product
or in its epilogue must be light.

    ops = {dot, broadcast(bias), add, tanh, ...}
    epilogue_problem(dot, ops, outputs)   # None: one kernel; else why not

With `rows` (the `gemm` mapping), the epilogue may also normalise the product's rows,
as a LayerNorm does: reductions over the last dim (`row_reductions`), ops on the
reduced shape (mean, variance, rsqrt) and their broadcasts back along the row. The
kernel then needs a block tile spanning whole rows (N ≤ its tile's N, checked by the
mapping); each reduction is combined across the threads holding a tile row
(`fsir/lowering/row_epilogue.py`) before the normalised value is stored.

    ops = {dot, add(bias), reduce sum, div, sub, mul, reduce sum, rsqrt, broadcast, ...}

The kernel may also write the partial moments of its output's rows
(`graph.tile_moments`, a two-pass LayerNorm's first pass: `fsir/lowering/ln_partials.py`)
as a second output.

A prologue's row statistics computed in the kernel once per staged row (a two-pass
LayerNorm's `graph.combine_moments` of its partial moments, the variance's rsqrt:
`fsir.lowering.prologue.row_statistic_ops`) may be of any class but compute.

The explorer learns that a compute-intensive op's kernel goes on past it from its
mapping's `fuses_epilogue` (`fsir.codegen.capability.takes_epilogue`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from xdsl.dialects.builtin import f32
from xdsl.ir import Operation, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.lowering.ln_partials import tile_fits, tile_moments_of, tile_moments_problem
from fsir.lowering.prologue import SAME_INDEX_OPS, row_statistic_ops
from fsir.lowering.row_epilogue import epilogue_of
from fsir.lowering.scalar import compute_type

# Ops an epilogue may hold: they read every operand at the result's own index.
EPILOGUE_OPS = SAME_INDEX_OPS


def _keeps_order(op: Operation, shape: tuple[int, ...]) -> bool:
    """A reshape between static shapes of the product's element count."""
    if not isinstance(op, graph.ReshapeOp):
        return False
    to = shape_of(op.results[0].type)
    return graph.DYN not in shape and graph.DYN not in to and math.prod(to) == math.prod(shape)


def _row_op(op: Operation, shape: tuple[int, ...]) -> bool:
    """An op of a row-normalising epilogue (a LayerNorm's statistics and their use) on a
    product of `shape`: a reduction over its last dim, an op on the reduced shape
    reading every operand at its own index, or a broadcast of the reduced shape back
    along the last dim."""
    row = shape[:-1]
    result = shape_of(op.results[0].type)
    if isinstance(op, graph.ReduceOp):
        return shape_of(op.operands[0].type) == shape and list(op.dims.get_values()) == [len(shape) - 1]
    if isinstance(op, graph.BroadcastOp):
        return shape_of(op.operands[0].type) == row and result == shape and \
            list(op.dims.get_values()) == list(range(len(row)))
    return isinstance(op, EPILOGUE_OPS) and result == row


def epilogue_problem(product: graph.GraphOp, ops: Sequence[Operation], outputs: Sequence[SSAValue],
                     noun: str, light_only: bool = True, rows: bool = False) -> str | None:
    """Why `ops` (holding the compute-intensive `product`, their `outputs` used outside)
    are not one tiled-GEMM kernel with the product's light producers inlined and a
    stitched epilogue; None: they are. `noun` names the product in the reasons ("conv",
    "dot"). Without `light_only` the other ops may be of any class but compute: a
    kernel can inline any producer (the explorer proposes light ones only, as each is
    recomputed in every tile that reads it)."""
    moments = tile_moments_of(product, ops)
    if moments is not None:  # a two-pass LayerNorm's first pass, written besides the output
        why = tile_moments_problem(product, moments, outputs, noun)
        if why is not None:
            return why
        ops = [op for op in ops if op is not moments]
        outputs = [v for v in outputs if v is not moments.result]
    epilogue = epilogue_of(product, ops)
    if len(outputs) != 1:
        return f"a {noun} kernel has one output (the {noun}'s result or its fused epilogue's)"
    (out,) = outputs
    if epilogue and out.owner not in epilogue:
        return f"a {noun}'s result can only feed fused elementwise ops that end in the kernel's output"
    shape = shape_of(product.results[0].type)
    shapes = {shape} | {shape_of(op.results[0].type) for op in epilogue if _keeps_order(op, shape)}
    row_ops = {op for op in epilogue if rows and any(_row_op(op, s) for s in shapes)}
    if row_ops and shape_of(out.type) not in shapes:
        what = f"'{out.owner.name}'" if isinstance(out.owner, Operation) else "an argument"
        return (f"a {noun}'s epilogue reducing its rows must end in a value of the {noun}'s shape (the "
                f"normalised rows), not {what} on {graph.fmt_shape(shape_of(out.type))}")
    if row_ops and len({s[-1] for s in shapes}) > 1:
        return (f"a {noun}'s epilogue reducing its rows must keep them: a reshape of the {noun}'s result may "
                "not change its last dim")
    for op in epilogue - row_ops:
        if not (isinstance(op, EPILOGUE_OPS) or _keeps_order(op, shape)) or shape_of(op.results[0].type) not in shapes:
            return (f"only elementwise ops on the {noun}'s result shape can be fused after a {noun}, not "
                    f"'{op.name}' on {graph.fmt_shape(shape_of(op.results[0].type))}")
    inside = set(ops)
    inputs = {v for op in ops for v in op.operands if v.owner not in inside}
    statistics = row_statistic_ops(product, inputs) if isinstance(product, graph.DotOp) else set()
    for op in ops:
        if op is product or op in epilogue or op in statistics:
            continue
        if graph.op_class(op) == graph.OpClass.COMPUTE:
            return f"a {noun} must be the only compute-intensive op of its kernel"
        if light_only and graph.op_class(op) != graph.OpClass.LIGHT:
            return (f"only light ops can be inlined into a {noun}'s tile loads or its epilogue's operands, "
                    f"not '{op.name}'")
    return None


def row_tile_problem(product: graph.GraphOp, reductions: Sequence[graph.ReduceOp], widest: int) -> str | None:
    """Why a tiled kernel whose epilogue has row `reductions` cannot hold a whole row of
    the product in one block tile at most `widest` columns wide; None: it can. The
    partials travel between lanes by 32-bit shuffles, so they are computed in f32."""
    if not reductions:
        return None
    n = shape_of(product.results[0].type)[-1]
    if n == graph.DYN or n > widest:
        return (f"a {product.name.removeprefix('graph.')}'s epilogue can reduce its rows only when one block tile "
                f"spans a row ({widest} columns at most), not {graph.fmt_shape((n,))}")
    for r in reductions:
        elem = r.operands[0].type.element_type  # type: ignore[attr-defined]  # a reduction reads a tensor
        if compute_type(elem) != f32:
            return f"a {product.name.removeprefix('graph.')}'s epilogue reduces rows in f32 only, not of {elem}"
    return None


def row_reduction_counts(reductions: Sequence[graph.ReduceOp], rows: int, lanes: int) -> Counter[str]:
    """A thread's instructions combining its `rows` tile rows' partials of each of the
    row `reductions` across the `lanes` threads holding a row (a butterfly of
    shuffles, each followed by the combining op)."""
    steps = max(0, lanes.bit_length() - 1)
    per = len(reductions) * rows * steps
    return Counter({"shuffle": per, "alu": 2 * per})


def row_reduction_cycles(reductions: Sequence[graph.ReduceOp], rows: int, cols: int, lanes: int, cpi) -> float:
    """The dependent chain of a thread's row reductions, before its stores: per row
    and reduction, its `cols` values combined in sequence, then the butterfly's
    shuffle-and-combine steps (a reduction may read the one before: a variance the
    mean)."""
    steps = max(0, lanes.bit_length() - 1)
    return len(reductions) * rows * (cols * cpi["alu"] + steps * (cpi.get("shuffle", cpi["alu"]) + cpi["alu"]))


def row_store_chain(fused: Counter[str], cpi) -> float:
    """The dependence chain of one output of a row-normalising epilogue: the values
    the reductions read are computed by then (`row_reduction_cycles`); the loads left
    (γ, β) are independent of each other, so one global latency, then the ops."""
    chain = Counter(fused)
    chain["global"] = min(chain["global"], 1)
    return sum(n * cpi.get(cls, cpi["alu"]) for cls, n in chain.items())


def moment_configs(dot: graph.DotOp, moments: graph.TileMomentsOp, configs: list, forced) -> list:
    """The GEMM configs (`fsir.codegen.mappings.gemm.GemmConfig`) whose lanes hold each
    tile of the partial `moments` together (`tile_fits`)."""
    from fsir.codegen.mappings.base import op_error
    from fsir.codegen.mappings.gemm import GemmMath
    from fsir.lowering.gemm import vector_fragments

    def fits(c) -> bool:
        tiled = c.math == GemmMath.FMA
        chunk = 4 if tiled and vector_fragments(c.tm, c.tn) else 1
        return tile_fits(moments.width, tiled, c.bn, c.tn, c.tn, chunk)

    kept = [c for c in configs if fits(c)]
    if not kept:
        tile = forced.text() if forced is not None else "auto"
        raise op_error(dot, f"cannot run as gemm={tile} writing the partial moments of its rows: no block tile "
                            f"holds a tile of {moments.width} columns in one group of lanes")
    return kept


def statistics_buffer(dot: graph.DotOp, ops: Sequence[Operation], bm: int) -> list:
    """The shared buffer of a GEMM kernel whose prologue computes row statistics (one
    f32 per block tile row and statistic: `fsir.lowering.prologue.hoist_row_statistics`),
    as a list of zero or one `schedule.shared`."""
    from xdsl.dialects.builtin import IntegerAttr, MemRefType, i64

    from fsir.dialects.schedule import SharedOp
    from fsir.lowering.prologue import STATS_BUFFER, computed_statistics

    inside = set(ops)
    inputs = {v for op in ops for v in op.operands if v.owner not in inside}
    n = len(computed_statistics(dot, inputs))
    if not n:
        return []
    return [SharedOp(STATS_BUFFER, MemRefType(f32, [n * bm], memory_space=IntegerAttr(3, i64)))]


def add_moment_costs(s, k, ops, p) -> None:
    """Add to a GEMM kernel's summary `s` (of kernel `k`, params `p`) the writing of its
    output's partial moments, if it has them (`fsir.lowering.ln_partials.moment_counts`)."""
    from fsir.lowering.gemm import vector_fragments
    from fsir.lowering.ln_partials import moment_counts

    moments = next((op for op in ops if isinstance(op, graph.TileMomentsOp)), None)
    if moments is None:
        return
    tiled = not p.tensor_cores
    chunk = 4 if tiled and vector_fragments(p.thread_m, p.thread_n) else 1
    counts, nbytes = moment_counts(moments, tiled, p.thread_m, p.thread_n, p.tile_n // p.thread_n, chunk,
                                   p.thread_m, p.thread_n)
    s.add(Counter(counts))
    s.global_bytes += nbytes
