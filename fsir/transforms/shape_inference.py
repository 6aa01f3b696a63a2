"""Shape inference: replace `?` dims by sizes the function's inputs make known.

Walks each function in order, refines every graph op's result type with its shape rule
(`infer_type`), and finally refines the function's result types to what it returns.
Types only ever become more static; a conflict is a verifier error, not this pass's.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from fsir.dialects import graph
from fsir.dialects.graph import join_shapes, shape_of, shapes_compatible, tensor
from fsir.errors import UserError
from fsir.ir import location_of


def refine(op: Operation) -> bool:
    """Refine the result type of one graph op; True if it changed."""
    if not isinstance(op, graph.GraphOp):
        return False
    try:
        inferred = op.infer_type()
    except VerifyException as err:
        raise UserError(f"'{op.name}' op {err}", location_of(op)) from None
    declared = op.result_type
    if not shapes_compatible(shape_of(declared), shape_of(inferred)):
        raise UserError(f"'{op.name}' op result type {declared} conflicts with the inferred {inferred}",
                        location_of(op))
    new = tensor(declared.element_type, join_shapes(shape_of(declared), shape_of(inferred)))
    if new == declared:
        return False
    Rewriter.replace_value_with_new_type(op.results[0], new)
    return True


@dataclass(frozen=True)
class ShapeInferencePass(ModulePass):
    """Resolve `?` dims of graph ops and function results where the inputs make them known."""

    name = "graph-shape-inference"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for f in op.walk():
            if not isinstance(f, func.FuncOp) or f.is_declaration:
                continue
            for inner in f.body.walk():
                refine(inner)
            ret = f.body.blocks[-1].last_op
            if isinstance(ret, func.ReturnOp):
                outputs = [
                    tensor(r.type.element_type, join_shapes(shape_of(t), shape_of(r.type)))
                    if isinstance(t, builtin.TensorType) and isinstance(r.type, builtin.TensorType)
                    else t
                    for t, r in zip(f.function_type.outputs.data, ret.operands)
                ]
                f.function_type = builtin.FunctionType.from_lists(f.function_type.inputs.data, outputs)
