"""Horizontal GEMM fusion: dots that multiply one activation by several weights become
one dot over the weights concatenated along N (XLA's DotMerger, TVM's horizontal
fusion), so the activation is read by one GEMM kernel instead of one per weight:

    %q = dot %x, %wq                 %w = concat %wq, %wk, %wv dim 1
    %k = dot %x, %wk        ->       %d = dot %x, %w
    %v = dot %x, %wv                 %q = slice %d [.., 0:n]   %k = slice %d [.., n:2n] ...

The weights are usually function arguments, so the concat is not folded at compile
time: it is a light producer of the dot's B operand, inlined into the GEMM's tile loads
like any other (a B tile lies in one weight when N of each is a multiple of the tile),
and never written to global memory. The slices are light producers of the consumers
(each weight's epilogue, the attention kernel's loads), which the explorer fuses as it
fuses any other; the GEMM kernel is one launch whose grid spans the concatenated N.

Merged are dots whose result is read, with the same lhs (a matrix, rank >= 2), rank-2 rhs of one element
type and static shapes, in the order they appear; the merged dot takes the place of
the first, which every other one follows in the block (their rhs must then be
defined before it, which the walk checks).

Merging is not always a gain: a dot's elementwise consumers (a bias add, an activation)
read a slice of the merged product and are no longer its GEMM's stitched epilogue, so
they become a kernel of their own unless another kernel takes them (as the attention
kernel takes Q, K and V's bias adds). The explorer therefore plans the function both
ways and keeps the plan its latency-evaluator scores lower
(`fsir.fusion.explorer.explore`). Stitch mode only (XLA mode keeps XLA's fusion
rules)."""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i64
from xdsl.ir import Block, Operation, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import DYN, shape_of


def _mergeable(op: Operation) -> bool:
    if not isinstance(op, graph.DotOp):
        return False
    a, b, r = shape_of(op.lhs.type), shape_of(op.rhs.type), shape_of(op.result.type)
    # a dot nobody reads is no GEMM to share (its slice would be a kernel without outputs)
    return len(a) >= 2 and len(b) == 2 and DYN not in a and DYN not in b and DYN not in r and bool(op.result.uses)


def _defined_before(value: SSAValue, op: Operation, block: Block, order: dict[Operation, int]) -> bool:
    owner = value.owner
    if not isinstance(owner, Operation):
        return True  # a block argument
    return owner.parent is not block or order[owner] < order[op]


def sibling_dots(block: Block) -> list[list[graph.DotOp]]:
    """The groups of two or more dots of `block` that can be merged (see the module
    docstring). Linear in the block: one walk groups the dots by lhs."""
    order = {op: i for i, op in enumerate(block.ops)}
    groups: dict[tuple, list[graph.DotOp]] = {}
    for op in block.ops:
        if _mergeable(op):
            assert isinstance(op, graph.DotOp)
            key = (op.lhs, shape_of(op.rhs.type)[0], graph.tensor_type(op.rhs).element_type)
            groups.setdefault(key, []).append(op)
    out = []
    for dots in groups.values():
        first = dots[0]
        dots = [first] + [d for d in dots[1:] if _defined_before(d.rhs, first, block, order)]
        if len(dots) > 1:
            out.append(dots)
    return out


def merge_sibling_dots(block: Block) -> int:
    """Merge every group of `sibling_dots`; the number of dots removed."""
    groups = sibling_dots(block)
    for dots in groups:
        _merge(block, dots)
    return sum(len(dots) - 1 for dots in groups)


def _ints(xs) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(xs))


def _merge(block: Block, dots: list[graph.DotOp]) -> None:
    first = dots[0]
    widths = [shape_of(d.rhs.type)[1] for d in dots]
    k = shape_of(first.rhs.type)[0]
    elem = graph.tensor_type(first.rhs).element_type
    concat = graph.ConcatOp.build(operands=[[d.rhs for d in dots]],
                                  result_types=[graph.tensor(elem, [k, sum(widths)])],
                                  properties={"dim": IntegerAttr(1, i64)})
    out_shape = [*shape_of(first.result.type)[:-1], sum(widths)]
    merged = graph.DotOp.build(operands=[first.lhs, concat.result],
                               result_types=[graph.tensor(graph.tensor_type(first.result).element_type, out_shape)])
    concat.location = merged.location = first.location
    block.insert_ops_before([concat, merged], first)
    start = 0
    for d, width in zip(dots, widths):
        shape = shape_of(d.result.type)
        piece = graph.SliceOp.build(
            operands=[merged.result], result_types=[d.result.type],
            properties={"start": _ints([0] * (len(shape) - 1) + [start]),
                        "limit": _ints([*shape[:-1], start + width]),
                        "strides": _ints([1] * len(shape))})
        piece.location = d.location
        block.insert_op_before(piece, first)
        d.result.replace_all_uses_with(piece.result)
        start += width
    for d in dots:
        d.detach()
        d.erase()
