"""The row mapping's legality, kept up to date while the explorer grows a set one
producer at a time (`capability.can_extend`).

`RowMapping.accepts` walks from every reduction's input and every output up through the
set to the sub-roots (the reductions' results) and checks each read it finds
(`row_problem`): O(set) per question. The explorer grows patterns by adding a producer
`op` on top of a set it checked before; `op` reads nothing inside the set, so nothing
below it changes. What the walks need is kept per op instead, pointing the other way:
`demand[op][k]` is the set of (check, index) pairs at which the set's reductions and
outputs read `op`'s k-th operand (a reduction's input is read by that reduction's
locality check; an elementwise op passes its readers' demands to its operands through
its index rule). Adding `op` on top then costs its uses: the reads that reach its
result are its readers' demands, and only when `op` is a reduction are they checked
(they become sub-root reads). A set grown this way is accepted exactly when
`row_problem` accepts it; anything the kept facts cannot settle (a failing check, a
new row shape, a mapping other than `row` claiming the set) answers NotImplemented, so
the caller asks the full check, which also words the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from fsir.codegen.locality import local, row_dims_of
from fsir.codegen.mappings.row import memo_operand_syms
from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.dialects.schedule import int_values

# Ops that let a mapping other than `row` claim a set with reductions (`MAPPINGS` order).
_CLAIMED_ELSEWHERE = (graph.DotOp, graph.ConvOp, graph.ConcatOp, graph.SegmentReduceOp)

# A check a read must pass: ("r", kept dims) for a reduction's locality, ("o", value)
# for an output's row split; a demand is a (check, symbolic index) pair.
Demand = frozenset[tuple[tuple, tuple]]
NONE: Demand = frozenset()


class _Demands:
    """op -> demand per operand, as a chain: each grown set adds its new op's entry
    in front of the set it grew from, which it shares."""

    __slots__ = ("op", "entry", "table", "parent")

    def __init__(self, op: Operation | None, entry: tuple[Demand, ...] | None,
                 table: dict[Operation, tuple[Demand, ...]] | None, parent: _Demands | None):
        self.op, self.entry, self.table, self.parent = op, entry, table, parent

    def get(self, op: Operation) -> tuple[Demand, ...] | None:
        node: _Demands | None = self
        while node is not None:
            if node.table is not None:
                return node.table.get(op)
            if node.op is op:
                return node.entry
            node = node.parent
        return None


@dataclass(frozen=True)
class RowSet:
    """What the incremental check keeps of a set `row_problem` accepts: its row shape,
    each op's demands on its operands, and the sub-root reads of its outputs that
    read any."""

    row_shape: tuple[int, ...]
    demands: _Demands
    out_reads: dict[SSAValue, frozenset[tuple]]


def _identity(v: SSAValue) -> tuple:
    return tuple(range(len(shape_of(v.type))))


def _result_demand(op: Operation, uses_of: Callable[[Operation], tuple[Demand, ...] | None],
                   inside: Callable[[Operation], bool]) -> Demand | None:
    """The (check, index) pairs at which the set reads `op`'s results (None: a reader's
    demands are unknown)."""
    out: set = set()
    for r in op.results:
        for u in r.uses:
            user = u.operation
            if not inside(user):
                out.add((("o", r), _identity(r)))
                continue
            entry = uses_of(user)
            if entry is None:
                return None
            out.update(entry[u.index])
    return frozenset(out)


def _operand_demands(op: Operation, demand: Demand) -> tuple[Demand, ...]:
    """What `op` demands of its operands when its results are read as `demand`."""
    if isinstance(op, graph.ReduceOp):
        rank = len(shape_of(op.input.type))
        reduced = set(int_values(op.dims))
        check = ("r", tuple(d for d in range(rank) if d not in reduced))
        return tuple(frozenset(((check, tuple(range(rank))),)) if o is op.input else NONE for o in op.operands)
    per: list[set] = [set() for _ in op.operands]
    for check, syms in demand:
        for k, s in enumerate(memo_operand_syms(op, syms)):
            per[k].add((check, s))
    return tuple(frozenset(p) for p in per)


def row_set(ops: Sequence[Operation]) -> RowSet | None:
    """The kept facts of `ops`, a set `RowMapping.accepts` accepts (in block order);
    None when it holds no reduction or a mapping other than `row` may claim it."""
    reduces = [op for op in ops if isinstance(op, graph.ReduceOp)]
    if not reduces or any(isinstance(op, _CLAIMED_ELSEWHERE) for op in ops):
        return None
    inside = set(ops)
    table: dict[Operation, tuple[Demand, ...]] = {}
    out_reads: dict[SSAValue, set] = {}
    for op in reversed(ops):  # readers first
        demand = _result_demand(op, table.get, inside.__contains__)
        assert demand is not None  # every reader inside comes later in block order
        if isinstance(op, graph.ReduceOp):
            _collect(out_reads, demand, op)
        table[op] = _operand_demands(op, demand)
    return RowSet(shape_of(reduces[0].result.type), _Demands(None, None, table, None),
                  {o: frozenset(s) for o, s in out_reads.items()})


def _collect(out_reads: dict[SSAValue, set], demand: Iterable[tuple[tuple, tuple]], reduce: Operation) -> None:
    """The outputs' reads of the sub-root `reduce` (its own result, an output too, is a
    sub-root: the rules do not split it)."""
    for (kind, what), syms in demand:
        if kind == "o" and what.owner is not reduce:
            out_reads.setdefault(what, set()).add(syms)


def grow(known: RowSet, op: Operation, inside: Callable[[Operation], bool]) -> tuple[bool, RowSet | None]:
    """Whether the accepted set `known` describes, grown by its producer `op` (`inside`:
    membership of the grown set), stays one row kernel, and its kept facts: (True, ...)
    when it does; (False, None) when these facts cannot tell (ask `accepts`)."""
    demand = _result_demand(op, known.demands.get, inside)
    if demand is None or isinstance(op, _CLAIMED_ELSEWHERE):
        return False, None
    out_reads = known.out_reads
    if isinstance(op, graph.ReduceOp):
        row_shape = known.row_shape
        if shape_of(op.result.type) != row_shape:
            return False, None
        new: dict[SSAValue, set] = {}
        for (kind, what), syms in demand:
            if kind == "r":
                if not local(syms, what, row_shape):
                    return False, None
            elif what.owner is not op and syms not in out_reads.get(what, ()):
                new.setdefault(what, set()).add(syms)
        if new:
            out_reads = dict(out_reads)
            for o, reads in new.items():
                merged = out_reads.get(o, frozenset()) | reads
                if row_dims_of(shape_of(o.type), row_shape, list(merged)) is None:
                    return False, None
                out_reads[o] = merged
    entry = _operand_demands(op, demand)
    return True, RowSet(known.row_shape, _Demands(op, entry, None, known.demands), out_reads)
