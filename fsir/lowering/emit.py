"""Index propagation to scalar code: the value of one element of a graph value.

`ElementEmitter.at(v, idx)` emits the scalar code computing `v[idx]` for the current
thread: a kernel input is a load from its flat global buffer; an earlier group's
result is the per-row value it left in registers or shared memory (a reduction) or
the element of the thread's row it left there (an expensive elementwise sub-root);
a graph op maps the index to its operands' indices by its own rule
(`GraphOp.operand_indices`: broadcast drops dims, transpose permutes, slice scales and
shifts, reshape re-linearises; concat and gather select) and combines their scalars by
its row of `ELEMENT_RULES`. Results are memoised per (value, index) in the current scope, so a value used
twice at one index is computed once (FusionStitching §4.5).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import splat_value
from fsir.errors import UserError
from fsir.ir import location_of
from fsir.lowering.moments import combine_moments_element, tile_moments_element
from fsir.lowering.scalar import (
    Cursor,
    Index,
    IndexBuilder,
    ScalarBuilder,
    compute_type,
    is_float_type,
)
from fsir.lowering.shapes import ShapeCalc


def elem_type(v: SSAValue) -> Attribute:
    """The element type of a tensor value."""
    t = v.type
    assert isinstance(t, TensorType)
    return t.element_type


def canonical_index(v: SSAValue, idx: Sequence[Index]) -> list[Index]:
    """`idx` with the coordinate of every static size-1 dim of `v` made 0, the only
    valid one, where a reader of a size-1 dim (a broadcast) asks. Memo keys stay the
    index as given: a provider's index may lie outside the tensor (a guarded lane's
    identity value), and made canonical it would stand for the real element 0, so a
    provider whose coordinates are known valid provides at this index too
    (`provide_row_reductions`: a batch of one on grid z)."""
    t = v.type
    if not isinstance(t, TensorType):
        return list(idx)
    return [0 if d == 1 else i for i, d in zip(idx, graph.shape_of(t))]


# The reduction by which each scatter kind but `none` combines an update with the value.
_SCATTER_COMBINE = {
    graph.ScatterKind.ADD: graph.ReduceKind.SUM, graph.ScatterKind.MUL: graph.ReduceKind.PROD,
    graph.ScatterKind.MAX: graph.ReduceKind.MAX, graph.ScatterKind.MIN: graph.ReduceKind.MIN,
}


class ElementEmitter:
    def __init__(self, cursor: Cursor, shapes: ShapeCalc, buffers: dict[SSAValue, SSAValue],
                 row_values: dict[SSAValue, SSAValue]):
        self.c = cursor
        self.ib = IndexBuilder(cursor)
        self.sb = ScalarBuilder(cursor)
        self.shapes = shapes
        self.buffers = buffers  # kernel inputs and constant buffers -> flat memref
        self.row_values = row_values  # earlier groups' results -> this row's scalar
        # expensive elementwise sub-roots' group results -> (the op's value, the shared
        # buffer holding the thread's row or None when it stays in registers, the row's
        # offset in it, the row dims): read per element
        self.row_elements: dict[SSAValue, tuple[SSAValue, SSAValue | None, Index, list[int]]] = {}

    # -- helpers -----------------------------------------------------------------------

    def load(self, buf: SSAValue, offset: Index) -> SSAValue:
        v = self.c.value(memref.LoadOp.get(buf, [self.ib.ssa(offset)]))
        return self.sb.widen(v)

    def store(self, value: SSAValue, buf: SSAValue, offset: Index, elem) -> None:
        self.c.insert(memref.StoreOp.get(self.sb.narrow(value, elem), buf, [self.ib.ssa(offset)]))

    def guarded(self, cond: bool | SSAValue, then: Callable[[], SSAValue], default: Callable[[], SSAValue]) -> SSAValue:
        """`cond ? then() : default()`, evaluating only the taken side (loads stay in bounds)."""
        if isinstance(cond, bool):
            return then() if cond else default()
        then_block, else_block = Block(), Block()
        with self.c.at(then_block):
            t = then()
            then_block.add_op(scf.YieldOp(t))
        with self.c.at(else_block):
            e = default()
            else_block.add_op(scf.YieldOp(e))
        op = scf.IfOp(cond, [t.type], Region(then_block), Region(else_block))
        self.c.insert(op)
        return op.results[0]

    def when(self, cond: bool | SSAValue, body: Callable[[], object]) -> None:
        """`if (cond) body()` with no results."""
        if isinstance(cond, bool):
            if cond:
                body()
            return
        block = Block()
        with self.c.at(block):
            body()
            block.add_op(scf.YieldOp())
        self.c.insert(scf.IfOp(cond, [], Region(block), Region()))

    def for_loop(self, lb: Index, ub: Index, step: Index, inits: Sequence[SSAValue],
                 body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]], hoist: bool = False) -> list[SSAValue]:
        """An scf.for; with `hoist` (and static bounds of at least one iteration) the
        loads of kernel inputs at indices invariant in the loop are made once before it
        (`_compute`)."""
        from xdsl.dialects.builtin import IndexType

        block = Block(arg_types=[IndexType(), *[v.type for v in inits]])
        runs = isinstance(lb, int) and isinstance(ub, int) and lb < ub
        with self.c.at(block, hoistable=hoist and runs):
            out = body(block.args[0], list(block.args[1:]))
            block.add_op(scf.YieldOp(*out))
        op = scf.ForOp(self.ib.ssa(lb), self.ib.ssa(ub), self.ib.ssa(step), list(inits), block)
        self.c.insert(op)
        return list(op.results)

    def and_(self, a: bool | SSAValue, b: bool | SSAValue) -> bool | SSAValue:
        from xdsl.dialects import arith

        if isinstance(a, bool):
            return b if a else False
        if isinstance(b, bool):
            return a if b else False
        return self.c.value(arith.AndIOp(a, b))

    # -- index propagation -------------------------------------------------------------

    def at(self, v: SSAValue, idx: Sequence[Index]) -> SSAValue:
        if v in self.row_values:
            return self.row_values[v]
        key = self._element_key(v, idx)
        found = self.c.lookup(key)
        if found is not None:
            return found
        out = self._compute(v, list(idx))
        self.c.memo()[key] = out
        return out

    @staticmethod
    def _element_key(v: SSAValue, idx: Sequence[Index]) -> tuple:
        return ("elem", id(v), tuple(("c", i) if isinstance(i, int) else ("v", id(i)) for i in idx))

    def provide(self, v: SSAValue, idx: Sequence[Index], value: SSAValue) -> None:
        """Make `value` the element `idx` of `v` for the rest of the current scope and
        the blocks nested in it (a value loaded once before a loop that reads it)."""
        self.c.memo()[self._element_key(v, idx)] = value

    def _compute(self, v: SSAValue, idx: list[Index]) -> SSAValue:
        ib = self.ib
        if v in self.buffers:
            level = self.c.hoist_level([i for i in idx if not isinstance(i, int)])
            if level < self.c.level:
                return self._hoisted_load(v, idx, level)
            return self.load(self.buffers[v], ib.linearize(idx, self.shapes.dims(v)))
        if v in self.row_elements:
            inner, buf, base, row_dims = self.row_elements[v]
            if buf is None:  # in registers: the sub-root's group computed it at this index
                return self.at(inner, idx)
            dims = self.shapes.dims(v)
            cols = [d for d in range(len(dims)) if d not in row_dims]
            return self.load(buf, ib.add(base, ib.linearize([idx[d] for d in cols], [dims[d] for d in cols])))
        op = v.owner
        rule = _element_rule(type(op))
        if rule is None:
            assert isinstance(op, Operation)  # block arguments are buffers
            raise UserError(f"'{op.name}' op cannot be computed per element here: it must lead a group of a row "
                            "kernel (a reduction) or be a gemm kernel's root (a dot)", location_of(op))
        return rule(self, op, idx)

    def _hoisted_load(self, v: SSAValue, idx: list[Index], level: int) -> SSAValue:
        """The input element `idx` (invariant in the loops inside `level`) loaded at
        `level`, before those loops, once for every reader there (a bias a staging
        loop adds to each row it stages)."""
        outer = [i if isinstance(i, int) else self.c.rebuilt(i, level) for i in idx]
        with self.c.hoisted(level):
            key = self._element_key(v, outer)
            found = self.c.lookup(key)
            if found is None:
                found = self.load(self.buffers[v], self.ib.linearize(outer, self.shapes.dims(v)))
                self.c.memo()[key] = found
        return found

    def operands_at(self, op: graph.GraphOp, idx: list[Index]) -> list[SSAValue]:
        """The operands' scalars read by the result's element `idx` (the op's index rule)."""
        indices = op.operand_indices(idx, self.shapes.dims, self.ib)
        assert indices is not None
        return [self.at(o, i) for o, i in zip(op.operands, indices)]

    def _concat(self, op: graph.ConcatOp, idx: list[Index]) -> SSAValue:
        dim = op.dim
        assert isinstance(dim, IntegerAttr)  # graph.concat's verifier
        d = dim.value.data
        operands = list(op.operands)
        offsets = op.offsets(self.shapes.dims, self.ib)

        # a binary search over the operands' offsets: log2(operands) nested branches (a
        # concat of thousands of columns would otherwise nest one branch per operand)
        def pieces(lo: int, hi: int) -> SSAValue:
            if hi - lo == 1:
                return self.at(operands[lo], op.operand_index(lo, idx, offsets, self.ib))
            mid = (lo + hi) // 2
            return self.guarded(self.ib.lt(idx[d], offsets[mid]), lambda: pieces(lo, mid), lambda: pieces(mid, hi))

        return pieces(0, len(operands))

    def _gather(self, op: graph.GatherOp, idx: list[Index]) -> SSAValue:
        ib = self.ib
        row = self.sb.to_index(self.at(op.ids, op.ids_index(idx)))
        rows = self.shapes.dims(op.table)[0]
        if op.in_bounds is None:  # ids are clamped, as XLA does, unless proven in range
            row = ib.min(ib.max(row, 0), ib.sub(rows, 1))
        return self.at(op.table, op.table_index(row, idx))

    def _scatter(self, op: graph.ScatterOp, idx: list[Index]) -> SSAValue:
        """The operand's element, then every update in order whose point is this
        element's (a loop over all updates: O(updates) per element, exact and
        deterministic, no atomics)."""
        ib, sb = self.ib, self.sb
        point = op.point(idx)
        window = op.window_index(idx)
        batch = list(self.shapes.dims(op.indices))[:-1]
        elem = elem_type(op.result)
        kind = op.kind.data

        def body(b: SSAValue, carry: list[SSAValue]) -> list[SSAValue]:
            bidx = ib.delinearize(b, batch)
            hit: bool | SSAValue = True
            for j, p in enumerate(point):
                hit = self.and_(hit, ib.eq(sb.to_index(self.at(op.indices, [*bidx, j])), p))
            update = self.at(op.updates, [*bidx, *window])
            new = update if kind == graph.ScatterKind.NONE else sb.round_to(
                sb.combine(_SCATTER_COMBINE[kind], carry[0], update), elem)
            return [new if isinstance(hit, bool) else sb.select(hit, new, carry[0])]

        start = self.at(op.input, idx)
        return self.for_loop(0, ib.prod(batch), 1, [start], body)[0]

    def _sort(self, op: graph.SortOp, idx: list[Index]) -> SSAValue:
        """The value whose key has exactly idx[dim] keys before it in the order (a
        stable rank: key_i before key_j when it is smaller, NaN after numbers, or equal
        with i < j): O(n) ranks of O(n) comparisons per element."""
        ib, sb = self.ib, self.sb
        d = op.dim.value.data
        n = graph.shape_of(op.keys.type)[d]
        if n == graph.DYN:  # the verifier takes static sort dims only
            n = graph.shape_of(op.values.type)[d]
        descending = op.direction.data == graph.SortDirection.DESCENDING

        def at_dim(v: SSAValue, i: Index) -> SSAValue:
            return self.at(v, [*idx[:d], i, *idx[d + 1:]])

        def before(a: SSAValue, b: SSAValue) -> SSAValue:
            """a strictly precedes b in the key order."""
            less = sb.compare("gt" if descending else "lt", a, b)
            if not is_float_type(a.type):
                return less
            a_nan, b_nan = sb.compare("ne", a, a), sb.compare("ne", b, b)
            # ascending: a number precedes NaN; descending: NaN precedes a number
            first, second = (b_nan, a_nan) if not descending else (a_nan, b_nan)
            return sb.arith("or", less, sb.arith("and", first, sb.not_(second)))

        def rank_of(j: SSAValue) -> SSAValue:
            kj = at_dim(op.keys, j)

            def count(i: SSAValue, carry: list[SSAValue]) -> list[SSAValue]:
                ki = at_dim(op.keys, i)
                tie = sb.arith("and", sb.not_(before(ki, kj)), sb.not_(before(kj, ki)))
                earlier = self.ib.lt(i, j)
                assert not isinstance(earlier, bool)
                first = sb.arith("or", before(ki, kj), sb.arith("and", tie, earlier))
                return [ib.ssa(ib.select(first, ib.add(carry[0], 1), carry[0]))]

            return self.for_loop(0, n, 1, [ib.const(0)], count)[0]

        def pick(j: SSAValue, carry: list[SSAValue]) -> list[SSAValue]:
            hit = ib.eq(rank_of(j), idx[d])
            assert not isinstance(hit, bool)
            return [sb.select(hit, at_dim(op.values, j), carry[0])]

        return self.for_loop(0, n, 1, [self.at(op.values, idx)], pick)[0]


    def _pad(self, op: graph.PadOp, idx: list[Index]) -> SSAValue:
        """The operand's element at the pad's index rule; in constant mode the value
        operand where `idx` lies in the padding. The rule's position is clamped into
        the operand, so its load needs no guard unless a dim may be empty."""
        (xi, *_) = op.operand_indices(idx, self.shapes.dims, self.ib)
        if op.value is None:
            return self.at(op.input, xi)
        inside: bool | SSAValue = True
        for c in op.inside(idx, self.shapes.dims, self.ib):
            inside = self.and_(inside, c)
        value = op.value
        if isinstance(inside, bool):
            return self.at(op.input, xi) if inside else self.at(value, [])
        if all(isinstance(d, int) and d > 0 for d in self.shapes.dims(op.input)):
            return self.sb.select(inside, self.at(op.input, xi), self.at(value, []))
        return self.guarded(inside, lambda: self.at(op.input, xi), lambda: self.at(value, []))

    def _reduce_window(self, op: graph.ReduceWindowOp, idx: list[Index]) -> SSAValue:
        """The window reduced by a serial loop per windowed dim (the window is small);
        positions in the padding are skipped (they hold the identity)."""
        ib, sb = self.ib, self.sb
        kind = op.kind.data
        elem = elem_type(op.result)
        ct = compute_type(elem)
        window = op.params()[0]
        looped = [d for d, k in enumerate(window) if k > 1]
        dims = self.shapes.dims(op.input)

        def element(offsets: list[Index], acc: SSAValue) -> SSAValue:
            pos = op.window_index(idx, offsets, ib)
            inside: bool | SSAValue = True
            for d, p in enumerate(pos):
                below, above = op.may_leave(d)
                if below:
                    inside = self.and_(inside, ib.lt(-1, p))
                if above:
                    inside = self.and_(inside, ib.lt(p, dims[d]))
            return self.guarded(inside, lambda: sb.combine(kind, acc, self.at(op.input, pos)), lambda: acc)

        def loop(level: int, offsets: list[Index], acc: SSAValue) -> SSAValue:
            if level == len(looped):
                return element(offsets, acc)
            d = looped[level]

            def body(iv: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
                inner = list(offsets)
                inner[d] = iv
                return [loop(level + 1, inner, carried[0])]

            return self.for_loop(0, window[d], 1, [acc], body)[0]

        out = loop(0, [0] * len(window), sb.reduce_init(kind, ct))
        return sb.round_to(out, elem)

    def _segment_reduce(self, op: graph.SegmentReduceOp, idx: list[Index]) -> SSAValue:
        """A loop over the element's segment: rows [start, end) of the data at the
        element's other coordinates, the bounds loaded from the offsets and clamped into
        the data (the next segment's start is read only where one exists)."""
        ib, sb = self.ib, self.sb
        elem = elem_type(op.result)
        ct = compute_type(elem)
        rows = self.shapes.dims(op.data)[0]
        segments = self.shapes.dims(op.offsets)[0]

        def offset(s: Index) -> SSAValue:
            return ib.ssa(ib.min(ib.max(sb.to_index(self.at(op.offsets, [s])), 0), rows))

        seg = idx[0]
        start = offset(seg)
        following = ib.add(seg, 1)
        end = self.guarded(ib.lt(following, segments), lambda: offset(following), lambda: ib.ssa(rows))
        kind = op.combine_kind()

        def body(j: SSAValue, carry: list[SSAValue]) -> list[SSAValue]:
            return [sb.combine(kind, carry[0], self.at(op.data, [j, *idx[1:]]))]

        acc = self.for_loop(start, end, 1, [sb.reduce_init(kind, ct)], body)[0]
        if op.kind.data == graph.SegmentKind.MEAN:  # an empty segment's sum is 0: 0 / 1
            acc = sb.arith("div", acc, sb.index_to(ib.max(ib.sub(end, start), 1), ct))
        elif kind != graph.ReduceKind.SUM:  # an empty segment gives 0, not the identity
            nonempty = ib.lt(start, end)
            assert not isinstance(nonempty, bool)
            acc = sb.select(nonempty, acc, sb.const(0, ct))
        return sb.round_to(acc, elem)


ElementRule = Callable[[ElementEmitter, Any, list[Index]], SSAValue]


def _forward(e: ElementEmitter, op: graph.GraphOp, idx: list[Index]) -> SSAValue:
    """Index-only ops: the operand's element at the propagated index."""
    return e.operands_at(op, idx)[0]


def reshape_groups(src: Sequence[int], dst: Sequence[int]) -> list[tuple[range, range]] | None:
    """The dims of a reshape's input (`src`) and result (`dst`) as consecutive groups of
    equal size, the finest such split: (input dims, result dims) per group, e.g. [2, 128,
    768] and [2, 128, 12, 64] as [2]/[2], [128]/[128], [768]/[12, 64]. None when a size is
    `?` or 0."""
    if graph.DYN in src or graph.DYN in dst or 0 in src or 0 in dst:
        return None
    groups = []
    i = j = 0
    while i < len(src) or j < len(dst):
        i0, j0, ps, pd = i, j, 1, 1
        if i < len(src):
            ps, i = src[i], i + 1
        if j < len(dst):
            pd, j = dst[j], j + 1
        while ps != pd:  # (the sizes are equal overall: the smaller side has dims left)
            if ps < pd:
                ps, i = ps * src[i], i + 1
            else:
                pd, j = pd * dst[j], j + 1
        groups.append((range(i0, i), range(j0, j)))
    return groups


def _reshape(e: ElementEmitter, op: graph.ReshapeOp, idx: list[Index]) -> SSAValue:
    """The input's element, its index re-linearised per group of dims (`reshape_groups`)
    rather than whole: splitting [.., 768] into [.., 12, 64] reads column h·64 + c, an
    index that depends on h and c only (not on the other dims, as a remainder of the
    whole offset would), so a load at it is seen to be the same for every row. An index
    delinearised from a whole offset (a row kernel's element) keeps that offset."""
    ib = e.ib
    groups = reshape_groups(graph.shape_of(op.input.type), graph.shape_of(op.result.type))
    rdims, idims = e.shapes.dims(op.result), e.shapes.dims(op.input)
    if groups is None or len(groups) < 2 or ib.known_linear(idx, rdims):
        return _forward(e, op, idx)
    out: list[Index] = []
    for src, dst in groups:
        lin = ib.linearize([idx[d] for d in dst], [rdims[d] for d in dst])
        out += ib.delinearize(lin, [idims[d] for d in src])
    return e.at(op.input, out)


def _constant(e: ElementEmitter, op: graph.ConstantOp, idx: list[Index]) -> SSAValue:
    value = splat_value(op)
    if value is None:
        raise UserError("internal: a non-splat constant has no buffer", location_of(op))
    elem = elem_type(op.result)
    return e.sb.const(rounded_constant(value, elem), compute_type(elem))  # rounded when built


# How each op kind computes one element: the index propagation is the op's own rule
# (`operand_indices`); a row gives the scalar code combining the operands' elements.
# Rows are found along the op class's bases, so every `ELEMENTWISE` op uses its base's.
ELEMENT_RULES: dict[type[graph.GraphOp], ElementRule] = {
    graph.ElementwiseOp: lambda e, op, idx: e.sb.round_to(op.SPEC.lower(e.sb, *e.operands_at(op, idx)),
                                                          elem_type(op.result)),
    graph.CompareOp: lambda e, op, idx: e.sb.compare(op.direction.data, *e.operands_at(op, idx)),
    graph.SelectOp: lambda e, op, idx: e.sb.select(*e.operands_at(op, idx)),
    graph.ConvertOp: lambda e, op, idx: e.sb.convert(e.operands_at(op, idx)[0], elem_type(op.result)),
    graph.BitcastOp: lambda e, op, idx: e.sb.bitcast(e.operands_at(op, idx)[0], elem_type(op.input),
                                                     elem_type(op.result)),
    graph.ConstantOp: _constant,
    graph.IotaOp: lambda e, op, idx: e.sb.round_to(
        e.sb.index_to(idx[op.dim.value.data], compute_type(elem_type(op.result))), elem_type(op.result)),
    graph.BroadcastOp: _forward,
    graph.ReshapeOp: _reshape,
    graph.TransposeOp: _forward,
    graph.SliceOp: _forward,
    # data-dependent: the operand read depends on the index (concat) or on a loaded id (gather)
    graph.ConcatOp: ElementEmitter._concat,
    graph.GatherOp: ElementEmitter._gather,
    # padding selects its value operand outside the operand; a window loops over its elements
    graph.PadOp: ElementEmitter._pad,
    graph.ReduceWindowOp: ElementEmitter._reduce_window,
    # data-dependent loops: every update (scatter), every rank (sort)
    graph.ScatterOp: ElementEmitter._scatter,
    graph.SortOp: ElementEmitter._sort,
    # a data-dependent loop over the rows of its segment
    graph.SegmentReduceOp: ElementEmitter._segment_reduce,
    # a loop over a tile of the row; the unrolled combination of a row's tiles
    graph.TileMomentsOp: tile_moments_element,
    graph.CombineMomentsOp: combine_moments_element,
}


@functools.cache
def _element_rule(cls: type) -> ElementRule | None:
    for base in cls.__mro__:
        if base in ELEMENT_RULES:
            return ELEMENT_RULES[base]
    return None


def rounded_constant(value, elem):
    """A constant as the element type would hold it (f16/bf16 constants round)."""
    import numpy as np

    from fsir.dialects.graph import numpy_dtype

    if isinstance(elem, IntegerType):
        return value
    return float(np.asarray(value, dtype=np.float64).astype(numpy_dtype(elem)).astype(np.float64))
