"""Embedding columns (RECom) end to end: a mixed model of 20 columns — hashed or not,
weighted or not, sum / mean / max, bags of 1 to 50, dims 4 to 64 — compiles into one
`columns` kernel for all columns (plus the MLP's), runs on the simulator as the
reference says, with static and `?` batches, and its PTX assembles."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.analysis.columns import column_sets, structure_key
from fsir.dialects.graph import DYN
from fsir.dialects.schedule import KernelOp
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.testing.paths import example_module
from fsir.testing.pipeline import check, input_types

_generate = example_module("recom/generate.py")
ColumnSpec, model_spec, to_mlir = _generate.ColumnSpec, _generate.model_spec, _generate.to_mlir

# every kind of column at least once (the seeded draw below adds 15 more)
MIXED = [ColumnSpec(97, 16, 50, "sum", True, False), ColumnSpec(10, 4, 1, "max", False, True),
         ColumnSpec(300, 64, 7, "mean", True, True), ColumnSpec(23, 8, 33, "max", True, False),
         ColumnSpec(51, 32, 2, "mean", False, False)] + model_spec(15, seed=5, max_rows=500)


def _inputs(text: str, batch: int, seed: int = 0, spec: list[ColumnSpec] = MIXED) -> tuple[list, list]:
    """Random inputs: ids from -5 to three times their table's rows (hashing and the
    gather's clamp both matter), floats standard normal."""
    module = parse_module(text, "<test>")
    f = next(iter(module.ops))
    rng = np.random.default_rng(seed)
    shapes, values = [], []
    for arg, t in zip(f.body.block.args, input_types(module)):
        shape = tuple(batch if d == DYN else d for d in t.get_shape())
        if arg.name_hint and arg.name_hint.startswith("ids"):
            rows = spec[int(arg.name_hint[3:])].rows
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
    """Table rows, hash moduli and bag lengths are per-column data; dims, kinds and the
    ops are structure (a bag as long as the batch or the dim is still the bag)."""
    same = [ColumnSpec(10, 16, 4, "sum", True, False), ColumnSpec(9000, 16, 4, "sum", True, False),
            ColumnSpec(10, 16, 5, "sum", True, False), ColumnSpec(10, 16, 16, "sum", True, False)]
    other = [ColumnSpec(10, 8, 4, "sum", True, False), ColumnSpec(10, 16, 4, "max", True, False),
             ColumnSpec(10, 16, 4, "sum", False, False), ColumnSpec(10, 16, 4, "sum", True, True),
             ColumnSpec(10, 16, 4, "mean", True, False), ColumnSpec(10, 16, 7, "mean", True, False)]
    module = parse_module(to_mlir(same + other, 8), "<test>")
    f = next(iter(module.ops))
    (s,) = column_sets(f.body.block.ops)
    assert s.count == 10 and s.columns[0] is None  # the dense features are copied
    keys = [c.key for c in s.columns if c is not None]
    assert keys[0] == keys[1] == keys[2] and keys[8] == keys[9]
    assert keys[3] != keys[0]  # a bag of the dim's size: the dim is abstracted too (another cluster)
    assert len(set(keys)) == 7 and len(s.clusters) == 7
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
    it): one table parameter and the batch; the table holds every buffer's address, the
    columns that share a body read theirs at their row (an offset), the others' are
    loaded in their own branch; it assembles and matches the reference on the simulator."""
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
    values, entries = param_table.table_layout(f)
    assert sorted(entries) == list(range(buffers))  # every buffer once (no column shares one)
    types = list(f.function_type.inputs.data)
    assert types[0] == gpu.MemRefType(gpu.i64, [len(values) + buffers]) and all(
        not isinstance(t, gpu.MemRefType) for t in types[1:])
    loads = [op for op in f.walk() if isinstance(op, gpu.TableBufferOp)]
    static = [op for op in loads if op.offset is None]
    rows = [op for op in loads if op.offset is not None]
    # the shared bodies' rows of buffers come first in the table, read at a row; then
    # every other buffer, read once
    shared = buffers - len(static)
    assert rows and 0 < shared < buffers
    assert sorted(op.index.value.data - len(values) for op in static) == list(range(shared, buffers))
    assert all(0 <= op.index.value.data - len(values) < shared for op in rows)
    # a column's addresses are loaded inside the comparison tree, not by every thread
    assert sum(op.parent_block() is f.body.blocks[0] for op in loads) < buffers // 2
    launches = [op for op in lowered.walk() if isinstance(op, gpu.LaunchFuncOp)
                and op.kernel.nested_references.data[-1].data == f.sym_name.data]
    assert len(launches) == 1 and isinstance(launches[0].kernelOperands[0].owner, gpu.AddressTableOp)


def _shared_spec(copies: int) -> list[ColumnSpec]:
    """`copies` columns of each of three structures, interleaved in the concat, each with
    its own table size (so its own hash modulus and clamp bound)."""
    rows = [97, 10, 300, 41, 23, 51, 7, 12, 64, 5]
    return [ColumnSpec(rows[(3 * j + k) % len(rows)] + j, dim, bag, kind, hashed, weighted)
            for j in range(copies)
            for k, (dim, bag, kind, hashed, weighted) in enumerate(
                [(16, 5, "sum", True, False), (8, 3, "mean", False, True), (4, 2, "max", True, True)])]


def _columns_func(lowered):
    from fsir.dialects import gpu

    (f,) = [op for op in lowered.walk() if isinstance(op, gpu.FuncOp) and op.sym_name.data.endswith("_k0")]
    return f


@pytest.mark.parametrize("batch", [8, 1, 37])
def test_one_code_body_per_cluster(batch):
    """12 columns of 3 structures: 3 code bodies (one bag loop each), each column's
    buffers read at its row of the address table, its table size, hash modulus and
    concat offset from the row's words; the result is the reference's."""
    from xdsl.dialects import scf

    from fsir.dialects import gpu
    from fsir.lowering import param_table

    spec = _shared_spec(4)
    text = to_mlir(spec, 8 if batch == 8 else "?", features=True)
    _, inputs = _inputs(text, batch, seed=batch, spec=spec)
    lowered = check(text, inputs=inputs, fusion="stitch", ptxas=batch == 1)
    f = _columns_func(lowered)
    assert param_table.is_tabled(f)
    assert sum(isinstance(op, scf.ForOp) for op in f.walk()) == 3
    rows = [op for op in f.walk() if isinstance(op, gpu.TableBufferOp) and op.offset is not None]
    assert len(rows) == 2 + 3 + 3  # ids and table; table, ids and weights, twice (a row each, of 4 columns)
    values, entries = param_table.table_layout(f)
    # words per column: (hashed sum) its rows, which are its modulus too, and offset;
    # (weighted mean) rows, scale, offset; (hashed weighted max) rows (= modulus), offset
    assert len(values) == 4 * (2 + 3 + 2)
    offsets = [values[1 + 2 * j] for j in range(4)]  # the sum columns' concat offsets
    assert offsets == [13 + 28 * j for j in range(4)]  # after the 13 dense features, 16 + 8 + 4 a round


def test_ptx_does_not_grow_with_the_columns_of_a_cluster():
    """The PTX of a columns kernel is one body per cluster: 10 times the columns of the
    same 3 structures give the same code (a longer table)."""
    from fsir.pipeline import PipelineOptions, emit_ptx

    def ptx_lines(copies: int) -> int:
        lowered = lower(parse_module(to_mlir(_shared_spec(copies), 8), "<test>"), PipelineOptions(fusion="stitch"))
        text = emit_ptx(lowered)
        start = text.index(".entry recom_k0")
        return text[start:text.index("\n}", start)].count("\n")

    small, large = ptx_lines(4), ptx_lines(40)
    assert abs(large - small) <= 4, (small, large)


def test_shared_bodies_vectorised():
    """Columns of a shared body taking 4 embedding elements: vector loads through the
    row's table buffer."""
    from fsir.dialects import gpu

    spec = _shared_spec(3)
    text = to_mlir(spec, 5, features=True)
    _, inputs = _inputs(text, 5, seed=4, spec=spec)
    lowered = check(text, inputs=inputs, fusion="stitch", vector=4)
    f = _columns_func(lowered)
    loads = [op for op in f.walk() if op.name == "gpu.load_vector"]
    assert any(isinstance(op.operands[0].owner, gpu.TableBufferOp) and op.operands[0].owner.offset is not None
               for op in loads)


