"""The XLA-style baseline's fusion rules (`fusion-explore{mode=xla}`).

XLA fuses by kernel packing and thread composition only (FusionStitching §2.1, §7.4):

- a reduction may take its producers but ends its fusion: no fused op reads a
  reduction's result (every thread would recompute the reduction);
- an expensive elementwise op on a smaller tensor is not fused into the middle of a
  kernel: no fused op that reads its result (directly or through other fused ops) has
  more elements than it, since every thread of the larger op would recompute it.

The same explorer runs with these rules on top of the code generator's, so the baseline
and FusionStitching are compared inside one build with one cost model.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation

from fsir.dialects import graph
from fsir.fusion.dataflow import tensor_elements
from fsir.fusion.patterns import Capability


def xla_rules(ops: Sequence[Operation]) -> str | None:
    inside = set(ops)
    for op in ops:
        kind = graph.op_class(op)
        if kind == "reduction":
            if any(u.operation in inside for u in op.results[0].uses):
                return "xla: a reduction ends its fusion"
        elif kind == "expensive":
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


def with_xla_rules(capability: Capability) -> Capability:
    def check(ops: Sequence[Operation]) -> str | None:
        return xla_rules(ops) or capability(ops)

    return check

