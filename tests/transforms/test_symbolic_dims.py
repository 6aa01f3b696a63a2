"""Symbolic dims end to end: an ONNX model whose inputs share the dim_param `B` imports
with `#graph.dims` on its arguments, compiles once and runs every batch size on the
simulator; batches that disagree fail on the host with both sizes and the location;
the union-find merges what the ops require and nothing else."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType

import fsir
from fsir.dialects import gpu
from fsir.dialects.graph import DimsAttr
from fsir.errors import UserError
from fsir.parse import parse_module
from fsir.transforms.symbolic_dims import Mono, SymbolicShapes, UnionFind

RNG = np.random.default_rng(0)
TABLES = [RNG.standard_normal((1000, 16)).astype(np.float32), RNG.standard_normal((50, 8)).astype(np.float32)]
BAGS = [4, 3]


def columns_model() -> bytes:
    """Two embedding columns (gather, bag sum) of batch B, concatenated."""
    nodes = []
    for c in range(2):
        nodes += [helper.make_node("Gather", [f"t{c}", f"ids{c}"], [f"e{c}"]),
                  helper.make_node("ReduceSum", [f"e{c}", "axes"], [f"s{c}"], keepdims=0)]
    nodes.append(helper.make_node("Concat", ["s0", "s1"], ["y"], axis=1))
    g = helper.make_graph(
        nodes, "columns",
        [helper.make_tensor_value_info(f"ids{c}", TensorProto.INT64, ["B", BAGS[c]]) for c in range(2)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 24])],
        initializer=[numpy_helper.from_array(TABLES[0], "t0"), numpy_helper.from_array(TABLES[1], "t1"),
                     numpy_helper.from_array(np.array([1], np.int64), "axes")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


@pytest.fixture(scope="module")
def exe():
    return fsir.compile(columns_model())


def test_dim_params_name_the_arguments(exe):
    f = next(op for op in exe.source.walk() if isinstance(op, func.FuncOp))
    assert f.arg_attrs is not None
    assert [a.data["graph.dims"] for a in f.arg_attrs.data] == [DimsAttr(["B", 4]), DimsAttr(["B", 3])]


def test_one_module_runs_every_batch(exe):
    launches = set()
    for batch in (1, 7, 37, 128):
        ids = [RNG.integers(0, t.shape[0], (batch, n)) for t, n in zip(TABLES, BAGS)]
        (y,) = exe.run({"ids0": ids[0], "ids1": ids[1]}, device="sim")
        want = np.concatenate([t[i].sum(1) for t, i in zip(TABLES, ids)], axis=1)
        assert y.shape == (batch, 24)
        np.testing.assert_allclose(y, want, rtol=2e-5, atol=2e-5)
        assert exe.last_stats is not None
        launches.add(exe.last_stats.launches)
    assert len(launches) == 1  # the same kernels, launched with the batch as a parameter


def test_disagreeing_batches_fail_on_the_host(exe):
    ids0, ids1 = RNG.integers(0, 50, (5, 4)), RNG.integers(0, 50, (6, 3))
    with pytest.raises(UserError) as err:
        exe.run([ids0, ids1], device="sim")
    assert "differ at run time: 5 vs 6" in err.value.message
    assert err.value.loc is not None  # the ONNX node that needs them equal


def test_union_find_is_iterative_and_compresses():
    uf = UnionFind()
    for i in range(100_000):  # a chain far deeper than Python's recursion limit
        uf.union(i, i + 1)
    assert uf.find(100_000) == uf.find(0)
    assert uf.parent[100_000] == uf.find(0)


def test_classes_and_products():
    module = parse_module("""
func.func @f(%a: tensor<?x4xf32> {graph.dims = #graph.dims<[B, 4]>}, %b: tensor<?x4xf32>, %c: tensor<?x4xf32>,
             %flat: tensor<?xf32>) -> (tensor<?x4xf32>, tensor<?xf32>) {
  %s = graph.add %a, %b : tensor<?x4xf32>
  %r = graph.reshape %s : (tensor<?x4xf32>) -> tensor<?xf32>
  %t = graph.add %r, %flat : tensor<?xf32>
  func.return %c, %t : tensor<?x4xf32>, tensor<?xf32>
}""")
    f = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    shapes = SymbolicShapes(f)
    a, b, c, flat = f.args
    assert shapes.of(a) == shapes.of(b) == [Mono(1, ("B",)), Mono(4)]
    assert shapes.of(c) == [Mono(1, ("c_d0",)), Mono(4)]  # nothing ties c to B
    assert shapes.of(flat) == [Mono(4, ("B",))]
    assert shapes.same(a, 0, b, 0) and not shapes.same(a, 0, c, 0)


def independent_columns_model() -> bytes:
    """Two embedding columns of batch B with outputs of their own: no op relates their
    batches, only the dim_param names them one size."""
    nodes = []
    for c in range(2):
        nodes += [helper.make_node("Gather", [f"t{c}", f"ids{c}"], [f"e{c}"]),
                  helper.make_node("ReduceSum", [f"e{c}", "axes"], [f"y{c}"], keepdims=0)]
    g = helper.make_graph(
        nodes, "independent",
        [helper.make_tensor_value_info(f"ids{c}", TensorProto.INT64, ["B", BAGS[c]]) for c in range(2)],
        [helper.make_tensor_value_info(f"y{c}", TensorProto.FLOAT, ["B", TABLES[c].shape[1]]) for c in range(2)],
        initializer=[numpy_helper.from_array(TABLES[0], "t0"), numpy_helper.from_array(TABLES[1], "t1"),
                     numpy_helper.from_array(np.array([1], np.int64), "axes")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def test_declared_batches_are_one_size_across_kernels():
    """Columns no op relates still share B: their kernels take one batch argument, every
    batch runs, and batches that disagree fail on the host naming the symbol and sizes."""
    exe = fsir.compile(independent_columns_model())
    launches = [op for op in exe.module.walk() if isinstance(op, gpu.LaunchFuncOp)]
    assert len(launches) == 2  # two kernels, one per column
    sizes = {a for op in launches for a in op.kernelOperands if isinstance(a.type, IndexType)}
    assert len(sizes) == 1  # both take the one host value of B
    for batch in (1, 7, 37, 128):
        ids = [RNG.integers(0, t.shape[0], (batch, n)) for t, n in zip(TABLES, BAGS)]
        ys = exe.run({"ids0": ids[0], "ids1": ids[1]}, device="sim")
        for y, t, i in zip(ys, TABLES, ids):
            np.testing.assert_allclose(y, t[i].sum(1), rtol=2e-5, atol=2e-5)
    with pytest.raises(UserError) as err:
        exe.run([RNG.integers(0, 50, (5, 4)), RNG.integers(0, 50, (6, 3))], device="sim")
    assert "are both 'B' but differ at run time: 5 vs 6" in err.value.message
