"""Embedding columns (RECom) end to end: a mixed model of 20 columns — hashed or not,
weighted or not, sum / mean / max, bags of 1 to 50, dims 4 to 64 — compiles into one
`columns` kernel for all columns (plus the MLP's), runs on the simulator as the
reference says, with static and `?` batches, and its PTX assembles."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from fsir.dialects.graph import DYN
from fsir.dialects.schedule import KernelOp
from fsir.fusion.columns import column_sets, structure_key
from fsir.ir import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.testing.paths import EXAMPLES
from fsir.testing.pipeline import check, input_types

sys.path.insert(0, str(EXAMPLES / "recom"))
from generate import ColumnSpec, model_spec, to_mlir  # noqa: E402

# every kind of column at least once (the seeded draw below adds 15 more)
MIXED = [ColumnSpec(97, 16, 50, "sum", True, False), ColumnSpec(10, 4, 1, "max", False, True),
         ColumnSpec(300, 64, 7, "mean", True, True), ColumnSpec(23, 8, 33, "max", True, False),
         ColumnSpec(51, 32, 2, "mean", False, False)] + model_spec(15, seed=5, max_rows=500)


def _inputs(text: str, batch: int, seed: int = 0) -> tuple[list, list]:
    """Random inputs: ids from -5 to three times their table's rows (hashing and the
    gather's clamp both matter), floats standard normal."""
    module = parse_module(text, "<test>")
    f = next(iter(module.ops))
    rng = np.random.default_rng(seed)
    shapes, values = [], []
    for arg, t in zip(f.body.block.args, input_types(module)):
        shape = tuple(batch if d == DYN else d for d in t.get_shape())
        if arg.name_hint and arg.name_hint.startswith("ids"):
            rows = MIXED[int(arg.name_hint[3:])].rows
            values.append(rng.integers(-5, 3 * rows, shape).astype(np.int32))
        else:
            values.append(rng.standard_normal(shape).astype(np.float32))
        shapes.append(shape)
    return shapes, values


def _kernels(lowered) -> list[KernelOp]:
    return [op for op in lowered.walk() if isinstance(op, KernelOp)]


def _mappings(text: str) -> list[str]:
    module = lower(parse_module(text, "<test>"), PipelineOptions(fusion="stitch"), until="stitch-codegen")
    return [k.params.MAPPING.value for k in _kernels(module)]


def test_mixed_columns_are_one_kernel():
    kinds = {(c.kind, c.hashed, c.weighted) for c in MIXED}
    assert {k for k, _, _ in kinds} == {"sum", "mean", "max"} and any(h for _, h, _ in kinds) \
        and any(w for _, _, w in kinds)
    mappings = _mappings(to_mlir(MIXED, 8))
    assert mappings.count("columns") == 1
    assert mappings == ["columns", "gemm", "gemm"]  # the columns, the two dots (bias + sigmoid an epilogue)


@pytest.mark.parametrize("batch", [8, 3])
def test_mixed_columns_on_simulator_static(batch):
    text = to_mlir(MIXED, batch, features=True)
    _, inputs = _inputs(text, batch)
    check(text, inputs=inputs, fusion="stitch")


@pytest.mark.parametrize("vector", [2, 4])
def test_mixed_columns_on_simulator_vectorised(vector):
    """Threads taking 2 or 4 embedding elements (vector loads of the table rows)."""
    text = to_mlir(MIXED, 5, features=True)
    _, inputs = _inputs(text, 5, seed=vector)
    lowered = check(text, inputs=inputs, fusion="stitch", vector=vector)
    assert any(op.name == "gpu.load_vector" for op in lowered.walk())


@pytest.mark.parametrize("batch", [1, 37])
def test_mixed_columns_on_simulator_dynamic_batch(batch):
    """One `?` batch for every column; 37 rows are two tiles of grid y."""
    text = to_mlir(MIXED, "?", features=True)
    assert _mappings(text).count("columns") == 1
    _, inputs = _inputs(text, batch, seed=batch)
    check(text, inputs=inputs, fusion="stitch", ptxas=batch == 1)


def test_explorer_makes_one_fusion_of_many_columns():
    """300 columns, 900 ops: far past max-ops, still one fusion (no chunking)."""
    from fsir.fusion.explorer import ExplorerOptions, explore

    spec = model_spec(300, seed=1, max_rows=100)
    module = parse_module(to_mlir(spec, 4), "<test>")
    f = next(iter(module.ops))
    ex = explore(f.body.block, ExplorerOptions(evaluator="simple"))
    fused = ex.plan.fused
    concat = next(i for i, op in enumerate(ex.graph.ops) if op.name == "graph.concat")
    (columns,) = [p for p in fused if concat in p.members]
    # gather + reduce, a rem when hashed, broadcast + mul when weighted, a mul for a mean; the concat
    ops = sum(2 + c.hashed + 2 * c.weighted + (c.kind == "mean") for c in spec) + 1
    assert len(columns) == ops > 3 * 300


