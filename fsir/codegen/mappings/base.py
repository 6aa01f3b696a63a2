"""What every mapping shares: the fusion being generated, the kernel op it becomes, and
the abstract `Mapping` (FusionStitching §4).

A mapping (`loop`, `row`, `gemm`, ...) is one object owning everything about one way of
running a fusion: which op sets it is for (`claims`) and can make one kernel of
(`accepts`: the explorer's capability query), its configurations and the
`schedule.kernel` each gives (`build`), the choice among them by the latency-evaluator
(`choose`, `score`), the launch grid of a kernel with `?` sizes (`grid`), what a
(possibly hand-written) kernel needs to be lowered (`check_lowerable`) and its lowering
to gpu IR (`lowering`, a `fsir.lowering.kernels.KernelLowering` subclass). The registry
is `fsir.codegen.mappings.MAPPINGS`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    f64,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from fsir.codegen.latency import Estimate, estimate, estimate_summary
from fsir.codegen.options import DEFAULT, PipelineOptions, Registers
from fsir.codegen.summary import Summary
from fsir.dialects import graph, schedule
from fsir.dialects.gpu import VECTOR_WIDTHS
from fsir.dialects.graph import DYN, shape_of
from fsir.dialects.schedule import (
    DYNAMIC,
    WARP,
    Composition,
    GroupOp,
    KernelOp,
    MappingParamsAttr,
    SharedOp,
    Storage,
    YieldOp,
    element_bytes,
)
from fsir.dialects.stitch import FusionOp
from fsir.errors import UserError
from fsir.gpuspec import GpuSpec, gpu_spec
from fsir.ir import location_of
from fsir.lowering.emit import elem_type
from fsir.lowering.kernels import KernelInterface, KernelLowering, lower, non_splat_constants, shared_layout
from fsir.lowering.scalar import Index, compute_type
from fsir.lowering.shapes import ShapeCalc
from fsir.stats import count as tally

BLOCK = 256  # threads per block of loop and row kernels

SUPPORTED = graph.SUPPORTED_ELEMENT_TYPES


def supported_element(t: Attribute) -> bool:
    try:
        graph.numpy_dtype(t)
    except VerifyException:
        return False
    return True


@functools.cache
def _f32_only_math(op_type: type[graph.ElementwiseOp]) -> str | None:
    """The math op an elementwise op's scalar code needs that the PTX printer computes
    in f32 only (so not on f64 operands), found by building that code once for f64."""
    from xdsl.dialects.builtin import Float64Type

    from fsir.lowering.scalar import Cursor, ScalarBuilder
    from fsir.ptx.math_ops import F32_ONLY

    block = Block(arg_types=[Float64Type()] * op_type.SPEC.arity)
    op_type.SPEC.lower(ScalarBuilder(Cursor(block)), *block.args)
    return next((op.name for op in block.walk() if type(op) in F32_ONLY), None)


def accumulator_type(t: Attribute) -> Attribute:
    return compute_type(t)


def op_error(op: Operation, message: str) -> UserError:
    return UserError(f"'{op.name}' op {message}", location_of(op))


def check_supported(op: Operation) -> None:
    if not isinstance(op, graph.GraphOp):
        raise op_error(op, "is not a graph op; stitch-codegen cannot generate code for it")
    for v in [*op.operands, *op.results]:
        t = v.type
        assert isinstance(t, TensorType)
        if not supported_element(t.element_type):
            raise op_error(op, f"has element type {t.element_type}, which the GPU code generator does not "
                             f"support ({SUPPORTED})")
    if isinstance(op, graph.ElementwiseOp) and isinstance(op.result_type.element_type, Float64Type):
        needs = _f32_only_math(type(op))
        if needs is not None:
            raise op_error(op, f"on f64 needs '{needs}', which the GPU code generator has in f32 only "
                               "(convert to f32 first)")
    if isinstance(op, graph.IotaOp) and op.like is None and DYN in shape_of(op.result.type):
        raise op_error(op, "with a '?' dim and no 'like' operand cannot be generated (its size is unknown)")


def closure(values: list[SSAValue], stop) -> set[Operation]:
    """The ops computing `values`, walking operands until `stop(value)` is true."""
    ops: set[Operation] = set()
    stack = [v for v in values if not stop(v)]
    while stack:
        v = stack.pop()
        op = v.owner
        if not isinstance(op, Operation) or op in ops:
            continue
        ops.add(op)
        stack.extend(o for o in op.operands if not stop(o))
    return ops


def numel(shape) -> int | None:
    return None if DYN in shape else math.prod(shape)


def max_known(sizes: Sequence[int | None]) -> int | None:
    """The largest of `sizes`, None when one is unknown."""
    known = [s for s in sizes if s is not None]
    return max(known) if len(known) == len(sizes) else None




def unique(values: list[SSAValue]) -> list[SSAValue]:
    out: list[SSAValue] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out



@dataclass
class GroupSpec:
    values: list[SSAValue]  # fusion-level values the group yields
    composition: Composition
    storage: Storage
    buffer: str | None = None
    offset: int | None = None
    row_dims: tuple[int, ...] | None = None
    packed: bool = False  # an independent part: a grid-stride loop over its elements


def _body_key(groups: list[GroupSpec]) -> tuple:
    """What the ops `FusionContext.kernel` clones into the groups depend on: each
    group's values (by identity), in order, and whether later groups read its results
    (a group storing them on chip) or recompute them (one storing them to global
    memory). Configurations of equal keys differ only in attributes."""
    return tuple((tuple(map(id, g.values)), g.storage == Storage.GLOBAL) for g in groups)


@dataclass
class _Prototype:
    """The kernels one `Mapping.choose` builds, one per `_body_key`, each re-targeted to
    every configuration of its key it scores, instead of building each candidate's
    groups anew: the cloned graph ops are most of a kernel's ops, and most
    configurations share them."""

    kernels: dict[tuple, KernelOp] = field(default_factory=dict)
    tables: dict[tuple, int] = field(default_factory=dict)  # each kernel's `constant_table_bytes`
    memos: dict[int, dict] = field(default_factory=dict)  # `scoring_memo`, by kernel

    def holds(self, k: KernelOp) -> bool:
        return any(k is p for p in self.kernels.values())


# The prototype of the `Mapping.choose` scoring now (None outside one).
_PROTOTYPE: ContextVar[_Prototype | None] = ContextVar("_PROTOTYPE", default=None)
def scoring_memo(k: KernelOp) -> dict | None:
    """While `Mapping.choose` scores configurations on `k` (a prototype, re-targeted
    to each), a dict for what a summary computes of `k`'s cloned ops, which the
    re-targets leave alone (keyed by what it read of the rest); else None."""
    slot = _PROTOTYPE.get()
    if slot is None or not slot.holds(k):
        return None
    return slot.memos.setdefault(id(k), {})


# Whether `Mapping.choose` shares one prototype among its candidates (the tests compare
# the choices with and without).
SHARE_PROTOTYPES = True


class FusionContext:
    """One fusion being generated, with the pass's options: what every mapping's
    `build` reads, and the builder of its `schedule.kernel` (`kernel`)."""

    def __init__(self, fusion: FusionOp, name: str, options: PipelineOptions = DEFAULT):
        self.options = options
        self.subroots = options.subroots
        self.row_schedule = options.rows
        self.vector = options.vector.width  # a forced vector width (None: the evaluator's choice)
        self.spec = gpu_spec(options.gpu)
        self.registers = options.registers is Registers.AUTO
        self.gemm_config = options.gemm  # None: the evaluator chooses
        self.precision = options.precision  # what f32 GEMMs compute in: FMAs or tf32 on the tensor cores
        self.traffic_slack = options.traffic_slack  # a GEMM's time traded for fewer requested bytes (`Mapping.choose`)
        self.fusion = fusion
        self.name = name
        self.block = fusion.block
        self.yields = fusion.yielded()
        self.order = list(self.block.ops)[:-1]  # without the yield
        needed = closure(self.yields, lambda v: not isinstance(v.owner, Operation))
        self.ops = [op for op in self.order if op in needed]
        for op in self.ops:
            check_supported(op)

    def vector_widths(self, tensors: list[SSAValue], rows: list[tuple[int, ...]]) -> list[int]:
        """The vector widths V a kernel may use (FusionStitching §4.2's enumerated
        launch dimensions): static shapes, elements of at most 4 bytes, every row a
        vector runs along (`rows`: innermost extents) a multiple of V, and every tensor
        the kernel reads or writes with an innermost extent of 1 or a multiple of V,
        so its accesses stay aligned. A forced width applies where it is legal."""
        legal = [1]
        for vec in VECTOR_WIDTHS:
            if all(r and DYN not in r and r[-1] % vec == 0 for r in rows) and all(
                    DYN not in shape_of(t.type) and element_bytes(elem_type(t)) <= 4
                    and (shape_of(t.type)[-1:] in ((), (1,)) or shape_of(t.type)[-1] % vec == 0)
                    for t in tensors):
                legal.append(vec)
        if self.vector is not None:
            return [self.vector] if self.vector in legal else [1]
        return legal

    def signature(self) -> tuple:
        """The fusion up to value names: its argument types and its ops (name, operands
        by position, properties, attributes, result types). Kernels of fusions with equal
        signatures differ only in names. Attributes compare by value (a weight constant's
        bytes), without being printed."""
        where: dict[SSAValue, tuple[int, int]] = {a: (-1, i) for i, a in enumerate(self.block.args)}
        out: list = [tuple(a.type for a in self.block.args)]
        for n, op in enumerate(self.ops):
            out.append((op.name, tuple(where[o] for o in op.operands), tuple(op.properties.items()),
                        tuple(op.attributes.items()), tuple(r.type for r in op.results)))
            where.update({r: (n, j) for j, r in enumerate(op.results)})
        out.append(tuple(where[v] for v in self.yields))
        return tuple(out)

    def values(self) -> list[SSAValue]:
        """The fusion's arguments and its ops' results, in the order `signature` states
        them (equal signatures: equal positions)."""
        return [*self.block.args, *(r for op in self.ops for r in op.results)]

    def plan_key(self) -> tuple:
        """The signature and every option that changes the kernel built for it: fusions
        of equal keys get equal kernels (`fsir/codegen/kernel_plans.py`)."""
        return (self.signature(), self.spec.name, self.row_schedule, self.registers, self.subroots, self.vector,
                self.gemm_config, self.precision, self.traffic_slack)

    def kernel(self, params: MappingParamsAttr, grid, block, groups: list[GroupSpec],
               shared: list[SharedOp]) -> KernelOp:
        """The fusion's schedule.kernel: `shared` buffers, then `groups` in order.
        While `Mapping.choose` scores configurations, a configuration whose groups
        clone the same ops as an earlier one's (`_body_key`: a GEMM's tiles, a row
        kernel's block sizes) gets that kernel back, re-targeted (`_Prototype`)."""
        slot = _PROTOTYPE.get()
        if slot is None:
            return self._kernel(params, grid, block, groups, shared)
        key = (id(self), _body_key(groups))
        proto = slot.kernels.get(key)
        if proto is not None:
            self.retarget(proto, params, grid, block, groups, shared, slot.tables[key])
            return proto
        k = slot.kernels[key] = self._kernel(params, grid, block, groups, shared)
        slot.tables[key] = constant_table_bytes(k)
        return k

    def retarget(self, k: KernelOp, params: MappingParamsAttr, grid, block, groups: list[GroupSpec],
                 shared: list[SharedOp], tables: int) -> None:
        """Make `k`, this fusion's kernel under another configuration whose groups
        clone the same ops, the kernel `kernel` would build for (params, grid, block,
        groups, shared): its properties, its shared buffers (the body's first ops), its
        groups' properties (the same ops over the same bodies) and its cost (`tables`: its
        `constant_table_bytes`, which the cloned ops fix)."""
        k.params = params
        k.grid = DenseArrayBase.from_list(i64, list(grid))
        k.block_dims = DenseArrayBase.from_list(i64, list(block))
        for old in [op for op in k.block.ops if isinstance(op, SharedOp)]:
            old.detach()
            old.erase()
        first = k.block.first_op
        assert first is not None  # the groups and the yield
        k.block.insert_ops_before(shared, first)
        # the groups keep their bodies and results: only their properties differ
        for g, spec in zip(k.groups(), groups, strict=True):
            g.properties = GroupOp.properties_of(spec.composition, spec.storage, spec.buffer, spec.offset,
                                                 spec.row_dims, spec.packed)
        k.cost = DictionaryAttr(self.cost(grid, block, shared, tables))

    def _kernel(self, params: MappingParamsAttr, grid, block, groups: list[GroupSpec],
                shared: list[SharedOp]) -> KernelOp:
        body = Block(arg_types=[a.type for a in self.block.args])
        env: dict[SSAValue, SSAValue] = dict(zip(self.block.args, body.args))
        for old, new in env.items():
            new.name_hint = old.name_hint
        for s in shared:
            body.add_op(s)
        produced: dict[SSAValue, SSAValue] = {}
        for spec in groups:
            needed = closure(spec.values, env.__contains__)
            gblock = Block()
            local_env = dict(env)
            for op in self.order:
                if op in needed:
                    copy = op.clone(value_mapper=local_env)
                    gblock.add_op(copy)
                    local_env.update(zip(op.results, copy.results))
            gblock.add_op(YieldOp([local_env[v] for v in spec.values]))
            g = GroupOp(spec.composition, spec.storage, [v.type for v in spec.values], Region(gblock),
                        spec.buffer, spec.offset, spec.row_dims, spec.packed)
            body.add_op(g)
            for v, r in zip(spec.values, g.results):
                # later groups read sub-root results; the root groups' outputs live only
                # in global memory, so a later group recomputes what it needs of them
                if spec.storage != Storage.GLOBAL:
                    env[v] = r
                produced[v] = r
                r.name_hint = v.name_hint
        body.add_op(YieldOp([produced[v] if v in produced else env[v] for v in self.yields]))
        return self.kernel_of(params, grid, block, body, shared)

    def kernel_of(self, params, grid, block, body: Block, shared: list[SharedOp]) -> KernelOp:
        """The fusion's schedule.kernel with body `body`, its location and its cost."""
        k = KernelOp(self.name, params, grid, block, list(self.fusion.operands),
                     [r.type for r in self.fusion.results], Region(body))
        k.location = self.fusion.location
        k.cost = DictionaryAttr(self.cost(grid, block, shared, constant_table_bytes(k)))
        return k

    def cost(self, grid, block, shared: list[SharedOp], tables: int = 0) -> dict[str, Attribute]:
        """What the launch and the tensors say statically, with `tables` bytes of
        constants the kernel reads (`Mapping.choose` adds the latency-evaluator's
        figures)."""
        out: dict[str, Attribute] = {}
        if DYNAMIC not in grid:
            threads = math.prod(grid) * math.prod(block)
            out["warps"] = IntegerAttr(-(-threads // WARP), i64)
        tensors = [*self.fusion.operands, *self.fusion.results]
        sizes = [numel(shape_of(v.type)) for v in tensors]
        if None not in sizes:
            total = sum(s * element_bytes(elem_type(v)) for s, v in zip(sizes, tensors) if s is not None)
            out["global_bytes"] = IntegerAttr(total + tables, i64)
        out["smem_bytes"] = IntegerAttr(sum(s.bytes for s in shared), i64)
        return out


class Config(Protocol):
    """One configuration of a mapping: what `record` shows of it."""

    def describe(self) -> str: ...


C = TypeVar("C", bound=Config)


# How far a summary's register estimate may be from the gpu IR's before the choice is
# checked by lowering (the row and loop summaries are fitted to within 2-3 on average).
REGISTER_MARGIN = 2


def _order(est: Estimate) -> tuple[float, float, float]:
    """How `Mapping.choose` ranks estimates: time, then the global bytes requested
    (served by the L2, which concurrent kernels share), then issued warp cycles."""
    return (est.seconds, est.requested_bytes, est.waves * est.warp_cycles)


T = TypeVar("T")


def leanest(candidates: Sequence[tuple[float, float, Any, T]], slack: float) -> T:
    """Of (seconds, requested bytes, rank, candidate) tuples, the candidate requesting
    the fewest bytes among those at most a fraction `slack` slower than the fastest
    (ties: the lower rank): the `traffic_slack` rule of `Mapping.choose` and
    `gemm.split_wins`."""
    limit = (1 + slack) * min(c[0] for c in candidates)
    return min((c for c in candidates if c[0] <= limit), key=lambda c: (c[1], c[2]))[3]


@dataclass
class _Scored(Generic[C]):
    """A candidate in `Mapping.choose`: its kernel (None: scored on the choice's
    prototype, which has moved on to other configurations since), configuration,
    launch, estimate and summary; `exact` once its estimate comes from its lowered
    gpu IR."""

    kernel: KernelOp | None
    config: C
    launch: tuple[tuple[int, ...], tuple[int, ...]]
    estimate: Estimate
    summary: Summary
    exact: bool = False

    @property
    def requested_bytes(self) -> float:
        """The global bytes its threads request, as its summary counts them (the gpu
        IR's count of a split-K kernel's slice reduction is coarser)."""
        grid, block = self.launch
        return self.summary.global_bytes * math.prod(grid) * math.prod(block)

    def key(self) -> tuple[float, float, float]:
        return _order(self.estimate)

    def settle(self, est: Estimate) -> None:
        self.estimate, self.exact = est, True


@dataclass(frozen=True)
class ChoiceRequest:
    """What a configuration hook (`CONFIG_HOOK`) sees of one `Mapping.choose`: the
    mapping, today's candidate configurations, the builder of a candidate's kernel, the
    GPU and the fusion being generated (`fusion_scope`; None outside stitch-codegen)."""

    mapping: Mapping
    configs: Sequence[Any]
    build: Callable[[Any], KernelOp]
    spec: GpuSpec
    fusion: FusionContext | None


# The tuner's narrow entry into stitch-codegen (`fsir/tune/`): a hook that may replace
# the configurations `Mapping.choose` compares (a tuned record forces one) or look at
# them (the tuner finds its tasks and their builders so). A context variable rather
# than a pass option: a tuned configuration belongs to one fusion, which the options
# cannot name, and compiles in other threads stay untouched.
CONFIG_HOOK: ContextVar[Callable[[ChoiceRequest], Sequence[Any]] | None] = ContextVar("CONFIG_HOOK", default=None)
_FUSION: ContextVar[FusionContext | None] = ContextVar("_FUSION", default=None)


@contextmanager
def fusion_scope(ctx: FusionContext) -> Iterator[None]:
    """Name `ctx` as the fusion being generated, for `CONFIG_HOOK`."""
    token = _FUSION.set(ctx)
    try:
        yield
    finally:
        _FUSION.reset(token)


def constant_table_bytes(k: KernelOp) -> int:
    """Bytes of the constants `k` reads from global memory: its non-splat constants (a
    model's initializers), which the kernel takes as buffers (`non_splat_constants`)."""
    total = 0
    for c in non_splat_constants(k):
        n = numel(shape_of(c.result.type))
        total += (n or 0) * element_bytes(elem_type(c.result))
    return total


class Mapping:
    """One way a fusion becomes a kernel (see the module docstring). A subclass sets
    `PARAMS` (its kernels' parameters attribute, whose `MAPPING` is its `name`) and `lowering`,
    implements `claims`, `accepts`, `build`, `summarize` and `grid`, and adds its
    lowerability rules in `check_kernel` and `vector_problem` (the parameters' own
    rules are the schedule dialect's verifier's)."""

    PARAMS: ClassVar[type[MappingParamsAttr]]
    name: ClassVar[schedule.Mapping]  # PARAMS.MAPPING
    lowering: ClassVar[type[KernelLowering]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "PARAMS" in cls.__dict__:
            cls.name = cls.PARAMS.MAPPING
    # L_warp from dependences rather than one CPI per instruction (`latency.estimate`)
    ilp: ClassVar[bool] = False
    # whether its kernels take elementwise consumers of their root (a stitched epilogue):
    # the explorer then grows patterns past the root (`fsir.codegen.capability`)
    fuses_epilogue: ClassVar[bool] = False

    # -- the explorer's capability query ---------------------------------------------

    def claims(self, ops: Sequence[Operation]) -> bool:
        """Whether `ops` are this mapping's to generate (the registry asks in order)."""
        raise NotImplementedError

    def accepts(self, ops: Sequence[Operation]) -> str | None:
        """None when one kernel of this mapping can compute `ops` (graph ops still in
        their function; a value is an output when a use lies outside the set), else
        why not. `build` enforces the same rules on a fusion."""
        raise NotImplementedError

    # -- stitch -> schedule: configurations and their choice ----------------------------

    def build(self, ctx: FusionContext) -> KernelOp:
        """The fusion's `schedule.kernel`, in the configuration the evaluator chose."""
        raise NotImplementedError

    def summarize(self, k: KernelOp, spec: GpuSpec) -> Summary:
        """What the latency-evaluator needs of `k`'s thread (instructions by class,
        registers, bytes: `fsir/codegen/summary.py`), stated from the schedule kernel
        without lowering it."""
        raise NotImplementedError

    def score(self, kernel: KernelOp, config: Config, spec: GpuSpec) -> Estimate:
        """The latency-evaluator's estimate of one candidate kernel (L = N_wave x
        L_warp) from the mapping's summary of it, without lowering it."""
        grid, block = kernel.launch()
        return estimate_summary(self.summarize(kernel, spec), grid, block, spec, bandwidth=True)

    def score_lowered(self, kernel: KernelOp, spec: GpuSpec) -> Estimate:
        """The estimate of `kernel` lowered to gpu IR: what `summarize` stands in for
        (the tests hold the summaries' choices to it)."""
        tally("candidates_lowered")
        grid, block = kernel.launch()
        distinct = self.summarize(kernel, spec).distinct_bytes if self.ilp else None
        return estimate(self.lower(kernel).func, grid, block, spec, shared_layout(kernel)[1], bandwidth=True,
                        ilp=self.ilp, distinct_bytes=distinct)

    def choose(self, configs: Sequence[C], build: Callable[[C], KernelOp], spec: GpuSpec,
               traffic_slack: float = 0.0) -> KernelOp:
        """Score every configuration's kernel; return the fastest kernel with the
        evaluator's figures in its `cost` (the others are discarded). Every mapping's
        kernel is made here, so each carries its estimate. A launch with a `?` grid cannot
        be counted in waves: the first configuration (the rules' choice) is kept unscored.
        Between equal estimates (both at a bandwidth or pipe floor) the one requesting
        fewer global bytes wins (the L2 serves them and is shared with the kernels
        running beside it), then the one issuing fewer instructions: it leaves more
        issue slots to the rest of the GPU. With `traffic_slack` s > 0 (`leaner`), the
        candidate requesting the fewest bytes among those at most a fraction s slower
        than the fastest wins.

        Candidates are scored from their summaries. A summary's registers may be off by
        a few, which only matters at an occupancy step: a candidate whose estimate
        changes within `REGISTER_MARGIN` registers and could thereby win (or the winner,
        if it could thereby lose) is lowered and scored exactly.

        Configurations whose kernels clone the same ops (a GEMM's or a convolution's
        tiles, a row kernel's block sizes) are scored on one kernel re-targeted to each
        (`FusionContext.kernel`), and the winner is such a kernel re-targeted to it:
        the same kernel, built once."""
        token = _PROTOTYPE.set(None)  # a hook's builds (the tuner's) are kernels of their own
        try:
            hook = CONFIG_HOOK.get()
            if hook is not None:
                configs = hook(ChoiceRequest(self, configs, build, spec, _FUSION.get()))
            slot = _Prototype() if SHARE_PROTOTYPES else None
            _PROTOTYPE.set(slot)
            return self._choose(configs, build, spec, traffic_slack, slot)
        finally:
            _PROTOTYPE.reset(token)

    def _choose(self, configs: Sequence[C], build: Callable[[C], KernelOp], spec: GpuSpec,
                traffic_slack: float, slot: _Prototype | None) -> KernelOp:
        """`choose`, with `build` giving back the prototype in `slot` re-targeted when a
        configuration shares its groups (`FusionContext.kernel`)."""

        def kernel_of(entry: _Scored[C]) -> KernelOp:
            """The entry's kernel; the prototype is re-targeted to its configuration."""
            return entry.kernel if entry.kernel is not None else build(entry.config)

        def discard_all_but(keep: KernelOp) -> None:
            built = [e.kernel for e in scored if e.kernel is not None]
            for k in [*built, *(slot.kernels.values() if slot is not None else ())]:
                if k is not keep:
                    self._discard(k)

        scored: list[_Scored[C]] = []
        for config in configs:
            k = build(config)
            grid, block = k.launch()
            if DYNAMIC in grid:
                discard_all_but(k)
                return k
            summary = self.summarize(k, spec)
            est = estimate_summary(summary, grid, block, spec, bandwidth=True)
            shared = slot is not None and slot.holds(k)
            scored.append(_Scored(None if shared else k, config, (grid, block), est, summary))
        assert scored

        def shifted(entry: _Scored[C], delta: int) -> Estimate:
            grid, block = entry.launch
            summary = replace(entry.summary, registers=max(1, entry.summary.registers + delta))
            return estimate_summary(summary, grid, block, spec, bandwidth=True)

        while True:
            best = min(scored, key=_Scored.key)
            if not best.exact and _order(shifted(best, REGISTER_MARGIN)) != best.key():
                best.settle(self.score_lowered(kernel_of(best), spec))
                continue
            challengers = [e for e in scored if not e.exact and e is not best
                           and _order(shifted(e, -REGISTER_MARGIN)) < best.key()]
            if not challengers:
                break
            for e in challengers:
                e.settle(self.score_lowered(kernel_of(e), spec))
        best = self.leaner(scored, best, traffic_slack)
        chosen = kernel_of(best)
        discard_all_but(chosen)
        self.record(chosen, best.estimate, best.config, len(configs), best.requested_bytes)
        return chosen

    @staticmethod
    def leaner(scored: list[_Scored[C]], best: _Scored[C], slack: float) -> _Scored[C]:
        """`best`, or with a `slack` the `leanest` candidate."""
        if slack <= 0:
            return best
        return leanest([(e.estimate.seconds, e.requested_bytes, e.key(), e) for e in scored], slack)

    @staticmethod
    def record(k: KernelOp, est, config: Config, candidates: int, requested: float) -> None:
        """The evaluator's choice and estimate, visible in the schedule IR."""
        cost = dict(k.cost.data) if k.cost is not None else {}
        cost["estimate_us"] = FloatAttr(round(est.seconds * 1e6, 3) if math.isfinite(est.seconds) else -1.0, f64)
        cost["registers"] = IntegerAttr(est.registers, i64)
        cost["occupancy"] = IntegerAttr(est.occupancy.warps_per_sm, i64)
        cost["waves"] = IntegerAttr(est.waves, i64)
        cost["candidates"] = IntegerAttr(candidates, i64)
        cost["config"] = StringAttr(config.describe())
        cost["requested_bytes"] = IntegerAttr(int(requested), i64)
        k.cost = DictionaryAttr(cost)


    @staticmethod
    def _discard(k: KernelOp) -> None:
        """A candidate not taken: drop its uses of the function's values."""
        k.drop_all_references()

    # -- schedule -> gpu -----------------------------------------------------------------

    def grid(self, k: KernelOp, axis: int, shapes: ShapeCalc) -> Index:
        """Launch dim `axis` of `k` when it depends on runtime sizes (at least 1: empty
        tensors launch one block whose threads all fall outside)."""
        raise NotImplementedError

    def check_lowerable(self, k: KernelOp) -> None:
        """What schedule-to-gpu needs of a (possibly hand-written) kernel of this mapping
        beyond the verifier (which holds the rules on the parameters and the block size):
        its vector width against its shapes, its groups, its shared buffers."""
        vec = k.params.vector_width
        problem = self.vector_problem(k, vec) if vec != 1 else None
        if problem:
            raise self.cannot_lower(k, problem)
        self.check_kernel(k)

    def vector_problem(self, k: KernelOp, vec: int) -> str | None:
        """Why `k` cannot run with vector width `vec` (a width > 1 the verifier
        accepted); None: it can."""
        return None

    def check_kernel(self, k: KernelOp) -> None:
        """The mapping's own lowerability rules (raise `cannot_lower`)."""

    @staticmethod
    def cannot_lower(k: KernelOp, message: str) -> UserError:
        return UserError(f"'schedule.kernel' op @{k.sym_name.data} cannot be lowered: {message}", location_of(k))

    def lower(self, k: KernelOp) -> KernelInterface:
        """`k` as a `gpu.func` (with what the host passes it)."""
        self.check_lowerable(k)
        return lower(k, self.lowering)
