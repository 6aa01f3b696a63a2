"""The search space as data (Ansor's sketches + random annotation, MetaSchedule's
trace + decisions).

A candidate is a mapping's configuration (`GemmConfig`, `RowConfig`, `LoopConfig`:
what becomes the kernel's `schedule.…ParamsAttr`) reached from a *sketch* by a
*trace*: the list of (knob, value) decisions that, replayed, give it. A trace can be
sampled (random annotation of every knob), mutated (one decision; a tile split's
factor moved between its two levels, keeping the tile), replayed and hashed.

Sketches per mapping (`space_for`):

- gemm on the FMA pipes: tile = threads x micro-tile along m and n, a k-step, split-K;
- gemm on the tensor cores (f16, bf16, tf32 when the dot runs there): tile = warps x
  warp tile along m and n, a k-step, split-K, the pipeline's stages (0: as many as fit
  the static shared arrays, `tile_stages`; or 2-4);
- row: schedule (thread, warp, block, interleaved), threads per block, the row in
  registers or re-read, vector width, row steps, expensive sub-roots on or off;
- loop: threads per block and vector width;
- attention, conv, columns: their parameters attributes' knobs (`fsir/tune/sketches.py`;
  a columns kernel's lanes and vector width are knobs of each cluster, `PartKnob`s);
- any other mapping (segments): an index into today's fixed list (its fixed sketch).

`Space.config` applies the space's own rules (the parameters' verifier, the tile not
larger than the problem's covering power of two, a split-K slice at least one k-step);
`Checker` then builds the kernel (no lowering) and rejects what cannot run: shared
memory over the block's limit, more than 255 registers by the summary's estimate, no
block fitting an SM.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import random
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from xdsl.utils.exceptions import VerifyException

from fsir.codegen.latency import Estimate, estimate_summary
from fsir.codegen.mappings.base import ChoiceRequest
from fsir.codegen.mappings.gemm import (
    MIN_SLICE_STEPS,
    SPLITS,
    GemmConfig,
    block_smem,
    covering,
    shared_bytes,
    split_candidates,
    tile_stages,
)
from fsir.codegen.mappings.loop import LoopConfig
from fsir.codegen.mappings.row_configs import BLOCK_SIZES, ROW_SCHEDULES, ROW_STEPS, RowConfig, register_slots
from fsir.codegen.options import RowSchedule
from fsir.codegen.summary import Summary
from fsir.dialects import graph
from fsir.dialects.graph import DYN
from fsir.dialects.schedule import DYNAMIC, GemmMath, KernelOp
from fsir.errors import UserError
from fsir.lowering.gemm import product_problem
from fsir.lowering.ln_partials import tile_moments_of
from fsir.lowering.mma import MAX_STAGES, STAGES, chunk_elements, swizzle_period
from fsir.lowering.row_epilogue import row_reductions

MAX_REGISTERS = 255  # per thread (ptxas spills beyond)
LOOP_BLOCKS = (64, 128, 256, 512, 1024)
ROW_BLOCKS = (64, 128, 256, 512, 1024)
FMA_THREADS = (1, 2, 4, 8, 16, 32, 64)
FMA_MICRO = (1, 2, 4, 8)
FMA_K = (8, 16, 32, 64)
MMA_WARPS = (1, 2, 4, 8)
MMA_WARP_TILE = (16, 32, 64)
MMA_K = (16, 32, 64)
MMA_STAGES = (0, *range(STAGES, MAX_STAGES + 1))
SPLIT_CHOICES = (1, *SPLITS)


class Knob(StrEnum):
    """The name of one decision."""

    SKETCH = "sketch"
    M_THREADS = "m_threads"  # FMA: threads along m; tensor cores: warps along m
    M_MICRO = "m_micro"  # FMA: micro-tile rows; tensor cores: warp tile rows
    N_THREADS = "n_threads"
    N_MICRO = "n_micro"
    K_TILE = "k_tile"
    SPLIT = "split"
    SCHEDULE = "schedule"
    BLOCK = "block"
    CACHED = "cached"
    VECTOR = "vector"
    STEPS = "steps"
    SUBROOTS = "subroots"
    FIXED = "fixed"
    STAGES = "stages"  # tensor cores: the pipeline's depth (0: as many as fit)
    Q_TILE = "q_tile"  # attention: query rows per block
    ROWS = "warp_rows"  # attention: rows per warp (0: a thread per row)
    TILE_ROWS = "rows_per_tile"  # columns: batch rows per grid-y tile
    LANES = "lanes"  # columns: a cluster's threads per (row, elements) (`PartKnob`)


@dataclass(frozen=True)
class PartKnob:
    """A knob of one part of a kernel: a columns kernel's cluster `part` has its own
    lanes and vector width (written `lanes.2`, `vector.2`)."""

    knob: Knob
    part: int

    def __str__(self) -> str:
        return f"{self.knob}.{self.part}"

    @staticmethod
    def parse(name: str) -> KnobName:
        """A knob's name as `Trace.to_json` writes it (ValueError on anything else)."""
        knob, dot, part = name.partition(".")
        if not dot:
            return Knob(name)
        if not part.isdigit():
            raise ValueError(f"a part knob is KNOB.N, got {name!r}")
        return PartKnob(Knob(knob), int(part))


