"""ONNX control flow whose path is known at compile time.

`If` on a condition fsir can compute while importing (a constant, or one derived from
static shapes) is folded: the taken branch's nodes are imported in the If's place, in
the enclosing scope (ONNX names are unique across a model's subgraphs, and a branch may
read any value of the enclosing graph), and the branch's outputs become the If's. A
condition computed from graph inputs asks for them to be bound (`ConstantInputsNeeded`,
as the backend's shape inputs are); one that depends on run-time data is refused with
the If's location.

    %c = Equal(Shape(x)[0], 2)          (x static: folds to a constant)
    %y = If(%c) then {Relu(x)} else {Neg(x)}      ->      %y = graph.max x, 0
"""

from __future__ import annotations

from typing import Any

import onnx
from xdsl.ir import SSAValue

from fsir.frontend.onnx_import import OnnxImporter, converter


@converter("If")
def if_(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    cond = im.constant_value(node.input[0], "the condition")
    if cond.size != 1:
        raise im.error(f"the condition of {im.describe()} has {cond.size} elements, not one")
    taken = "then_branch" if bool(cond.reshape(-1)[0]) else "else_branch"
    branch = attrs.get(taken)
    if not isinstance(branch, onnx.GraphProto):
        raise im.error(f"{im.describe()} has no graph attribute '{taken}'")
    return import_branch(im, node, branch)


def import_branch(im: OnnxImporter, node: onnx.NodeProto, branch: onnx.GraphProto) -> list[SSAValue]:
    """`branch`'s nodes imported in the enclosing scope, at `node`'s location; its outputs."""
    for init in branch.initializer:
        im.inits.setdefault(init.name, init)
    try:
        for inner in branch.node:
            im.node = inner
            im.import_node(inner)
    finally:
        im.node = node
    outputs = [im.value(o.name) for o in branch.output]
    if len(outputs) != len(node.output):
        raise im.error(f"the taken branch of {im.describe()} has {len(outputs)} outputs, the If "
                       f"{len(node.output)}")
    return outputs

