"""The FusionStitching fusion explorer (§5): graph ops → a plan of kernels → stitch.fusion.

    exploration = explore(func_body_block, ExplorerOptions(mode="stitch"))
    apply_plan(func_body_block, exploration)          # outline each fused kernel
    print(report(name, exploration))

Steps: the function becomes an integer dataflow graph (`dataflow`); every vertex gets
its top-k candidate patterns by PatternReduction (`patterns`), scored by the
delta-evaluator (`delta_evaluator`); with `remote` on, the virtual producer h adds
patterns of several producers that meet at a consumer (`patterns.meeting_patterns`);
beam search picks `beam` plans of non-overlapping patterns (`plan`), and with beam > 1
one more plan takes the best patterns first (`plan.greedy_by_score`); h then packs
independent kernels of each plan (`remote`); a latency-evaluator picks the best plan,
which is tried once more with the ops it leaves alone fused by a second round of
candidates over them (`fill`).

A dot or conv is the one compute-intensive op of its kernel: a pattern may hold its
light producers (inlined into the tile loads) and continue into the elementwise
consumers its kernel computes on the accumulators (a stitched epilogue: the
capability's `epilogue`, the `gemm` and `conv` mappings' `fuses_epilogue`). A light op
between two dots goes to the first one's epilogue or the second's tile loads; each
vertex's candidates keep a pattern without a dot for the former (`patterns._top_k`).
In stitch mode a dot operand that is a normalised activation (LayerNorm, RMSNorm) gets
its own copy of the normalisation first (`prologue`), so LayerNorm → dot may become a
statistics kernel and a GEMM normalising its tiles as it loads them.

`mode=stitch` asks the code generator which patterns it can make
(`fsir.codegen.capability`); `mode=xla` adds XLA's rules (`xla_rules`): same search,
same cost model, fewer patterns allowed.

The latency-evaluator is an interface (`LatencyEvaluator`): `latency(kernels) -> seconds`
over kernels as op lists. The default (`evaluator=codegen`) is stitch-codegen's own
§4.3 evaluator (`fsir.codegen.plan_latency`): each kernel is generated on a scratch copy
and costs its `estimate_us` plus a launch. Plans share most kernels, so `compare` times
only the kernels where the compared plans differ; with more of them to generate than
`evaluator-budget`, or when every plan holds a kernel it scores infinite, the
simplified evaluator decides instead (`evaluator=simple` always: the delta-evaluator's
simplified kernel latency and a launch cost per kernel, summed over whole plans).
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, f64, i64
from xdsl.ir import Block, Operation
from xdsl.traits import IsTerminator

from fsir.analysis.columns import fixed_column_patterns
from fsir.codegen.capability import CodegenCapability
from fsir.codegen.options import FusionMode
from fsir.codegen.plan_latency import CodegenLatency
from fsir.dialects import graph
from fsir.dialects.stitch import make_fusion
from fsir.errors import UserError
from fsir.fusion.dataflow import DataflowGraph, build_dataflow
from fsir.fusion.delta_evaluator import DeltaEvaluator, Pattern
from fsir.fusion.horizontal import merge_sibling_dots, sibling_dots
from fsir.fusion.ln_stat import TwoPass, rewrite_two_pass, two_pass_patterns
from fsir.fusion.patterns import CandidateGenerator, CandidateOptions, Work, attention_patterns
from fsir.fusion.plan import Plan, beam_search, build_plan, greedy_by_score
from fsir.fusion.prologue import copy_normalised_operands
from fsir.fusion.protocols import Capability, Incremental, LatencyEvaluator, RowShape
from fsir.fusion.remote import remote_fusion
from fsir.fusion.xla_rules import with_xla_rules
from fsir.gpuspec import gpu_spec
from fsir.ir import collector_paused
from fsir.stats import count as tally

EXPLORER_MODES = (FusionMode.STITCH, FusionMode.XLA)
EVALUATORS = ("codegen", "simple")


@dataclass(frozen=True)
class ExplorerOptions:
    """The explorer's options; `fusion-explore` (fsir/fusion/explore.py) has them as its fields."""

    mode: str = "stitch"
    top_k: int = 3
    beam: int = 3
    group_size: int = 2
    remote: bool = True
    gpu: str = "H100"
    max_ops: int = 128
    evaluator: str = "codegen"
    evaluator_budget: int = 64
    horizontal: bool = True  # stitch mode: also plan with sibling dots merged (horizontal.py)

    def check(self) -> None:
        if self.mode not in EXPLORER_MODES:
            raise UserError(f"fusion-explore: the explorer has no mode '{self.mode}' "
                            f"(expected one of: {', '.join(EXPLORER_MODES)})")
        if self.evaluator not in EVALUATORS:
            raise UserError(f"fusion-explore: unknown evaluator '{self.evaluator}' "
                            f"(expected one of: {', '.join(EVALUATORS)})")
        for name in ("top_k", "beam", "group_size", "max_ops"):
            if getattr(self, name) < 1:
                raise UserError(f"fusion-explore: {name.replace('_', '-')} must be at least 1")
        if self.evaluator_budget < 0:
            raise UserError("fusion-explore: evaluator-budget must not be negative")
        gpu_spec(self.gpu)


