"""Issue 27: symbolic batch dims through the ONNX importer's shape computations.

Shape arithmetic on run-time sizes (Add, Sub, Mul, Div, Mod of Shape entries) folds in
the `SymbolicDims` algebra and feeds Reshape targets, which then run at every size;
a Range of a run-time limit is a `graph.iota` sized by the value the limit measures;
a size used as data is computed at run time; what fsir cannot do with a run-time size
(a Range of run-time start) is a located `UserError`, never an internal error (the reported `TypeError:
unsupported operand type(s) for /: 'Sym' and 'int'` from Range).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import fsir


def _model(nodes, outputs, inits=(), x_shape=("B", 4)) -> bytes:
    scalars = {"zero": 0, "one": 1, "two": 2, "four": 4}
    init = [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in scalars.items()]
    init += [numpy_helper.from_array(np.array([0], np.int64), "axis0"), *inits]
    head = [helper.make_node("Shape", ["x"], ["shape"]), helper.make_node("Gather", ["shape", "zero"], ["b"], axis=0)]
    graph = helper.make_graph(head + nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info(n, t, None) for n, t in outputs], init)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.parametrize("start, limit, delta, expected", [
    ("zero", "b", "one", lambda b: np.arange(b)),  # arange(B): graph.iota like x
    ("zero", "b2", "two", lambda b: np.arange(0, 2 * b, 2)),  # length (2*B)/2 = B, scaled
])
def test_range_of_a_symbolic_size_runs_at_every_size(start, limit, delta, expected):
    nodes = [helper.make_node("Mul", ["b", "two"], ["b2"]), helper.make_node("Range", [start, limit, delta], ["r"])]
    exe = fsir.compile(_model(nodes, [("r", TensorProto.INT64)]))
    for b in (1, 5, 9):
        (r,) = exe.run([np.zeros((b, 4), np.float32)], device="sim")
        assert r.dtype == np.int64 and np.array_equal(r, expected(b))


@pytest.mark.parametrize("inputs, shown", [
    (["b", "four", "one"], "start = B"),  # a run-time start
    (["zero", "b", "two"], "limit = B"),  # length B/2: no value's dim
    (["one", "b", "one"], "limit = B"),  # length B - 1: no value's dim
])
def test_range_fsir_cannot_size_is_a_located_error(inputs, shown):
    model = _model([helper.make_node("Range", inputs, ["r"])], [("r", TensorProto.INT64)])
    with pytest.raises(fsir.UserError) as err:
        fsir.compile(model)
    assert str(err.value.loc) == "<bytes>:3:1"  # the Range node
    assert f"run-time bound ({shown}" in err.value.message


def test_a_symbolic_size_as_data_is_computed_at_run_time():
    """Cast(B) and (B * 4) % 3 as outputs: the sizes computed on the device, per run."""
    nodes = [helper.make_node("Cast", ["b"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["b", "four"], ["b4"]), helper.make_node("Mod", ["b4", "three"], ["m"])]
    three = numpy_helper.from_array(np.array(3, np.int64), "three")
    exe = fsir.compile(_model(nodes, [("f", TensorProto.FLOAT), ("m", TensorProto.INT64)], [three]))
    for b in (1, 5):
        f, m = exe.run([np.zeros((b, 4), np.float32)], device="sim")
        assert f.dtype == np.float32 and float(f) == b
        assert m.dtype == np.int64 and int(m) == (4 * b) % 3


def test_constant_of_a_symbolic_quotient_names_it():
    nodes = [helper.make_node("Div", ["b", "two"], ["half"]), helper.make_node("Unsqueeze", ["half", "axis0"], ["u"]),
             helper.make_node("ConstantOfShape", ["u"], ["c"])]
    with pytest.raises(fsir.UserError) as err:
        fsir.compile(_model(nodes, [("c", TensorProto.FLOAT)]))
    assert "(B / 2)" in err.value.message and str(err.value.loc) == "<bytes>:5:1"


# (op, its constant operand, the op and constant that undo it): shape arithmetic as
# exporters write it (B * 4 / 4, B / 2 * 2, B + 0)
ARITHMETIC = {"Mul": ("four", "Div", "four"), "Div": ("two", "Mul", "two"), "Add": ("zero", "Sub", "zero"),
              "Sub": ("zero", "Add", "zero")}


def reshape_model(steps: list[str], trailing: int = 4) -> bytes:
    """x[B, 4] reshaped to [f(B), trailing] where f applies `steps` to B, then undoes
    them in reverse order (so f(B) = B * 4 / trailing for even B)."""
    nodes, value = [], "b"
    chain = [(op, ARITHMETIC[op][0]) for op in steps] + [ARITHMETIC[op][1:] for op in reversed(steps)]
    if trailing == 8:
        chain.append(("Div", "two"))
    for i, (op, constant) in enumerate(chain):
        nodes.append(helper.make_node(op, [value, constant], [f"s{i}"]))
        value = f"s{i}"
    width = numpy_helper.from_array(np.array([trailing], np.int64), "width")
    nodes += [helper.make_node("Unsqueeze", [value, "axis0"], ["lead"]),
              helper.make_node("Concat", ["lead", "width"], ["target"], axis=0),
              helper.make_node("Reshape", ["x", "target"], ["y"])]
    return _model(nodes, [("y", TensorProto.FLOAT)], [width])


@settings(max_examples=8, deadline=None)
@given(st.lists(st.sampled_from(sorted(ARITHMETIC)), min_size=1, max_size=3), st.sampled_from([4, 8]))
def test_reshape_by_symbolic_shape_arithmetic_runs_at_every_size(steps, trailing):
    exe = fsir.compile(reshape_model(steps, trailing))
    for b in (2, 6, 12):
        x = np.arange(b * 4, dtype=np.float32).reshape(b, 4)
        (y,) = exe.run([x], device="sim")
        assert y.shape == (b * 4 // trailing, trailing)
        assert np.array_equal(y.reshape(-1), x.reshape(-1))


def test_a_reshape_with_two_run_time_sizes_is_a_located_error():
    minus_one = numpy_helper.from_array(np.array([-1], np.int64), "minus_one")
    nodes = [helper.make_node("Div", ["b", "two"], ["half"]), helper.make_node("Unsqueeze", ["half", "axis0"], ["u"]),
             helper.make_node("Concat", ["u", "minus_one"], ["t"], axis=0), helper.make_node("Reshape", ["x", "t"], ["y"])]
    with pytest.raises(fsir.UserError) as err:
        fsir.compile(_model(nodes, [("y", TensorProto.FLOAT)], [minus_one]))
    assert str(err.value.loc) == "<bytes>:6:1" and "[(B / 2), -1]" in err.value.message
