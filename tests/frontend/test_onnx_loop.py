"""ONNX `Loop` with a trip count and condition known at compile time
(`fsir/frontend/onnx_control.py`): the body is unrolled once per iteration, with the
loop-carried values threaded through and the scan outputs stacked; the results match
onnxruntime. A loop above the unroll bound, or one whose condition comes from run-time
data, is a located error."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import fsir
from fsir.errors import UserError
from fsir.frontend.onnx_control import MAX_UNROLL

F = TensorProto.FLOAT


def _const(name: str, dtype: int, value) -> helper.NodeProto:
    arr = np.asarray(value)
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, dtype, list(arr.shape),
                                                                             arr.reshape(-1).tolist()))


def _model(nodes, inputs, outputs) -> bytes:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _carry_and_scan(trip_nodes, cond_in: str, body_cond: list, body_cond_out: str) -> bytes:
    """v = x; for i: v = v * 0.5 + x (x from the enclosing graph); scan s_i = v + i.
    The trip count is `trip_nodes`' output 'm' (or none), the condition `cond_in`."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["v_in", "half"], ["m1"]),
         helper.make_node("Add", ["m1", "x"], ["v_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Add", ["v_out", "fi"], ["s"]), *body_cond],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", F, [2, 3])],
        [helper.make_tensor_value_info(body_cond_out, TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", F, [2, 3]),
         helper.make_tensor_value_info("s", F, [2, 3])],
        [helper.make_tensor("half", F, [], [0.5])])
    loop = helper.make_node("Loop", ["m" if trip_nodes else "", cond_in, "x"], ["v", "scan"], body=body)
    return _model([*trip_nodes, _const("t", TensorProto.BOOL, True), loop],
                  [helper.make_tensor_value_info("x", F, [2, 3])],
                  [helper.make_tensor_value_info("v", F, [2, 3]), helper.make_tensor_value_info("scan", F, None)])


def _check(model: bytes) -> fsir.Executable:
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    exe = fsir.compile(model, frontend="onnx")
    got = exe.run([x], device="sim")
    want = ort.InferenceSession(model).run(None, {"x": x})
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    return exe


def test_constant_trip_count_unrolls_with_carried_and_scan_values():
    exe = _check(_carry_and_scan([_const("m", TensorProto.INT64, 4)], "t", [], "c_in"))
    ops = [op.name for op in exe.source.walk()]
    assert ops.count("graph.mul") == 4  # one body per iteration


def test_shape_derived_trip_count():
    shape_nodes = [helper.make_node("Shape", ["x"], ["sh"]), _const("k", TensorProto.INT64, 1),
                   helper.make_node("Gather", ["sh", "k"], ["m"])]  # m = 3
    exe = _check(_carry_and_scan(shape_nodes, "t", [], "c_in"))
    assert [op.name for op in exe.source.walk()].count("graph.mul") == 3


def test_condition_computed_in_the_body_ends_the_loop():
    """No trip count: the body computes cond = i < 2, so three iterations run."""
    cond = [_const("two", TensorProto.INT64, 2), helper.make_node("Less", ["i", "two"], ["c_out"])]
    exe = _check(_carry_and_scan([], "t", cond, "c_out"))
    assert [op.name for op in exe.source.walk()].count("graph.mul") == 3


def test_a_loop_above_the_bound_is_a_located_error():
    model = _carry_and_scan([_const("m", TensorProto.INT64, MAX_UNROLL + 1)], "t", [], "c_in")
    with pytest.raises(UserError, match=rf"node 'v' \(Loop\) runs {MAX_UNROLL + 1} iterations, more than the {MAX_UNROLL}") as err:
        fsir.compile(model, frontend="onnx")
    assert err.value.loc is not None and err.value.loc.line == 3


def test_a_condition_from_data_is_a_located_error():
    cond = [helper.make_node("ReduceSum", ["v_out"], ["tot"], keepdims=0), _const("z", F, 0.0),
            helper.make_node("Greater", ["tot", "z"], ["c_out"])]
    model = _carry_and_scan([_const("m", TensorProto.INT64, 3)], "t", cond, "c_out")
    with pytest.raises(UserError, match=r"the condition the body computes of node 'v' \(Loop\) must be a constant"):
        fsir.compile(model, frontend="onnx")


def test_a_condition_that_stays_true_stops_at_the_bound():
    cond = [helper.make_node("Identity", ["c_in"], ["c_out"])]
    model = _carry_and_scan([], "t", cond, "c_out")
    with pytest.raises(UserError, match=rf"node 'v' \(Loop\) runs more than {MAX_UNROLL} iterations"):
        fsir.compile(model, frontend="onnx")


@pytest.mark.parametrize("in_axis,in_rev,out_axis,out_rev", [(0, 0, 0, 0), (1, 1, 1, 0), (1, 0, 0, 1)])
def test_scan_unrolls_over_the_scan_axis(in_axis, in_rev, out_axis, out_rev):
    """Running sum over x's slices along `in_axis` (state: the sum), scan output
    sum * slice; directions and axes as the attributes say."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xi"], ["s_out"]), helper.make_node("Mul", ["s_out", "xi"], ["yi"])],
        "body",
        [helper.make_tensor_value_info("s_in", F, [2]), helper.make_tensor_value_info("xi", F, [2])],
        [helper.make_tensor_value_info("s_out", F, [2]), helper.make_tensor_value_info("yi", F, [2])])
    x_shape = [3, 2] if in_axis == 0 else [2, 3]
    scan_node = helper.make_node("Scan", ["s0", "x"], ["v", "scan"], body=body, num_scan_inputs=1,
                                 scan_input_axes=[in_axis], scan_input_directions=[in_rev],
                                 scan_output_axes=[out_axis], scan_output_directions=[out_rev])
    graph = helper.make_graph([_const("s0", F, [1.0, -1.0]), scan_node], "g",
                              [helper.make_tensor_value_info("x", F, x_shape)],
                              [helper.make_tensor_value_info("v", F, [2]),
                               helper.make_tensor_value_info("scan", F, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    x = np.random.default_rng(2).standard_normal(x_shape).astype(np.float32)
    got = fsir.compile(model, frontend="onnx").run([x], device="sim")
    want = ort.InferenceSession(model).run(None, {"x": x})
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
