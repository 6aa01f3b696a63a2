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

from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of

ZERO = "0"
Sym = tuple  # of int | ZERO | None


def operand_syms(op, syms: Sym) -> list[Sym]:
    """The symbolic index of each operand when `op`'s result is read at `syms`."""
    if isinstance(op, (graph.ElementwiseOp, graph.CompareOp, graph.SelectOp, graph.ConvertOp)):
        return [syms] * len(op.operands)
    if isinstance(op, graph.BroadcastOp):
        # a `?` operand dim broadcast to a static result dim may be 1 at run time
        # (stretched), so its extent may differ from the reader's: opaque
        src = shape_of(op.input.type)
        out = shape_of(op.result.type)
        dims = op.dims.get_values()
        return [tuple(ZERO if src[i] == 1 else (None if src[i] == graph.DYN and out[d] != graph.DYN else syms[d])
                      for i, d in enumerate(dims))]
    if isinstance(op, graph.TransposeOp):
        perm = op.perm.get_values()
        out: list = [None] * len(perm)
        for i, p in enumerate(perm):
            out[p] = syms[i]
        return [tuple(out)]
    if isinstance(op, graph.SliceOp):
        # only a dim the slice keeps whole keeps its symbol: a row coordinate must range
        # over the same extent in reader and sub-root, or rows would be numbered apart
        start, limit, strides = op.start.get_values(), op.limit.get_values(), op.strides.get_values()
        src = shape_of(op.input.type)
        return [tuple(s if (a == 0 and k == 1 and l == n) else None
                      for s, a, l, k, n in zip(syms, start, limit, strides, src))]
    if isinstance(op, graph.ReshapeOp):
        return [_reshape_syms(shape_of(op.input.type), shape_of(op.result.type), syms)]
    if isinstance(op, graph.ConcatOp):
        # the concat dim is longer than any operand's (see slice): opaque for all
        d = op.dim.value.data
        rest = tuple(None if i == d else s for i, s in enumerate(syms))
        return [rest] * len(op.operands)
    if isinstance(op, graph.GatherOp):
        r = len(shape_of(op.ids.type))
        return [(None,) + tuple(syms[r:]), tuple(syms[:r])]
    return [tuple(None for _ in shape_of(v.type)) for v in op.operands]


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
    named = infer_row_dims([(None, s) for s in reads])  # type: ignore[misc]
    for dims in (named, tuple(range(m)), tuple(range(rank - m, rank))):
        if dims is None or len(dims) != m or any(not 0 <= d < rank for d in dims):
            continue
        if list(dims) != sorted(dims) and not reads:
            continue
        if not graph.shapes_compatible([shape[d] for d in dims], row_shape):
            continue
        if all(local(s, dims, row_shape) for s in reads):
            return dims
    return None


def infer_row_dims(reads: list[tuple[SSAValue, Sym]]) -> tuple[int, ...] | None:
    """The element-space dims that the reads identify as row coordinates: every read
    must name the same distinct dims; None when they disagree or are not plain dims."""
    found: tuple[int, ...] | None = None
    for _, s in reads:
        if any(not isinstance(x, int) for x in s) or len(set(s)) != len(s):
            return None
        if found is None:
            found = tuple(s)
        elif found != tuple(s):
            return None
    return found
