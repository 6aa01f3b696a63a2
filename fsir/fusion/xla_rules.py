"""The XLA-style baseline's fusion rules (`fusion-explore{mode=xla}`).

XLA fuses by kernel packing and thread composition only (FusionStitching §2.1, §7.4):

- a reduction may take its producers but ends its fusion: no fused op reads a
  reduction's result (every thread would recompute the reduction);
- an expensive elementwise op on a smaller tensor is not fused into the middle of a
  kernel: no fused op that reads its result (directly or through other fused ops) has
  more elements than it, since every thread of the larger op would recompute it;
- a GEMM is a library (cuBLAS) call: nothing is fused into it.

The same explorer runs with these rules on top of the code generator's, so the baseline
and FusionStitching are compared inside one build with one cost model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Operation

from fsir.dialects import graph
from fsir.fusion.dataflow import tensor_elements
from fsir.fusion.protocols import Capability, Incremental, RowShape


def xla_rules(ops: Sequence[Operation]) -> str | None:
    inside = set(ops)
    for op in ops:
        kind = graph.op_class(op)
        if kind == graph.OpClass.COMPUTE and len(ops) > 1:
            return "xla: a GEMM is a library call, nothing is fused into it"
        if kind == graph.OpClass.REDUCTION:
            if any(u.operation in inside for u in op.results[0].uses):
                return "xla: a reduction ends its fusion"
        elif kind == graph.OpClass.EXPENSIVE:
            size = tensor_elements(op.results[0].type)
            stack = [op]
            seen = set()
            while stack:
                cur = stack.pop()
                for u in cur.results[0].uses:
                    user = u.operation
                    if user in inside and user not in seen:
                        seen.add(user)
                        if user.results and tensor_elements(user.results[0].type) > size:
                            return "xla: an expensive op on a smaller tensor would be recomputed per element"
                        stack.append(user)
    return None


def xla_extend(op: Operation, inside) -> str | None:
    """`xla_rules(ops + [op])` for a set `ops` it accepts, when op is a producer of some
    of them (`inside(op)` tells membership of the grown set)."""
    kind = graph.op_class(op)
    if kind == graph.OpClass.REDUCTION:
        return "xla: a reduction ends its fusion"
    if kind == graph.OpClass.EXPENSIVE:
        size = tensor_elements(op.results[0].type)
        stack, seen = [op], set()
        while stack:
            for u in stack.pop().results[0].uses:
                user = u.operation
                if user not in seen and inside(user):
                    seen.add(user)
                    if user.results and tensor_elements(user.results[0].type) > size:
                        return "xla: an expensive op on a smaller tensor would be recomputed per element"
                    stack.append(user)
    return None


class WithXlaRules:
    """A capability check with XLA's rules in front (and its incremental form)."""

    def __init__(self, capability: Capability):
        self.capability = capability

    def __call__(self, ops: Sequence[Operation]) -> str | None:
        return xla_rules(ops) or self.capability(ops)

    def epilogue(self, op: Operation) -> bool:
        # in xla mode a dot or conv ends its kernel (XLA's loop fusions stop there)
        return False

    def extend(self, row_shape: RowShape, op: Operation, escapes: bool,
               inside: Callable[[Operation], bool], known: object | None) -> tuple[Incremental, object | None]:
        reason = xla_extend(op, inside)
        if reason is not None:
            return reason, None
        return self.capability.extend(row_shape, op, escapes, inside, known)

    def known(self, ops: Sequence[Operation]) -> object | None:
        return self.capability.known(ops)


    def pack(self, row_shape_a: RowShape, row_shape_b: RowShape) -> Incremental:
        # Packing independent parts adds no edge, so XLA's rules hold for the union.
        return self.capability.pack(row_shape_a, row_shape_b)


def with_xla_rules(capability: Capability) -> Capability:
    return WithXlaRules(capability)

