"""The `segments` mapping's lowering (`fsir/codegen/mappings/segments.py`).

Thread t of a block belongs to segment `block_id * segments_per_block + t / T` (T =
dim / elements x lanes threads per segment), run `(t % T) / lanes` of its result row
(elements run x elements .. + elements - 1) and lane `t % lanes` of the run. The lanes
walk the segment's rows [start + lane, end) with stride `lanes`, keeping one accumulator
per element (the loads of one row's elements are consecutive: vector loads), then
combine: a butterfly within the run's lanes (aligned in a warp) and, for runs of more
than a warp, the warps' partials through shared memory, combined by the run's first
lane. That lane applies the kind's fix-up (a mean's division by the row count, 0 for
an empty segment) and stores the run. Threads past the last segment run no rows but
reach every shuffle and barrier.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from fsir.dialects import gpu, graph
from fsir.dialects.schedule import WARP, SegmentsParamsAttr
from fsir.lowering.emit import elem_type
from fsir.lowering.rows import RowLowering
from fsir.lowering.scalar import Index, compute_type


def segment_bounds(low: RowLowering, op: graph.SegmentReduceOp, seg: Index, valid) -> tuple[SSAValue, SSAValue]:
    """Segment `seg`'s rows [start, end), its offsets clamped into the data; a thread
    that is not `valid` gets an empty range (and loads no offset)."""
    ib, e, sb = low.ib, low.emit, low.sb
    rows = low.shapes.dims(op.data)[0]
    segments = low.shapes.dims(op.offsets)[0]

    def offset(s: Index) -> SSAValue:
        return ib.ssa(ib.min(ib.max(sb.to_index(e.at(op.offsets, [s])), 0), rows))

    start = e.guarded(valid, lambda: offset(seg), lambda: ib.ssa(rows))
    following = ib.add(seg, 1)
    end = e.guarded(e.and_(valid, ib.lt(following, segments)), lambda: offset(following), lambda: ib.ssa(rows))
    return start, end


def reduce_segment(low: RowLowering, op: graph.SegmentReduceOp, seg: Index, d0: Index, elements: int, valid,
                   lane: Index, lanes: int, tid) -> list[SSAValue]:
    """Elements d0 .. d0 + elements - 1 of segment `seg`'s result, complete in the run's
    first lane (lane 0): the lanes' strided share of the rows, their combine, the
    kind's fix-up. Every thread must call it (shuffles; barriers past a warp of lanes)."""
    ib, e, sb = low.ib, low.emit, low.sb
    elem = elem_type(op.result)
    ct = compute_type(elem)
    kind = op.combine_kind()
    init = sb.reduce_init(kind, ct)
    start, end = segment_bounds(low, op, seg, valid)

    def body(j: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
        return [sb.combine(kind, acc, e.at(op.data, [j, ib.add(d0, x)])) for x, acc in enumerate(accs)]

    accs = e.for_loop(ib.add(start, lane), end, lanes, [init] * elements, body)
    accs = [low.butterfly(kind, acc, min(lanes, WARP)) if lanes > 1 else acc for acc in accs]
    if lanes > WARP:
        accs = warp_partials(low, kind, accs, lane, lanes, tid)
    out = []
    for acc in accs:
        if op.kind.data == "mean":  # an empty segment's sum is 0: 0 / 1
            acc = sb.arith("div", acc, sb.index_to(ib.max(ib.sub(end, start), 1), ct))
        elif kind != "sum":  # an empty segment gives 0, not the identity
            nonempty = ib.lt(start, end)
            assert not isinstance(nonempty, bool)
            acc = sb.select(nonempty, acc, sb.const(0, ct))
        out.append(sb.round_to(acc, elem))
    return out


def warp_partials(low: RowLowering, kind: str, accs: list[SSAValue], lane: Index, lanes: int,
                  tid) -> list[SSAValue]:
    """Runs of more than a warp of lanes: each warp (all of one run) leaves its partials
    in shared memory (`partials_<type>`, a slot per warp and element); after a barrier
    the run's first lane combines its run's warps. Only that lane's result is
    meaningful."""
    ib, e, c = low.ib, low.emit, low.cursor
    n = len(accs)
    acc_t = accs[0].type
    partials = low.smem[f"partials_{acc_t}"]
    warp = ib.div(tid, WARP)

    def publish() -> None:
        for x, acc in enumerate(accs):
            e.store(acc, partials, ib.add(ib.mul(warp, n), x), acc_t)

    e.when(ib.eq(ib.rem(lane, WARP), 0), publish)
    c.insert(gpu.BarrierOp())

    def run_total(acc: SSAValue, x: int) -> SSAValue:
        for w in range(1, lanes // WARP):
            acc = low.sb.combine(kind, acc, e.load(partials, ib.add(ib.mul(ib.add(warp, w), n), x)))
        return acc

    first = ib.eq(lane, 0)
    return [e.guarded(first, lambda acc=acc, x=x: run_total(acc, x), lambda acc=acc: acc) for x, acc in enumerate(accs)]


class SegmentsLowering(RowLowering):
    def body(self) -> None:
        ib, e = self.ib, self.emit
        params = self.k.params
        assert isinstance(params, SegmentsParamsAttr)
        self.cached, self.interleaved, self.steps = 0, False, 1
        (g,) = self.k.groups()
        op = g.yielded()[0].owner
        assert isinstance(op, graph.SegmentReduceOp)
        dim = self.shapes.dims(op.result)[1]
        assert isinstance(dim, int), "the mapping takes static result rows"
        elements, lanes = params.elements, params.lanes
        per_segment = dim // elements * lanes
        per_block = max(1, self.block_size // per_segment)
        tid = self.thread_id()
        local, u = ib.div(tid, per_segment), ib.rem(tid, per_segment)
        run, lane = ib.div(u, lanes), ib.rem(u, lanes)
        seg = ib.add(ib.mul(self.block_id(), per_block), local)
        segments = self.shapes.dims(op.offsets)[0]
        # threads past the block's last whole segment (when T does not divide it) idle
        whole = True if self.block_size % per_segment == 0 else ib.lt(local, per_block)
        valid = e.and_(whole, ib.lt(seg, segments))
        d0 = ib.mul(run, elements)
        values = reduce_segment(self, op, seg, d0, elements, valid, lane, lanes, tid)

        def store() -> None:
            for x, v in enumerate(values):
                idx = [seg, ib.add(d0, x)]
                self.store_output(0, v, idx)

        e.when(e.and_(valid, ib.eq(lane, 0)), store)
