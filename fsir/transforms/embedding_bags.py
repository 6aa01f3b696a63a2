"""Embedding bags out of their unrolled form: one `graph.segment_reduce` over all bags.

PyTorch exports `nn.EmbeddingBag` as a loop over the bags (an ONNX `Loop`, or a `Loop`
filling a sequence), which the ONNX importer unrolls for a static bag count. Each bag
becomes its own chain, and the bags are stacked along dim 0:

    %i0 = graph.slice %ids start [0] limit [4] strides [1]      // bag 0's ids
    %e0 = graph.gather %table, %i0                              // its rows
    %w0 = ... graph.slice %weights start [0] limit [4] ...      // its per-sample weights
    %m0 = graph.mul %e0, %w0b
    %s0 = graph.reduce sum %m0 dims [0]                         // (a mean: then / 4; or max, min)
    %r0 = graph.reshape %s0 : (tensor<16xf32>) -> tensor<1x16xf32>
    ... bag 1 from [4, 8) ...
    %bags = graph.concat %r0, %r1 dim 0

(the TorchScript exporter slices the ids and weights; the dynamo exporter gathers and
weighs all ids first and slices the weighted rows). Each bag's chain is row-wise: row i
of its rows depends on row i of its slices only. Such a concat is replaced by the chain
computed once over the whole sources and one segment reduction with the bags' starts
as offsets:

    %e = graph.gather %table, %ids
    %m = graph.mul %e, %wb
    %bags = graph.segment_reduce sum %m, %offsets      // offsets dense<[0, 4]>

which the `segments` and `columns` mappings (docs/architecture.md) run as one kernel for
all bags of all tables. The rewrite is exact up to the order of the additions: the
same ops per row, each bag's rows summed (a mean divided by its row count) or their
max or min taken as before; only a half-precision mean rounds once where the
unrolled form rounded its sum to f16 before dividing.

It fires only on that exact structure: every concat operand a [1, ...] reshape of a
sum, max or min over dim 0 (a sum optionally divided by a value that constants
compute, equal to the bag's row count, then all of them), non-empty bags whose
chains are the same ops with the same properties, each leaf a slice of one source
shared by all bags over that bag's rows — the bags contiguous, from row 0 to the
source's last row — or a splat constant, and every other shared value a gather's
table. Anything else is left alone.

Where the bags then feed a stack (`torch.stack(..., dim=1)`: a concat along dim 1 of
[B, 1, D] reshapes of [B, D] values), the stack becomes a concat of the [B, D] values
along dim 1 and a reshape (the same elements in the same order), so the bags are
columns of a rank-2 concat as `fsir/analysis/columns.py` reads them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.interpreters import graph_value

# The divisor of a mean is folded from constants; a larger subgraph is something else.
_MAX_FOLD_DEPTH = 8
_MAX_FOLD_ELEMENTS = 1 << 16
# Ops whose result row i reads row i of every operand (all operands have its shape).
_SAME_ROW = (graph.ElementwiseOp, graph.CompareOp, graph.SelectOp, graph.ConvertOp, graph.BitcastOp)
# The bag reductions segment_reduce has (a product has none).
_KINDS = frozenset({graph.ReduceKind.SUM, graph.ReduceKind.MAX, graph.ReduceKind.MIN})


@dataclass(frozen=True)
class _Bag:
    """One bag's chain: its rows ([n, ...], reduced over dim 0 by `kind`) and its
    divisor (a mean's sum's; None otherwise)."""

    rows: SSAValue
    kind: graph.ReduceKind
    divisor: SSAValue | None

    @property
    def segment_kind(self) -> graph.SegmentKind:
        if self.divisor is not None:
            return graph.SegmentKind.MEAN
        return graph.SegmentKind(self.kind.value)


def _bag_of(value: SSAValue) -> _Bag | None:
    """The bag computing `value`, a concat operand: reshapes and at most one division
    back to a sum over dim 0 (a max or min: no division)."""
    divisor: SSAValue | None = None
    while True:
        op = value.owner
        if isinstance(op, graph.ReshapeOp):
            value = op.input
        elif isinstance(op, graph.ELEMENTWISE_OPS["div"]) and divisor is None:
            value, divisor = op.operands[0], op.operands[1]
        elif isinstance(op, graph.ReduceOp):
            kind = op.kind.data
            if kind not in _KINDS or tuple(op.dims.get_values()) != (0,):
                return None
            if divisor is not None and kind != graph.ReduceKind.SUM:
                return None
            return _Bag(op.input, kind, divisor)
        else:
            return None


def _folded(value: SSAValue, depth: int = 0) -> np.ndarray | None:
    """The value of `value` if constants alone compute it (a small subgraph)."""
    op = value.owner
    if isinstance(op, graph.ConstantOp):
        return graph.constant_array(op.value)
    if depth >= _MAX_FOLD_DEPTH or not isinstance(op, graph.GraphOp) or len(op.results) != 1:
        return None
    shape = shape_of(op.result_type)
    if graph.DYN in shape or math.prod(shape) > _MAX_FOLD_ELEMENTS:
        return None
    args = [_folded(v, depth + 1) for v in op.operands]
    if any(a is None for a in args):
        return None
    try:
        with np.errstate(all="ignore"):
            return graph_value(op, [a for a in args if a is not None])
    except Exception:  # an op the interpreter does not evaluate: not a constant here
        return None


def _static(shape: Sequence[int]) -> bool:
    return graph.DYN not in shape


@dataclass
class _Widener:
    """Builds the bags' common chain over all rows (`widen`), or finds it does not exist.
    `starts[b]`/`starts[b + 1]` bound bag b's rows; the new ops are kept in creation
    order (operands first) until they are inserted."""

    starts: list[int]
    memo: dict[tuple[SSAValue, ...], SSAValue] = field(default_factory=dict)
    new_ops: list[Operation] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.starts[-1]

    def lengths(self) -> list[int]:
        return [hi - lo for lo, hi in zip(self.starts, self.starts[1:])]

    def widen(self, values: tuple[SSAValue, ...]) -> SSAValue | None:
        """The value whose rows [starts[b], starts[b+1]) are `values[b]`, each of shape
        [n_b, ...]; None when the chains do not have that structure."""
        if values in self.memo:
            return self.memo[values]
        types = [v.type for v in values if isinstance(v.type, TensorType)]
        if len(types) != len(values):
            return None
        shapes = [shape_of(t) for t in types]
        rest = shapes[0][1:]
        if not all(_static(s) and len(s) >= 1 and s[1:] == rest for s in shapes):
            return None
        if [s[0] for s in shapes] != self.lengths():
            return None
        out = self._source(values) or self._splat(values) or self._row_op(values)
        if out is not None:
            self.memo[values] = out
        return out

    def _source(self, values: tuple[SSAValue, ...]) -> SSAValue | None:
        """The source every value slices over its bag's rows (all other dims whole)."""
        ops = [v.owner for v in values if isinstance(v.owner, graph.SliceOp)]
        if len(ops) != len(values):
            return None
        src = ops[0].input
        full = shape_of(src.type)
        if not _static(full) or full[0] != self.total:
            return None
        for b, op in enumerate(ops):
            if op.input != src or any(s != 1 for s in op.strides.get_values()):
                return None
            if list(op.start.get_values()) != [self.starts[b], *[0] * (len(full) - 1)]:
                return None
            if list(op.limit.get_values()) != [self.starts[b + 1], *full[1:]]:
                return None
        return src

    def _splat(self, values: tuple[SSAValue, ...]) -> SSAValue | None:
        """A splat constant of the bags' shape, as one of all rows."""
        ops = [v.owner for v in values if isinstance(v.owner, graph.ConstantOp)]
        if len(ops) != len(values):
            return None
        arrays = [graph.constant_array(op.value) for op in ops]
        first = arrays[0].reshape(-1)[:1]
        if first.size == 0 or not all(np.array_equal(a, np.broadcast_to(first, a.shape)) for a in arrays):
            return None
        t = values[0].type
        assert isinstance(t, TensorType)
        shape = [self.total, *shape_of(t)[1:]]
        op = graph.ConstantOp.from_array(np.full(shape, first[0], dtype=arrays[0].dtype), t.element_type)
        self.new_ops.append(op)
        return op.results[0]

    def _row_op(self, values: tuple[SSAValue, ...]) -> SSAValue | None:
        """The bags' op (the same one in every bag) computed over all rows, when it is
        row-wise: its operands widened, a gather's table shared."""
        ops = [v.owner for v in values if isinstance(v.owner, graph.GraphOp)]
        if len(ops) != len(values) or len(ops[0].results) != 1 or not ops[0].operands:
            return None  # a constant other than a splat, an iota: not the same in every row
        first = ops[0]
        for op in ops[1:]:
            if (type(op) is not type(first)
                    or len(op.operands) != len(first.operands) or op.properties != first.properties
                    or op.attributes != first.attributes
                    or op.result_type.element_type != first.result_type.element_type):
                return None
        operands: list[SSAValue] = []
        for i in range(len(first.operands)):
            column = tuple(op.operands[i] for op in ops)
            if isinstance(first, graph.GatherOp) and i == 0:
                if any(v != column[0] for v in column):
                    return None  # one table for all bags
                operands.append(column[0])
                continue
            if not self._row_wise(first, i):
                return None
            wide = self.widen(column)
            if wide is None:
                return None
            operands.append(wide)
        t = first.result_type
        cls = type(first)
        new = cls.build(operands=cls._group_operands(operands),
                        result_types=[TensorType(t.element_type, [self.total, *shape_of(t)[1:]])],
                        properties=dict(first.properties), attributes=dict(first.attributes))
        self.new_ops.append(new)
        return new.results[0]

    @staticmethod
    def _row_wise(op: graph.GraphOp, operand: int) -> bool:
        """Whether row i of `op`'s result reads row i of operand `operand` only (both
        hold a bag's rows in dim 0: `widen` checks the sizes)."""
        if isinstance(op, _SAME_ROW) or isinstance(op, graph.ReshapeOp | graph.GatherOp):
            return True  # a reshape keeping dim 0 (widen checks it), a gather's ids
        if isinstance(op, graph.BroadcastOp):
            return op.like is None and tuple(op.dims.get_values())[:1] == (0,)
        return False


