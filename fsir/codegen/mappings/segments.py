"""The `segments` mapping: a ragged bag reduction (`graph.segment_reduce` over offsets,
RECom's embedding bags with offsets) with its producers (the gather of table rows,
weights, casts) as one kernel with a schedule for the bags.

A segment's result row is split into runs of `elements` elements, each shared by
`lanes` threads splitting the segment's rows: a thread per segment, a warp's share per
segment (lanes over the embedding dim with vector loads, and over the bag for short
rows) or a block per segment for long bags (`SegmentsParamsAttr`). The schedule is the
segment rules' (`choose_segment_schedule`, below): each candidate is scored by the
latency-evaluator from its summary, for the static segment count and mean bag length
where the types give them, else for the rules' hints; `rows=` forces a schedule name.
The columns mapping can ask the same rules and emit the same code
(`fsir/lowering/segments.py`, `reduce_segment`).

The mapping claims exactly such fusions: one segment_reduce whose result is the only
output, result rows of static length up to SEGMENT_BLOCK elements and producers that
compute an element by index propagation. Anything else (a segment_reduce with
consumers fused in, `?` embedding dims) stays with the loop mapping, a thread per
result element.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence, Set
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, MemRefType, TensorType, i64
from xdsl.ir import Operation, SSAValue

from fsir.codegen.mappings.base import FusionContext, GroupSpec, Mapping, accumulator_type
from fsir.codegen.summary import Summary, op_mix
from fsir.dialects import graph, schedule
from fsir.dialects.graph import DYN, shape_of
from fsir.dialects.schedule import (
    DYNAMIC,
    WARP,
    Composition,
    KernelOp,
    SegmentsParamsAttr,
    SharedOp,
    Storage,
    element_bytes,
    inner_value,
)
from fsir.gpuspec import GpuSpec
from fsir.lowering.emit import ELEMENT_RULES
from fsir.lowering.scalar import Index
from fsir.lowering.segments import SegmentsLowering
from fsir.lowering.shapes import ShapeCalc

# -- the segment schedules (RECom § intra-subgraph code generation) ----------------------
#
# A segment's result row (`dim` elements) is split into runs of `elements` consecutive
# elements, each run shared by `lanes` threads that split the segment's rows. The three
# shapes of the row schedules (`fsir/codegen/mappings/row.py`): a thread per segment (one
# run of the whole row, one lane), a warp per segment (runs of one vector, lanes over the
# embedding dim and, with a short row, over the bag: up to 32 threads, combined by
# shuffles) and a block per segment for long bags (lanes across warps, combined through
# shared memory). The mapping below and the columns mapping ask these rules; the
# latency-evaluator scores each candidate from `segment_summary`.

SEGMENT_BLOCK = 256  # threads per block of every segment schedule
SEGMENT_THREAD_DIM = 16  # a thread keeps a whole row's accumulators up to this many elements
SEGMENT_BLOCK_BAG = 64  # bags this long (on average) are worth a block
SEGMENT_BAG_HINT = 16  # the bag length the rules assume when the offsets are only known at run time
SEGMENT_COUNT_HINT = 4096  # the segments they assume for a `?` segment count


@dataclass(frozen=True)
class SegmentSchedule:
    """One way to run a segment reduction: `elements` consecutive result elements per
    run (`vector` at a time), `lanes` threads per run splitting the segment's rows."""

    schedule: str  # thread | warp | block
    dim: int
    elements: int
    lanes: int
    vector: int = 1

    @property
    def threads_per_segment(self) -> int:
        return self.dim // self.elements * self.lanes

    @property
    def segments_per_block(self) -> int:
        return max(1, SEGMENT_BLOCK // self.threads_per_segment)

    def describe(self) -> str:
        out = f"segments/{self.schedule}/e{self.elements}/l{self.lanes}"
        return out + (f"/v{self.vector}" if self.vector > 1 else "")


@dataclass(frozen=True)
class SegmentWork:
    """What one row of a segment costs a thread: instructions per row (the ids and
    weights loaded for it, the gather's arithmetic) and per element (the table element's
    producers, the combine), bytes per row and per element, the result's bytes."""

    per_row: Counter[str]
    per_element: Counter[str]
    row_bytes: int
    element_bytes: int
    out_bytes: int


def segment_candidates(dim: int, vectors: Sequence[int], bag: float) -> list[SegmentSchedule]:
    """Every segment schedule worth scoring for result rows of `dim` elements, the legal
    vector widths `vectors` and bags of `bag` rows on average: a thread per segment (rows
    of at most SEGMENT_THREAD_DIM elements), a warp's share per segment with 1 ... 32 lanes
    over the bag (no more lanes than twice the bag), a block per segment when bags are
    long and each run's lanes fill whole warps."""
    out: list[SegmentSchedule] = []
    if dim <= SEGMENT_THREAD_DIM:
        out += [SegmentSchedule("thread", dim, dim, 1, v) for v in vectors if dim % v == 0]
    for v in vectors:
        if dim % v:
            continue
        runs = dim // v
        out.append(SegmentSchedule("warp", dim, v, 1, v))  # (more than a warp for rows past 32 vectors)
        lanes = 2
        while runs * lanes <= WARP and lanes <= 2 * bag:
            out.append(SegmentSchedule("warp", dim, v, lanes, v))
            lanes *= 2
    return out + (block_segment_schedules(dim, vectors) if bag >= SEGMENT_BLOCK_BAG else [])


def block_segment_schedules(dim: int, vectors: Sequence[int]) -> list[SegmentSchedule]:
    """A block per segment: runs of one vector, the block's threads split evenly over
    the runs, each run's lanes a power of two (within a warp, or whole warps)."""
    out = []
    for v in vectors:
        runs = dim // v if dim % v == 0 else 0
        lanes = SEGMENT_BLOCK // runs if runs and SEGMENT_BLOCK % runs == 0 else 0
        if lanes > 1 and runs * lanes > WARP and lanes & (lanes - 1) == 0:
            out.append(SegmentSchedule("block", dim, v, lanes, v))
    return out


def default_segment_schedule(candidates: Sequence[SegmentSchedule], bag: float) -> SegmentSchedule:
    """The rules' choice among `candidates` (where the evaluator is not asked: a forced
    schedule name): a block for long bags (or when only blocks are left), else a warp's
    share with lanes over the bag up to a warp, else a thread; the widest vector."""
    blocks = [c for c in candidates if c.schedule == "block"]
    if blocks and (bag >= SEGMENT_BLOCK_BAG or len(blocks) == len(candidates)):
        return max(blocks, key=lambda c: c.vector)
    warps = [c for c in candidates if c.schedule == "warp" and c.lanes <= max(1, bag)]
    if warps:
        return max(warps, key=lambda c: (c.vector, c.lanes))
    return max(candidates, key=lambda c: c.vector)


def segment_summary(s: SegmentSchedule, work: SegmentWork, bag: float) -> Summary:
    """A thread of schedule `s`: its segment's bounds (two offsets, clamped), its share
    of the rows (the per-row loads once, the run's table elements `vector` at a time),
    the lanes' combine (shuffles; in a block also a shared-memory exchange and a
    barrier), a mean's or an empty segment's fix-up and the stores of its run."""
    steps = max(1.0, bag / s.lanes)
    out = Summary()
    out.counts["global"] += 2  # the offsets
    out.counts["alu"] += 16  # thread -> (segment, run, lane), the clamps, loop control
    out.add(work.per_row, steps)
    out.add(work.per_element, steps * s.elements)
    out.counts["global"] += round(steps * (s.elements // s.vector) * work.per_element["global"])
    out.counts["global"] -= round(steps * s.elements * work.per_element["global"])
    out.counts["alu"] += round(2 * steps)
    rounds = int(math.log2(min(s.lanes, WARP)))
    out.counts["shuffle"] += rounds * s.elements
    out.counts["alu"] += rounds * s.elements
    if s.lanes > WARP:
        out.counts["shared"] += 2 * s.elements + s.elements * (s.lanes // WARP)
        out.counts["barrier"] += 1
        out.shared_bytes = SEGMENT_BLOCK // WARP * s.elements * 4
    out.counts["alu"] += 3 * s.elements
    out.counts["global"] += s.elements // s.vector
    out.registers = 20 + 2 * s.elements
    out.global_bytes = round(8 + steps * (work.row_bytes + s.elements * work.element_bytes)
                             + s.elements * work.out_bytes)
    return out


def segment_launch(s: SegmentSchedule, segments: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The grid and block of schedule `s` over `segments` segments."""
    return (max(1, -(-segments // s.segments_per_block)), 1, 1), (SEGMENT_BLOCK, 1, 1)


def choose_segment_schedule(dim: int, vectors: Sequence[int], work: SegmentWork, segments: int | None,
                            bag: float | None, spec: GpuSpec, forced: str = "auto"):
    """The segment schedule the latency-evaluator finds fastest for `segments` segments
    of `bag` rows on average (`?`: SEGMENT_COUNT_HINT segments, SEGMENT_BAG_HINT rows),
    with its estimate and the number of candidates scored; `forced` (a row schedule
    name) keeps that schedule's candidates and the rules pick among them (none, as a
    thread for rows past SEGMENT_THREAD_DIM: the evaluator's choice). Ties go to fewer
    threads per segment."""
    from fsir.codegen.latency import estimate_summary

    bag_hint = SEGMENT_BAG_HINT if bag is None else bag
    count = SEGMENT_COUNT_HINT if segments is None else segments

    def score(c: SegmentSchedule):
        grid, block = segment_launch(c, count)
        return estimate_summary(segment_summary(c, work, bag_hint), grid, block, spec, bandwidth=True)

    candidates = segment_candidates(dim, vectors, bag_hint)
    if forced != "auto":
        named = [c for c in candidates if c.schedule == forced]
        if forced == "block" and not named:  # whatever the bags' length
            named = block_segment_schedules(dim, vectors)
        if named:
            chosen = default_segment_schedule(named, bag_hint)
            return chosen, score(chosen), 1
    scored = [(score(c), c) for c in candidates]
    est, best = min(scored, key=lambda e: (round(e[0].seconds, 10), e[1].threads_per_segment))
    return best, est, len(candidates)


def segment_column_schedule(dim: int, vectors: Sequence[int], work: SegmentWork, rows: int, bag: float | None,
                            spec: GpuSpec, columns: int = 1) -> tuple[int, int]:
    """For the columns mapping (a ragged column: its bag a segment_reduce over offsets):
    the (lanes, vector) of the column's threads, among the warp-shaped schedules (runs
    of one vector, lanes within a warp: the columns lowering's thread layout), scored
    as `rows` segments of each of `columns` such columns sharing the GPU. The column's
    code is `fsir/lowering/segments.py`'s `reduce_segment` with the same (lanes, vector)."""
    from fsir.codegen.latency import estimate_summary

    bag_hint = SEGMENT_BAG_HINT if bag is None else bag
    best, best_key = (1, 1), (math.inf, math.inf)
    for c in segment_candidates(dim, vectors, bag_hint):
        if c.schedule != "warp" or c.lanes > WARP:
            continue
        grid, block = segment_launch(c, rows * columns)
        est = estimate_summary(segment_summary(c, work, bag_hint), grid, block, spec, bandwidth=True)
        key = (round(est.seconds, 10), c.threads_per_segment)
        if key < best_key:
            best, best_key = (c.lanes, c.vector), key
    return best

def _has_element_rule(op: Operation) -> bool:
    return any(base in ELEMENT_RULES for base in type(op).__mro__)


def segment_problem(ops: Sequence[Operation]) -> str | None:
    """None when `ops` are one segment_reduce (the only output, static result rows of
    at most SEGMENT_BLOCK elements) and producers computed by index propagation."""
    segs = [op for op in ops if isinstance(op, graph.SegmentReduceOp)]
    if len(segs) != 1:
        return "not one graph.segment_reduce"
    (s,) = segs
    inside = set(ops)
    for op in ops:
        if op is not s and (not isinstance(op, graph.GraphOp) or not _has_element_rule(op)):
            return f"'{op.name}' is not computed by index propagation"
        for r in op.results:
            if r is not s.result and any(u.operation not in inside for u in r.uses):
                return "a value besides the segment_reduce's result is an output"
    if any(u.operation in inside for u in s.result.uses):
        return "an op of the fusion reads the segment_reduce's result"
    shape = shape_of(s.result.type)
    if len(shape) != 2 or shape[1] == DYN or not 1 <= shape[1] <= SEGMENT_BLOCK:
        return f"result rows must be static and of 1 to {SEGMENT_BLOCK} elements"
    return None


def _the_segment_reduce(ops) -> graph.SegmentReduceOp:
    return next(op for op in ops if isinstance(op, graph.SegmentReduceOp))


def segment_vectors(s: graph.SegmentReduceOp, operands: Sequence[SSAValue]) -> list[int]:
    """The vector widths of a run: those dividing the row whose elements (of every
    tensor read, and of the result) are at most 4 bytes (the vectorizer merges only
    accesses it proves aligned)."""
    dim = shape_of(s.result.type)[1]
    tensors = [*operands, s.result]
    small = all(element_bytes(t.type.element_type) <= 4 for t in tensors if isinstance(t.type, TensorType))
    return [1] + [v for v in (2, 4) if small and dim % v == 0]


def global_reads(op: Operation, inside: Set[Operation]) -> Iterator[SSAValue]:
    """The operands of `op` (an op of a fusion of the ops `inside`) that its thread loads
    from global memory: neither computed in the fusion nor splat constants (immediates)."""
    for o in op.operands:
        if isinstance(o.owner, Operation) and o.owner in inside:
            continue
        if isinstance(o.owner, graph.ConstantOp) and graph.is_splat(o.owner.value):
            continue
        yield o


def segment_work(s: graph.SegmentReduceOp, ops: Sequence[Operation]) -> SegmentWork:
    """What a row of a segment costs (see `SegmentWork`): ops with rank-1 results (ids,
    their hashing) and reads of rank-1 tensors once per row; everything with the row's
    elements (the gathered table element, weights broadcast over it) per element."""
    per_row: Counter[str] = Counter()
    per_element: Counter[str] = Counter(alu=1)  # the combine
    row_bytes = element_bytes_ = 0
    inside = set(ops)
    for op in ops:
        if op is s:
            continue
        rank = len(shape_of(op.results[0].type))
        target = per_row if rank <= 1 else per_element
        target.update(op_mix(op))
        for o in global_reads(op, inside):
            t = o.type
            assert isinstance(t, TensorType)
            read_per_row = rank <= 1 or (isinstance(op, graph.GatherOp) and o is op.ids)
            (per_row if read_per_row else per_element)["global"] += 1
            if read_per_row:
                row_bytes += element_bytes(t.element_type)
            else:
                element_bytes_ += element_bytes(t.element_type)
    if not isinstance(s.data.owner, Operation) or s.data.owner not in inside:
        per_element["global"] += 1
        element_bytes_ += element_bytes(shape_elem(s.data))
    return SegmentWork(per_row, per_element, row_bytes, element_bytes_, element_bytes(shape_elem(s.result)))


def shape_elem(v: SSAValue):
    t = v.type
    assert isinstance(t, TensorType)
    return t.element_type


def static_bag(s: graph.SegmentReduceOp) -> float | None:
    """The mean bag length when the row and segment counts are static."""
    rows, segments = shape_of(s.data.type)[0], shape_of(s.offsets.type)[0]
    return rows / segments if DYN not in (rows, segments) and segments else None


COMPOSITIONS = {"thread": Composition.THREAD, "warp": Composition.WARP, "block": Composition.BLOCK}


class SegmentsMapping(Mapping):
    PARAMS = schedule.SegmentsParamsAttr
    lowering = SegmentsLowering

    def claims(self, ops: Sequence[Operation]) -> bool:
        return any(isinstance(op, graph.SegmentReduceOp) for op in ops) and segment_problem(ops) is None

    def accepts(self, ops: Sequence[Operation]) -> str | None:
        return segment_problem(ops)

    def build(self, ctx: FusionContext) -> KernelOp:
        s = _the_segment_reduce(ctx.ops)
        dim = shape_of(s.result.type)[1]
        vectors = segment_vectors(s, list(ctx.fusion.operands))
        if ctx.vector is not None:
            vectors = [ctx.vector] if ctx.vector in vectors else [1]
        segments = shape_of(s.offsets.type)[0]
        forced = ctx.row_schedule if ctx.row_schedule in COMPOSITIONS else "auto"
        chosen, est, scored = choose_segment_schedule(dim, vectors, segment_work(s, ctx.ops),
                                                      None if segments == DYN else segments, static_bag(s),
                                                      ctx.spec, forced)
        k = self.kernel(ctx, s, chosen)
        # (for a `?` segment count: the estimate at the rules' hints)
        self.record(k, est, chosen, scored, est.requested_bytes)
        return k

    def kernel(self, ctx: FusionContext, s: graph.SegmentReduceOp, c: SegmentSchedule) -> KernelOp:
        segments = shape_of(s.offsets.type)[0]
        grid, block = segment_launch(c, segments) if segments != DYN else ((DYNAMIC, 1, 1), (SEGMENT_BLOCK, 1, 1))
        shared = []
        if c.lanes > WARP:
            acc = accumulator_type(shape_elem(s.result))
            shared.append(SharedOp(f"partials_{acc}", MemRefType(acc, [SEGMENT_BLOCK // WARP * c.elements],
                                                                  memory_space=IntegerAttr(3, i64))))
        groups = [GroupSpec([s.result], COMPOSITIONS[c.schedule], Storage.GLOBAL)]
        k = ctx.kernel(SegmentsParamsAttr(c.elements, c.lanes, c.vector), grid, block, groups, shared)
        return k

    def schedule_of(self, k: KernelOp) -> tuple[graph.SegmentReduceOp, SegmentSchedule]:
        p = k.params
        assert isinstance(p, SegmentsParamsAttr)
        (g,) = k.groups()
        s = inner_value(g.results[0]).owner
        assert isinstance(s, graph.SegmentReduceOp)
        dim = shape_of(s.result.type)[1]
        name = next(n for n, comp in COMPOSITIONS.items() if comp == g.composition.data)
        return s, SegmentSchedule(name, dim, p.elements, p.lanes, p.vector_width)

    def summarize(self, k: KernelOp, spec: GpuSpec) -> Summary:
        """A thread of the kernel's schedule (`segment_summary`), for the mean bag its
        static shapes give (else the rules' hint)."""
        s, c = self.schedule_of(k)
        (g,) = k.groups()
        bag = static_bag(s)
        ops = [op for op in g.block.ops if isinstance(op, graph.GraphOp)]
        return segment_summary(c, segment_work(s, ops), SEGMENT_BAG_HINT if bag is None else bag)

    def grid(self, k: KernelOp, axis: int, shapes: ShapeCalc) -> Index:
        ib = shapes.ib
        s, c = self.schedule_of(k)
        _, block = k.launch()
        per_block = max(1, block[0] // c.threads_per_segment)
        return ib.max(ib.ceildiv(shapes.dims(s.offsets)[0], per_block), 1)

    def vector_problem(self, k: KernelOp, vec: int) -> str | None:
        p = k.params
        assert isinstance(p, SegmentsParamsAttr)
        return None if p.elements % vec == 0 else f"vector_width {vec} does not divide elements {p.elements}"

    def check_kernel(self, k: KernelOp) -> None:
        groups = k.groups()
        if len(groups) != 1 or not isinstance(inner_value(groups[0].results[0]).owner, graph.SegmentReduceOp):
            raise self.cannot_lower(k, "a segments kernel has one group yielding a graph.segment_reduce")
        s, c = self.schedule_of(k)
        if c.dim % c.elements:
            raise self.cannot_lower(k, f"elements ({c.elements}) must divide the result rows ({c.dim})")
        _, block = k.launch()
        if c.threads_per_segment > block[0]:
            raise self.cannot_lower(k, f"a segment takes {c.threads_per_segment} threads, more than the block's "
                                       f"{block[0]}")
        if c.lanes > WARP and c.lanes % WARP:
            raise self.cannot_lower(k, f"lanes past a warp must be whole warps, got {c.lanes}")
        acc = accumulator_type(shape_elem(s.result))
        if c.lanes > WARP and f"partials_{acc}" not in k.shared_buffers():
            raise self.cannot_lower(k, f"lanes past a warp combine through a shared buffer @partials_{acc}")

