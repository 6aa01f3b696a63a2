"""Which kernel inputs an element reads at an index that does not depend on one of its
coordinates: along that coordinate one load serves every element (a bias added to the
rows of a staged tile). Index propagation as the lowering's `ElementEmitter` does it,
on the sets of coordinates each index depends on; the summaries (which cost a kernel)
and the lowerings (which hoist the loads) ask the same question here.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.lowering.emit import reshape_groups


class _Deps(graph.DimBuilder[frozenset]):
    """`DimBuilder` on the sets of coordinates an index depends on (ints: constants,
    no coordinate): any arithmetic depends on the union of its operands'."""

    @staticmethod
    def _of(*xs) -> frozenset:
        return frozenset().union(*(x for x in xs if isinstance(x, frozenset)))

    def add(self, a, b):
        return a + b if isinstance(a, int) and isinstance(b, int) else self._of(a, b)

    def sub(self, a, b):
        return a - b if isinstance(a, int) and isinstance(b, int) else self._of(a, b)

    def mul(self, a, b):
        return a * b if isinstance(a, int) and isinstance(b, int) else self._of(a, b)

    def div(self, a, b):
        return a // b if isinstance(a, int) and isinstance(b, int) and b else self._of(a, b)

    def rem(self, a, b):
        return a % b if isinstance(a, int) and isinstance(b, int) and b else self._of(a, b)

    def eq(self, a, b):
        return self._of(a, b)

    def lt(self, a, b):
        return self._of(a, b)

    def select(self, cond, a, b):
        return self._of(cond, a, b)

    def linearize(self, idx, dims):
        return self._of(*idx)

    def delinearize(self, linear, dims) -> list[frozenset | int]:
        return [self._of(linear) for _ in dims]


_DEPS = _Deps()


def invariant_inputs(v: SSAValue, inputs: set[SSAValue], dim: int) -> set[SSAValue]:
    """The kernel inputs that an element of `v` reads (by index propagation, as the
    lowering's `ElementEmitter` does, reshapes re-linearised per group of dims) at an
    index not depending on v's coordinate `dim`: along that dim one load of each serves
    every element (a bias added to the rows of a staged tile)."""
    rank = len(shape_of(v.type))
    reads: dict[SSAValue, bool] = {}  # input -> whether some read depends on `dim`
    seen: set[tuple[SSAValue, tuple]] = set()
    stack = [(v, tuple(frozenset([d]) for d in range(rank)))]
    while stack:
        u, idx = stack.pop()
        if (u, idx) in seen:
            continue
        seen.add((u, idx))
        if u in inputs:
            reads[u] = reads.get(u, False) or dim in _DEPS._of(*idx)
            continue
        op = u.owner
        if not isinstance(op, graph.GraphOp) or isinstance(op, graph.ConstantOp):
            continue
        dims_of = lambda x: list(shape_of(x.type))  # noqa: E731
        groups = reshape_groups(shape_of(op.operands[0].type), shape_of(u.type)) \
            if isinstance(op, graph.ReshapeOp) else None
        if groups is not None:
            sidx: list = [None] * len(shape_of(op.operands[0].type))
            for src, dst in groups:
                for d in src:
                    sidx[d] = _DEPS._of(*(idx[k] for k in dst))
            indices: list | None = [sidx]
        else:
            indices = op.operand_indices(list(idx), dims_of, _DEPS)
        everything = _DEPS._of(*idx) | {dim}
        for i, o in enumerate(op.operands):
            index = indices[i] if indices is not None else [everything] * len(shape_of(o.type))
            stack.append((o, tuple(x if isinstance(x, frozenset) else _DEPS._of(x) for x in index)))
    return {u for u, depends in reads.items() if not depends}
