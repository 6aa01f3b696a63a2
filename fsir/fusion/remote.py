"""Remote fusion (FusionStitching §5.2, fig. 5): pack independent kernels into one.

(h's other product, patterns of several producers meeting at a consumer, is a
candidate like any other: `CandidateGenerator.meeting_patterns`.)

After the plan is formed, a virtual vertex h is made the producer of every kernel and
PatternReduction runs once more at h: its consumers (the kernels) are split into groups,
combinations within a group are enumerated (the empty choice included), the top-k by
score kept, groups combined recursively. The result is a set of non-adjacent patterns
packed into one kernel — kernel packing in code generation — when the score says the
saved launches and shared input reads outweigh the penalty.

h's consumers are grouped by level in the kernel graph (longest path from the inputs):
kernels of one level have no path between them, and merging only kernels of one level
keeps every edge of the kernel graph going from a lower level to a higher one, so
packing can never create a cycle between kernels. Within a level, consecutive kernels
(in launch order) are taken in chunks of at most `max_ops` ops, and each chunk keeps
its best packing; chunks are disjoint, so no beam is needed here.
"""

from __future__ import annotations

from fsir.fusion.dataflow import DataflowGraph
from fsir.fusion.delta_evaluator import DeltaEvaluator, Pattern
from fsir.fusion.patterns import CandidateOptions
from fsir.fusion.plan import Plan, build_plan
from fsir.fusion.protocols import Capability


class _Pack:
    __slots__ = ("pattern", "parts", "gain", "verdict")

    def __init__(self, pattern: Pattern, parts: int, gain: float, verdict=None):
        self.pattern, self.parts, self.gain = pattern, parts, gain
        # None: valid; a string: why not; NotImplemented: ask the capability call
        self.verdict = verdict


def remote_fusion(g: DataflowGraph, ev: DeltaEvaluator, plan: Plan, capability: Capability,
                  options: CandidateOptions, cache: dict | None = None) -> Plan:
    """`plan` with packed kernels; `cache` (shared by the beams, which share most of
    their kernels) remembers the best packing of each chunk."""
    cache = {} if cache is None else cache
    by_level: dict[int, list[Pattern]] = {}
    for kernel, level in zip(plan.kernels, plan.levels):
        if kernel.kernels > 0 and not kernel.gemm and all(g.fusible[m] for m in kernel.members):
            by_level.setdefault(level, []).append(kernel)
    merged: dict[int, Pattern] = {}  # id(kernel) -> the pack replacing it
    packs = 0
    for kernels in by_level.values():
        for chunk in _chunks(kernels, options.max_ops):
            if len(chunk) < 2:
                continue
            key = tuple(k.members for k in chunk)
            best = cache.get(key, False)
            if best is False:
                best = cache[key] = _Reduction(g, ev, capability, options).best(chunk)
            if best is not None and best.parts > 1 and best.gain > 0:
                for k in chunk:
                    if k.members <= best.pattern.members:
                        merged[id(k)] = best.pattern
                packs += best.parts - 1
    if not packs:
        return plan
    chosen: list[Pattern] = []
    seen: set[int] = set()
    for k in plan.kernels:
        p = merged.get(id(k), k)
        if len(p) > 1 and id(p) not in seen:
            seen.add(id(p))
            chosen.append(p)
    new = build_plan(g, ev, chosen)
    new.dissolved += plan.dissolved
    new.packed = packs
    return new


def _chunks(kernels: list[Pattern], max_ops: int):
    chunk: list[Pattern] = []
    size = 0
    for k in kernels:
        if chunk and size + len(k) > max_ops:
            yield chunk
            chunk, size = [], 0
        chunk.append(k)
        size += len(k)
    if chunk:
        yield chunk


class _Reduction:
    """PatternReduction at the virtual producer h over one chunk of kernels."""

    def __init__(self, g, ev: DeltaEvaluator, capability: Capability, options: CandidateOptions):
        self.g, self.ev, self.capability, self.options = g, ev, capability, options

    def best(self, kernels: list[Pattern]) -> _Pack | None:
        top = self._reduce(kernels)
        return top[0] if top else None

    def _reduce(self, kernels: list[Pattern]) -> list[_Pack]:
        if len(kernels) <= self.options.group_size:
            packs: list[_Pack] = []
            for mask in range(1, 1 << len(kernels)):
                subset = [k for i, k in enumerate(kernels) if mask >> i & 1]
                pack = _Pack(subset[0], 1, 0.0)
                for k in subset[1:]:
                    pack = self._merge(pack, _Pack(k, 1, 0.0))
                if len(pack.pattern) > self.options.max_ops:
                    pack.verdict = "larger than max-ops"
                packs.append(pack)
            return self._top_k(packs)
        mid = len(kernels) // 2
        left, right = self._reduce(kernels[:mid]), self._reduce(kernels[mid:])
        merged = []
        for a in left:
            for b in right:
                if len(a.pattern) + len(b.pattern) <= self.options.max_ops:
                    merged.append(self._merge(a, b))
        return self._top_k(left + right + merged)

    def _merge(self, a: _Pack, b: _Pack) -> _Pack:
        p = self.ev.merge_independent(a.pattern, b.pattern)
        verdict = NotImplemented
        if a.verdict is None and b.verdict is None:
            verdict = self.capability.pack(a.pattern.rshape, b.pattern.rshape)
        elif isinstance(a.verdict, str) or isinstance(b.verdict, str):
            verdict = a.verdict if isinstance(a.verdict, str) else b.verdict
        return _Pack(p, a.parts + b.parts, a.gain + b.gain + p.score - a.pattern.score - b.pattern.score, verdict)

    def _top_k(self, packs: list[_Pack]) -> list[_Pack]:
        kept: list[_Pack] = []
        for pack in sorted(packs, key=lambda p: -p.gain):
            if pack.verdict is NotImplemented:
                pack.verdict = self._verdict(pack.pattern)
            if pack.verdict is None:
                kept.append(pack)
                if len(kept) == self.options.top_k:
                    break
        return kept

    def _verdict(self, p: Pattern) -> str | None:
        if len(p) > self.options.max_ops:
            return "larger than max-ops"
        return self.capability([self.g.ops[i] for i in sorted(p.members)])