@pytest.mark.parametrize("batch", [8, 37])
def test_bags_of_any_length_share_a_body(batch):
    """The bag's length is per-column data: sums of bags 1 to 50 and weighted means of
    bags 2 to 17 are 2 code bodies, each column's loop running to its own bag (a word
    of its row, as are its table's rows and its mean's scale)."""
    from xdsl.dialects import scf

    spec = [ColumnSpec(40 + bag, 16, bag, "sum", True, False) for bag in (1, 5, 33, 50)] + \
        [ColumnSpec(9 * bag, 8, bag, "mean", False, True) for bag in (2, 9, 17)]
    text = to_mlir(spec, 8 if batch == 8 else "?", features=True)
    _, inputs = _inputs(text, batch, seed=batch, spec=spec)
    lowered = check(text, inputs=inputs, fusion="stitch", ptxas=batch == 8)
    assert sum(isinstance(op, scf.ForOp) for op in _columns_func(lowered).walk()) == 2


def test_the_simulator_checks_a_short_table():
    """A table shorter than the kernel reads (the host left out its last 3 words) is an
    out-of-bounds load of the address table the simulator names, not a wrong result."""
    from fsir.dialects import gpu
    from fsir.errors import SimulatorError
    from fsir.runtime.executor import execute

    spec = _shared_spec(2)
    text = to_mlir(spec, 4, features=True)
    _, inputs = _inputs(text, 4, spec=spec)
    lowered = lower(parse_module(text, "<test>"), PipelineOptions(fusion="stitch"))
    (table,) = [op for op in lowered.walk() if isinstance(op, gpu.AddressTableOp) and op.value_list()]
    short = gpu.AddressTableOp(list(table.buffers), table.value_list()[:-3], table.table.type)
    table.table.replace_all_uses_with(short.table)
    assert table.parent is not None
    table.parent.insert_op_before(short, table)
    table.detach()
    table.erase()
    with pytest.raises(SimulatorError, match=r"past the end of argument 0 \(\S+, address table\)"):
        execute(lowered, inputs)


