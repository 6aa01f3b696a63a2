"""A tiled GEMM epilogue that normalises the product's rows (a LayerNorm after a dot
whose block tile spans whole rows, N ≤ bn): the row reductions of the epilogue
(`fsir.codegen.mappings.epilogue.row_reductions`) are combined across the threads
holding a tile row before the outputs are stored.

Thread (ty, tx) of a bm x bn tile holds the micro-tile columns tx + j·bn/tn, so the
bn/tn threads of a tile row are consecutive lanes of one warp (bn/tn ≤ 32). For each
reduction, in block order, a thread computes the reduced operand at each of its
elements (the epilogue's ops by index propagation from the accumulator, zero or the
reduction's identity outside the product), combines its tn values per row, and a
butterfly of `gpu.shuffle xor` over the row's lanes gives every lane the row's
result, which is then provided as the reduction's element for that row. A LayerNorm's
variance reduction reads the mean so provided, and the stores compute the normalised
value from both; the reduced operand's elements are provided too, so the two passes
and the store compute the epilogue's value before the LayerNorm (bias, residual)
once. No shared memory and no barrier: the rows are warp-local.

    %z = graph.add %d, %bias_b          z's elements from the accumulators
    %s = graph.reduce sum %z dims [1]   per row: tn adds, then log2(bn/tn) shuffles
    %mean_b = graph.broadcast ...       read at the stores (provided)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from xdsl.dialects.builtin import i32
from xdsl.ir import Operation, SSAValue

from fsir.dialects import gpu, graph
from fsir.lowering.emit import ElementEmitter, canonical_index, elem_type
from fsir.lowering.scalar import Index, compute_type


def epilogue_of(product: Operation, ops: Iterable[Operation]) -> set[Operation]:
    """The ops of `ops` that read the product's result, directly or through each other."""
    inside = set(ops)
    epilogue: set[Operation] = set()
    stack: list[Operation] = [product]
    while stack:
        for result in stack.pop().results:
            for use in result.uses:
                user = use.operation
                if user in inside and user not in epilogue:
                    epilogue.add(user)
                    stack.append(user)
    return epilogue


def row_reductions(product: graph.GraphOp, ops: Iterable[Operation]) -> list[graph.ReduceOp]:
    """The reductions over the product's rows in its epilogue among `ops` (a LayerNorm
    epilogue's sum and sum of squared deviations), in block order: the tiled GEMM
    combines them across the threads of a block tile row (`provide_row_reductions`),
    so its tile must span the whole row."""
    found = [op for op in epilogue_of(product, ops) if isinstance(op, graph.ReduceOp)]
    if len(found) < 2:
        return found
    # the epilogue follows the product in its block: walk on from it (not a scan from
    # the block's start per op)
    left, ordered, op = set(found), [], product.next_op
    while left and op is not None:
        if op in left:
            left.discard(op)
            ordered.append(op)
        op = op.next_op
    return ordered + [op for op in found if op in left]


def provide_row_reductions(e: ElementEmitter, product: SSAValue, reductions: Sequence[graph.ReduceOp],
                           accs: Sequence[SSAValue], ms: Sequence[Index], ns: Sequence[Index],
                           index: Callable[[Index, Index, SSAValue], list[Index]],
                           inside: Callable[[Index, Index], bool | SSAValue], lanes: int) -> None:
    """Provide each row reduction's element for each of the thread's tile rows `ms`
    (accumulators `accs`, row-major over ms x ns; `index(m, n, v)` the index of
    product element (m, n) in an epilogue value v's shape, the product's or a reshape's
    keeping the last dim; `inside` whether it exists), the
    row held by `lanes` consecutive lanes."""
    sb, c = e.sb, e.c
    tn = len(ns)
    for r in reductions:
        kind = r.kind.data
        acc_t = compute_type(elem_type(r.results[0]))
        operand = r.operands[0]
        for i, m in enumerate(ms):
            row = sb.reduce_init(kind, acc_t)
            for j, n in enumerate(ns):
                idx = index(m, n, operand)
                acc = accs[i * tn + j]

                def element(idx=idx, acc=acc, operand=operand) -> SSAValue:
                    e.row_values[product] = sb.round_to(acc, elem_type(product))
                    try:
                        return e.at(operand, idx)
                    finally:
                        del e.row_values[product]

                value = e.guarded(inside(m, n), element, lambda kind=kind, t=acc_t: sb.reduce_init(kind, t))
                if operand is not product:
                    e.provide(operand, idx, value)
                row = sb.combine(kind, row, value)
            offset = lanes // 2
            while offset:
                other = c.insert(gpu.ShuffleOp("xor", row, sb.const(offset, i32), sb.const(32, i32))).results[0]
                row = sb.combine(kind, row, other)
                offset //= 2
            total = sb.round_to(row, elem_type(r.results[0]))
            for n in ns:  # past a reshape, each column's row index is computed on its own
                at = index(m, n, operand)[:-1]
                e.provide(r.results[0], at, total)
                # A reader of a size-1 dim asks for element 0 (emit's canonical_index). The
                # batch coordinates (grid z) are valid, so the total is also that element
                # there; a row coordinate is only where it is the thread's first row: with
                # one row (M = 1) the thread holding row 0 holds it first, and the others'
                # rows all lie beyond M, their outputs masked.
                full = canonical_index(r.results[0], at)
                canonical = [*full[:-1], full[-1] if i == 0 else at[-1]]
                if canonical != at:
                    e.provide(r.results[0], canonical, total)
