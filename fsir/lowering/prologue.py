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
    block = dot.parent_block()
    if block is None:
        return found
    return sorted(found, key=block.get_operation_index)


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


def kernel_statistic_ops(ops: list[Operation] | set[Operation], inputs: set[SSAValue],
                         shape: tuple[int, ...]) -> set[Operation]:
    """The ops among `ops` computing the sources of broadcasts to `shape` (a GEMM
    product's or an operand's) from kernel `inputs`, none on `shape` itself: per-row
    values (a two-pass LayerNorm's combined moments and rsqrt) read by the prologue or
    by the epilogue's operands (a residual normalised from the partials)."""
    found: set[Operation] = set()
    for op in ops:
        if isinstance(op, graph.BroadcastOp) and op.operands[0] not in inputs:
            cone = _statistic_cone(op.operands[0], inputs, shape_of(op.results[0].type))
            found.update(cone or [])
    return found & set(ops)


def statistic_inputs(dot: graph.DotOp, inputs: set[SSAValue]) -> set[SSAValue]:
    """The values `row_statistics` broadcast (loaded or computed once per staged tile row)."""
    return {b.operands[0] for b in row_statistics(dot, inputs)}


def column_inputs(dot: graph.DotOp, inputs: set[SSAValue]) -> set[SSAValue]:
    """The kernel inputs A's element (…, m, k) reads through a broadcast at an index
    without m (a LayerNorm's γ and β): a thread whose staged A elements share their
    column loads each once per k-step (the element emitter reuses equal indices)."""
    return {b.operands[0] for b in _broadcasts_along(dot, inputs, 2)}