def test_table_addresses_leave_the_bag_loops(monkeypatch):
    """A lone column's addresses, read from the address table, are loaded before its
    bag loop: the same result as loading them per bag element, in fewer instructions
    (two loads and two conversions a bag element and thread, at least)."""
    from xdsl.dialects import scf

    from fsir.dialects import gpu
    from fsir.lowering import param_table
    from fsir.runtime.executor import execute
    from fsir.runtime.reference import run

    # a shared body (two sums) gives the kernel its table; the long max bag is alone
    spec = [ColumnSpec(100, 8, 3, "sum", False, False), ColumnSpec(50, 8, 3, "sum", False, False),
            ColumnSpec(30, 8, 40, "max", True, False)]
    text = to_mlir(spec, 8, features=True)
    _, inputs = _inputs(text, 8, spec=spec)

    def run_with(loops):
        monkeypatch.setattr(param_table, "LOOPS", loops)
        lowered = lower(parse_module(text, "<test>"), PipelineOptions(fusion="stitch"))
        f = _columns_func(lowered)
        in_loops = [op for op in f.walk() if isinstance(op, gpu.TableBufferOp)
                    and any(isinstance(p, scf.ForOp) for p in _ancestors(op))]
        got, stats = execute(lowered, inputs)
        return in_loops, got, stats

    hoisted, got, stats = run_with(param_table.LOOPS)
    inside, got_inside, stats_inside = run_with(())
    assert not hoisted and len(inside) >= 2
    want = run(parse_module(text, "<test>"), inputs)
    for g, w, h in zip(got, want, got_inside):
        np.testing.assert_allclose(g, w, rtol=3e-5, atol=3e-5)
        np.testing.assert_array_equal(g, h)
    # the max column's threads: 8 rows x 8 elements, at most 40 bag elements each
    assert stats_inside.instructions - stats.instructions >= 8 * 8 * 2 * 2, \
        (stats_inside.instructions, stats.instructions)


def _ancestors(op):
    p = op.parent_op()
    while p is not None:
        yield p
        p = p.parent_op()


@pytest.mark.parametrize("batch", [8, 37])
def test_a_weighted_bag_of_one_has_its_own_body(batch):
    """A weight broadcast over the embedding stretches a bag of 1 (its code reads the
    weight at index 0), so weighted columns with a bag of 1 do not share the body of
    those with longer bags: code from a bag-1 column read every bag element's weight
    at index 0. Unweighted bags of 1 still share."""
    spec = [ColumnSpec(30 + bag, 8, bag, "mean", False, True) for bag in (1, 3, 24, 1)] + \
        [ColumnSpec(20 + bag, 8, bag, "sum", False, False) for bag in (1, 5)]
    text = to_mlir(spec, 8 if batch == 8 else "?", features=True)
    f = next(iter(parse_module(text, "<test>").ops))
    (s,) = column_sets(f.body.block.ops)
    keys = [c.key for c in s.columns if c is not None]
    assert keys[0] == keys[3] != keys[1] == keys[2] and keys[4] == keys[5]
    _, inputs = _inputs(text, batch, seed=batch, spec=spec)
    check(text, inputs=inputs, fusion="stitch", ptxas=False)
