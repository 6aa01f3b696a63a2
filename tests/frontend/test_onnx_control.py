"""ONNX `If` on a condition known at compile time (`fsir/frontend/onnx_control.py`):
the taken branch is imported in the If's place, reading values of the enclosing graph
and initializers of its own; a condition from run-time data is a located error."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import fsir
from fsir.errors import UserError


def _if_on_batch_size(rows: int) -> bytes:
    """y = If(shape(x)[0] == 2) then Relu(x) + w else Neg(x): w an initializer of the
    then branch, x read from the enclosing graph."""
    shape = [rows, 3]
    w = helper.make_tensor("w", TensorProto.FLOAT, [3], [0.5, -1.0, 2.0])
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "w"], ["t"])],
                               "then", [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, shape)], [w])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, shape)])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Constant", [], ["i0"], value=helper.make_tensor("i0", TensorProto.INT64, [], [0])),
             helper.make_node("Gather", ["s", "i0"], ["b"]),
             helper.make_node("Constant", [], ["two"], value=helper.make_tensor("two", TensorProto.INT64, [], [2])),
             helper.make_node("Equal", ["b", "two"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.parametrize("rows", [2, 5])
def test_shape_derived_condition_takes_its_branch(rows):
    model = _if_on_batch_size(rows)
    x = np.random.default_rng(rows).standard_normal((rows, 3)).astype(np.float32)
    exe = fsir.compile(model, frontend="onnx")
    (got,) = exe.run([x], device="sim")
    (want,) = ort.InferenceSession(model).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-6)
    ops = {op.name for op in exe.source.walk()}
    assert ("graph.add" in ops) == (rows == 2) and ("graph.neg" in ops) == (rows != 2)


def test_a_condition_from_data_is_a_located_error():
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             helper.make_node("Constant", [], ["z"], value=helper.make_tensor("z", TensorProto.FLOAT, [], [0.0])),
             helper.make_node("Greater", ["s", "z"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    with pytest.raises(UserError, match=r"the condition of node 'y' \(If\) must be a constant") as err:
        fsir.compile(model, frontend="onnx")
    assert err.value.loc is not None and err.value.loc.line == 4
