"""Can stitch-codegen make one kernel of these ops? The code generator's rules, in one place.

    can_generate(ops) -> None | str      None: it can; otherwise the reason it cannot

The fusion explorer asks this before it proposes a pattern (FusionStitching §5.2: only
patterns the code generator can handle are explored), so these are the rules of
`fsir/codegen/stitch_codegen.py`'s `FusionCodegen.build`, stated on a set of graph ops
still in their function (a value is a fusion output when a use lies outside the set):

- no fusion: any graph op alone (whether its element type is supported is a property of
  the op, not of fusion, so it is not checked here);
- a `graph.dot` may only be the single root of its fusion, with its light producers
  (the `gemm` mapping) and no reduction;
- without reductions everything is thread-local (the `loop` mapping): any mix of
  elementwise and index ops, independent parts included (kernel packing);
- with reductions (the `row` mapping) every reduction keeps the same row shape, each
  reduction reads earlier reductions' results only at the row it reduces, and every
  output can be split into those rows: stitching anything else needs inter-block
  communication (a consumer needing a whole reduced tensor, a reduction over the rows
  of another one).

stitch-codegen must keep these rules and this module in step (or call `can_generate`
itself): a pattern this module accepts and codegen rejects is a compile error.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from fsir.codegen.locality import infer_row_dims, local, operand_syms
from fsir.dialects import graph
from fsir.dialects.graph import fmt_shape, shape_of, shapes_compatible


def can_generate(ops: Sequence[Operation]) -> str | None:
    """None when stitch-codegen can make one kernel of `ops`, else why it cannot."""
    if len(ops) <= 1:
        return None
    reduces: list[graph.ReduceOp] = []
    dots: list[graph.DotOp] = []
    for op in ops:
        if not isinstance(op, graph.GraphOp):
            return f"'{op.name}' is not a graph op"
        if isinstance(op, graph.ReduceOp):
            reduces.append(op)
        elif isinstance(op, graph.DotOp):
            dots.append(op)
    if not reduces and not dots:
        return None
    inside = set(ops)
    outputs = [r for op in ops for r in op.results
               if any(u.operation not in inside for u in r.uses)]
    if dots:
        if len(dots) > 1 or reduces:
            return "a dot must be the only root of its fusion (no other dot or reduction)"
        if outputs != [dots[0].result]:
            return "a dot must be the only root of its fusion (it cannot feed other fused ops)"
        if any(graph.op_class(op) not in ("light", "compute") for op in ops):
            return "only light producers can be inlined into a dot's tile loads"
        return None
    row_shape = shape_of(reduces[0].result.type)
    subroots = {r.result for r in reduces}
    for r in reduces[1:]:
        if not shapes_compatible(row_shape, shape_of(r.result.type)):
            return (f"reductions keep different row shapes ({fmt_shape(row_shape)} and "
                    f"{fmt_shape(shape_of(r.result.type))}): stitching them needs inter-block communication")
    for r in reduces:
        rank = len(shape_of(r.input.type))
        dims = sorted(r.dims.get_values())
        kept = tuple(d for d in range(rank) if d not in dims)
        for read in _subroot_reads(r.input, tuple(range(rank)), inside, subroots):
            if not local(read, kept, row_shape):
                return ("a reduction reads a reduction result of a row it does not reduce: "
                        "stitching them needs inter-block communication")
    for v in outputs:
        if v in subroots:
            continue
        if _root_row_dims(v, row_shape, inside, subroots) is None:
            return (f"output {fmt_shape(shape_of(v.type))} cannot be split into the rows "
                    f"({fmt_shape(row_shape)}) of the fusion's reductions without inter-block communication")
    return None


def _subroot_reads(value: SSAValue, syms: tuple, inside: set[Operation], subroots: set[SSAValue]) -> list[tuple]:
    """Symbolic indices at which `value` reads the sub-roots, within the set `inside`
    (fsir.codegen.locality.subroot_reads, stopping at the set's inputs)."""
    reads: list[tuple] = []
    seen: set[tuple[int, tuple]] = set()
    stack = [(value, syms)]
    while stack:
        v, s = stack.pop()
        key = (id(v), s)
        if key in seen:
            continue
        seen.add(key)
        if v in subroots:
            reads.append(s)
            continue
        op = v.owner
        if op not in inside or not isinstance(op, graph.GraphOp):
            continue
        for operand, osyms in zip(op.operands, operand_syms(op, s)):
            stack.append((operand, osyms))
    return reads


def _root_row_dims(v: SSAValue, row_shape, inside, subroots) -> tuple[int, ...] | None:
    """stitch_codegen's FusionCodegen.root_row_dims, returning None instead of raising."""
    shape = shape_of(v.type)
    rank, m = len(shape), len(row_shape)
    reads = _subroot_reads(v, tuple(range(rank)), inside, subroots)
    pairs = [(None, s) for s in reads]
    for dims in (infer_row_dims(pairs), tuple(range(m)), tuple(range(rank - m, rank))):
        if dims is None or len(dims) != m or any(not 0 <= d < rank for d in dims):
            continue
        if list(dims) != sorted(dims) and not reads:
            continue
        if not shapes_compatible([shape[d] for d in dims], row_shape):
            continue
        if all(local(s, dims, row_shape) for s in reads):
            return dims
    return None
