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
  output that reads a reduction can be split into those rows (outputs reading none are
  independent parts, packed into the kernel as grid-stride groups): stitching anything
  else needs inter-block communication (a consumer needing a whole reduced tensor, a
  reduction over the rows of another one).

stitch-codegen must keep these rules and this module in step (or call `can_generate`
itself): a pattern this module accepts and codegen rejects is a compile error.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from fsir.codegen.locality import local, operand_syms, row_dims_of
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
    reads_of = _Reads(inside, subroots)
    for r in reduces:
        rank = len(shape_of(r.input.type))
        dims = sorted(r.dims.get_values())
        kept = tuple(d for d in range(rank) if d not in dims)
        for read in reads_of(r.input, tuple(range(rank))):
            if not local(read, kept, row_shape):
                return ("a reduction reads a reduction result of a row it does not reduce: "
                        "stitching them needs inter-block communication")
    for v in outputs:
        if v in subroots or not reads_of(v, tuple(range(len(shape_of(v.type))))):
            continue  # a sub-root, or a packed independent part
        if _root_row_dims(v, row_shape, reads_of) is None:
            return (f"output {fmt_shape(shape_of(v.type))} cannot be split into the rows "
                    f"({fmt_shape(row_shape)}) of the fusion's reductions without inter-block communication")
    return None


def can_extend(row_shape: tuple[int, ...] | None, op: Operation, escapes: bool):
    """`can_generate(ops + [op])`, in O(1), for a set `ops` without dots that
    `can_generate` accepts, when `op` is a producer of some of them and reads none of
    them; `row_shape` is the result shape of the set's reductions (None: it has none),
    `escapes` whether op's result is used outside the grown set. Returns NotImplemented
    when it cannot tell (op is a reduction or a dot): then call `can_generate`.

    Why it holds: op reads only values from outside, so no walk from a reduction or an
    output finds a sub-root through it: the reads the rules check are unchanged, and
    op's own result, if it escapes, reads no reduction (a packed part). `row_shape` and
    `escapes` no longer matter since codegen packs such outputs; they stay in the
    signature so a stricter code generator can use them."""
    if not isinstance(op, graph.GraphOp) or isinstance(op, (graph.ReduceOp, graph.DotOp)):
        return NotImplemented
    return None


def can_pack(row_shape_a: tuple[int, ...] | None, row_shape_b: tuple[int, ...] | None):
    """`can_generate(a + b)`, in O(1), for two sets without dots that `can_generate`
    accepts and that have no path between them (kernel packing); the arguments are
    their reductions' row shapes (None: no reduction).

    Why it holds: no walk from one part's reductions or outputs enters the other, so
    every read the rules check stays as it was (a part without reductions has outputs
    that read none: packed); only the row shapes of the reductions must agree."""
    if row_shape_a is None or row_shape_b is None:
        return None
    if shapes_compatible(row_shape_a, row_shape_b):
        return None
    return (f"reductions keep different row shapes ({fmt_shape(row_shape_a)} and {fmt_shape(row_shape_b)}): "
            "stitching them needs inter-block communication")


_EMPTY: frozenset = frozenset()


class CodegenCapability:
    """`can_generate` as the explorer's capability object (with the incremental form)."""

    def __call__(self, ops: Sequence[Operation]) -> str | None:
        return can_generate(ops)

    def extend(self, row_shape, op: Operation, escapes: bool, inside=None):
        return can_extend(row_shape, op, escapes)

    def pack(self, row_shape_a, row_shape_b):
        return can_pack(row_shape_a, row_shape_b)

# operand_syms is pure in (op, syms) and the explorer asks about the same ops many
# times; a bounded memo keeps can_generate cheap.
_SYMS_MEMO: dict[tuple[Operation, tuple], list] = {}


def _operand_syms(op: Operation, syms: tuple) -> list:
    key = (op, syms)
    out = _SYMS_MEMO.get(key)
    if out is None:
        if len(_SYMS_MEMO) > 1_000_000:
            _SYMS_MEMO.clear()
        out = _SYMS_MEMO[key] = operand_syms(op, syms)
    return out


class _Reads:
    """Symbolic indices at which values read the sub-roots, within the set `inside`
    (fsir.codegen.locality.subroot_reads, stopping at the set's inputs), memoized per
    (value, index) so all walks of one check cost O(ops) together."""

    def __init__(self, inside, subroots):
        self.inside = inside
        self.subroots = subroots
        self.memo: dict[tuple, frozenset] = {}

    def __call__(self, value: SSAValue, syms: tuple) -> frozenset:
        memo, inside, subroots = self.memo, self.inside, self.subroots
        stack = [(value, syms, False)]
        while stack:
            v, s, expanded = stack.pop()
            key = (v, s)
            if not expanded and key in memo:
                continue
            if v in subroots:
                memo[key] = frozenset((s,))
                continue
            op = v.owner
            if op not in inside:
                memo[key] = _EMPTY
                continue
            children = list(zip(op.operands, _operand_syms(op, s)))
            if expanded:
                memo[key] = _EMPTY.union(*(memo[c] for c in children))
            else:
                stack.append((v, s, True))
                stack.extend((c[0], c[1], False) for c in children if c not in memo)
        return memo[(value, syms)]


def _root_row_dims(v: SSAValue, row_shape, reads_of: _Reads) -> tuple[int, ...] | None:
    """stitch_codegen's FusionCodegen.root_row_dims, returning None instead of raising."""
    shape = shape_of(v.type)
    return row_dims_of(shape, row_shape, list(reads_of(v, tuple(range(len(shape))))))
