"""Index propagation on symbols: which of a group's coordinates reach a sub-root.

FusionStitching §4.2 derives the schedule of every non-sub-root op from its group's
sub-root by index propagation. Stitching a group to an earlier sub-root through
registers, warp lanes or shared memory is only legal when each thread reads the
sub-root values of the row it owns (warp/block data locality). This module propagates
*symbolic* indices from a group's element space down to the sub-roots it reads: an
index component is the number of the element-space dimension it equals, `ZERO`, or
`None` (anything else). A read is local when it is exactly the group's row coordinates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of

ZERO = "0"
Sym = tuple  # of int | ZERO | None


@dataclass(frozen=True)
class Coord:
    """Element-space dimension `n` of the reading group, as an index value."""

    n: int


class SymbolicIndex(graph.DimBuilder[Coord | None]):
    """The `DimBuilder` that the ops' index rules (`GraphOp.operand_indices`) run in to
    follow coordinates: a value is an int (a constant), a `Coord` or None (unknown).
    Arithmetic on anything but constants is unknown, so only what an op passes through
    unchanged keeps its coordinate; a rule keeps a whole slice dim's coordinate itself.
    Sizes (`dims_of`) are the static dims, None for `?`."""

    @staticmethod
    def _const(a, b, f):
        return f(a, b) if isinstance(a, int) and isinstance(b, int) else None

    def add(self, a, b):
        return self._const(a, b, lambda x, y: x + y)

    def sub(self, a, b):
        return self._const(a, b, lambda x, y: x - y)

    def mul(self, a, b):
        return self._const(a, b, lambda x, y: x * y)

    def div(self, a, b):
        return self._const(a, b, lambda x, y: x // y if y else None)

    def rem(self, a, b):
        return self._const(a, b, lambda x, y: x % y if y else None)

    def eq(self, a, b):
        return self._const(a, b, lambda x, y: x == y)

    def lt(self, a, b):
        return self._const(a, b, lambda x, y: x < y)

    def select(self, cond, a, b):
        if isinstance(cond, bool):
            return a if cond else b
        return a if a == b else None

    def linearize(self, idx, dims):
        return None

    def delinearize(self, linear, dims) -> list[Coord | int | None]:
        return [None for _ in dims]


_SYMBOLIC = SymbolicIndex()


def _symbolic_dims(v: SSAValue) -> list[int | None]:
    return [None if d == graph.DYN else d for d in shape_of(v.type)]


def _to_index(s) -> int | Coord | None:
    return 0 if s == ZERO else (None if s is None else Coord(s))


def _to_sym(x) -> int | str | None:
    return x.n if isinstance(x, Coord) else (ZERO if x == 0 and isinstance(x, int) else None)


def operand_syms(op, syms: Sym) -> list[Sym]:
    """The symbolic index of each operand when `op`'s result is read at `syms`: the op's
    own index rule run on symbols, but for the ops below."""
    special = _SYMBOLIC_ONLY.get(type(op))
    if special is not None:
        return special(op, syms)
    indices = op.operand_indices([_to_index(s) for s in syms], _symbolic_dims, _SYMBOLIC) \
        if isinstance(op, graph.GraphOp) else None
    if indices is None:
        return [tuple(None for _ in shape_of(v.type)) for v in op.operands]
    return [tuple(_to_sym(x) for x in index) for index in indices]


def _gather_syms(op: graph.GatherOp, syms: Sym) -> list[Sym]:
    """The table row is data (the id read at the ids index): unknown."""
    return [tuple(op.table_index(None, syms)), tuple(op.ids_index(syms))]


def _reshape_op_syms(op: graph.ReshapeOp, syms: Sym) -> list[Sym]:
    """Reshape's index rule re-linearises, which the symbolic algebra cannot see through;
    a reshape that only adds or drops size-1 dims keeps the other dims' coordinates."""
    return [_reshape_syms(shape_of(op.input.type), shape_of(op.result.type), syms)]


def _reshape_syms(src: Sequence[int], dst: Sequence[int], syms: Sym) -> Sym:
    """A reshape that only adds or drops size-1 dims keeps the other dims' symbols."""
    keep_src = [i for i, d in enumerate(src) if d != 1]
    keep_dst = [i for i, d in enumerate(dst) if d != 1]
    if [src[i] for i in keep_src] != [dst[i] for i in keep_dst] or graph.DYN in src:
        return tuple(ZERO if d == 1 else None for d in src)
    out: list = [ZERO] * len(src)
    for i, j in zip(keep_src, keep_dst):
        out[i] = syms[j]
    return tuple(out)


# Ops whose symbolic index rule is not their `operand_indices` on symbols (see each).
_SYMBOLIC_ONLY = {graph.GatherOp: _gather_syms, graph.ReshapeOp: _reshape_op_syms}


def subroot_reads(value: SSAValue, syms: Sym, is_subroot) -> list[tuple[SSAValue, Sym]]:
    """Every (sub-root value, symbolic index) read when `value` is read at `syms`;
    the walk stops at sub-roots and block arguments."""
    reads: list[tuple[SSAValue, Sym]] = []
    seen: set[tuple[int, Sym]] = set()
    stack = [(value, tuple(syms))]
    while stack:
        v, s = stack.pop()
        if (id(v), s) in seen:
            continue
        seen.add((id(v), s))
        if is_subroot(v):
            reads.append((v, s))
            continue
        op = v.owner
        if not isinstance(op, graph.GraphOp):
            continue
        for operand, osyms in zip(op.operands, operand_syms(op, s)):
            stack.append((operand, osyms))
    return reads


def local(read: Sym, row_dims: Sequence[int], row_shape: Sequence[int]) -> bool:
    """A read of a row-shaped sub-root is local when component j is row coordinate j
    (or a constant 0 on a size-1 row dim)."""
    if len(read) != len(row_dims):
        return False
    return all(s == d or (s == ZERO and size == 1) for s, d, size in zip(read, row_dims, row_shape))


def row_dims_of(shape: Sequence[int], row_shape: Sequence[int], reads: Sequence[Sym]) -> tuple[int, ...] | None:
    """The dims of a result of `shape` that are the rows (`row_shape`) of the fusion's
    reductions, with every sub-root read (`reads`) local to its row; None when no
    choice works (the result would need inter-block communication). Candidates: the
    dims the reads name, the leading dims, the trailing dims."""
    rank, m = len(shape), len(row_shape)
    named = infer_row_dims(reads)
    for dims in (named, tuple(range(m)), tuple(range(rank - m, rank))):
        if dims is None or len(dims) != m or any(not 0 <= d < rank for d in dims):
            continue
        if list(dims) != sorted(dims) and not reads:
            continue
        # equal sizes, `?` only against `?`: a `?` dim of the result paired with a static
        # row dim (a size-1 one above all, whose reads are ZERO and so look local) may
        # hold more elements than the row at run time ([1, ?, 4] over rows [1, 4])
        if [shape[d] for d in dims] != list(row_shape):
            continue
        if all(local(s, dims, row_shape) for s in reads):
            return dims
    return None


def infer_row_dims(reads: Sequence[Sym]) -> tuple[int, ...] | None:
    """The element-space dims that the reads identify as row coordinates: every read
    must name the same distinct dims; None when they disagree or are not plain dims."""
    found: tuple[int, ...] | None = None
    for s in reads:
        if any(not isinstance(x, int) for x in s) or len(set(s)) != len(s):
            return None
        if found is None:
            found = tuple(s)
        elif found != tuple(s):
            return None
    return found