@dataclass
class Comparison:
    """How the latency-evaluator compared some of the plans (`plans`: their indices):
    `times[i]` is plan `plans[i]`'s estimate in seconds — with the codegen evaluator,
    of the kernels not all of them share (the `common` ones add the same to each and
    are not generated)."""

    plans: list[int]
    evaluator: str
    times: list[float]
    common: int = 0
    differing: int = 0
    note: str = ""

    @property
    def best(self) -> int:
        return self.plans[min(range(len(self.times)), key=lambda i: self.times[i])]


@dataclass
class Exploration:
    graph: DataflowGraph
    evaluator: DeltaEvaluator
    options: ExplorerOptions
    plan: Plan
    beams: list[Plan]
    comparisons: list[Comparison]  # the beams' plans; then the best of them against it filled
    candidates: int
    rejected: Counter = field(default_factory=Counter)
    latency: LatencyEvaluator | None = None
    prologues: int = 0  # dot operands given a copy of their normalisation (`prologue`)
    work: Work = field(default_factory=Work)  # the search's steps (`patterns.Work`)


def explore(block: Block, options: ExplorerOptions = ExplorerOptions(),
            capability: Capability | None = None, latency: LatencyEvaluator | None = None) -> Exploration:
    """`latency`: the evaluator that picks among the plans (default: by
    `options.evaluator`, stitch-codegen's estimates or the simplified one)."""
    options.check()
    # The search allocates many small acyclic objects (patterns, frozensets); Python's
    # cycle collector would rescan the whole IR each time they pile up, which makes
    # large graphs superlinear. Nothing here creates cycles, so pause it.
    work = Work()
    with collector_paused():
        if options.mode == FusionMode.STITCH and options.horizontal and sibling_dots(block):
            ex = _explore_horizontal(block, options, capability, latency, work)
        else:
            ex = _explore_two_pass(block, options, capability, latency, work)
    ex.work = work  # every exploration's, the discarded alternatives' too
    return ex


def _explore_horizontal(block: Block, options: ExplorerOptions, capability: Capability | None,
                        latency: LatencyEvaluator | None, work: Work) -> Exploration:
    """Dots sharing their activation may become one GEMM (`horizontal.py`): the block is
    planned as it is and, on a copy, with them merged; the plan the latency-evaluator
    scores lower is kept (the merged copy's ops then replace the block's)."""
    region = block.parent
    assert region is not None
    trial = region.clone().blocks[0]
    merge_sibling_dots(trial)
    merged = _explore_two_pass(trial, options, capability, latency, work)
    plain = _explore_two_pass(block, options, capability, latency, work)
    return _faster(block, plain, trial, merged, options.evaluator_budget)


