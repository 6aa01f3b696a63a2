"""ONNX sequence ops of static length (`fsir/frontend/onnx_sequence.py`), alone and
inside an unrolled Loop as PyTorch's dynamo exporter writes `nn.EmbeddingBag`; the
results match onnxruntime. A sequence as a graph output is a located error."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import fsir
from fsir.errors import UserError

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _const(name: str, dtype: int, value) -> helper.NodeProto:
    arr = np.asarray(value)
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, dtype, list(arr.shape),
                                                                             arr.reshape(-1).tolist()))


def _model(nodes, x_shape, y_shape) -> bytes:
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, x_shape)],
                              [helper.make_tensor_value_info("y", F, y_shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _check(model: bytes, x_shape) -> fsir.Executable:
    x = np.random.default_rng(1).standard_normal(x_shape).astype(np.float32)
    exe = fsir.compile(model, frontend="onnx")
    (got,) = exe.run([x], device="sim")
    (want,) = ort.InferenceSession(model).run(None, {"x": x})
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    return exe


def test_bag_sums_appended_in_a_loop():
    """The dynamo exporter's EmbeddingBag: a Loop with no trip count, whose condition
    i + 1 < bags the body computes, appends each bag's row sum (rows offsets[i] to
    offsets[i + 1] of x) to a sequence; ConcatFromSequence joins them."""
    body = helper.make_graph(
        [helper.make_node("Reshape", ["i_in", "one_d"], ["i1"]),
         helper.make_node("Add", ["i1", "one"], ["i1_next"]),
         helper.make_node("Slice", ["offsets", "i1", "i1_next"], ["start"]),
         helper.make_node("Add", ["i1", "two"], ["i1_next2"]),
         helper.make_node("Slice", ["offsets", "i1_next", "i1_next2"], ["end"]),
         helper.make_node("Slice", ["x", "start", "end"], ["rows"]),
         helper.make_node("ReduceSum", ["rows", "zero_d"], ["bag"], keepdims=1),
         helper.make_node("SequenceInsert", ["seq_in", "bag"], ["seq_out"]),
         helper.make_node("Add", ["i_in", "one"], ["i_out"]),
         helper.make_node("Less", ["i_out", "bags"], ["c_out"])],
        "body",
        [helper.make_tensor_value_info("it", I64, []), helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("seq_in", TensorProto.UNDEFINED, None),
         helper.make_tensor_value_info("i_in", I64, [])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_value_info("seq_out", helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None))),
         helper.make_tensor_value_info("i_out", I64, [])])
    body.input[2].CopyFrom(helper.make_value_info("seq_in", helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(F, None))))
    nodes = [_const("offsets", I64, [0, 2, 3, 6]), _const("bags", I64, 3), _const("one", I64, 1),
             _const("two", I64, 2), _const("one_d", I64, [1]), _const("zero_d", I64, [0]),
             _const("t", TensorProto.BOOL, True), _const("i0", I64, 0),
             helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
             helper.make_node("Loop", ["", "t", "empty", "i0"], ["seq", "i_last"], body=body),
             helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0)]
    exe = _check(_model(nodes, [6, 4], [3, 4]), (6, 4))
    # the three unrolled bags become one segment reduction (fsir/transforms/embedding_bags.py)
    names = [op.name for op in exe.source.walk()]
    assert names.count("graph.segment_reduce") == 1 and "graph.reduce" not in names


@pytest.mark.parametrize("keepdims", [0, 1])
def test_split_at_length_and_stack(keepdims):
    """y = stack(seq[2], seq[0]) * len(seq) for seq = SplitToSequence(x, axis=1)."""
    nodes = [helper.make_node("SplitToSequence", ["x"], ["seq"], axis=1, keepdims=keepdims),
             _const("p", I64, -1), _const("q", I64, 0),
             helper.make_node("SequenceAt", ["seq", "p"], ["a"]),
             helper.make_node("SequenceAt", ["seq", "q"], ["b"]),
             helper.make_node("SequenceConstruct", ["a", "b"], ["pair"]),
             helper.make_node("ConcatFromSequence", ["pair"], ["st"], axis=0, new_axis=1),
             helper.make_node("SequenceLength", ["seq"], ["n"]),
             helper.make_node("Cast", ["n"], ["nf"], to=F),
             helper.make_node("Mul", ["st", "nf"], ["y"])]
    _check(_model(nodes, [2, 3], None), (2, 3))


def test_a_sequence_graph_output_is_a_located_error():
    nodes = [helper.make_node("SplitToSequence", ["x"], ["y"], axis=0)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                              [helper.make_value_info("y", helper.make_sequence_type_proto(
                                  helper.make_tensor_type_proto(F, None)))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    with pytest.raises(UserError, match=r"its output 'y' is a sequence and a graph output") as err:
        fsir.compile(model, frontend="onnx")
    assert err.value.loc is not None and err.value.loc.line == 1


def test_a_sequence_passed_to_the_output_through_identity_is_a_located_error():
    """A pass-through op (Identity) hands the sequence to the graph output unchanged: a
    refusal, never an empty tensor."""
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0), helper.make_node("Identity", ["s"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                              [helper.make_value_info("y", helper.make_sequence_type_proto(
                                  helper.make_tensor_type_proto(F, None)))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    with pytest.raises(UserError, match=r"a graph output is a sequence") as err:
        fsir.compile(model, frontend="onnx")
    assert err.value.loc is not None