def test_columns_cluster_by_structure():
    """Table rows and hash moduli are per-column data; dims, bags, kinds and the ops are
    structure."""
    same = [ColumnSpec(10, 16, 4, "sum", True, False), ColumnSpec(9000, 16, 4, "sum", True, False)]
    other = [ColumnSpec(10, 8, 4, "sum", True, False), ColumnSpec(10, 16, 5, "sum", True, False),
             ColumnSpec(10, 16, 4, "max", True, False), ColumnSpec(10, 16, 4, "sum", False, False),
             ColumnSpec(10, 16, 4, "sum", True, True)]
    module = parse_module(to_mlir(same + other, 8), "<test>")
    f = next(iter(module.ops))
    (s,) = column_sets(f.body.block.ops)
    assert s.count == 7 and s.columns[0] is None  # the dense features are copied
    keys = [c.key for c in s.columns if c is not None]
    assert keys[0] == keys[1]
    assert len(set(keys)) == 6 and len(s.clusters) == 6
    second = s.columns[2]
    assert second is not None and structure_key(second.ops, second.output) == keys[0]


def test_dense_operand_producers_are_inlined_into_the_copy():
    """A concat operand that is not a column but an elementwise function of another
    kernel's result (a dense branch's ReLU after its dot) is computed in the copy."""
    text = """
func.func @f(%x: tensor<5x6xf32>, %w: tensor<6x3xf32>, %ids0: tensor<5x4xi32>, %t0: tensor<20x8xf32>,
             %ids1: tensor<5x9xi32>, %t1: tensor<7x4xf32>) -> tensor<5x15xf32> {
  %d = graph.dot %x, %w : (tensor<5x6xf32>, tensor<6x3xf32>) -> tensor<5x3xf32>
  %z = graph.constant dense<0.0> : tensor<5x3xf32>
  %r = graph.max %d, %z : tensor<5x3xf32>
  %e0 = graph.gather %t0, %ids0 : (tensor<20x8xf32>, tensor<5x4xi32>) -> tensor<5x4x8xf32>
  %s0 = graph.reduce sum %e0 dims [1] : (tensor<5x4x8xf32>) -> tensor<5x8xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<7x4xf32>, tensor<5x9xi32>) -> tensor<5x9x4xf32>
  %s1 = graph.reduce max %e1 dims [1] : (tensor<5x9x4xf32>) -> tensor<5x4xf32>
  %c = graph.concat %r, %s0, %s1 dim 1 : (tensor<5x3xf32>, tensor<5x8xf32>, tensor<5x4xf32>) -> tensor<5x15xf32>
  func.return %c : tensor<5x15xf32>
}
"""
    assert _mappings(text) == ["gemm", "columns"]
    check(text, kinds=["normal", "normal", "ids", "normal", "ids", "normal"], fusion="stitch")


def test_a_permuted_reduction_is_not_a_column():
    """A column keeps one reduced value per (row, element) thread: a transpose after the
    reduction reads another thread's, so that slice is no column (and the concat of
    one column is left to the explorer's search)."""
    text = """
func.func @t(%ids0: tensor<4x3xi32>, %t0: tensor<10x4xf32>, %ids1: tensor<4x2xi32>,
         %t1: tensor<10x4xf32>) -> tensor<4x8xf32> {
  %e0 = graph.gather %t0, %ids0 : (tensor<10x4xf32>, tensor<4x3xi32>) -> tensor<4x3x4xf32>
  %r0 = graph.reduce sum %e0 dims [1] : (tensor<4x3x4xf32>) -> tensor<4x4xf32>
  %p0 = graph.transpose %r0 perm [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<10x4xf32>, tensor<4x2xi32>) -> tensor<4x2x4xf32>
  %r1 = graph.reduce sum %e1 dims [1] : (tensor<4x2x4xf32>) -> tensor<4x4xf32>
  %c = graph.concat %p0, %r1 dim 1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}
"""
    assert "columns" not in _mappings(text)
    check(text, kinds=["ids", "normal", "ids", "normal"], fusion="stitch")


@pytest.mark.parametrize("batch", [3, 37])
def test_columns_through_an_address_table(monkeypatch, batch):
    """A columns kernel whose buffers would overflow the parameter space takes them
    through an address table in global memory (the budget lowered so 20 columns pass
    it): one table parameter and the batch, each column's addresses loaded in its own
    branch; it assembles and matches the reference on the simulator."""
    from fsir.dialects import gpu
    from fsir.lowering import param_table

    monkeypatch.setattr(param_table, "PARAM_BUDGET", 64)
    text = to_mlir(MIXED, "?", features=True)
    _, inputs = _inputs(text, batch, seed=batch)
    lowered = check(text, inputs=inputs, fusion="stitch", ptxas=batch == 3)
    funcs = [op for op in lowered.walk() if isinstance(op, gpu.FuncOp)]
    tabled = [f for f in funcs if param_table.is_tabled(f)]
    assert len(tabled) == 1
    (f,) = tabled
    buffers = 2 * len(MIXED) + sum(c.weighted for c in MIXED) + 2  # tables, ids, weights; features; output
    types = list(f.function_type.inputs.data)
    assert types[0] == gpu.MemRefType(gpu.i64, [buffers]) and all(not isinstance(t, gpu.MemRefType)
                                                                   for t in types[1:])
    loads = [op for op in f.walk() if isinstance(op, gpu.TableBufferOp)]
    assert sorted(op.index.value.data for op in loads) == list(range(buffers))
    # a column's addresses are loaded inside the comparison tree, not by every thread
    assert sum(op.parent_block() is f.body.blocks[0] for op in loads) < buffers // 2
    launches = [op for op in lowered.walk() if isinstance(op, gpu.LaunchFuncOp)
                and op.kernel.nested_references.data[-1].data == f.sym_name.data]
    assert len(launches) == 1 and isinstance(launches[0].kernelOperands[0].owner, gpu.AddressTableOp)