def _plan_time(ex: Exploration, budget: int) -> float:
    """The chosen plan's modeled time by the exploration's latency-evaluator; the
    simplified one without it, or when more than `budget` of its kernels would have to
    be generated (as in `compare`)."""
    # kernels whose results nobody reads (dead ops, the same in both plans) make nothing
    kernels = [k for k in ex.plan.kernels if k.kernels and _writes(ex.graph, k)]
    if ex.latency is None or ex.latency.pending([_ops(ex.graph, k) for k in kernels]) > budget:
        return _simple_plan_time(ex.evaluator, ex.plan)
    return _time(ex.graph, ex.latency, kernels)


def _writes(g: DataflowGraph, k: Pattern) -> bool:
    ops = set(_ops(g, k))
    return any(u.operation not in ops for op in ops for r in op.results for u in r.uses)


def _explore_two_pass(block: Block, options: ExplorerOptions, capability: Capability | None,
                      latency: LatencyEvaluator | None, work: Work) -> Exploration:
    """A LayerNorm after a GEMM may become two-pass (`ln_stat.py`: the GEMM writes its
    rows' partial moments, the LayerNorm's consumers combine them): the block is
    planned as it is and, on a copy, rewritten; the plan the latency-evaluator scores
    lower is kept (the rewritten copy's ops then replace the block's)."""
    region = block.parent
    assert region is not None
    trial = region.clone().blocks[0]
    rewrites = rewrite_two_pass(trial) if options.mode == FusionMode.STITCH else []
    if not rewrites:
        return _explore(block, options, capability, latency, work)
    two_pass = _explore(trial, options, capability, latency, work, rewrites)
    plain = _explore(block, options, capability, latency, work)
    return _faster(block, plain, trial, two_pass, options.evaluator_budget)


def _faster(block: Block, plain: Exploration, trial: Block, rewritten: Exploration, budget: int) -> Exploration:
    """The exploration of `block` as it is or of `trial` (its rewritten copy), whichever
    plan the latency-evaluator scores lower; the copy's ops replace the block's if it wins."""
    if _plan_time(plain, budget) <= _plan_time(rewritten, budget):
        return plain
    _adopt(block, trial)
    return rewritten


def _adopt(block: Block, trial: Block) -> None:
    """Replace `block`'s ops by those of `trial` (a rewritten copy of its region)."""
    for op in reversed(list(block.ops)):
        op.detach()
        op.erase(safe_erase=False)
    for new, old in zip(trial.args, block.args):
        new.replace_all_uses_with(old)
    for op in list(trial.ops):
        op.detach()
        block.add_op(op)


