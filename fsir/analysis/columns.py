"""Embedding columns (RECom, inter-subgraph parallelism): the column subgraphs that
feed one concat, clustered by structure and fused into one kernel.

A recommendation model's embedding layer is N independent subgraphs, one per feature:
ids, optionally hashed or bucketised (`rem` by the table size, a clamp), gathered from
the feature's table, optionally weighted per id, reduced over the bag (sum, max, or a
sum scaled to a mean), and concatenated for the MLP:

    %h = graph.rem %ids, %rows : tensor<?x20xi32>
    %e = graph.gather %table, %h : (tensor<1000x16xf32>, tensor<?x20xi32>) -> tensor<?x20x16xf32>
    %s = graph.reduce sum %e dims [1] : (tensor<?x20x16xf32>) -> tensor<?x16xf32>
    %x = graph.concat %s, ... dim 1 : (tensor<?x16xf32>, ...) -> tensor<?x4096xf32>

A column's bag may also be ragged (EmbeddingBag with offsets): the ids of all
examples' bags gathered, then reduced per example over its offsets:

    %e = graph.gather %table, %ids : (tensor<1000x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
    %s = graph.segment_reduce sum %e, %offsets : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>

Packing such columns op by op (PatternReduction over each column, remote fusion over
bounded chunks) costs more than linear time and stops at `max-ops`. Here a column is
recognised once, from its concat operand backwards (`column_of`), and columns are
clustered by a structural hash of their subgraph (`structure_key`: the ops, how they
connect, their properties and the shapes that decide a schedule — not the table's row
count, a hash modulus, a mean's scale or the bag's length, which are per-column data:
the columns of a cluster share one code body). A concat with at least
`MIN_COLUMNS` columns becomes one fusion of all of them (`column_sets`), which the
`columns` mapping (`fsir/codegen/mappings/columns.py`) compiles into one kernel. The
explorer takes these fusions as given and searches the rest of the graph
(`fixed_column_patterns`); everything here is linear in the ops.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from fsir.dialects import graph
from fsir.dialects.graph import DYN, shape_of
from fsir.dialects.schedule import int_values

# Fewer columns than this are left to the explorer's ordinary search (a row kernel
# packs two or three columns as well).
MIN_COLUMNS = 2
# A column is a small subgraph; a larger slice is something else.
MAX_COLUMN_OPS = 64
# What a column may hold besides its one reduction and its gathers.
_COLUMN_KINDS = frozenset({"light", "expensive", "gather", "reduction"})
# a dim of a column's bag's size before its reduction, in a structure key
BAG = "bag"
# ops whose result element reads its operands' elements at the same index
# a column's bag reduction: fixed-length or ragged (over offsets)
_BAGS = (graph.ReduceOp, graph.SegmentReduceOp)
_SAME_INDEX = (graph.ElementwiseOp, graph.CompareOp, graph.SelectOp, graph.ConvertOp, graph.BitcastOp)


@dataclass(frozen=True)
class Column:
    """One embedding column: its ops in block order, ending at the value it gives the
    concat (`output`, rank 2: batch x embedding dim)."""

    ops: tuple[Operation, ...]
    output: SSAValue
    # its bag: a fixed-length one (a reduce over the bag dims of [batch, bag, dim]) or a
    # ragged one (a segment_reduce of [rows, dim] over per-example offsets)
    reduce: graph.ReduceOp | graph.SegmentReduceOp
    key: tuple

    @property
    def ragged(self) -> bool:
        return isinstance(self.reduce, graph.SegmentReduceOp)

    @property
    def gathers(self) -> list[graph.GatherOp]:
        return [op for op in self.ops if isinstance(op, graph.GatherOp)]


@dataclass
class ColumnSet:
    """The columns feeding one concat (`columns[i]` is None for an operand that is not
    a column: the kernel copies it), and their clusters: structure key -> the operand
    positions of its columns."""

    concat: graph.ConcatOp
    columns: list[Column | None]
    clusters: dict[tuple, list[int]] = field(default_factory=dict)
    # the elementwise ops computing a copied operand from other kernels' results (a
    # dense branch's activation), producers first: inlined into its copy
    copied: list[Operation] = field(default_factory=list)

    @property
    def ops(self) -> list[Operation]:
        return [op for c in self.columns if c is not None for op in c.ops] + self.copied + [self.concat]

    @property
    def count(self) -> int:
        return sum(c is not None for c in self.columns)


def _uses_within(op: Operation, members: set[Operation], sink: Operation) -> bool:
    return all(u.operation in members or u.operation is sink for r in op.results for u in r.uses)


def column_of(value: SSAValue, concat: Operation) -> Column | None:
    """The column computing `value` (an operand of `concat`), or None: the slice of
    graph ops behind `value` up to function arguments and constants, each used only
    inside the slice, holding exactly one bag reduction (a reduce, or a segment_reduce
    for a ragged bag) and at least one gather before it,
    and only elementwise ops after it; `value` is rank 2 and the concat runs along
    dim 1."""
    out = value.owner
    if not isinstance(out, graph.GraphOp) or len(shape_of(value.type)) != 2:
        return None

    def kind(op: Operation) -> bool | None:
        if isinstance(op, graph.ConstantOp):
            return False  # cloned into the kernel
        if not isinstance(op, graph.GraphOp) or len(op.results) != 1:
            return None
        cls = graph.op_class(op)
        if cls not in _COLUMN_KINDS and not isinstance(op, graph.ReshapeOp):
            return None
        if not isinstance(op, (graph.GatherOp, graph.SegmentReduceOp)) and cls == "gather":
            return None  # scatter, sort, window reductions: not a column's ops
        return True

    members = _slice(out, kind)
    if members is None:
        return None
    member_set = set(members)
    if not all(_uses_within(op, member_set, concat) for op in members):
        return None
    reduces = [op for op in members if isinstance(op, _BAGS)]
    if len(reduces) != 1:
        return None
    (r,) = reduces
    if len(shape_of(r.result.type)) != 2:
        return None
    # after the reduction: ops mapping element (row, dim) to the reduction's same
    # element (the kernel keeps one reduced value per thread), or a broadcast of data
    # that does not come from the reduction (a mean's scale)
    after = _downstream(r, member_set)
    from_r = after | {r}
    for op in after:
        if shape_of(op.results[0].type) != shape_of(r.result.type):
            return None
        if isinstance(op, graph.BroadcastOp):  # (its `like` operand gives sizes only)
            if isinstance(op.input.owner, Operation) and op.input.owner in from_r:
                return None
        elif not isinstance(op, _SAME_INDEX):
            return None
    before = member_set - after - {r}
    if not any(isinstance(op, graph.GatherOp) for op in before):
        return None
    return Column(tuple(members), value, r, structure_key(members, value))


def elementwise_producers(value: SSAValue, concat: Operation) -> list[Operation]:
    """The elementwise ops computing `value` (an operand of `concat` that is not a
    column) used by nothing else, producers first; empty when it is something else."""
    if not isinstance(value.owner, Operation):
        return []

    def kind(op: Operation) -> bool | None:
        if isinstance(op, graph.ConstantOp) or not isinstance(op, graph.GraphOp) or len(op.results) != 1 \
                or graph.op_class(op) not in ("light", "expensive") or isinstance(op, graph.ConcatOp):
            # another kernel's result (or a constant, cloned): an input
            return None if op is value.owner else False
        return True

    members = _slice(value.owner, kind)
    if members is None:
        return []
    member_set = set(members)
    if not all(_uses_within(op, member_set, concat) for op in members):
        return []
    return members


def _slice(root: Operation, kind: Callable[[Operation], bool | None]) -> list[Operation] | None:
    """The ops behind `root` (itself included) in post-order, producers first, so the
    slice's order is its structure, not where its ops sit in the block. `kind(op)`:
    True takes `op` and walks its operands, False leaves it out (an input), None
    abandons the slice, as does a slice of more than `MAX_COLUMN_OPS` ops."""
    members: list[Operation] = []
    expanded: set[Operation] = set()
    stack: list[tuple[Operation, bool]] = [(root, False)]
    while stack:
        op, done = stack.pop()
        if done:
            members.append(op)
            continue
        if op in expanded:
            continue
        take = kind(op)
        if take is None:
            return None
        if not take:
            continue
        expanded.add(op)
        if len(expanded) > MAX_COLUMN_OPS:
            return None
        stack.append((op, True))
        stack.extend((o.owner, False) for o in reversed(op.operands)
                     if isinstance(o.owner, Operation) and o.owner not in expanded)
    return members


def _downstream(r: Operation, members: set[Operation]) -> set[Operation]:
    out: set[Operation] = set()
    stack = [u.operation for u in r.results[0].uses if u.operation in members]
    while stack:
        op = stack.pop()
        if op not in out:
            out.add(op)
            stack.extend(u.operation for res in op.results for u in res.uses if u.operation in members)
    return out


def stretched_dims(op: Operation) -> tuple[int, ...]:
    """A broadcast's operand dims of size 1: they stretch (their code reads index 0),
    even where the size is a bag's, so a column with a bag of 1 there is not of the
    structure of one with a bag of 3."""
    if not isinstance(op, graph.BroadcastOp):
        return ()
    return tuple(a for a, d in enumerate(shape_of(op.input.type)) if d == 1)


def structure_key(ops: Sequence[Operation], output: SSAValue) -> tuple:
    """The structural hash of a column: its ops (name, operands by position — an op of
    the column, or an outside value by its shape —, properties, whether a gather's ids
    are proven in range (its code keeps or drops the clamp), result shapes), with
    what is per-column data abstracted: a table's row count, splat constants' values
    (a hash modulus, a bag's scale) and the bag's length (before the reduction, a dim
    of the bag's size is `BAG`; a column's loop runs to its own). Columns of one key
    take one schedule and share one code body."""
    where: dict[SSAValue, int] = {}
    parts: list = []
    reduces = [n for n, op in enumerate(ops) if isinstance(op, _BAGS)]
    bag: set[int] = set()
    ragged: SSAValue | None = None  # a ragged bag's offsets
    if reduces:
        r = ops[reduces[0]]
        if isinstance(r, graph.ReduceOp):
            bag = {shape_of(r.input.type)[d] for d in int_values(r.dims)} - {DYN}
        elif isinstance(r, graph.SegmentReduceOp):  # the rows of all examples' bags: dim 0 of its data
            bag = {shape_of(r.data.type)[0]} - {DYN}
            ragged = r.offsets

    def shape(v: SSAValue, before: bool, drop: int = 0) -> tuple:
        if ragged is not None:  # (only dim 0 counts the bags' rows; the offsets count examples)
            before = before and v is not ragged and drop == 0
            return tuple(BAG if before and a == 0 and d in bag else d for a, d in enumerate(shape_of(v.type)[drop:]))
        return tuple(BAG if before and d in bag else d for d in shape_of(v.type)[drop:])

    for n, op in enumerate(ops):
        before = bool(reduces) and n <= reduces[0]  # (the reduction's result is after the bag)
        operands = []
        for i, o in enumerate(op.operands):
            if o in where:
                operands.append(where[o])
            elif isinstance(o.owner, graph.ConstantOp) and graph.is_splat(o.owner.value):
                operands.append(("splat", shape(o, before), _elem(o)))
            elif isinstance(op, graph.GatherOp) and i == 0:
                operands.append(("table", shape(o, before, 1), _elem(o)))
            else:
                operands.append(("in", shape(o, before), _elem(o)))
        results = tuple((shape(r, before and not isinstance(op, _BAGS)), _elem(r)) for r in op.results)
        parts.append((op.name, tuple(operands), tuple(op.properties.items()),
                      isinstance(op, graph.GatherOp) and op.in_bounds is not None, results, stretched_dims(op)))
        where.update({r: n for r in op.results})
    parts.append(where[output])
    return tuple(parts)


def _elem(v: SSAValue):
    t = v.type
    assert isinstance(t, TensorType)  # graph values are tensors
    return t.element_type


def column_set(concat: graph.ConcatOp) -> ColumnSet | None:
    """The columns of `concat` (rank 2, along dim 1), None with fewer than
    `MIN_COLUMNS` or when the operands' batch dims are not one size."""
    if len(shape_of(concat.result.type)) != 2 or concat.dim.value.data != 1:
        return None
    seen: set[SSAValue] = set()
    columns: list[Column | None] = []
    for v in concat.operands:
        c = column_of(v, concat) if v not in seen else None
        seen.add(v)
        columns.append(c)
    if sum(c is not None for c in columns) < MIN_COLUMNS:
        return None
    # two columns must not share an op (an id hashed once for two tables is one slice of both)
    owned: set[Operation] = set()
    for i, c in enumerate(columns):
        if c is None:
            continue
        if owned.intersection(c.ops):
            columns[i] = None
        else:
            owned.update(c.ops)
    if sum(c is not None for c in columns) < MIN_COLUMNS:
        return None
    batch = shape_of(concat.result.type)[0]
    if batch != DYN and any(shape_of(v.type)[0] != batch for v in concat.operands):
        return None
    s = ColumnSet(concat, columns)
    for v, c in zip(concat.operands, columns):
        if c is None:
            chain = elementwise_producers(v, concat)
            if owned.isdisjoint(chain):
                owned.update(chain)
                s.copied.extend(chain)
    for i, c in enumerate(columns):
        if c is not None:
            s.clusters.setdefault(c.key, []).append(i)
    return s


def column_sets(ops: Iterable[Operation]) -> list[ColumnSet]:
    """Every concat of `ops` whose operands are mostly columns, as a `ColumnSet`
    (disjoint: an op belongs to at most one)."""
    out: list[ColumnSet] = []
    taken: set[Operation] = set()
    for op in ops:
        if isinstance(op, graph.ConcatOp) and op not in taken:
            s = column_set(op)
            if s is not None and taken.isdisjoint(s.ops):
                taken.update(s.ops)
                out.append(s)
    return out


def exact_column_set(ops: Sequence[Operation]) -> ColumnSet | None:
    """The column set that is exactly `ops` (constants aside), else None: what the
    `columns` mapping claims."""
    concats = [op for op in ops if isinstance(op, graph.ConcatOp)]
    others = {op for op in ops if not isinstance(op, graph.ConstantOp)}
    for concat in concats:
        if len(concat.operands) < MIN_COLUMNS:
            continue
        s = column_set(concat)
        if s is not None and set(s.ops) == others:
            return s
    return None


def block_column_sets(block: Block) -> list[ColumnSet]:
    return column_sets(op for op in block.ops if not op.has_trait(IsTerminator))


# -- the explorer's hook ----------------------------------------------------------------


def fixed_column_patterns(g, ev) -> list:
    """One pattern per column set of the dataflow graph `g` (a `DataflowGraph`), its
    ops taken out of the explorer's search (no longer `fusible`), so the search runs on
    the rest of the graph only. `ev`: the explorer's `DeltaEvaluator`."""
    patterns = []
    for s in column_sets(g.ops):
        members = frozenset(g.index[op] for op in s.ops)
        if not all(g.fusible[m] for m in members):
            continue  # dead, or something the explorer never fuses
        patterns.append(ev.of(members, g.index[s.concat]))
        for m in members:
            g.fusible[m] = False
    return patterns
