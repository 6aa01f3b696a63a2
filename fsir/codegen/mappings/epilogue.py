"""Stitched epilogues of the tiled-GEMM kernels (`gemm`, `conv`): which consumers of a
product a kernel may compute on its accumulators before the one store.

An epilogue op reads every operand at the product's own index (elementwise ops,
compares, selects, converts on the product's shape): a bias add of a broadcast
vector, GELU in its tanh or erf form, a residual add, a scale, ReLU/clip. Each
accumulator is then the only product element a thread needs, in registers
(`TiledGemmLowering.epilogue`). A reshape of a static product may sit in between (the
HLO and ONNX exports multiply [B·S, H] matrices and reshape the result to [B, S, H]
before the bias): it keeps every element's row-major position, so the accumulator of
product element i is element i of the reshaped value, and the epilogue's later ops
work on that shape. The epilogue's other operands (the broadcast bias,
the residual) and the product's inlined producers are light ops, computed by index
propagation where they are read, so every op of the kernel that is not the product
or in its epilogue must be light.

    ops = {dot, broadcast(bias), add, tanh, ...}
    epilogue_problem(dot, ops, outputs)   # None: one kernel; else why not

The explorer learns that a compute-intensive op's kernel goes on past it from its
mapping's `fuses_epilogue` (`fsir.codegen.capability.takes_epilogue`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from xdsl.ir import Operation, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.lowering.prologue import SAME_INDEX_OPS

# Ops an epilogue may hold: they read every operand at the result's own index.
EPILOGUE_OPS = SAME_INDEX_OPS


def epilogue_of(product: Operation, ops: Iterable[Operation]) -> set[Operation]:
    """The ops of `ops` that read the product's result, directly or through each other."""
    inside = set(ops)
    epilogue: set[Operation] = set()
    stack: list[Operation] = [product]
    while stack:
        for result in stack.pop().results:
            for use in result.uses:
                user = use.operation
                if user in inside and user not in epilogue:
                    epilogue.add(user)
                    stack.append(user)
    return epilogue


def _keeps_order(op: Operation, shape: tuple[int, ...]) -> bool:
    """A reshape between static shapes of the product's element count."""
    if not isinstance(op, graph.ReshapeOp):
        return False
    to = shape_of(op.results[0].type)
    return graph.DYN not in shape and graph.DYN not in to and math.prod(to) == math.prod(shape)


def epilogue_problem(product: graph.GraphOp, ops: Sequence[Operation], outputs: Sequence[SSAValue],
                     noun: str, light_only: bool = True) -> str | None:
    """Why `ops` (holding the compute-intensive `product`, their `outputs` used outside)
    are not one tiled-GEMM kernel with the product's light producers inlined and a
    stitched epilogue; None: they are. `noun` names the product in the reasons ("conv",
    "dot"). Without `light_only` the other ops may be of any class but compute: a
    kernel can inline any producer (the explorer proposes light ones only, as each is
    recomputed in every tile that reads it)."""
    epilogue = epilogue_of(product, ops)
    if len(outputs) != 1:
        return f"a {noun} kernel has one output (the {noun}'s result or its fused epilogue's)"
    (out,) = outputs
    if epilogue and out.owner not in epilogue:
        return f"a {noun}'s result can only feed fused elementwise ops that end in the kernel's output"
    shape = shape_of(product.results[0].type)
    shapes = {shape} | {shape_of(op.results[0].type) for op in epilogue if _keeps_order(op, shape)}
    for op in epilogue:
        if not (isinstance(op, EPILOGUE_OPS) or _keeps_order(op, shape)) or shape_of(op.results[0].type) not in shapes:
            return (f"only elementwise ops on the {noun}'s result shape can be fused after a {noun}, not "
                    f"'{op.name}' on {graph.fmt_shape(shape_of(op.results[0].type))}")
    for op in ops:
        if op is product or op in epilogue:
            continue
        if graph.op_class(op) == graph.OpClass.COMPUTE:
            return f"a {noun} must be the only compute-intensive op of its kernel"
        if light_only and graph.op_class(op) != graph.OpClass.LIGHT:
            return (f"only light ops can be inlined into a {noun}'s tile loads or its epilogue's operands, "
                    f"not '{op.name}'")
    return None
