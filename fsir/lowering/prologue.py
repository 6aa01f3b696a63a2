"""Row statistics of a GEMM prologue: the per-row values (a LayerNorm's mean and rstd)
that the A operand's inlined producers read through a broadcast along the k dim.

A dot's A element (…, m, k) computed by index propagation reads such a value at
(…, m) only, the same in every k-step, so the tiled GEMM kernels load it once per
tile row a thread stages, before the k-loop, and keep it in a register
(`fsir/lowering/gemm.py`, `fsir/lowering/mma.py`); the k-step then costs the
normalisation's few ALU ops and the loads of x, γ and β, and the cost summaries
(`tiled_summary`, `mma_summary`) count the statistics' loads once per kernel, not per
k-step. A prologue of a statistics kernel and a normalising GEMM
(`fsir/fusion/prologue.py`) is then about as cheap per k-step as a GEMM reading the
normalised activation, and saves writing and re-reading it.

    %mean_b = graph.broadcast %mean dims [0] : (tensor<64xf32>) -> tensor<64x48xf32>
    %xc = graph.sub %x, %mean_b : tensor<64x48xf32>         <- %mean a kernel input
    %d = graph.dot %xc, %w ...                               row_statistics: [%mean_b]

A row statistic may also be computed in the kernel from per-row inputs: a two-pass
LayerNorm's mean and variance combined from the partial moments its producer wrote
(`graph.combine_moments`, `fsir/fusion/ln_stat.py`), then `rsqrt(var + eps)`. The
hoist computes it once per staged row too, before the k-loop; `row_statistic_ops`
are those ops, which the capability check admits besides the light ones
(`fsir/codegen/mappings/epilogue.py`).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.lowering.emit import elem_type
from fsir.lowering.scalar import Index

# Ops that read every operand at their result's own index (a GEMM epilogue's ops,
# `fsir/codegen/mappings/epilogue.py`, and the path from A to its row statistics).
SAME_INDEX_OPS = (graph.ElementwiseOp, graph.CompareOp, graph.SelectOp, graph.ConvertOp)


def _broadcasts_along(dot: graph.DotOp, inputs: set[SSAValue], dim: int) -> list[graph.BroadcastOp]:
    """The broadcasts of kernel `inputs` that `dot`'s A operand (a matrix, not a vector)
    reads at its own index through ops that read every operand at their result's
    index, and that copy their source along A's dim `dim` (counted from the end: 1 is
    k, 2 is m). In block order."""
    a = dot.lhs
    shape = shape_of(a.type)
    if len(shape) < 2:
        return []
    found: list[graph.BroadcastOp] = []
    seen: set[Operation] = set()
    stack = [a]
    while stack:
        v = stack.pop()
        op = v.owner
        if v in inputs or not isinstance(op, Operation) or op in seen:
            continue
        seen.add(op)
        if shape_of(op.results[0].type) != shape:
            continue
        if isinstance(op, graph.BroadcastOp):
            src = op.operands[0]
            if len(shape) - dim not in op.dims.get_values() and \
                    (src in inputs or (dim == 1 and _statistic_cone(src, inputs, shape) is not None)):
                found.append(op)
        elif isinstance(op, SAME_INDEX_OPS):
            stack.extend(op.operands)
    if len(found) < 2:
        return found
    # the broadcasts precede the dot in its block: walk back from it (not a scan from
    # the block's start per op)
    left, ordered, op = set(found), [], dot.prev_op
    while left and op is not None:
        if op in left:
            left.discard(op)
            ordered.append(op)
        op = op.prev_op
    return ordered[::-1] + [op for op in found if op in left]


def _statistic_cone(v: SSAValue, inputs: set[SSAValue], shape: tuple[int, ...]) -> list[Operation] | None:
    """The ops computing a broadcast source `v` from kernel `inputs` when none of them
    is of A's `shape` (so each is a per-row value: A's elements are read by the k-loop,
    not by a statistic); None otherwise."""
    ops: list[Operation] = []
    seen: set[SSAValue] = set()
    stack = [v]
    while stack:
        w = stack.pop()
        if w in inputs or w in seen:
            continue
        seen.add(w)
        op = w.owner
        if not isinstance(op, graph.GraphOp) or isinstance(op, graph.DotOp) or \
                shape_of(op.results[0].type) == shape:
            return None
        ops.append(op)
        stack.extend(op.operands)
    return ops


def row_statistics(dot: graph.DotOp, inputs: set[SSAValue]) -> list[graph.BroadcastOp]:
    """The broadcasts A's element (…, m, k) reads at an index without k: per-row values
    such as a LayerNorm's mean and rstd, the same in every k-step (kernel inputs, or
    computed from inputs per row: `row_statistic_ops`)."""
    return _broadcasts_along(dot, inputs, 1)


def row_statistic_ops(dot: graph.DotOp, inputs: set[SSAValue]) -> set[Operation]:
    """The ops computing `row_statistics`' sources in the kernel (combining partial
    moments, a variance's rsqrt): computed once per staged row."""
    shape = shape_of(dot.lhs.type)
    return {op for b in row_statistics(dot, inputs) for op in _statistic_cone(b.operands[0], inputs, shape) or []}