def _explore(block: Block, options: ExplorerOptions, capability: Capability | None,
             latency: LatencyEvaluator | None, work: Work, two_pass: Sequence[TwoPass] = ()) -> Exploration:
    """One exploration of `block`; `two_pass`: its LayerNorms rewritten into the
    two-pass form (`ln_stat.py`), whose GEMM patterns are fixed."""
    # GEMM prologues (`prologue.py`)
    prologues = copy_normalised_operands(block) if options.mode == FusionMode.STITCH else []
    g = build_dataflow(block)
    ev = DeltaEvaluator(g, gpu_spec(options.gpu))
    # -- embedding columns (RECom): every concat of many column subgraphs is one
    # fusion for the `columns` mapping, decided here by structure and kept out of the
    # search below, which then only sees the rest of the graph (fsir/analysis/columns.py).
    fixed = fixed_column_patterns(g, ev) if options.mode == FusionMode.STITCH else []
    # --
    if latency is None and options.evaluator == "codegen":
        latency = CodegenLatency(options.gpu, lambda ops: _simple_kernel_time(g, ev, ops))
    cap: Capability = capability or CodegenCapability()
    if options.mode == FusionMode.XLA:
        cap = with_xla_rules(cap)
    fixed += two_pass_patterns(g, ev, cap, list(two_pass))
    copts = CandidateOptions(options.top_k, options.group_size, options.max_ops)
    # Attention is one kernel in every plan (`attention_patterns`); the search covers the rest.
    attention = attention_patterns(g, ev, cap) if options.mode == FusionMode.STITCH else []
    in_attention = {m for p in attention for m in p.members}
    allowed = [f and v not in in_attention for v, f in enumerate(g.fusible)] if attention else None
    gen = CandidateGenerator(g, ev, cap, copts, allowed, work=work)
    candidates = gen.run()
    tally("fusion_candidates", sum(len(c) for c in candidates))
    if options.remote:
        candidates = candidates + [gen.meeting_patterns()]
    plans: list[Plan] = []
    seen: set[frozenset] = set()
    packings: dict = {}
    # The beam's plans and, with a beam wider than 1, the best-first greedy plan
    # (`greedy_by_score`: it keeps what the walk from producers drops too early).
    beams = beam_search(candidates, options.beam)
    if options.beam > 1:
        beams.append(greedy_by_score(candidates))
    if attention:
        beams = [sorted([*attention, *chosen], key=lambda p: p.lo) for chosen in beams]
    chosen_of: list[list[Pattern]] = []

    def add(chosen: list[Pattern]) -> None:
        work.steps += len(g)  # building, packing and ordering a plan walk the whole graph
        plan = build_plan(g, ev, fixed + chosen)
        if options.remote:
            plan = remote_fusion(g, ev, plan, cap, copts, packings)
        key = frozenset(k.members for k in plan.fused)
        if key not in seen:
            seen.add(key)
            plans.append(plan)
            chosen_of.append(chosen)

    for chosen in beams:
        add(chosen)
    # A LayerNorm fused into its dot's kernel (`row_epilogue`) needs a tile spanning
    # the row, which may leave few blocks; the candidates' scores favour it, so the
    # latency-evaluator also sees the plans without it.
    if options.mode == FusionMode.STITCH and any(_row_epilogue(g, p) for chosen in beams for p in chosen):
        plain = CandidateGenerator(g, ev, WithoutRowEpilogues(cap), copts, allowed, work=work).run()
        for chosen in beam_search(plain, options.beam):
            add(sorted([*attention, *chosen], key=lambda p: p.lo) if attention else chosen)
    # The best plan once more with the ops it leaves alone fused (`fill`); fusing them
    # can cost remote fusion more packings than it saves, so the latency-evaluator
    # chooses between the two (the other plans lost to the best one already).
    comparisons = [compare(g, ev, plans, list(range(len(plans))), latency, options.evaluator_budget)]
    best = comparisons[0].best
    extra = fill(g, ev, cap, copts, chosen_of[best], gen._verdicts, work)
    if extra:
        add(chosen_of[best] + extra)
    # GEMM prologues: the best plan with statistics kernels and GEMMs normalising their
    # tiles in place of the patterns they overlap (the rest filled as above). A pair
    # replaces patterns near its dot only, so all pairs go into one plan: a plan per
    # pair, each filled and planned whole, would cost the graph's size once per dot.
    pairs = _disjoint(gen.prologue_patterns(prologues))
    if pairs:
        taken = frozenset().union(*(p.members for pair in pairs for p in pair))
        alt = [p for p in chosen_of[best] + extra if p.members.isdisjoint(taken)] + \
            [p for pair in pairs for p in pair]
        add(alt + fill(g, ev, cap, copts, alt, gen._verdicts, work))
    if len(plans) > len(comparisons[0].plans):
        comparisons.append(compare(g, ev, plans, [best, *range(len(comparisons[0].plans), len(plans))], latency,
                                   options.evaluator_budget))
    return Exploration(g, ev, options, plans[comparisons[-1].best], plans, comparisons,
                       sum(len(c) for c in candidates), gen.rejected, latency, len(prologues))


