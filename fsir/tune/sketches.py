"""The sketches of the attention, conv and columns mappings, their knobs those of the
kernel's parameters attribute (`schedule.attention`, `schedule.conv`,
`schedule.columns`):

- attention: the schedule (a thread per query row, a warp per `warp_rows` rows, or the
  tensor cores' 16-row warps), `block_q`, `block_k` and `warp_rows`, under the
  attribute's verifier, the tiles within the static shared arrays and no tile larger
  than the problem's covering power of two;
- conv: the implicit GEMM's FMA tiles, as the gemm sketch draws them (no split-K: the
  conv lowering has none);
- columns: the batch rows per grid-y tile, and each cluster's lanes and vector width
  (`PartKnob`s `lanes.N`, `vector.N`, cluster N of the column set): lanes up to a warp
  and fewer than twice the cluster's longest bag (`lane_choices`), the vector widths
  an aligned load of its table rows allows (`vector_widths`, within stitch-codegen's
  forced width when one is set); values outside them are refused. The builder's own
  choice (`derived_schedules`) is the configuration without schedules, today's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from xdsl.utils.exceptions import VerifyException

from fsir.analysis.columns import exact_column_set
from fsir.codegen.mappings.attention import AttentionConfig, find_attention, tile_sizes
from fsir.codegen.mappings.base import ChoiceRequest
from fsir.codegen.mappings.columns import (
    ColumnsConfig,
    Schedule,
    cluster_columns,
    derived_schedules,
    lane_choices,
    vector_widths,
)
from fsir.codegen.mappings.conv import ConvConfig
from fsir.codegen.mappings.gemm import GemmConfig, block_smem, covering
from fsir.dialects import graph
from fsir.dialects.graph import DYN, shape_of
from fsir.dialects.schedule import AttentionParamsAttr, GemmMath
from fsir.gpuspec import STATIC_SHARED_LIMIT
from fsir.tune.space import (
    Domain,
    GemmProblem,
    GemmSketch,
    Invalid,
    Knob,
    KnobName,
    PartKnob,
    Sketch,
    SketchKind,
    Trace,
    Value,
    reachable,
)


class AttentionSchedule:
    THREAD = "thread"  # a thread per query row
    WARP = "warp"  # a warp per warp_rows rows, a key per lane
    MMA = "mma"  # 16-row warps on the tensor cores


ATTENTION_Q = (16, 32, 64, 128)
ATTENTION_K = (16, 32, 64)
ATTENTION_ROWS = (0, 1, 2, 4, 8, 16)
COLUMN_ROWS = (1, 2, 4, 8, 16, 32)
COLUMN_SHORTLIST = 256  # a columns sketch of at most this many traces is the fast mode's whole


@dataclass(frozen=True)
class AttentionSketch(Sketch):
    schedules: tuple[str, ...]
    sizes: tuple[int, int, int, int]  # query rows, keys, Dk, Dv
    smem_limit: int
    kind: SketchKind = SketchKind.ATTENTION
    # today's configurations: the pruning rule (no tile larger than the problem needs)
    # spares them, so stitch-codegen's choice always lies in the space
    known: frozenset[AttentionConfig] = frozenset()

    def domains(self) -> tuple[Domain, ...]:
        return (Domain(Knob.SCHEDULE, self.schedules), Domain(Knob.Q_TILE, ATTENTION_Q),
                Domain(Knob.K_TILE, ATTENTION_K), Domain(Knob.ROWS, ATTENTION_ROWS))

    def config(self, trace: Trace) -> AttentionConfig:
        schedule = str(trace.get(Knob.SCHEDULE))
        bq, bk, rows = trace.number(Knob.Q_TILE), trace.number(Knob.K_TILE), trace.number(Knob.ROWS)
        mma = schedule == AttentionSchedule.MMA
        if (schedule == AttentionSchedule.THREAD) != (rows == 0):
            raise Invalid("a thread per row has no warp_rows; the warp schedules have")
        try:
            AttentionParamsAttr(bq, bk, rows, mma)
        except VerifyException as err:
            raise Invalid(str(err)) from None
        sq, sk, dk, dv = self.sizes
        too_large = bq > max(covering(sq, 32), 4 * rows) or bk > covering(sk, 32 if mma else 16)
        if too_large and AttentionConfig(bq, bk, rows, mma) not in self.known:
            raise Invalid(f"tiles {bq}x{bk} larger than {sq} rows and {sk} keys need")
        need = 4 * sum(tile_sizes(bq, bk, dk, dv, rows, mma).values())
        if need > self.smem_limit:
            raise Invalid(f"tiles need {need} bytes of shared memory (at most {self.smem_limit})")
        return AttentionConfig(bq, bk, rows, mma)

    def trace_of(self, config: Any) -> Trace | None:
        if not isinstance(config, AttentionConfig):
            return None
        schedule = AttentionSchedule.MMA if config.mma else \
            AttentionSchedule.WARP if config.warp_rows else AttentionSchedule.THREAD
        return reachable(self, {Knob.SCHEDULE: schedule, Knob.Q_TILE: config.block_q, Knob.K_TILE: config.block_k,
                                 Knob.ROWS: config.warp_rows})


@dataclass(frozen=True)
class ConvSketch(GemmSketch):
    """The conv mapping's implicit GEMM on the FMA pipes."""

    @property
    def kind(self) -> SketchKind:  # type: ignore[override]  # a property where the base has a field
        return SketchKind.CONV

    def config(self, trace: Trace) -> ConvConfig:  # type: ignore[override]  # the conv mapping's wrapper
        return ConvConfig(super().config(trace))

    def trace_of(self, config: Any) -> Trace | None:
        return super().trace_of(config.gemm) if isinstance(config, ConvConfig) else None


