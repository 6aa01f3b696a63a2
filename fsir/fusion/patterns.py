"""Candidate fusion patterns by approximate dynamic programming (FusionStitching §5.2).

Vertices are visited in post-order (from the last op of the topological order to the
first), so when vertex v is visited every consumer already has its candidates: patterns
whose top producer is that consumer. v's candidates come from PatternReduction over its
consumers:

- the consumers are split into groups of at most `group_size`; within a group every
  combination of the consumers' candidates is enumerated, the empty choice included,
  v is appended, and the top-k by score f are kept;
- with more consumers than `group_size` the consumers are split in two halves,
  recursively; the reduction of two halves keeps the top-k of both halves' patterns and
  of their pairwise unions (so a pattern may span groups at O(k²) cost per split);
- a light op fed only by function inputs (the broadcast of a γ, a bias) is absorbed into
  a pattern holding all its consumers: it has no producer vertex of its own to start a
  pattern from, and running it as its own kernel would write a full-size tensor.

A pattern is kept only if it has at most `max_ops` ops, if the code generator can make
it (`capability`, the codegen's own rules), and if it creates no cycle between kernels
(fig. 6: a path that leaves the pattern and re-enters it). Every pattern built from v
is v plus descendants of v (and absorbed input-only ops, all of whose consumers are in
it, so no path leaves through them), so a path leaving and re-entering it exists
exactly when one of its external producers is a descendant of v: `_Reach` answers that
with a search from v that only goes as far (in topological index) as the producers
asked about.

Candidates are convex: a union that is not (its consumers' top-k patterns missed the
ops closing a diamond, e.g. the compare feeding a select that joins two branches) is
not thrown away but grown to its convex closure — every op on a path from v to a
member — when that stays within `max_ops` and fusible; the closure then competes for
the top-k by its own score. Without this, a DAG of elementwise ops with fan-out (JAX's
exact GELU: erf's rational polynomials read x*x at every step, selects on |x| join
them) loses every pattern that spans a diamond and breaks into small kernels.

An absorbed input-only op may be a vertex visited later (an input-only chain is
absorbed whole by a pattern of its last op): then a consumer's pattern already holds
v, and it is one of v's candidates as it is.

Candidates are scored incrementally (extending a consumer's pattern by v costs
O(degree)); only patterns that could make the top-k are checked against the capability
and for cycles, in score order. Together with the fixed group size and k this keeps
candidate generation O(V + E) for bounded `max_ops`.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product

from xdsl.ir import Operation

from fsir.fusion.dataflow import DataflowGraph
from fsir.fusion.delta_evaluator import DeltaEvaluator, Pattern
from fsir.fusion.protocols import Capability

__all__ = ["Capability", "CandidateGenerator", "CandidateOptions", "Work", "attention_patterns"]


# `_valid`'s verdict on a pattern that is not convex (a path leaves and re-enters it).
_CYCLE = "cycle"

# How far up from each producer of a meeting point h looks for candidates to combine.
MEET_DEPTH = 16


@dataclass
class Work:
    """The explorer's work, counted where it is done (deterministic, unlike a timing):
    `steps` is vertices visited by candidate generation (every vertex of the graph, once
    per run), patterns scored into a vertex's pool, and vertices of every plan built
    from chosen patterns. A test holds it to linear growth in the graph's size.
    `checked`: ops of the patterns given to the full capability check (a walk over
    each); a pattern grown by one producer is mostly told by the incremental form."""

    steps: int = 0
    checked: int = 0


@dataclass(frozen=True)
class CandidateOptions:
    top_k: int = 3
    group_size: int = 2
    max_ops: int = 128


class _Reach:
    """Descendants of one vertex, explored lazily in topological order."""

    def __init__(self, g: DataflowGraph, v: int):
        self.succs = g.succs
        self.seen = {v}
        self.heap = [v]

    def reaches(self, w: int) -> bool:
        heap, seen, succs = self.heap, self.seen, self.succs
        # Every path from v to w only visits indices <= w (topological order).
        while heap and heap[0] <= w:
            u = heapq.heappop(heap)
            for c in succs[u]:
                if c not in seen:
                    seen.add(c)
                    heapq.heappush(heap, c)
        return w in seen


class CandidateGenerator:
    def __init__(self, g: DataflowGraph, ev: DeltaEvaluator, capability: Capability,
                 options: CandidateOptions = CandidateOptions(), allowed: list[bool] | None = None,
                 verdicts: dict | None = None, work: Work | None = None):
        self.g = g
        self.work = Work() if work is None else work
        # the vertices patterns may hold: the fusible ones, or fewer (`fill`: those no
        # pattern of a plan holds yet)
        self.allowed = g.fusible if allowed is None else allowed
        self.ev = ev
        self.capability = capability
        self.options = options
        self.cands: list[list[Pattern]] = [[] for _ in range(len(g))]
        self.rejected: Counter[str] = Counter()  # why patterns were discarded (for reports/tests)
        # verdicts on member sets (valid, not convex, or not generable) are properties of
        # the sets alone, so generators over one graph may share them (`verdicts`)
        self._verdicts: dict[frozenset[int], bool | str] = {} if verdicts is None else verdicts
        self._reach: _Reach | None = None

    def run(self) -> list[list[Pattern]]:
        g = self.g
        allowed = self.allowed
        self.work.steps += len(g)
        for v in range(len(g) - 1, -1, -1):
            if not allowed[v]:
                continue
            if g.kind[v] == "compute" and not self._takes_epilogue(g.ops[v]):
                self.cands[v] = [self.ev.singles[v]]  # a dot is the only root of its kernel
                continue
            self._reach = None
            consumers = [c for c in g.succs[v] if self.cands[c]]
            self.cands[v] = self._reduce(v, consumers)
        self._reach = None
        return self.cands

    def _takes_epilogue(self, op: Operation) -> bool:
        """Whether the kernel of a compute-intensive op may go on past it (a conv's
        stitched epilogue): the capability's `epilogue`."""
        return self.capability.epilogue(op)

    # -- the virtual producer h: patterns of several producers ------------------------

    def meeting_patterns(self) -> list[Pattern]:
        """Patterns with several top producers, from h's PatternReduction (§5.2 fig. 5).

        h is a producer of every vertex, so its combinations include unions of
        candidates of different vertices. Those that share ops are the ones that meet at
        a common consumer c (two projections feeding one GEMM, a residual add): for each
        c with several producers, the candidates that contain c of the producers and of
        their nearest ancestors (`MEET_DEPTH` ops up from each producer) are grouped by
        producer and combined (split in halves recursively, top-k kept). Independent
        unions are kernel packing, done on the plan (`remote.py`)."""
        g = self.g
        out: list[Pattern] = []
        for c in range(len(g)):
            producers = [p for p in g.preds[c] if self.cands[p]]
            if len(producers) < 2:
                continue
            groups = []
            for p in producers:
                with_c = {id(x): x for u in self._ancestors(p) for x in self.cands[u]
                          if len(x) > 1 and c in x.members}
                if with_c:
                    groups.append(sorted(with_c.values(), key=lambda x: -x.score)[: self.options.top_k])
            if len(groups) >= 2:
                out.extend(p for p in self._meet(groups) if p.roots is not None)
        return out

    def _ancestors(self, p: int) -> list[int]:
        seen = [p]
        i = 0
        while i < len(seen) and len(seen) < MEET_DEPTH:
            for q in self.g.preds[seen[i]]:
                if q not in seen and self.cands[q]:
                    seen.append(q)
            i += 1
        return seen

    def _meet(self, groups: list[list[Pattern]]) -> list[Pattern]:
        if len(groups) == 1:
            return groups[0]
        mid = len(groups) // 2
        left, right = self._meet(groups[:mid]), self._meet(groups[mid:])
        pool = left + right
        for a in left:
            for b in right:
                if a.members <= b.members or b.members <= a.members:
                    continue
                p = self._of(a.members | b.members, min(a.root, b.root))
                # a union scoring no more than one of its parts is never worth choosing
                if p is not None and p.score > max(a.score, b.score):
                    p.roots = tuple({*(a.roots or (a.root,)), *(b.roots or (b.root,))})
                    pool.append(p)
        unique: dict[frozenset[int], Pattern] = {}
        for p in pool:
            unique.setdefault(p.members, p)
        kept = []
        for p in sorted(unique.values(), key=lambda p: (-p.score, len(p))):
            if p.roots is None or self._valid_meet(p):
                kept.append(p)
                if len(kept) == self.options.top_k:
                    break
        return kept

    def _valid_meet(self, p: Pattern) -> bool:
        """Every member of a union is a descendant of one of its roots (or an absorbed
        input-only op), so a path leaves and re-enters it exactly when an external
        producer is a descendant of a root."""
        g = self.g
        assert p.roots is not None  # only meeting patterns are checked
        roots = set(p.roots)
        lo = min(roots)
        for w in p.ext:
            if w > lo:
                for r in roots:
                    if w > r and _Reach(g, r).reaches(w):
                        self.rejected["cycle between kernels"] += 1
                        return False
        self.work.checked += len(p)
        reason = self.capability([g.ops[i] for i in sorted(p.members)])
        if reason is not None:
            self.rejected[f"codegen: {reason}"] += 1
            return False
        return True

    # -- GEMM prologues ---------------------------------------------------------------

    def prologue_patterns(self, prologues: Sequence[tuple[Operation, Sequence[Operation]]]
                          ) -> list[tuple[Pattern, Pattern]]:
        """For each dot with a copied operand (`fsir.fusion.prologue`: a normalisation
        read from row statistics), the best valid pair (statistics kernel, GEMM
        kernel): the GEMM is one of the dot's candidates (the dot and its epilogues)
        grown by the operand's ops, the statistics kernel the fusible ops computing the
        statistics that no other kernel reads (`_statistics`). The operand's ops read
        several statistics' broadcasts, each a top of the pattern, so PatternReduction
        (one top producer per pattern) and the meeting points' top-k (crowded by the
        statistics' own row kernels) miss them; the explorer offers the pair to the
        latency-evaluator as a plan of its own."""
        g = self.g
        out: list[tuple[Pattern, Pattern]] = []
        for dot, ops in prologues:
            if dot not in g.index or not all(op in g.index for op in ops):
                continue
            d = g.index[dot]
            cone = frozenset(g.index[op] for op in ops)
            best: tuple[Pattern, Pattern] | None = None
            for base in self.cands[d]:
                gemm = self._multi_root(cone | base.members)
                if gemm is None:
                    continue
                stats = self._statistics(gemm)
                if stats is not None and (best is None or gemm.score + stats.score > best[0].score + best[1].score):
                    best = (stats, gemm)
            if best is not None:
                out.append(best)
        return out

    def _multi_root(self, members: frozenset[int]) -> Pattern | None:
        """The pattern of `members` with every member without a producer inside as a
        top, if valid."""
        g = self.g
        p = self._of(members, min(members))
        if p is None:
            return None
        p.roots = tuple(v for v in members if not any(u in members for u in g.preds[v]))
        verdict = self._verdicts.get(members)
        if verdict is None:
            verdict = self._valid_meet(p)
            self._verdicts[members] = verdict
        return p if verdict is True else None

    def _statistics(self, gemm: Pattern) -> Pattern | None:
        """The fusible ops upward of `gemm`'s producers whose every consumer is in
        `gemm` or among them, not compute-intensive (a row kernel of the statistics
        writing only what the GEMM reads), if a valid pattern."""
        g = self.g
        members: set[int] = set()
        # consumers (later in topological order) are decided before their producers
        todo = [-w for w in gemm.ext if w >= 0]  # (negative ids are function inputs)
        heapq.heapify(todo)
        queued = {w for w in gemm.ext if w >= 0}
        while todo and len(members) < self.options.max_ops:
            w = -heapq.heappop(todo)
            if w in gemm.members or not self.allowed[w] or g.kind[w] in ("compute", "other") or g.is_output[w]:
                continue
            if all(c in members or c in gemm.members for c in g.succs[w]):
                members.add(w)
                for u in g.preds[w]:
                    if u not in queued:
                        queued.add(u)
                        heapq.heappush(todo, -u)
        if len(members) < 2:
            return None
        return self._multi_root(frozenset(members))

    # -- PatternReduction ----------------------------------------------------------

    def _reduce(self, v: int, consumers: list[int]) -> list[Pattern]:
        if len(consumers) <= self.options.group_size:
            return self._leaf(v, consumers)
        mid = len(consumers) // 2
        left = self._reduce(v, consumers[:mid])
        right = self._reduce(v, consumers[mid:])
        pool = left + right
        for a in left:
            for b in right:
                if len(a) > 1 and len(b) > 1:
                    p = self._union(v, [a.members, b.members])
                    if p is not None:
                        pool.append(p)
        return self._top_k(v, pool)

    def _leaf(self, v: int, consumers: list[int]) -> list[Pattern]:
        ev, max_ops = self.ev, self.options.max_ops
        pool = [ev.singles[v]]
        choices = [[None, *self.cands[c]] for c in consumers]
        for combo in product(*choices):
            chosen = [x for x in combo if x is not None]
            if not chosen:
                continue
            if len(chosen) == 1:
                x = chosen[0]
                if v in x.members:
                    # v is input-only and x absorbed it with all its consumers: x is
                    # already a pattern of v (extending it again would count v twice)
                    pool.append(x)
                    continue
                if len(x) + 1 > max_ops:
                    self.rejected["larger than max-ops"] += 1
                    continue
                p = ev.extend(x, v)
                # Patterns of two or more ops have absorbed what they can; a single op has not.
                producers = self.g.preds[v] if len(x) > 1 else self.g.preds[v] + self.g.preds[x.root]
                absorbed = self._closure(p.members, producers)
                if absorbed:
                    p = self._of(p.members | absorbed, v)
            else:
                p = self._union(v, [x.members for x in chosen])
            if p is not None:
                pool.append(p)
        return self._top_k(v, pool)

    def _union(self, v: int, parts: list[frozenset[int]]) -> Pattern | None:
        members = frozenset({v}).union(*parts)
        absorbed = self._closure(members, [w for m in members for w in self.g.preds[m]])
        if absorbed:
            members = members | absorbed
        return self._of(members, v)

    def _of(self, members: frozenset[int], v: int) -> Pattern | None:
        if len(members) > self.options.max_ops:
            self.rejected["larger than max-ops"] += 1
            return None
        return self.ev.of(members, v)

    def _closure(self, members: frozenset[int], producers) -> set[int]:
        """Input-only light producers all of whose consumers are in `members`."""
        g = self.g
        allowed = self.allowed
        todo = [w for w in producers if g.source_free[w] and w not in members and allowed[w]]
        added: set[int] = set()
        while todo:
            w = todo.pop()
            if w in added or w in members or g.is_output[w] or not allowed[w]:
                continue
            succs = g.succs[w]
            if len(succs) > len(members) + len(added):  # cannot all be inside
                continue
            if all(c in members or c in added for c in succs):
                added.add(w)
                todo.extend(g.preds[w])
        return added

    # -- keeping the top-k valid patterns ----------------------------------------

    def _top_k(self, v: int, pool: list[Pattern]) -> list[Pattern]:
        """The k best valid patterns of `pool`, in score order (and up to k more
        without a GEMM when those hold one, see below). A pattern that only
        fails because a path leaves and re-enters it (fig. 6) is replaced by its convex
        closure (`_convex`), which competes in the same ranking: combining the
        consumers' top-k patterns often misses the few ops that close a diamond (a
        value read by several branches, the selects of an erf polynomial), and without
        them every union containing the diamond's ends would be lost."""
        self.work.steps += len(pool)
        unique: dict[frozenset[int], Pattern] = {}
        for p in pool:
            if p.members not in unique:
                unique[p.members] = p
        heap = [(-p.score, len(p), i, p) for i, p in enumerate(unique.values())]
        heapq.heapify(heap)
        tie = len(heap)
        kept: list[Pattern] = []

        k = self.options.top_k

        def take(any_kind: bool) -> None:
            """Pop the heap into `kept`: the k best patterns, or (not `any_kind`) the
            best ones without a compute-intensive op until k of those are kept."""
            nonlocal tie
            while heap and (len(kept) < k if any_kind else sum(not p.gemm for p in kept) < k):
                p = heapq.heappop(heap)[3]
                if not any_kind and p.gemm:
                    continue
                if len(p) == 1:
                    kept.append(p)
                    continue
                verdict = self._valid(v, p)
                if verdict is True:
                    kept.append(p)
                elif verdict is _CYCLE:
                    c = self._convex(v, p)
                    if c is not None and c.members not in unique:
                        unique[c.members] = c
                        heapq.heappush(heap, (-c.score, len(c), tie, c))
                        tie += 1

        take(True)
        # GEMM patterns (a dot with producers inlined) and the others are ranked apart:
        # a light op between two dots may go to the first one's epilogue or the second
        # one's tile loads, and the latter's patterns, saving more, would crowd out
        # every pattern that the first dot's epilogue can grow from.
        if self.g.kind[v] != "compute" and any(p.gemm for p in kept):
            take(False)
        return kept

    def _valid(self, v: int, p: Pattern):
        """True, False (the code generator cannot make it) or _CYCLE (not convex)."""
        verdict = self._verdicts.get(p.members)
        if verdict is not None:
            return verdict
        verdict = self._check(v, p)
        self._verdicts[p.members] = verdict
        return verdict

    def _convex(self, v: int, p: Pattern) -> Pattern | None:
        """p grown to its convex closure: every op on a path from v to a member of p.
        All of p's members are v or its descendants, so those are the descendants of v
        among the ancestors of p's external producers that are themselves descendants
        of v (found by walking producers back from them). None if that needs an op
        fusion may not take or more than `max_ops` ops."""
        g = self.g
        if self._reach is None:
            self._reach = _Reach(g, v)
        reach = self._reach
        members = p.members
        limit = self.options.max_ops - len(members)
        todo = [w for w in p.ext if w > v and reach.reaches(w)]
        added: set[int] = set()
        while todo:
            w = todo.pop()
            if w in added or w in members:
                continue
            if not self.allowed[w] or len(added) == limit:
                self.rejected["cycle between kernels (no convex closure)"] += 1
                return None
            added.add(w)
            # w's producers: those below v are explored already (reach.reaches(w) looked at every index <= w)
            todo.extend(u for u in g.preds[w] if u > v and u in reach.seen)
        if not added:
            return None
        closed = members | added
        absorbed = self._closure(closed, [u for m in added for u in g.preds[m]])
        if absorbed:
            closed = closed | absorbed
        return self._of(closed, v)

    def _check(self, v: int, p: Pattern):
        g = self.g
        for w in p.ext:
            if w > v:  # only descendants of v can close a cycle through it
                if self._reach is None:
                    self._reach = _Reach(g, v)
                if self._reach.reaches(w):
                    self.rejected["cycle between kernels"] += 1
                    return _CYCLE
        reason = NotImplemented
        base = p.base
        if base is not None and not p.gemm and self._verdicts.get(base.members, len(base) == 1) is True:
            members = p.members
            if base.known is None and base.rshape is not None:
                # a set with reductions: what the check keeps of it, from scratch (its
                # verdict came from the full check or from another pattern of its members)
                base.known = self.capability.known([g.ops[i] for i in sorted(base.members)])
            reason, p.known = self.capability.extend(base.rshape, g.ops[v], self.ev.escapes(v, members),
                                                     lambda op: g.index.get(op, -1) in members, base.known)
        if reason is NotImplemented:
            self.work.checked += len(p)
            reason = self.capability([g.ops[i] for i in sorted(p.members)])
        if reason is not None:
            self.rejected[f"codegen: {reason}"] += 1
            return False
        return True


# -- attention: softmax(Q·Kᵀ·scale + mask)·V as one pattern ---------------------------


def attention_patterns(g: DataflowGraph, ev: DeltaEvaluator, capability: Capability) -> list[Pattern]:
    """One pattern per attention in the graph (`fsir.codegen.mappings.attention`: the
    two dots, the per-element score ops, the softmax, and the light producers of Q, K,
    V and the mask only it reads), which the explorer puts in every plan: its kernel
    keeps the S x S scores on chip, which no pattern PatternReduction builds can (dots
    end patterns). Attentions whose op set the code generator refuses, or that would
    overlap one taken already, are left to the search."""
    from fsir.codegen.mappings.attention import attention_ops
    from fsir.dialects import graph

    out: list[Pattern] = []
    taken: set[int] = set()
    for op in g.ops:
        if not isinstance(op, graph.DotOp):
            continue
        ops = attention_ops(op)
        if ops is None or any(o not in g.index for o in ops):
            continue
        members = frozenset(g.index[o] for o in ops)
        if not members.isdisjoint(taken) or not all(g.fusible[m] for m in members):
            continue
        if capability([g.ops[i] for i in sorted(members)]) is not None:
            continue
        out.append(ev.of(members, min(members)))
        taken |= members
    return out