def statistic_inputs(dot: graph.DotOp, inputs: set[SSAValue]) -> set[SSAValue]:
    """The values `row_statistics` broadcast (loaded or computed once per staged tile row)."""
    return {b.operands[0] for b in row_statistics(dot, inputs)}


def column_inputs(dot: graph.DotOp, inputs: set[SSAValue]) -> set[SSAValue]:
    """The kernel inputs A's element (…, m, k) reads through a broadcast at an index
    without m (a LayerNorm's γ and β): a thread whose staged A elements share their
    column loads each once per k-step (the element emitter reuses equal indices)."""
    return {b.operands[0] for b in _broadcasts_along(dot, inputs, 2)}


STATS_BUFFER = "row_stats"  # the shared buffer of a block's computed row statistics


def varies_with_row(bcast: graph.BroadcastOp) -> bool:
    """Whether a row statistic's broadcast reads its source at an index holding A's row
    m (a LayerNorm's mean: one value per row), not only batch dims (a scale computed
    from a shape: one value for the whole tile, which other operands may read too). A
    source dim of size 1 for the rows (M = 1, or a kept dim) is read at 0 by every row:
    the staged rows beyond M would share, and zero, that one element."""
    dims = list(bcast.dims.get_values())
    row = len(shape_of(bcast.results[0].type)) - 2
    return row in dims and shape_of(bcast.operands[0].type)[dims.index(row)] != 1


def computed_statistics(dot: graph.DotOp, inputs: set[SSAValue]) -> list[SSAValue]:
    """The per-row float sources of `row_statistics` computed in the kernel (not
    inputs), in block order of their broadcasts: a block computes them into the f32
    `STATS_BUFFER`. Others (a guard's per-row compare, i1) each thread computes per
    staged row, as it does a loaded statistic."""
    out: list[SSAValue] = []
    for b in row_statistics(dot, inputs):
        src = b.operands[0]
        if src not in inputs and src not in out and varies_with_row(b) and graph.is_float(elem_type(src)):
            out.append(src)
    return out


def hoist_row_statistics(low, rows, batch: list[Index], m0: Index, bm: int, m_size: Index) -> None:
    """Before the k-loop of a tiled GEMM lowering `low` (its emitter, `smem`, thread id):
    provide each row statistic at each staged row (`rows()`: (m, whether staged)).
    Loaded ones are loaded per staged row. Computed ones (combined partial moments)
    are computed once per row of the block tile, by thread r for row m0 + r, into the
    shared buffer `STATS_BUFFER`, then read per staged row after a barrier: the
    threads staging one row would otherwise each combine its partials."""
    from fsir.dialects import gpu

    e, ib = low.emit, low.ib
    dot = low.dot
    statistics = row_statistics(dot, set(e.buffers))
    if not statistics:
        return
    computed = computed_statistics(dot, set(e.buffers))
    if computed:
        buf = low.smem[STATS_BUFFER]
        tid = low.thread_id()
        threads = low.block_size
        for s in range(-(-bm // threads)):
            r = ib.add(tid, s * threads)
            m = ib.add(m0, r)
            inside = e.and_(ib.lt(r, bm) if (s + 1) * threads > bm else True,
                            True if isinstance(m_size, int) and m_size % bm == 0 else ib.lt(m, m_size))

            def fill(m=m, r=r) -> None:
                for i, src in enumerate(computed):
                    value = _statistic_at(low, src, statistics, batch, m)
                    e.store(value, buf, ib.add(r, i * bm), elem_type_of(value))

            e.when(inside, fill)
        low.cursor.insert(gpu.BarrierOp())
    staged = rows()
    for bcast in statistics:
        src = bcast.operands[0]
        if not varies_with_row(bcast):
            # One element for every row, in bounds for every thread, and possibly read
            # by the B operand too: provided unguarded, so every reader sees its value.
            idx = bcast.operand_indices([*batch, m0, 0], low.shapes.dims, ib)[0]
            e.provide(src, idx, e.at(src, idx))
            continue
        for m, inside in staged:
            if inside is False:
                continue
            idx = bcast.operand_indices([*batch, m, 0], low.shapes.dims, ib)[0]
            if src in computed:
                slot = ib.add(ib.sub(m, m0), computed.index(src) * bm)
                e.provide(src, idx, e.load(low.smem[STATS_BUFFER], slot))
                continue
            loaded: list[SSAValue] = []

            def load(src=src, idx=idx, loaded=loaded) -> SSAValue:
                loaded.append(e.at(src, idx))
                return loaded[0]

            # a row the thread does not stage reads no statistic: any value serves
            value = e.guarded(inside, load, lambda loaded=loaded: low.sb.const(0, loaded[0].type))
            e.provide(src, idx, value)


def _statistic_at(low, src: SSAValue, statistics: list[graph.BroadcastOp], batch: list[Index], m: Index) -> SSAValue:
    """Computed statistic `src` at row m, at the index its broadcast reads."""
    bcast = next(b for b in statistics if b.operands[0] is src)
    idx = bcast.operand_indices([*batch, m, 0], low.shapes.dims, low.ib)[0]
    return low.emit.at(src, idx)


def elem_type_of(v: SSAValue):
    return v.type