def _bags_of(concat: graph.ConcatOp) -> tuple[list[_Bag], graph.SegmentKind] | None:
    """The bags a concat along dim 0 stacks, and their reduction."""
    if concat.dim.value.data != 0 or len(concat.inputs) < 2:
        return None
    bags = [_bag_of(v) for v in concat.inputs]
    if any(b is None for b in bags):
        return None
    found = [b for b in bags if b is not None]
    kinds = {b.segment_kind for b in found}
    if len(kinds) != 1:
        return None
    for value, bag in zip(concat.inputs, found):
        rows = shape_of(bag.rows.type)
        if not _static(rows) or not rows or rows[0] < 1 or shape_of(value.type) != (1, *rows[1:]):
            return None
        if bag.divisor is not None:
            d = _folded(bag.divisor)
            if d is None or d.size == 0 or not np.all(d == rows[0]):
                return None
    return found, kinds.pop()


def _erase_dead(op: Operation) -> None:
    """Erase `op` and then every graph op it alone kept alive."""
    work = [op]
    while work:
        op = work.pop()
        if op.parent is None or any(r.uses for r in op.results):
            continue
        owners = [v.owner for v in op.operands]
        Rewriter.erase_op(op)
        work.extend(o for o in owners if isinstance(o, graph.GraphOp))


