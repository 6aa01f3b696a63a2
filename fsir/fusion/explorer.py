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

Dots stay GEMM kernels: a pattern may end in one (light producers inlined into its
tile loads, stitch-codegen's `gemm` mapping) but never continue past it.

`mode=stitch` asks the code generator which patterns it can make
(`fsir.codegen.capability`); `mode=xla` adds XLA's rules (`xla_rules`): same search,
same cost model, fewer patterns allowed.

The latency-evaluator is an interface: `latency(kernels) -> seconds` over the plan's
kernels as op lists. Until codegen supplies its §4.3 evaluator, the default sums the
delta-evaluator's simplified kernel latency and a launch cost per kernel.
"""

from __future__ import annotations

import gc
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, f64, i64
from xdsl.ir import Block, Operation
from xdsl.traits import IsTerminator

from fsir.codegen.capability import CodegenCapability
from fsir.dialects import graph
from fsir.errors import UserError
from fsir.fusion.dataflow import DataflowGraph, build_dataflow
from fsir.fusion.delta_evaluator import DeltaEvaluator, Pattern
from fsir.fusion.patterns import Capability, CandidateGenerator, CandidateOptions
from fsir.fusion.plan import Plan, beam_search, build_plan, greedy_by_score
from fsir.fusion.remote import remote_fusion
from fsir.fusion.xla_rules import with_xla_rules
from fsir.gpuspec import gpu_spec

LatencyEvaluator = Callable[[Sequence[Sequence[Operation]]], float]

EXPLORER_MODES = ("stitch", "xla")


@dataclass(frozen=True)
class ExplorerOptions:
    mode: str = "stitch"
    top_k: int = 3
    beam: int = 3
    group_size: int = 2
    remote: bool = True
    gpu: str = "H100"
    max_ops: int = 128

    def check(self) -> None:
        if self.mode not in EXPLORER_MODES:
            raise UserError(f"fusion-explore: the explorer has no mode '{self.mode}' "
                            f"(expected one of: {', '.join(EXPLORER_MODES)})")
        for name in ("top_k", "beam", "group_size", "max_ops"):
            if getattr(self, name) < 1:
                raise UserError(f"fusion-explore: {name.replace('_', '-')} must be at least 1")
        gpu_spec(self.gpu)


@dataclass
class Exploration:
    graph: DataflowGraph
    evaluator: DeltaEvaluator
    options: ExplorerOptions
    plan: Plan
    beams: list[Plan]
    beam_times: list[float]
    candidates: int
    rejected: Counter = field(default_factory=Counter)


def explore(block: Block, options: ExplorerOptions = ExplorerOptions(),
            capability: Capability | None = None, latency: LatencyEvaluator | None = None) -> Exploration:
    options.check()
    # The search allocates many small acyclic objects (patterns, frozensets); Python's
    # cycle collector would rescan the whole IR each time they pile up, which makes
    # large graphs superlinear. Nothing here creates cycles, so pause it.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _explore(block, options, capability, latency)
    finally:
        if enabled:
            gc.enable()


def _explore(block: Block, options: ExplorerOptions, capability: Capability | None,
             latency: LatencyEvaluator | None) -> Exploration:
    g = build_dataflow(block)
    ev = DeltaEvaluator(g, gpu_spec(options.gpu))
    cap = capability or CodegenCapability()
    if options.mode == "xla":
        cap = with_xla_rules(cap)
    copts = CandidateOptions(options.top_k, options.group_size, options.max_ops)
    gen = CandidateGenerator(g, ev, cap, copts)
    candidates = gen.run()
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
    chosen_of: list[list[Pattern]] = []

    def add(chosen: list[Pattern]) -> None:
        plan = build_plan(g, ev, chosen)
        if options.remote:
            plan = remote_fusion(g, ev, plan, cap, copts, packings)
        key = frozenset(k.members for k in plan.fused)
        if key not in seen:
            seen.add(key)
            plans.append(plan)
            chosen_of.append(chosen)
            times.append(_plan_time(g, ev, plan, latency))

    times: list[float] = []
    for chosen in beams:
        add(chosen)
    # The best plan once more with the ops it leaves alone fused (`fill`); fusing them
    # can cost remote fusion more packings than it saves, so the latency-evaluator
    # chooses between the two.
    best = min(range(len(plans)), key=lambda i: times[i])
    extra = fill(g, ev, cap, copts, chosen_of[best], gen._verdicts)
    if extra:
        add(chosen_of[best] + extra)
    best = min(range(len(plans)), key=lambda i: times[i])
    return Exploration(g, ev, options, plans[best], plans, times,
                       sum(len(c) for c in candidates), gen.rejected)


def fill(g: DataflowGraph, ev: DeltaEvaluator, cap: Capability, copts: CandidateOptions,
         chosen: list[Pattern], verdicts: dict | None = None) -> list[Pattern]:
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
    gen = CandidateGenerator(g, ev, cap, copts, allowed, verdicts)
    return beam_search(gen.run(), 1)[0]


def _plan_time(g: DataflowGraph, ev: DeltaEvaluator, plan: Plan, latency: LatencyEvaluator | None) -> float:
    if latency is not None:
        return latency([[g.ops[i] for i in sorted(k.members)] for k in plan.kernels])
    return sum(ev.kernel_time(k) for k in plan.kernels)


def apply_plan(block: Block, exploration: Exploration) -> list[Operation]:
    """Reorder the block into the plan's kernel order and outline every fused kernel
    into a stitch.fusion (attributes `pattern` and `score`). Returns the fusions."""
    from fsir.fusion.explore import make_fusion

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
             f"group-size={o.group_size} remote={'true' if o.remote else 'false'} max-ops={o.max_ops}"]
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
                 f"writes {_mb(a_writes)}; est. {min(ex.beam_times) * 1e6:.1f} us")
    lines.append(f"  search: {ex.candidates} candidates, {len(ex.beams)} distinct plans "
                 f"(est. {', '.join(f'{t * 1e6:.1f}' for t in ex.beam_times)} us), "
                 f"{ex.plan.packed} kernels packed by remote fusion, {ex.plan.dissolved} patterns dissolved")
    lines.extend(body)
    for reason, count in sorted(ex.rejected.items()):
        lines.append(f"  rejected {count}x: {reason}")
    return "\n".join(lines)


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