KnobName = Knob | PartKnob


class SketchKind(StrEnum):
    GEMM_FMA = "gemm-fma"
    GEMM_MMA = "gemm-mma"
    ROW = "row"
    LOOP = "loop"
    ATTENTION = "attention"
    CONV = "conv"
    COLUMNS = "columns"
    FIXED = "fixed"


# the two levels of a tile split, whose product a tile mutation keeps
TILE_SPLITS = ((Knob.M_THREADS, Knob.M_MICRO), (Knob.N_THREADS, Knob.N_MICRO))

Value = int | str


@dataclass(frozen=True)
class Decision:
    knob: KnobName
    value: Value


@dataclass(frozen=True)
class Trace:
    """A candidate as the decisions reaching it from its sketch (the first decision)."""

    decisions: tuple[Decision, ...]

    @property
    def sketch(self) -> SketchKind:
        return SketchKind(self.get(Knob.SKETCH))

    def get(self, knob: KnobName) -> Value:
        for d in self.decisions:
            if d.knob == knob:
                return d.value
        raise KeyError(knob)

    def number(self, knob: KnobName) -> int:
        v = self.get(knob)
        assert isinstance(v, int)
        return v

    def with_value(self, knob: KnobName, value: Value) -> Trace:
        return Trace(tuple(Decision(d.knob, value) if d.knob == knob else d for d in self.decisions))

    def to_json(self) -> list[list[Value]]:
        return [[str(d.knob), d.value] for d in self.decisions]

    @staticmethod
    def from_json(data: Any) -> Trace:
        """Raises ValueError on anything that is not a list of [knob, int or str]."""
        if not isinstance(data, list) or not data:
            raise ValueError("decisions must be a non-empty list")
        out = []
        for item in data:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], (int, str))
                    and not isinstance(item[1], bool)):
                raise ValueError(f"a decision must be [knob, value], got {item!r}")
            if not isinstance(item[0], str):
                raise ValueError(f"a knob is named by a string, got {item[0]!r}")
            out.append(Decision(PartKnob.parse(item[0]), item[1]))
        return Trace(tuple(out))

    def digest(self) -> str:
        """A stable hash of the decisions (the same in every process)."""
        return hashlib.sha256(json.dumps(self.to_json()).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Domain:
    knob: KnobName
    choices: tuple[Value, ...]


class Invalid(Exception):
    """A trace that breaks a rule of its space (static, before any kernel is built)."""


class Sketch(ABC):
    """One family of configurations: its knobs' domains, and the configuration a
    trace of them gives."""

    kind: SketchKind

    @abstractmethod
    def domains(self) -> tuple[Domain, ...]: ...

    @abstractmethod
    def config(self, trace: Trace) -> Any:
        """The configuration of `trace` (raises `Invalid` with the rule it breaks)."""

    @abstractmethod
    def trace_of(self, config: Any) -> Trace | None:
        """The trace giving `config`, None when this sketch cannot reach it."""

    def trace(self, values: dict[KnobName, Value]) -> Trace:
        return Trace((Decision(Knob.SKETCH, str(self.kind)),
                      *(Decision(d.knob, values[d.knob]) for d in self.domains())))

    def size(self) -> int:
        return math.prod(len(d.choices) for d in self.domains())

    def shortlist(self) -> Iterator[Trace]:
        """The traces the fast mode checks of a sketch that is no GEMM's: all of them
        (a sketch whose knobs multiply past a few hundred traces narrows them)."""
        doms = self.domains()
        for values in itertools.product(*(d.choices for d in doms)):
            yield self.trace(dict(zip((d.knob for d in doms), values)))


@dataclass(frozen=True)
class GemmProblem:
    """What the GEMM sketches need of the fusion."""

    m: int
    n: int
    k: int
    batch: int
    rows: bool  # a row-normalising (LayerNorm) epilogue: the block tile spans the row
    static: bool


@dataclass(frozen=True)
class GemmSketch(Sketch):
    problem: GemmProblem
    math: GemmMath
    smem_limit: int
    split: bool = True  # split-K a knob (a narrowed space may leave it out)
    # today's configurations: the pruning rule (no tile larger than the problem needs)
    # spares them, so stitch-codegen's choice always lies in the space
    known: frozenset[GemmConfig] = frozenset()

    @property
    def kind(self) -> SketchKind:  # type: ignore[override]  # a property where the base has a field
        return SketchKind.GEMM_FMA if self.math == GemmMath.FMA else SketchKind.GEMM_MMA

    def domains(self) -> tuple[Domain, ...]:
        fma = self.math == GemmMath.FMA
        threads, micro, ks = (FMA_THREADS, FMA_MICRO, FMA_K) if fma else (MMA_WARPS, MMA_WARP_TILE, MMA_K)
        splits = SPLIT_CHOICES if self.split and self.problem.static and not self.problem.rows else (1,)
        doms = (Domain(Knob.M_THREADS, threads), Domain(Knob.M_MICRO, micro), Domain(Knob.N_THREADS, threads),
                Domain(Knob.N_MICRO, micro), Domain(Knob.K_TILE, ks), Domain(Knob.SPLIT, splits))
        return doms if fma else (*doms, Domain(Knob.STAGES, MMA_STAGES))

    def config(self, trace: Trace) -> GemmConfig:
        t = trace.number
        tm, tn = t(Knob.M_MICRO), t(Knob.N_MICRO)
        stages = 0 if self.math == GemmMath.FMA else t(Knob.STAGES)
        c = GemmConfig(t(Knob.M_THREADS) * tm, t(Knob.N_THREADS) * tn, t(Knob.K_TILE), tm, tn, self.math,
                       t(Knob.SPLIT), stages)
        why = c.problem()
        if why is not None:
            raise Invalid(why)
        if stages and stages == tile_stages(replace(c, stages=0)):
            raise Invalid(f"{stages} stages are what the tile gets by default (stages 0)")
        p = self.problem
        if p.static and (c.bm > covering(p.m) or c.bn > covering(p.n)) and c not in self.known:
            raise Invalid(f"tile {c.bm}x{c.bn} larger than the problem's {p.m}x{p.n} needs")
        if p.rows and (c.bn != max(64, covering(p.n)) or c.bn // c.tn != 16):
            raise Invalid("a LayerNorm epilogue needs a tile row spanning the row on 16 lanes")
        if self.math != GemmMath.FMA and c.tm > 16 and 16 % swizzle_period(c.bk // chunk_elements(self.math), 1):
            # the A fragments of a warp tile's later 16-row pieces are addressed a
            # constant offset below its first (`MmaGemmLowering.keeps_swizzle`)
            raise Invalid(f"a k-step of {c.bk} swizzles A in periods longer than 16 rows (warp tile {c.tm} rows)")
        if self.math != GemmMath.FMA and c.bk > 16 and 16 % swizzle_period(c.bn // chunk_elements(self.math), 1):
            # likewise B's later 16-deep pieces (kept for tf32 too, untested there)
            raise Invalid(f"a B tile {c.bn} wide swizzles in periods longer than 16 rows (k-step {c.bk})")
        if c.split > 1 and -(-p.k // c.bk) < c.split:
            raise Invalid(f"split {c.split} leaves a slice without a k-step")
        need = shared_bytes(c, 4, True)
        if need > self.smem_limit:
            raise Invalid(f"tiles need {need} bytes of shared memory (at most {self.smem_limit})")
        return c

    def trace_of(self, config: Any) -> Trace | None:
        if not isinstance(config, GemmConfig) or config.math != self.math:
            return None
        values: dict[KnobName, Value] = {Knob.M_THREADS: config.bm // config.tm, Knob.M_MICRO: config.tm,
                                         Knob.N_THREADS: config.bn // config.tn, Knob.N_MICRO: config.tn,
                                         Knob.K_TILE: config.bk, Knob.SPLIT: config.split,
                                         Knob.STAGES: config.stages}
        return reachable(self, values)


def reachable(sketch: Sketch, values: dict[KnobName, Value]) -> Trace | None:
    if all(values[d.knob] in d.choices for d in sketch.domains()):
        return sketch.trace(values)
    return None


@dataclass(frozen=True)
class RowSketch(Sketch):
    """Row kernels, built by `RowConfig.make` on the fusion's layout (captured from the
    mapping's builder)."""

    layout: Any  # row.RowLayout
    kernels: Any  # row.RowKernels (for the shared rows of sub-roots)
    schedules: tuple[str, ...]
    vectors: tuple[int, ...]
    subroots: tuple[str, ...]  # the sub-root op names the fusion offers (empty: none)
    spec: Any
    kind: SketchKind = SketchKind.ROW

    def domains(self) -> tuple[Domain, ...]:
        return (Domain(Knob.SCHEDULE, self.schedules), Domain(Knob.BLOCK, ROW_BLOCKS), Domain(Knob.CACHED, (0, 1)),
                Domain(Knob.VECTOR, self.vectors), Domain(Knob.STEPS, ROW_STEPS),
                Domain(Knob.SUBROOTS, (0, 1) if self.subroots else (0,)))

    def config(self, trace: Trace) -> RowConfig:
        schedule = str(trace.get(Knob.SCHEDULE))
        block, cached = trace.number(Knob.BLOCK), bool(trace.number(Knob.CACHED))
        vector, steps = trace.number(Knob.VECTOR), trace.number(Knob.STEPS)
        layout = self.layout
        longest = layout.lengths[0] or 1
        if schedule == "block" and (block not in BLOCK_SIZES or block > longest):
            raise Invalid(f"a block per row of {longest} elements with {block} threads")
        per_row = ROW_SCHEDULES[RowSchedule(schedule)](longest)[0] if schedule != "block" else block
        if block % per_row:
            raise Invalid(f"{block} threads are not whole rows of {per_row}")
        if not cached and (vector != 1 or steps != 1):
            raise Invalid("vectors and row steps need the row in registers")
        if cached and not register_slots(layout.lengths, per_row, layout.rows, vector):
            raise Invalid("the row does not fit the register slots")
        if vector > 1 and schedule == "interleaved":
            raise Invalid("interleaved rows take no vectors")
        c = RowConfig.make(schedule, block, longest, layout, self.spec, cached=cached, steps=steps, vector=vector)
        if trace.number(Knob.SUBROOTS):
            c = replace(c, subroots=self.subroots)
            fits = all(s.in_registers for s in layout.subroots) if c.slots else (
                all(s.length for s in layout.subroots) and self.kernels.row_smem(c, layout) <= self.kernels.smem_limit)
            if not fits:
                raise Invalid("the sub-roots fit neither the registers nor the shared rows")
        return c

    def trace_of(self, config: Any) -> Trace | None:
        if not isinstance(config, RowConfig):
            return None
        return reachable(self, {Knob.SCHEDULE: config.schedule, Knob.BLOCK: config.block,
                                 Knob.CACHED: int(config.slots > 0), Knob.VECTOR: config.vector,
                                 Knob.STEPS: config.steps, Knob.SUBROOTS: int(bool(config.subroots))})


@dataclass(frozen=True)
class LoopSketch(Sketch):
    vectors: tuple[int, ...]
    kind: SketchKind = SketchKind.LOOP

    def domains(self) -> tuple[Domain, ...]:
        return Domain(Knob.BLOCK, LOOP_BLOCKS), Domain(Knob.VECTOR, self.vectors)

    def config(self, trace: Trace) -> LoopConfig:
        return LoopConfig(trace.number(Knob.BLOCK), trace.number(Knob.VECTOR))

    def trace_of(self, config: Any) -> Trace | None:
        if not isinstance(config, LoopConfig):
            return None
        return reachable(self, {Knob.BLOCK: config.block, Knob.VECTOR: config.vector})


@dataclass(frozen=True)
class FixedSketch(Sketch):
    """A mapping without a sketch of its own: today's list, by index."""

    configs: tuple[Any, ...]
    kind: SketchKind = SketchKind.FIXED

    def domains(self) -> tuple[Domain, ...]:
        return (Domain(Knob.FIXED, tuple(range(len(self.configs)))),)

    def config(self, trace: Trace) -> Any:
        return self.configs[trace.number(Knob.FIXED)]

    def trace_of(self, config: Any) -> Trace | None:
        return self.trace({Knob.FIXED: self.configs.index(config)}) if config in self.configs else None


@dataclass(frozen=True)
class Space:
    """The candidates of one task: the union of its sketches' traces."""

    sketches: tuple[Sketch, ...]
    fixed: tuple[Any, ...]  # today's configurations (the lists stitch-codegen compares)
    # annotations drawn by `sample` and how many of them broke a rule (redrawn)
    draws: dict[str, int] = field(default_factory=lambda: {"drawn": 0, "broke_rules": 0}, compare=False, repr=False)

    def sketch(self, trace: Trace) -> Sketch:
        kind = trace.sketch
        for s in self.sketches:
            if s.kind == kind:
                return s
        raise Invalid(f"no sketch {kind} in this space")

    def config(self, trace: Trace) -> Any:
        sketch = self.sketch(trace)
        if [d.knob for d in trace.decisions[1:]] != [d.knob for d in sketch.domains()]:
            raise Invalid("the decisions are not this sketch's knobs")
        for d, dom in zip(trace.decisions[1:], sketch.domains()):
            if d.value not in dom.choices:
                raise Invalid(f"{d.knob} = {d.value} is outside {dom.choices}")
        return sketch.config(trace)

    def size(self) -> int:
        return sum(s.size() for s in self.sketches)

    def traces(self) -> Iterator[Trace]:
        """Every trace of the space (valid or not), sketch by sketch."""
        for s in self.sketches:
            doms = s.domains()
            for values in itertools.product(*(d.choices for d in doms)):
                yield s.trace(dict(zip((d.knob for d in doms), values)))

    def sample(self, rng: random.Random, tries: int = 10_000) -> Trace:
        """Random annotation: a sketch (weighted by its size, so every trace is equally
        likely), then every knob at random, redrawn while it breaks a rule of the space
        (cheap: no kernel is built), so the samples are uniform over the rule-valid
        traces. `draws` counts the annotations and the redrawn ones."""
        trace = self._annotate(rng)
        for _ in range(tries):
            self.draws["drawn"] += 1
            try:
                self.config(trace)
                return trace
            except Invalid:
                self.draws["broke_rules"] += 1
                trace = self._annotate(rng)
        return trace

    def _annotate(self, rng: random.Random) -> Trace:
        sketch = rng.choices(self.sketches, weights=[s.size() for s in self.sketches])[0]
        return sketch.trace({d.knob: rng.choice(d.choices) for d in sketch.domains()})

    def mutate(self, trace: Trace, rng: random.Random) -> Trace:
        """One decision changed: half the time (where the sketch splits tiles) a factor
        of 2 moved between a tile's two levels (threads or warps x micro or warp tile,
        the block tile kept, Ansor's tile-size mutation), else one knob redrawn."""
        sketch = self.sketch(trace)
        doms = {d.knob: d.choices for d in sketch.domains()}
        if Knob.M_THREADS in doms and rng.random() < 0.5:
            outer, inner = rng.choice(TILE_SPLITS)
            a, b = trace.number(outer), trace.number(inner)
            up = rng.random() < 0.5
            a2, b2 = (a * 2, b // 2) if up else (a // 2, b * 2)
            if a2 in doms[outer] and b2 in doms[inner]:
                return trace.with_value(outer, a2).with_value(inner, b2)
        knobs = [k for k, choices in doms.items() if len(choices) > 1]
        if not knobs:
            return trace
        knob = rng.choice(knobs)
        others = [v for v in doms[knob] if v != trace.get(knob)]
        return trace.with_value(knob, rng.choice(others))

    def narrowed(self, kinds: set[SketchKind], split: bool = True) -> Space:
        """This space with only the sketches of `kinds`, split-K left out unless
        `split` (a small space to search exhaustively; split kernels are simulated in
        full, which is slow)."""
        sketches = tuple(replace(s, split=split) if isinstance(s, GemmSketch) else s
                         for s in self.sketches if s.kind in kinds)
        return Space(sketches, self.fixed)

    def trace_of(self, config: Any) -> Trace | None:
        for s in self.sketches:
            t = s.trace_of(config)
            if t is not None:
                return t
        return None


# -- building a task's space from its captured request ---------------------------------


def space_for(request: ChoiceRequest, extra_fixed: Sequence[Any] = ()) -> Space:
    """The space of the fusion `request` is stitch-codegen's `choose` of."""
    fixed = tuple(dict.fromkeys([*request.configs, *extra_fixed]))
    name = str(request.mapping.name)
    if name == "gemm" and request.fusion is not None:
        sketches = _gemm_sketches(request, fixed)
    elif name == "row":
        sketches = _row_sketches(request, fixed)
    elif name == "loop":
        sketches = (LoopSketch(tuple(sorted({1, *(c.vector for c in fixed)}))),)
    elif name in ("attention", "conv", "columns"):
        from fsir.tune import sketches as more  # they build on this module's sketches

        build = {"attention": more.attention_sketches, "conv": more.conv_sketches, "columns": more.columns_sketches}
        sketches = build[name](request, fixed)
    else:
        sketches = ()
    return Space(sketches or (FixedSketch(fixed),), fixed)


def gemm_problem_of(request: ChoiceRequest) -> tuple[GemmProblem, bool]:
    """The fusion's GEMM problem, and whether it has a moments output (whose
    configurations only today's list has)."""
    ctx = request.fusion
    assert ctx is not None
    dot = next(op for op in ctx.ops if isinstance(op, graph.DotOp))
    prob = product_problem(dot, ctx.ops)
    batch = math.prod(prob.batch) if DYN not in prob.batch else DYN
    static = DYN not in (prob.m, prob.n, prob.k, batch)
    rows = bool(row_reductions(dot, ctx.ops))
    return GemmProblem(prob.m, prob.n, prob.k, batch if static else 1, rows, static), \
        tile_moments_of(dot, ctx.ops) is not None


def _gemm_sketches(request: ChoiceRequest, fixed: tuple[Any, ...]) -> tuple[Sketch, ...]:
    problem, moments = gemm_problem_of(request)
    if moments or not problem.static:
        return ()
    limit = block_smem(request.spec)
    known = frozenset(c for c in fixed if isinstance(c, GemmConfig))
    maths = {c.math for c in known}
    sketches: list[Sketch] = [GemmSketch(problem, GemmMath.FMA, limit, known=known)]
    sketches += [GemmSketch(problem, m, limit, known=known) for m in sorted(maths - {GemmMath.FMA})]
    return tuple(sketches)


def today_splits(request: ChoiceRequest) -> list[GemmConfig]:
    """The split-K configurations stitch-codegen compares in its second `choose` (the
    captured request is its first)."""
    if str(request.mapping.name) != "gemm" or request.fusion is None:
        return []
    problem, moments = gemm_problem_of(request)
    if moments or problem.rows or not problem.static:
        return []
    configs = [c for c in request.configs if isinstance(c, GemmConfig)]
    return [c for c in split_candidates(configs, problem.m, problem.n, problem.k, problem.batch, request.spec)
            if -(-problem.k // c.bk) >= c.split * MIN_SLICE_STEPS]


def _row_sketches(request: ChoiceRequest, fixed: tuple[Any, ...]) -> tuple[Sketch, ...]:
    # The row mapping's builder closes over its layout and its RowKernels: the space
    # needs them (row lengths, sub-roots) and the mapping's API does not expose them.
    bound = inspect.getclosurevars(request.build).nonlocals
    layout, kernels = bound.get("layout"), bound.get("self")
    if layout is None or kernels is None or not fixed or not all(isinstance(c, RowConfig) for c in fixed):
        return ()
    schedules = tuple(dict.fromkeys(c.schedule for c in fixed))
    subroots = next((c.subroots for c in fixed if c.subroots), ())
    vectors = tuple(sorted({1, *(c.vector for c in fixed)}))
    return (RowSketch(layout, kernels, schedules, vectors, subroots, request.spec),)


# -- static checks ------------------------------------------------------------------


class Rejection(StrEnum):
    RULE = "rule"  # the space's own rules (`Invalid`)
    BUILD = "build"  # the mapping refused to build it
    SHARED = "shared"  # shared memory over the block's limit
    REGISTERS = "registers"  # over 255 registers by the summary's estimate
    THREADS = "threads"  # no block of it fits an SM


@dataclass(frozen=True)
class Checked:
    """A statically valid candidate: its configuration, the latency-evaluator's
    estimate (the prior) and its summary's features."""

    trace: Trace
    config: Any
    description: str
    prior_seconds: float
    features: tuple[float, ...]


@dataclass(frozen=True)
class Rejected:
    trace: Trace
    reason: Rejection
    detail: str


class Checker:
    """Static checks of a task's traces on its captured request (builds each
    candidate's kernel, never lowers it); results are cached by trace."""

    def __init__(self, request: ChoiceRequest, space: Space):
        self.request = request
        self.space = space
        self._cache: dict[Trace, Checked | Rejected] = {}
        self.rejections: dict[Rejection, int] = {}

    def check(self, trace: Trace) -> Checked | Rejected:
        got = self._cache.get(trace)
        if got is None:
            got = self._cache[trace] = self._check(trace)
            if isinstance(got, Rejected):
                self.rejections[got.reason] = self.rejections.get(got.reason, 0) + 1
        return got

    def _check(self, trace: Trace) -> Checked | Rejected:
        from fsir.tune.cost_model import features

        try:
            config = self.space.config(trace)
        except Invalid as err:
            return Rejected(trace, Rejection.RULE, str(err))
        req = self.request
        try:
            kernel = req.build(config)
        except (UserError, VerifyException, AssertionError, ValueError) as err:
            return Rejected(trace, Rejection.BUILD, str(err).splitlines()[0] if str(err) else type(err).__name__)
        try:
            return self._judge(trace, config, kernel, features)
        finally:
            kernel.drop_all_references()

    def _judge(self, trace: Trace, config: Any, kernel: KernelOp, features) -> Checked | Rejected:
        spec = self.request.spec
        if kernel.shared_bytes() > spec.smem_per_block:
            return Rejected(trace, Rejection.SHARED, f"{kernel.shared_bytes()} bytes of shared memory")
        grid, block = kernel.launch()
        summary: Summary = self.request.mapping.summarize(kernel, spec)
        if summary.registers > MAX_REGISTERS:
            return Rejected(trace, Rejection.REGISTERS, f"{summary.registers} registers (estimated)")
        if DYNAMIC in grid:
            est = Estimate(math.inf, math.inf, 0, math.inf, summary.registers, summary.shared_bytes,
                           _no_occupancy(), {})
        else:
            est = estimate_summary(summary, grid, block, spec, bandwidth=True)
            if est.occupancy.blocks_per_sm == 0:
                return Rejected(trace, Rejection.THREADS, f"no block fits an SM ({est.occupancy.limited_by})")
        return Checked(trace, config, config.describe(), est.seconds,
                       features(kernel, summary, est, spec))


def _no_occupancy():
    from fsir.codegen.latency import Occupancy

    return Occupancy(0, 0, "unknown")


ENUMERATE_LIMIT = 2048  # spaces of at most this many traces are checked whole, not sampled


@dataclass(frozen=True)
class Sampled:
    """Statically valid candidates drawn at random, with the draws they took (rule-valid
    annotations) and how many of those the static checks rejected."""

    candidates: list[Checked]
    draws: int
    rejected: int


def sample_valid(checker: Checker, rng: random.Random, n: int, tries: int = 50) -> Sampled:
    """Up to `n` distinct statically valid candidates at random (in a space of at most
    `ENUMERATE_LIMIT` traces: all of them, shuffled)."""
    if checker.space.size() <= ENUMERATE_LIMIT:
        results = [checker.check(t) for t in checker.space.traces()]
        valid = [c for c in results if isinstance(c, Checked)]
        rng.shuffle(valid)
        return Sampled(valid, len(results), sum(isinstance(c, Rejected) for c in results))
    out: dict[Trace, Checked] = {}
    draws = rejected = 0
    while len(out) < n and draws < n * tries:
        t = checker.space.sample(rng)
        draws += 1
        got = checker.check(t)
        if isinstance(got, Checked):
            out.setdefault(t, got)
        else:
            rejected += 1
    return Sampled(list(out.values()), draws, rejected)
