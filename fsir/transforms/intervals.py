"""Interval analysis of integer graph values, and the `prove-gather-bounds` pass.

Every integer tensor gets an inclusive range [lo, hi] holding all its elements (RECom,
§ column-subgraph optimisation: after hashing or bucketising, the ids an embedding
lookup reads are already in range, so its bounds check is redundant). A value nothing
is known about — a function argument, a float converted to an integer, a bitcast — has
its element type's full range; every rule below is sound for any run-time input,
including `?` sizes, and falls back to the full range where arithmetic could wrap.

`prove-gather-bounds` marks each `graph.gather` whose ids lie in [0, rows-1] of a
static-row table with `in_bounds`; the lowering then loads the table row without the
clamp every other gather keeps (fsir/lowering/emit.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from fsir.dialects import graph
from fsir.dialects.graph import DYN, is_bool, is_int, numpy_dtype, shape_of, tensor_type


@dataclass(frozen=True)
class Interval:
    """All elements lie in [lo, hi] (inclusive)."""

    lo: int
    hi: int

    def hull(self, other: Interval) -> Interval:
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

    def within(self, lo: int, hi: int) -> bool:
        return lo <= self.lo and self.hi <= hi

    def __str__(self) -> str:
        return f"[{self.lo}, {self.hi}]"


def type_range(value: SSAValue) -> Interval | None:
    """The range of the value's integer element type (i1 as 0/1); None for floats."""
    elem = value.type.element_type if isinstance(value.type, builtin.TensorType) else None
    if elem is None or not is_int(elem):
        return None
    if is_bool(elem):
        return Interval(0, 1)
    info = np.iinfo(numpy_dtype(elem))
    return Interval(int(info.min), int(info.max))


def _fit(value: SSAValue, lo: int, hi: int) -> Interval | None:
    """[lo, hi] if the element type holds it, else the type's full range (the
    operation may have wrapped)."""
    full = type_range(value)
    if full is None:
        return None
    return Interval(lo, hi) if Interval(lo, hi).within(full.lo, full.hi) else full


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


Rule = Callable[[Operation, list["Interval | None"], SSAValue], "Interval | None"]


