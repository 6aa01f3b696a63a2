"""Can stitch-codegen make one kernel of these ops? The explorer's capability query.

    can_generate(ops) -> None | str      None: it can; otherwise the reason it cannot

The fusion explorer asks this before it proposes a pattern (FusionStitching §5.2: only
patterns the code generator can handle are explored). The rules are the mappings'
(`fsir.codegen.mappings`): the set goes to the mapping that claims it (`gemm` for a
`graph.dot`, `conv` for a `graph.conv`, `row` for reductions, `loop` otherwise), which
says whether it `accepts` it, stated on graph ops still in their function (a value is a
fusion output when a use lies outside the set). Any graph op alone can be generated (whether its element type is
supported is a property of the op, not of fusion, so it is not checked here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import NotImplementedType

from xdsl.ir import Operation

from fsir.analysis.values import reads_operands_from_memory
from fsir.codegen.mappings import MAPPINGS, mapping_for
from fsir.codegen.mappings.row import RowMapping
from fsir.codegen.row_growth import RowSet, grow, row_set
from fsir.dialects import graph
from fsir.dialects.schedule import LoopParamsAttr, RowParamsAttr


def can_generate(ops: Sequence[Operation]) -> str | None:
    """None when stitch-codegen can make one kernel of `ops`, else why it cannot."""
    if len(ops) <= 1:
        return None
    for op in ops:
        if not isinstance(op, graph.GraphOp):
            return f"'{op.name}' is not a graph op"
    inside = {r for op in ops for r in op.results}
    for op in ops:
        if reads_operands_from_memory(op) and any(o in inside for o in op.operands):
            return f"'{op.name}' reads its operand from memory: its producer cannot join its kernel"
    return mapping_for(ops).accepts(ops)


def can_extend(row_shape: tuple[int, ...] | None, op: Operation, escapes: bool,
               inside: Callable[[Operation], bool] | None = None,
               known: RowSet | None = None) -> tuple[str | None | NotImplementedType, RowSet | None]:
    """`can_generate(ops + [op])` for a set `ops` without dots that `can_generate`
    accepts, when `op` is a producer of some of them and reads none of them, and what
    the check keeps of the grown set for the next producer; `row_shape` is the result
    shape of the set's reductions (None: it has none), `escapes` whether op's result is
    used outside the grown set, `inside` the grown set's membership and `known` what
    was kept of `ops` (`known_of`; `row_growth.RowSet`). The verdict is NotImplemented
    when it cannot tell: then call `can_generate`.

    An op the `loop` mapping takes changes no set's mapping; it reads only values from
    outside, so no walk from a reduction or an output finds a sub-root through it: the
    reads the rules check are unchanged (O(1)), and op's own result, if it escapes,
    reads no reduction (a packed part). A reduction joining a set with reductions adds
    the reads that reach its result, which `known` holds (`row_growth.grow`: O(op's
    uses)). `escapes` no longer matters since codegen packs such outputs; it stays in
    the signature so a stricter code generator can use it."""
    if not isinstance(op, graph.GraphOp):
        return NotImplemented, None
    if any(reads_operands_from_memory(u.operation) for r in op.results for u in r.uses):
        return NotImplemented, None  # the window reduction it feeds may be in the set
    loop = not isinstance(op, graph.ReduceOp) and mapping_for([op]) is MAPPINGS[LoopParamsAttr]
    if row_shape is None or known is None or inside is None:
        return (None if loop else NotImplemented), None
    if not loop and not isinstance(op, graph.ReduceOp):
        return NotImplemented, None
    ok, grown = grow(known, op, inside)
    if not ok:
        return (None if loop else NotImplemented), None
    return None, grown


def known_of(ops: Sequence[Operation]) -> RowSet | None:
    """What `can_extend` keeps of `ops`, a set `can_generate` accepts (in block order),
    for the producers added to it next (None: nothing, a set without reductions)."""
    return row_set(ops)


def can_pack(row_shape_a: tuple[int, ...] | None, row_shape_b: tuple[int, ...] | None):
    """`can_generate(a + b)`, in O(1), for two sets without dots that `can_generate`
    accepts and that have no path between them (kernel packing); the arguments are
    their reductions' row shapes (None: no reduction). See `RowMapping.pack`."""
    row = MAPPINGS[RowParamsAttr]
    assert isinstance(row, RowMapping)
    return row.pack(row_shape_a, row_shape_b)


def takes_epilogue(op: Operation) -> bool:
    """Whether the kernel of a compute-intensive `op` may also compute elementwise
    consumers of its result (its mapping's `fuses_epilogue`: a conv's bias, ReLU,
    residual add); otherwise it is the last op of its kernel."""
    return isinstance(op, graph.GraphOp) and mapping_for([op]).fuses_epilogue


class CodegenCapability:
    """`can_generate` as the explorer's capability object (with the incremental forms,
    and which compute-intensive ops take an epilogue): the fusion explorer's
    `Capability` protocol (`fsir/fusion/protocols.py`), implemented structurally (this
    layer is below the explorer and does not import it)."""

    def __call__(self, ops: Sequence[Operation]) -> str | None:
        return can_generate(ops)

    def epilogue(self, op: Operation) -> bool:
        return takes_epilogue(op)

    def extend(self, row_shape: tuple[int, ...] | None, op: Operation, escapes: bool,
               inside: Callable[[Operation], bool], known: object | None = None
               ) -> tuple[str | None | NotImplementedType, object | None]:
        return can_extend(row_shape, op, escapes, inside, known if isinstance(known, RowSet) else None)

    def known(self, ops: Sequence[Operation]) -> object | None:
        return known_of(ops)

    def pack(self, row_shape_a: tuple[int, ...] | None,
             row_shape_b: tuple[int, ...] | None) -> str | None | NotImplementedType:
        return can_pack(row_shape_a, row_shape_b)