def _disjoint(pairs: list[tuple[Pattern, Pattern]]) -> list[tuple[Pattern, Pattern]]:
    """The prologue pairs in order, leaving out any that overlaps one taken before."""
    taken: set[int] = set()
    kept = []
    for pair in pairs:
        members = pair[0].members | pair[1].members
        if taken.isdisjoint(members):
            taken |= members
            kept.append(pair)
    return kept


def _row_epilogue(g: DataflowGraph, p: Pattern) -> bool:
    """Whether pattern `p` is a dot with reductions (a GEMM normalising its rows)."""
    ops = [g.ops[v] for v in p.members]
    return any(isinstance(op, graph.DotOp) for op in ops) and any(isinstance(op, graph.ReduceOp) for op in ops)


class WithoutRowEpilogues:
    """A capability check that keeps reductions out of a dot's kernel (and its
    incremental form, except where a dot or a reduction joins: then the full check)."""

    def __init__(self, capability: Capability):
        self.capability = capability

    def __call__(self, ops: Sequence[Operation]) -> str | None:
        if any(isinstance(op, graph.DotOp) for op in ops) and any(isinstance(op, graph.ReduceOp) for op in ops):
            return "a dot's kernel without its row reductions (the plans without LayerNorm epilogues)"
        return self.capability(ops)

    def epilogue(self, op: Operation) -> bool:
        return self.capability.epilogue(op)

    def extend(self, row_shape: RowShape, op: Operation, escapes: bool,
               inside: Callable[[Operation], bool], known: object | None) -> tuple[Incremental, object | None]:
        if isinstance(op, (graph.DotOp, graph.ReduceOp)):
            return NotImplemented, None
        return self.capability.extend(row_shape, op, escapes, inside, known)

    def known(self, ops: Sequence[Operation]) -> object | None:
        return self.capability.known(ops)

    def pack(self, row_shape_a: RowShape, row_shape_b: RowShape) -> Incremental:
        return self.capability.pack(row_shape_a, row_shape_b)


def fill(g: DataflowGraph, ev: DeltaEvaluator, cap: Capability, copts: CandidateOptions,
         chosen: list[Pattern], verdicts: dict | None = None, work: Work | None = None) -> list[Pattern]:
    """Patterns for the ops a plan leaves alone: PatternReduction once more, over those
    ops only, and the best plan of its candidates.

    Candidates are the top-k patterns of each vertex, and the top-k of a producer
    usually all hold its consumers' best patterns: when a plan takes a consumer's
    pattern (one at `max-ops` cannot grow by another producer, or the beam preferred
    it), the producer's candidates all overlap it and the producers left behind run as
    one kernel each, although they could share one."""
    allowed = list(g.fusible)
    for p in chosen:
        for m in p.members:
            allowed[m] = False
    if not any(allowed[v] and any(allowed[c] for c in g.succs[v]) for v in range(len(g))):
        return []
    gen = CandidateGenerator(g, ev, cap, copts, allowed, verdicts, work)
    return beam_search(gen.run(), 1)[0]


