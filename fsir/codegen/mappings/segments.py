"""The `segments` mapping: a ragged bag reduction (`graph.segment_reduce` over offsets,
RECom's embedding bags with offsets) with its producers (the gather of table rows,
weights, casts) as one kernel with a schedule for the bags.

A segment's result row is split into runs of `elements` elements, each shared by
`lanes` threads splitting the segment's rows: a thread per segment, a warp's share per
segment (lanes over the embedding dim with vector loads, and over the bag for short
rows) or a block per segment for long bags (`SegmentsParamsAttr`). The schedule is the
row rules' (`fsir/codegen/mappings/row.py`, `choose_segment_schedule`): each candidate
is scored by the latency-evaluator from its summary, for the static segment count and
mean bag length where the types give them, else for the rules' hints; `rows=` forces a
schedule name. The columns mapping can ask the same rules and emit the same code
(`fsir/lowering/segments.py`, `reduce_segment`).

The mapping claims exactly such fusions: one segment_reduce whose result is the only
output, result rows of static length up to SEGMENT_BLOCK elements and producers that
compute an element by index propagation. Anything else (a segment_reduce with
consumers fused in, `?` embedding dims) stays with the loop mapping, a thread per
result element.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence, Set

from xdsl.dialects.builtin import IntegerAttr, MemRefType, TensorType, i64
from xdsl.ir import Operation, SSAValue

from fsir.codegen.mappings.base import FusionContext, GroupSpec, Mapping, accumulator_type
from fsir.codegen.mappings.row import (
    SEGMENT_BLOCK,
    SegmentSchedule,
    SegmentWork,
    choose_segment_schedule,
    segment_launch,
    segment_summary,
)
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
    name = schedule.Mapping.SEGMENTS
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
        from fsir.codegen.mappings.row import SEGMENT_BAG_HINT

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

