"""Shared-memory buffers with dominance-based reuse (FusionStitching §4.4).

A kernel's groups form a graph: an edge from the group that writes a value to each
group that reads it, and from each group to the next in program order. A buffer may
take the space of an earlier buffer when the earlier buffer is dead there: every
group that reads the earlier buffer dominates the group that writes the new one (any
path from the entry to the new writer passes through all the old buffer's readers, so
they are done). Dominators are Cooper, Harvey and Kennedy's iterative algorithm ("A
Simple, Fast Dominance Algorithm", 2001) over reverse postorder.

    idom = dominators(successors, entry)
    placement = allocate(requests, idom, order)   # name -> offset; size = arena bytes
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

Node = Hashable


def reverse_postorder(successors: Mapping[Node, Sequence[Node]], entry: Node) -> list[Node]:
    seen: set[Node] = set()
    post: list[Node] = []
    stack: list[tuple[Node, int]] = [(entry, 0)]
    seen.add(entry)
    while stack:
        node, i = stack.pop()
        succ = successors.get(node, ())
        if i < len(succ):
            stack.append((node, i + 1))
            nxt = succ[i]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, 0))
        else:
            post.append(node)
    return post[::-1]


def dominators(successors: Mapping[Node, Sequence[Node]], entry: Node) -> dict[Node, Node]:
    """Immediate dominators of the nodes reachable from `entry` (entry -> entry)."""
    order = reverse_postorder(successors, entry)
    index = {n: i for i, n in enumerate(order)}
    preds: dict[Node, list[Node]] = {n: [] for n in order}
    for n in order:
        for s in successors.get(n, ()):
            preds[s].append(n)
    idom: dict[Node, Node] = {entry: entry}

    def intersect(a: Node, b: Node) -> Node:
        while a != b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for n in order[1:]:
            done = [p for p in preds[n] if p in idom]
            new = done[0]
            for p in done[1:]:
                new = intersect(p, new)
            if idom.get(n) != new:
                idom[n] = new
                changed = True
    return idom


def dominates(idom: Mapping[Node, Node], a: Node, b: Node) -> bool:
    """Does `a` dominate `b` (every node dominates itself)?"""
    while True:
        if a == b:
            return True
        parent = idom.get(b)
        if parent is None or parent == b:
            return False
        b = parent


@dataclass(frozen=True)
class Request:
    name: str
    size: int  # bytes
    writer: Node  # the group that fills the buffer
    readers: tuple[Node, ...]  # the groups that read it (the writer included if it reads)
    align: int = 16


@dataclass
class Placement:
    offsets: dict[str, int]
    size: int  # bytes of the arena


def allocate(requests: Sequence[Request], idom: Mapping[Node, Node]) -> Placement:
    """First fit over the arena in request order: a new buffer may overlap a placed
    one only if that one is dead at the new writer (all its readers and its writer
    dominate the new writer, and the new writer is not among its readers)."""
    tree = DominatorTree(idom)
    placed: list[tuple[Request, int]] = []
    offsets: dict[str, int] = {}
    top = 0
    for r in requests:
        live = [(p, off) for p, off in placed if not _dead(p, r.writer, tree)]
        offset = 0
        for p, off in sorted(live, key=lambda x: x[1]):
            if offset + r.size <= off:
                break
            offset = max(offset, _align(off + p.size, r.align))
        offsets[r.name] = offset
        placed.append((r, offset))
        top = max(top, offset + r.size)
    return Placement(offsets, top)


class DominatorTree:
    """`dominates` in constant time: each reachable node's entry and exit numbers in a
    depth-first walk of the dominator tree (a dominates b when b's interval lies in
    a's), so the first fit's checks of every placed buffer against every writer do not
    each climb the tree."""

    def __init__(self, idom: Mapping[Node, Node]) -> None:
        children: dict[Node, list[Node]] = {}
        roots: list[Node] = []
        for n, parent in idom.items():
            if parent == n:
                roots.append(n)
            else:
                children.setdefault(parent, []).append(n)
        self.enter: dict[Node, int] = {}
        self.exit: dict[Node, int] = {}
        clock = 0
        for root in roots:
            stack: list[tuple[Node, bool]] = [(root, False)]
            while stack:
                n, done = stack.pop()
                if done:
                    self.exit[n] = clock
                    clock += 1
                    continue
                self.enter[n] = clock
                clock += 1
                stack.append((n, True))
                stack.extend((c, False) for c in children.get(n, ()))

    def dominates(self, a: Node, b: Node) -> bool:
        """As the module's `dominates` (a node outside the tree dominates only itself)."""
        if a == b:
            return True
        ea, eb = self.enter.get(a), self.enter.get(b)
        return ea is not None and eb is not None and ea <= eb and self.exit[b] <= self.exit[a]


def _dead(p: Request, at: Node, tree: DominatorTree) -> bool:
    if at in p.readers or at == p.writer:
        return False
    return all(tree.dominates(n, at) for n in (p.writer, *p.readers))


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


def chain(groups: Sequence[Node], reads: Mapping[Node, Sequence[Node]]) -> dict[Node, list[Node]]:
    """The successor graph of a kernel's groups: program order plus dataflow edges
    (`reads[g]`: the groups whose results `g` reads)."""
    succ: dict[Node, list[Node]] = {g: [] for g in groups}
    for a, b in zip(groups, groups[1:]):
        succ[a].append(b)
    for g, srcs in reads.items():
        for s in srcs:
            if g not in succ[s]:
                succ[s].append(g)
    return succ