def compare(g: DataflowGraph, ev: DeltaEvaluator, plans: list[Plan], which: list[int],
            latency: LatencyEvaluator | None, budget: int) -> Comparison:
    """The times of plans `which` by `latency`, over the kernels where they differ
    (kernels common to all of them add the same to each); by the simplified evaluator
    (whole plans) without `latency`, or when more than `budget` kernels would have to
    be evaluated."""
    tally("plans_evaluated", len(which))
    chosen = [plans[i] for i in which]
    if latency is None:
        return Comparison(which, "simple", [_simple_plan_time(ev, p) for p in chosen])
    kernels = [[k for k in p.kernels if k.kernels] for p in chosen]
    common = set.intersection(*({k.members for k in ks} for ks in kernels))
    differing = [[k for k in ks if k.members not in common] for ks in kernels]
    distinct = {k.members: k for ks in differing for k in ks}
    pending = latency.pending([_ops(g, k) for k in distinct.values()])
    if pending > budget:
        return Comparison(which, "simple", [_simple_plan_time(ev, p) for p in chosen], note=(
            f"{latency.name} evaluator over budget: {pending} kernels to evaluate > evaluator-budget={budget}"))
    times = [_time(g, latency, ks) for ks in differing]
    if len(times) > 1 and all(math.isinf(t) for t in times):
        return Comparison(which, "simple", [_simple_plan_time(ev, p) for p in chosen], note=(
            f"{latency.name} evaluator: every plan has a kernel it scores as infinite"))
    return Comparison(which, latency.name, times, len(common), len(distinct))


def _time(g: DataflowGraph, latency: LatencyEvaluator, kernels: list[Pattern]) -> float:
    """Σ latency over `kernels`, the largest first, stopping at the first infinite one
    (the plan cannot be chosen then, and its other kernels need not be generated)."""
    total = 0.0
    for k in sorted(kernels, key=len, reverse=True):
        total += latency([_ops(g, k)])
        if math.isinf(total):
            break
    return total


def _ops(g: DataflowGraph, k: Pattern) -> list[Operation]:
    return [g.ops[i] for i in sorted(k.members)]


def _simple_plan_time(ev: DeltaEvaluator, plan: Plan) -> float:
    return sum(ev.kernel_time(k) for k in plan.kernels)


def _simple_kernel_time(g: DataflowGraph, ev: DeltaEvaluator, ops: Sequence[Operation]) -> float:
    members = frozenset(g.index[op] for op in ops)
    return ev.kernel_time(ev.of(members, max(members)))


def apply_plan(block: Block, exploration: Exploration) -> list[Operation]:
    """Reorder the block into the plan's kernel order and outline every fused kernel
    into a stitch.fusion (attributes `pattern` and `score`). Returns the fusions."""
    g = exploration.graph
    terminator = block.last_op if block.last_op is not None and block.last_op.has_trait(IsTerminator) else None
    constants = [op for op in block.ops if isinstance(op, graph.ConstantOp)]
    order: list[Operation] = list(constants)
    for kernel in exploration.plan.kernels:
        order.extend(g.ops[i] for i in sorted(kernel.members))
    for op in order:
        op.detach()
    for op in order:
        if terminator is not None:
            block.insert_op_before(op, terminator)
        else:
            block.add_op(op)
    fusions = []
    for index, kernel in enumerate(exploration.plan.fused):
        attrs = {"pattern": IntegerAttr(index, i64), "score": FloatAttr(float(f"{kernel.score:.4g}"), f64)}
        fusions.append(make_fusion([g.ops[i] for i in sorted(kernel.members)], attrs))
    for op in constants:  # cloned into every fusion that uses them
        if not op.results[0].uses:
            op.detach()
            op.erase()
    return fusions


# -- the report ---------------------------------------------------------------------


def _mb(n: float) -> str:
    return f"{n / 1e6:.2f} MB"


def kernel_bytes(g: DataflowGraph, k: Pattern) -> tuple[int, int]:
    reads = sum(g.value_bytes(x) for x in k.ext)
    return reads, k.traffic - reads