def fuse_bags(concat: graph.ConcatOp) -> graph.SegmentReduceOp | None:
    """Replace a concat of unrolled bags (the module doc) by one segment reduction;
    None (and the IR untouched) where the structure does not match exactly."""
    found = _bags_of(concat)
    if found is None:
        return None
    bags, kind = found
    starts = [0]
    for bag in bags:
        starts.append(starts[-1] + shape_of(bag.rows.type)[0])
    widener = _Widener(starts)
    rows = widener.widen(tuple(b.rows for b in bags))
    t = concat.result_type
    if rows is None or rows.type != TensorType(t.element_type, [starts[-1], *shape_of(t)[1:]]):
        for op in reversed(widener.new_ops):
            op.erase()
        return None
    offsets = graph.ConstantOp.from_array(np.array(starts[:-1], dtype=np.int64), i64)
    seg = graph.SegmentReduceOp.build(operands=[rows, offsets.results[0]], result_types=[concat.result_type],
                                      properties={"kind": graph.SegmentKindAttr(kind)})
    block = concat.parent_block()
    assert block is not None
    block.insert_ops_before([*widener.new_ops, offsets, seg], concat)
    concat.results[0].replace_all_uses_with(seg.results[0])
    _erase_dead(concat)
    return seg


def _stack_of(seg: graph.SegmentReduceOp) -> graph.ConcatOp | None:
    """The stack the bags feed, through conversions (an f16 model's bags summed in f32)
    and a reshape to [B, 1, D], each the only use of the value before it."""
    value = seg.results[0]
    while value.uses.get_length() == 1:
        user = next(iter(value.uses)).operation
        if isinstance(user, graph.ConvertOp):
            value = user.results[0]
        elif isinstance(user, graph.ReshapeOp) and user.results[0].uses.get_length() == 1:
            stack = next(iter(user.results[0].uses)).operation
            return stack if isinstance(stack, graph.ConcatOp) else None
        else:
            return None
    return None


