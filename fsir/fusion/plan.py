"""The fusion plan (FusionStitching §5.3): non-overlapping patterns with the largest summed f.

`beam_search` keeps `beam` partial plans. It walks the candidates from producers to
consumers — grouped by their first op in topological order — and tries to append each
candidate to each partial plan that it does not overlap, keeping the `beam` plans with
the highest accumulated f. Singletons (f = 0) and patterns with f <= 0 are never worth
appending. Because a candidate of step t only holds ops at or after t, a plan only
remembers which ops >= t it covers (`live`), so each step costs O(beam x candidates x
pattern size), not O(V).

`build_plan` turns chosen patterns into the kernels of a function: every op not covered
becomes a kernel of its own, and kernels are ordered topologically. Two patterns that
are each free of cycles can still depend on each other (a multi-output pattern feeding
another that feeds it back); `build_plan` finds such a cycle in the kernel graph and
dissolves its lowest-scoring pattern until there is none. It also gives every kernel
its level (longest path from the function's inputs in the kernel graph), which remote
fusion uses.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from fsir.fusion.dataflow import DataflowGraph
from fsir.fusion.delta_evaluator import DeltaEvaluator, Pattern


def beam_search(candidates: list[list[Pattern]], beam: int, prune_at: int = 256) -> list[list[Pattern]]:
    """The `beam` best sets of non-overlapping candidates, best first."""
    buckets: dict[int, list[Pattern]] = {}
    seen: set[frozenset[int]] = set()
    for patterns in candidates:
        for p in patterns:
            if len(p) > 1 and p.score > 0 and p.members not in seen:
                seen.add(p.members)
                buckets.setdefault(p.lo, []).append(p)
    # A state: (accumulated f, covered ops that later candidates may still hit, chosen as a linked list)
    states: list[tuple[float, frozenset[int], tuple | None]] = [(0.0, frozenset(), None)]
    for t in sorted(buckets):
        patterns = buckets[t]
        children: list[tuple[float, int, Pattern | None]] = []
        for i, (score, live, _) in enumerate(states):
            children.append((score, i, None))
            for p in patterns:
                if p.members.isdisjoint(live):
                    children.append((score + p.score, i, p))
        children.sort(key=lambda c: -c[0])  # stable: earlier (skip first) wins ties
        new_states = []
        for score, i, p in children[:beam]:
            _, live, chain = states[i]
            if p is not None:
                live = live | p.members
                if len(live) > prune_at:
                    live = frozenset(u for u in live if u >= t)
                chain = (p, chain)
            new_states.append((score, live, chain))
        states = new_states
    plans = []
    for _, _, chain in states:
        chosen: list[Pattern] = []
        while chain is not None:
            chosen.append(chain[0])
            chain = chain[1]
        chosen.reverse()
        plans.append(chosen)
    return plans


def greedy_by_score(candidates: list[list[Pattern]]) -> list[Pattern]:
    """The set of non-overlapping candidates taken greedily, best f first.

    The beam walks producers to consumers and compares partial plans by the f they
    have gathered so far, so a plan that leaves a producer's ops for a larger pattern
    of its consumers looks worse than one that spends them at once, and drops out of
    the beam — when the producer's patterns are smaller than the consumer's (a
    consumer pattern at `max-ops` cannot grow by one more producer), the beam only
    keeps plans that cut the larger pattern into pieces. Taking the best patterns
    first does not have that blind spot (it has others); it is one more plan for the
    latency-evaluator to choose from."""
    unique: dict[frozenset[int], Pattern] = {}
    for patterns in candidates:
        for p in patterns:
            if len(p) > 1 and p.score > 0:
                unique.setdefault(p.members, p)
    covered: set[int] = set()
    chosen = []
    for p in sorted(unique.values(), key=lambda p: (-p.score, p.lo)):
        if covered.isdisjoint(p.members):
            covered |= p.members
            chosen.append(p)
    chosen.sort(key=lambda p: p.lo)
    return chosen


@dataclass
class Plan:
    """The kernels of one function in launch order (fused patterns and single ops)."""

    kernels: list[Pattern]
    levels: list[int]
    dissolved: int = 0  # patterns dissolved to break cycles between kernels
    packed: int = 0  # kernels merged by remote fusion
    notes: list[str] = field(default_factory=list)

    @property
    def fused(self) -> list[Pattern]:
        return [k for k in self.kernels if len(k) > 1]


def build_plan(g: DataflowGraph, ev: DeltaEvaluator, chosen: list[Pattern]) -> Plan:
    chosen = list(chosen)
    dissolved = 0
    while True:
        kernels = _kernels_of(g, ev, chosen)
        result = _topological(g, kernels)
        if result[2] is None:
            order, levels, _ = result
            return Plan([kernels[k] for k in order], [levels[k] for k in order], dissolved)
        cycle = result[2]
        fused_on_cycle = [kernels[k] for k in cycle if len(kernels[k]) > 1]
        worst = min(fused_on_cycle, key=lambda p: p.score)
        chosen = [p for p in chosen if p is not worst]
        dissolved += 1


def _kernels_of(g: DataflowGraph, ev: DeltaEvaluator, chosen: list[Pattern]) -> list[Pattern]:
    covered = [False] * len(g)
    kernels = list(chosen)
    for p in chosen:
        for m in p.members:
            covered[m] = True
    kernels.extend(ev.singles[v] for v in range(len(g)) if not covered[v])
    return kernels


def _topological(g: DataflowGraph, kernels: list[Pattern]) \
        -> tuple[list[int], list[int], None] | tuple[None, None, list[int]]:
    """Kahn's algorithm on the kernel graph, ties broken by first op (close to the
    source order). Returns (order, levels, None) or (None, None, kernels on a cycle)."""
    kid = [0] * len(g)
    for k, p in enumerate(kernels):
        for m in p.members:
            kid[m] = k
    succ: list[set[int]] = [set() for _ in kernels]
    pred: list[set[int]] = [set() for _ in kernels]
    for v in range(len(g)):
        a = kid[v]
        for c in g.succs[v]:
            b = kid[c]
            if a != b and b not in succ[a]:
                succ[a].add(b)
                pred[b].add(a)
    indeg = [len(p) for p in pred]
    levels = [0] * len(kernels)
    heap = [(kernels[k].lo, k) for k in range(len(kernels)) if indeg[k] == 0]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        _, k = heapq.heappop(heap)
        order.append(k)
        for s in succ[k]:
            levels[s] = max(levels[s], levels[k] + 1)
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, (kernels[s].lo, s))
    if len(order) == len(kernels):
        return order, levels, None
    # Every kernel left has a predecessor left: walking predecessors must repeat.
    left = {k for k in range(len(kernels)) if indeg[k] > 0}
    k = next(iter(left))
    path: dict[int, int] = {}
    while k not in path:
        path[k] = len(path)
        k = next(p for p in pred[k] if p in left)
    cycle = [n for n, i in path.items() if i >= path[k]]
    return None, None, cycle