def report(name: str, ex: Exploration) -> str:
    """Kernels and global bytes before (one kernel per op) and after fusion, the chosen
    patterns' scores, and what the search rejected."""
    g, ev, o = ex.graph, ex.evaluator, ex.options
    before = [v for v in range(len(g)) if g.kind[v] != "free"]
    b_reads = sum(sum(g.value_bytes(x) for x in g.inputs[v]) for v in before)
    b_writes = sum(ev.own[v] for v in before) - b_reads
    after = [k for k in ex.plan.kernels if k.kernels > 0]
    a_reads = a_writes = 0
    lines = [f"fusion-explore @{name}: mode={o.mode} gpu={o.gpu} top-k={o.top_k} beam={o.beam} "
             f"group-size={o.group_size} remote={'true' if o.remote else 'false'} max-ops={o.max_ops} "
             f"evaluator={o.evaluator}"]
    body = []
    fused_index = 0
    for i, k in enumerate(after):
        r, w = kernel_bytes(g, k)
        a_reads += r
        a_writes += w
        if len(k) > 1:
            what = f"fusion pattern={fused_index} ops={len(k)} f={k.score:.3e}"
            fused_index += 1
        else:
            what = g.ops[k.root].name
        body.append(f"  kernel {i}: {what} reads {_mb(r)} writes {_mb(w)}")
    lines.append(f"  before: {len(before)} kernels, reads {_mb(b_reads)}, writes {_mb(b_writes)}")
    lines.append(f"  after: {len(after)} kernels ({len(ex.plan.fused)} fused), reads {_mb(a_reads)}, "
                 f"writes {_mb(a_writes)}")
    lines.append(f"  search: {ex.candidates} candidates, {len(ex.beams)} distinct plans, "
                 f"{ex.plan.packed} kernels packed by remote fusion, {ex.plan.dissolved} patterns dissolved")
    lines.extend(_evaluator_lines(ex))
    lines.extend(body)
    for reason, count in sorted(ex.rejected.items()):
        lines.append(f"  rejected {count}x: {reason}")
    return "\n".join(lines)


def _evaluator_lines(ex: Exploration) -> list[str]:
    """Which evaluator chose the plan, and the plans' estimates."""
    lines = []
    for n, c in enumerate(ex.comparisons):
        times = ", ".join(f"{t * 1e6:.1f}" for t in c.times)
        if n == 0:
            which = f"plan {c.best} of {len(c.plans)}"
        elif len(c.plans) == 2 and not ex.prologues:
            which = (f"plan {c.best} of {c.plans[0]} and {c.plans[1]} (plan {c.plans[0]} with the ops it left alone "
                     "fused)")
        else:
            which = (f"plan {c.best} of {', '.join(map(str, c.plans))} (plan {c.plans[0]} with the ops it left alone "
                     f"fused, or with GEMM prologues)")
        if len(c.plans) == 1:
            line = f"  evaluator: {c.evaluator}: one plan, nothing to compare"
        elif c.evaluator == "simple":
            line = f"  evaluator: simple chose {which}; est. {times} us"
        else:
            line = (f"  evaluator: {c.evaluator} chose {which}; est. {times} us for the {c.differing} kernels "
                    f"they do not all share ({c.common} common kernels not evaluated)")
        lines.append(line + (f" ({c.note})" if c.note else ""))
    latency = ex.latency
    if latency is None:
        return lines
    for msg, count in sorted(Counter(latency.rejected.values()).items()):
        lines.append(f"  evaluator: codegen rejected {count} kernel(s), scored as infinite: {msg}")
    if latency.unfit:
        lines.append(f"  evaluator: {len(latency.unfit)} kernel(s) scored as infinite: no block fits an SM with "
                     f"their estimated registers ({', '.join(map(str, sorted(set(latency.unfit))))} per thread)")
    if latency.unscored:
        lines.append(f"  evaluator: {latency.unscored} kernel(s) with a '?' grid timed by the simplified evaluator")
    return lines


def explore_function(f, options: ExplorerOptions, report_to: TextIO | None = None,
                     capability: Capability | None = None, latency: LatencyEvaluator | None = None) -> Exploration:
    """Plan one func.func and rewrite it into stitch.fusion ops."""
    block = f.body.block
    ex = explore(block, options, capability, latency)
    if report_to is not None:
        print(report(f.sym_name.data, ex), file=report_to)
    apply_plan(block, ex)
    return ex


def report_stream() -> TextIO:
    return sys.stderr