def _binary(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    x, y = ins
    if x is None or y is None:
        return None
    kind = op.name.removeprefix("graph.")
    if kind == "add":
        return _fit(out, x.lo + y.lo, x.hi + y.hi)
    if kind == "sub":
        return _fit(out, x.lo - y.hi, x.hi - y.lo)
    if kind == "mul":
        corners = [a * b for a in (x.lo, x.hi) for b in (y.lo, y.hi)]
        return _fit(out, min(corners), max(corners))
    if kind == "max":
        return Interval(max(x.lo, y.lo), max(x.hi, y.hi))
    if kind == "min":
        return Interval(min(x.lo, y.lo), min(x.hi, y.hi))
    if kind == "rem":
        # sign of the dividend, |result| < |divisor|; a zero divisor is excluded
        # only when the divisor's range excludes it
        if y.lo <= 0 <= y.hi:
            return None
        m = max(abs(y.lo), abs(y.hi)) - 1
        if x.lo >= 0:
            return Interval(0, min(x.hi, m))
        if x.hi <= 0:
            return Interval(max(x.lo, -m), 0)
        return Interval(-m, m)
    if kind == "div":
        if y.lo <= 0 <= y.hi:
            return None
        corners = [_trunc_div(a, b) for a in (x.lo, x.hi) for b in (y.lo, y.hi)]
        return _fit(out, min(corners), max(corners))
    if kind == "and":
        # a non-negative operand bounds the result (the other's bits are masked off)
        bounds = [r.hi for r in (x, y) if r.lo >= 0]
        return Interval(0, min(bounds)) if bounds else None
    if kind == "shr" and x.lo >= 0 and y.lo >= 0:
        width = np.iinfo(numpy_dtype(tensor_type(out).element_type)).bits
        if y.hi < width:
            return Interval(x.lo >> y.hi, x.hi >> y.lo)
    return None


def _abs(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    (x,) = ins
    full = type_range(out)
    if x is None or full is None or x.lo == full.lo:  # abs(INT_MIN) wraps to INT_MIN
        return None
    if x.lo >= 0:
        return x
    if x.hi <= 0:
        return Interval(-x.hi, -x.lo)
    return Interval(0, max(-x.lo, x.hi))


def _neg(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    (x,) = ins
    return None if x is None else _fit(out, -x.hi, -x.lo)


def _constant(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    assert isinstance(op, graph.ConstantOp)
    values = graph.stored_values(op.value)
    if values.size == 0:
        return None
    if is_bool(op.value.get_element_type()):
        values = values != 0
    return Interval(int(values.min()), int(values.max()))


def _iota(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    assert isinstance(op, graph.IotaOp)
    size = shape_of(op.result_type)[op.dim.value.data]
    full = type_range(out)
    if full is None:
        return None
    return Interval(0, full.hi) if size == DYN else _fit(out, 0, max(size - 1, 0))


def _convert(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    (x,) = ins
    if x is None or type_range(op.operands[0]) is None:
        return None  # from a float: anything (saturated)
    if is_bool(tensor_type(op.results[0]).element_type):
        return Interval(0 if x.lo <= 0 <= x.hi else 1, 0 if x.lo == x.hi == 0 else 1)
    return _fit(out, x.lo, x.hi)


def _select(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    _, a, b = ins
    return None if a is None or b is None else a.hull(b)


def _hull_all(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    if not ins or any(i is None for i in ins):
        return None
    result = ins[0]
    assert result is not None
    for i in ins[1:]:
        assert i is not None
        result = result.hull(i)
    return result


def _first(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    return ins[0]


def _gather(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    return ins[0]  # the table's elements


def _sort(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    return ins[1]  # the values, permuted


def _reduce(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    assert isinstance(op, graph.ReduceOp)
    (x,) = ins
    if x is None:
        return None
    kind = op.kind.data
    if kind in (graph.ReduceKind.MAX, graph.ReduceKind.MIN):
        return x
    sizes = [shape_of(op.input.type)[d] for d in op.dims.get_values()]
    if kind != graph.ReduceKind.SUM or DYN in sizes:
        return None
    n = math.prod(sizes)  # a sum of n elements, each in [lo, hi] (e.g. a bucketise count)
    return _fit(out, x.lo * n, x.hi * n)


def _segment_reduce(op: Operation, ins: list[Interval | None], out: SSAValue) -> Interval | None:
    assert isinstance(op, graph.SegmentReduceOp)
    x = ins[0]
    if x is None or op.kind.data not in (graph.SegmentKind.MAX, graph.SegmentKind.MIN):
        return None  # a sum over a segment of unknown length
    return x.hull(Interval(0, 0))  # an empty segment gives 0


_COMPARE = Interval(0, 1)


RULES: dict[type[Operation], Rule] = {
    graph.ConstantOp: _constant,
    graph.IotaOp: _iota,
    graph.ConvertOp: _convert,
    graph.SelectOp: _select,
    graph.CompareOp: lambda op, ins, out: _COMPARE,
    graph.BroadcastOp: _first,
    graph.ReshapeOp: _first,
    graph.TransposeOp: _first,
    graph.SliceOp: _first,
    graph.ConcatOp: _hull_all,
    graph.PadOp: _hull_all,
    graph.GatherOp: _gather,
    graph.SortOp: _sort,
    graph.ReduceOp: _reduce,
    graph.SegmentReduceOp: _segment_reduce,
    graph.ELEMENTWISE_OPS["abs"]: _abs,
    graph.ELEMENTWISE_OPS["neg"]: _neg,
    **{graph.ELEMENTWISE_OPS[k]: _binary for k in ("add", "sub", "mul", "max", "min", "rem", "div", "and", "shr")},
}


class Intervals:
    """The ranges of a function's integer values, computed once in block order (SSA
    order: producers first) without recursion, so the walk scales with the graph."""

    def __init__(self, region_op: Operation):
        self.ranges: dict[SSAValue, Interval | None] = {}
        for op in region_op.walk():
            if not isinstance(op, graph.GraphOp) or len(op.results) != 1:
                continue
            rule = RULES.get(type(op))
            out = op.results[0]
            full = type_range(out)
            if full is None:
                continue
            found = rule(op, [self.of(o) for o in op.operands], out) if rule is not None else None
            # a rule's range never exceeds what the type can hold
            self.ranges[out] = full if found is None else Interval(max(found.lo, full.lo), min(found.hi, full.hi))

    def of(self, value: SSAValue) -> Interval | None:
        """The value's range; the type's full range when nothing is known, None for floats."""
        if value in self.ranges:
            return self.ranges[value]
        return type_range(value)


def ids_in_bounds(op: graph.GatherOp, intervals: Intervals) -> bool:
    """Whether every id of the gather provably lies in [0, rows-1]."""
    rows = shape_of(op.table.type)[0]
    ids = intervals.of(op.ids)
    return rows != DYN and ids is not None and ids.within(0, rows - 1)


@dataclass(frozen=True)
class ProveGatherBoundsPass(ModulePass):
    """Mark gathers whose ids the interval analysis proves in range with `in_bounds`."""

    name = "prove-gather-bounds"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        from xdsl.dialects import func

        for f in op.walk():
            if not isinstance(f, func.FuncOp) or f.is_declaration:
                continue
            intervals = Intervals(f)
            for inner in f.body.walk():
                if isinstance(inner, graph.GatherOp) and ids_in_bounds(inner, intervals):
                    inner.attributes["in_bounds"] = UnitAttr()