def _unstack(seg: graph.SegmentReduceOp) -> None:
    """A stack of the bags with other [B, D] values (a concat along dim 1 of their
    [B, 1, D] reshapes) as a concat of the values along dim 1 and a reshape to
    [B, k, D] (the same elements in the same order), so the bags are columns of a
    rank-2 concat."""
    stack = _stack_of(seg)
    if stack is None or stack.dim.value.data != 1:
        return
    b, k, dim = (*shape_of(stack.result_type), None, None, None)[:3]
    inner: list[SSAValue] = []
    for v in stack.inputs:
        src = v.owner
        if not isinstance(src, graph.ReshapeOp) or shape_of(v.type) != (b, 1, dim):
            return
        if shape_of(src.input.type) != (b, dim) or graph.DYN in (b, dim):
            return
        inner.append(src.input)
    assert isinstance(b, int) and isinstance(k, int) and isinstance(dim, int)
    t = stack.result_type
    cat = graph.ConcatOp.build(operands=[inner], result_types=[TensorType(t.element_type, [b, k * dim])],
                               properties=dict(stack.properties))
    out = graph.ReshapeOp.build(operands=[cat.results[0]], result_types=[t])
    block = stack.parent_block()
    assert block is not None
    block.insert_ops_before([cat, out], stack)
    stack.results[0].replace_all_uses_with(out.results[0])
    _erase_dead(stack)


def fuse_embedding_bags(module: builtin.ModuleOp) -> int:
    """Rewrite every concat of unrolled bags in `module` (the module doc); the number
    of rewritten concats."""
    concats = [op for op in module.walk() if isinstance(op, graph.ConcatOp)]
    fused = 0
    for concat in concats:
        if concat.parent is None:
            continue  # erased with an earlier rewrite's dead ops
        seg = fuse_bags(concat)
        if seg is not None:
            fused += 1
            _unstack(seg)
    return fused


@dataclass(frozen=True)
class EmbeddingBagsPass(ModulePass):
    """Unrolled embedding bags (per-bag sums of slices) as one graph.segment_reduce.

    A concat of per-bag reductions over slices of shared rows becomes one segment
    reduction over all bags; see the module doc."""

    name = "graph-embedding-bags"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        fuse_embedding_bags(op)