@dataclass(frozen=True)
class ColumnsSketch(Sketch):
    """Rows per tile and, per cluster (in the order of the column set's clusters), its
    lanes and vector width among `lanes[n]` and `vectors[n]`."""

    batch: int  # DYN: unknown
    lanes: tuple[tuple[int, ...], ...]
    vectors: tuple[tuple[int, ...], ...]
    derived: tuple[Schedule, ...]  # the builder's own choice
    kind: SketchKind = SketchKind.COLUMNS

    def domains(self) -> tuple[Domain, ...]:
        out = [Domain(Knob.TILE_ROWS, COLUMN_ROWS)]
        for n, (lanes, vectors) in enumerate(zip(self.lanes, self.vectors)):
            out += [Domain(PartKnob(Knob.LANES, n), lanes), Domain(PartKnob(Knob.VECTOR, n), vectors)]
        return tuple(out)

    def config(self, trace: Trace) -> ColumnsConfig:
        rows = trace.number(Knob.TILE_ROWS)
        if self.batch != DYN and rows > covering(self.batch, 1):
            raise Invalid(f"{rows} rows per tile for a batch of {self.batch}")
        chosen = tuple((trace.number(PartKnob(Knob.LANES, n)), trace.number(PartKnob(Knob.VECTOR, n)))
                       for n in range(len(self.derived)))
        # the builder's own choice is today's configuration, which carries no schedules
        return ColumnsConfig(rows, None if chosen == self.derived else chosen)

    def trace_of(self, config: Any) -> Trace | None:
        if not isinstance(config, ColumnsConfig):
            return None
        chosen = self.derived if config.schedules is None else config.schedules
        if len(chosen) != len(self.derived):
            return None
        return reachable(self, {Knob.TILE_ROWS: config.rows_per_tile, **self._values(chosen)})

    def shortlist(self) -> Iterator[Trace]:
        """All traces of a small sketch; of a larger one (the knobs multiply with the
        clusters), at every rows per tile the builder's choice and each change of one
        cluster's lanes or vector width from it."""
        if self.size() <= COLUMN_SHORTLIST:
            yield from super().shortlist()
            return
        base = self._values(self.derived)
        for rows in COLUMN_ROWS:
            values = {Knob.TILE_ROWS: rows, **base}
            yield self.trace(values)
            for d in self.domains()[1:]:
                for v in d.choices:
                    if v != base[d.knob]:
                        yield self.trace({**values, d.knob: v})

    @staticmethod
    def _values(schedules: tuple[Schedule, ...]) -> dict[KnobName, Value]:
        out: dict[KnobName, Value] = {}
        for n, (lanes, vector) in enumerate(schedules):
            out[PartKnob(Knob.LANES, n)] = lanes
            out[PartKnob(Knob.VECTOR, n)] = vector
        return out


def attention_sketches(request: ChoiceRequest, fixed: tuple[Any, ...]) -> tuple[Sketch, ...]:
    """The attention sketch of a fusion whose today's list is attention configurations
    (a two-dot fusion that is no attention falls back to the gemm mapping's list)."""
    if request.fusion is None or not fixed or not all(isinstance(c, AttentionConfig) for c in fixed):
        return ()
    m = find_attention(request.fusion.ops)
    if m is None or DYN in m.sizes:
        return ()
    schedules = [AttentionSchedule.THREAD, AttentionSchedule.WARP]
    if any(c.mma for c in fixed):  # where the precision lets the tensor cores compute
        schedules.append(AttentionSchedule.MMA)
    sq, sk, dk, dv = (int(s) for s in m.sizes)
    known = frozenset(c for c in fixed if isinstance(c, AttentionConfig))
    return (AttentionSketch(tuple(schedules), (sq, sk, dk, dv), min(request.spec.smem_per_block, STATIC_SHARED_LIMIT),
                            known=known),)


def conv_sketches(request: ChoiceRequest, fixed: tuple[Any, ...]) -> tuple[Sketch, ...]:
    if request.fusion is None or not fixed or not all(isinstance(c, ConvConfig) for c in fixed):
        return ()
    conv = next(op for op in request.fusion.ops if isinstance(op, graph.ConvOp))
    p = conv.problem(graph.static_dims, graph.STATIC)
    m = p.m(graph.STATIC)
    if m == DYN or not isinstance(m, int):
        return ()
    problem = GemmProblem(m, p.n, p.k, p.groups, False, True)
    known = frozenset(c.gemm for c in fixed if isinstance(c.gemm, GemmConfig))
    return (ConvSketch(problem, GemmMath.FMA, block_smem(request.spec), split=False, known=known),)


def columns_sketches(request: ChoiceRequest, fixed: tuple[Any, ...]) -> tuple[Sketch, ...]:
    if request.fusion is None or not fixed or not all(isinstance(c, ColumnsConfig) for c in fixed):
        return ()
    ctx = request.fusion
    s = exact_column_set(ctx.ops)
    if s is None:
        return ()
    derived = derived_schedules(s, ctx.spec, ctx.vector)
    lanes, vectors = [], []
    for members, (n, v) in zip(cluster_columns(s), derived):
        lanes.append(tuple(sorted({*lane_choices(members), n})))
        widths = vector_widths(members[0])
        if ctx.vector is not None:  # stitch-codegen's forced width, where the cluster allows it
            widths = [w for w in widths if w in (1, ctx.vector)]
        vectors.append(tuple(sorted({*widths, v})))
    return (ColumnsSketch(shape_of(s.concat.result.type)[0], tuple(lanes), tuple(vectors), derived),)
