"""Ragged embedding columns (a gather, a `graph.segment_reduce` over per-example offsets)
in the `columns` kernel beside fixed-length bags: one kernel for all columns, shared
code bodies for ragged columns of one structure (their offsets and row counts from the
table row), the simulator against the reference for B = 1, 7, 37, 128 with empty bags
and offsets outside the data."""

from __future__ import annotations

import numpy as np
import pytest

import fsir
from fsir.analysis.columns import column_sets
from fsir.dialects.graph import DYN
from fsir.parse import parse_module
from fsir.runtime.reference import run
from fsir.testing.paths import example_module
from fsir.testing.pipeline import check, input_types

_generate = example_module("recom/generate.py")
ColumnSpec, model_spec, to_mlir = _generate.ColumnSpec, _generate.model_spec, _generate.to_mlir

# every ragged kind, hashed and weighted, two ragged columns of one structure with
# different tables and bags (one shared body), beside fixed-length bags
MIXED = [ColumnSpec(97, 16, 5, "sum", True, False, True), ColumnSpec(40, 16, 9, "sum", True, False, True),
         ColumnSpec(10, 4, 1, "max", False, True, True), ColumnSpec(300, 64, 7, "mean", True, True, True),
         ColumnSpec(23, 8, 3, "max", True, False), ColumnSpec(51, 32, 2, "mean", False, False)] \
    + model_spec(6, seed=5, max_rows=200, ragged=0.5)


def _inputs(text: str, batch: int, spec: list[ColumnSpec], seed: int = 0) -> list[np.ndarray]:
    """Inputs for `batch` examples: a ragged column's bags of 0 to 2 x its mean length
    (every fourth empty, the last offset past its ids: clamped), its ids over -5 to
    three times its table's rows; fixed bags' ids likewise; floats standard normal."""
    module = parse_module(text, "<test>")
    f = next(iter(module.ops))
    rng = np.random.default_rng(seed)
    values: list[np.ndarray] = []
    lengths: dict[int, int] = {}
    for arg, t in zip(f.body.block.args, input_types(module)):
        name = arg.name_hint or ""
        shape = [batch if d == DYN else d for d in t.get_shape()]
        if name.startswith("ids") and spec[int(name[3:])].ragged:
            i = int(name[3:])
            c = spec[i]
            bags = rng.integers(0, 2 * c.bag + 1, batch)
            bags[::4] = 0
            lengths[i] = n = int(bags.sum()) if DYN in t.get_shape() else shape[0]
            offsets = np.concatenate([[0], np.cumsum(bags)[:-1]])
            offsets[-1] = max(offsets[-1], n + 3) if batch > 1 else offsets[-1]
            values.append(rng.integers(-5, 3 * c.rows, n).astype(np.int32))
            values.append(offsets.astype(np.int32))  # (`off{i}` follows `ids{i}`)
        elif name.startswith("off"):
            continue
        elif name.startswith("ids"):
            values.append(rng.integers(-5, 3 * spec[int(name[3:])].rows, shape).astype(np.int32))
        elif name.startswith("w") and spec[int(name[1:])].ragged:
            values.append(rng.standard_normal(lengths[int(name[1:])]).astype(np.float32))
        else:
            values.append(rng.standard_normal(shape).astype(np.float32))
    return values


def test_ragged_columns_join_the_columns_kernel():
    text = to_mlir(MIXED, 8, features=True)
    f = next(iter(parse_module(text, "<test>").ops))
    (s,) = column_sets(f.body.block.ops)
    ragged = [c for c in s.columns if c is not None and c.ragged]
    assert s.count == len(MIXED) and len(ragged) == sum(c.ragged for c in MIXED) >= 4
    assert ragged[0].key == ragged[1].key  # tables and bags are per-column data
    exe = fsir.compile(text)
    assert [k.mapping for k in exe.kernels] == ["columns", "gemm", "gemm"]


@pytest.mark.parametrize("batch", [8, 3])
def test_static_batch_on_simulator(batch):
    text = to_mlir(MIXED, batch, features=True)
    check(text, inputs=_inputs(text, batch, MIXED, seed=batch), fusion="stitch", ptxas=batch == 8)


def test_one_module_runs_every_batch():
    """A `?` batch (and `?` ragged id counts): compiled once, run for B = 1, 7, 37 (two
    grid-y tiles) and 128, against the reference."""
    text = to_mlir(MIXED, "?", features=True)
    module = parse_module(text, "<test>")
    exe = fsir.compile(text)
    assert [k.mapping for k in exe.kernels][0] == "columns"
    for batch in (1, 7, 37, 128):
        inputs = _inputs(text, batch, MIXED, seed=batch)
        got = exe.run(inputs, device="sim")
        want = run(module, inputs)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=3e-5, atol=3e-5)


def _ragged_spec(copies: int) -> list[ColumnSpec]:
    """Hashed weighted ragged sums of one structure: tables and mean bags differ."""
    return [ColumnSpec(20 + 7 * j, 16, 1 + j % 5, "sum", True, True, True) for j in range(copies)]


def test_ragged_columns_of_one_structure_share_a_body():
    """One bag loop for all of them; each column's offsets, ids, weights and table come
    from its row of the address table, its rows' count and table size from its words."""
    from xdsl.dialects import scf

    from fsir.dialects import gpu
    from fsir.lowering import param_table

    spec = _ragged_spec(5)
    text = to_mlir(spec, 8, features=True)
    lowered = check(text, inputs=_inputs(text, 8, spec, seed=2), fusion="stitch")
    (f,) = [op for op in lowered.walk() if isinstance(op, gpu.FuncOp) and op.sym_name.data.endswith("_k0")]
    assert param_table.is_tabled(f)
    assert sum(isinstance(op, scf.ForOp) for op in f.walk()) == 1
    rows = [op for op in f.walk() if isinstance(op, gpu.TableBufferOp) and op.offset is not None]
    assert len(rows) == 4  # ids, offsets, table, weights
    values, _ = param_table.table_layout(f)
    # a row per column: its bags' rows (once, though the ids, the weights and the gather
    # hold them), its table's rows (its hash modulus too), its offset in the concat
    width = len(values) // 5
    assert width == 3
    rows = [values[width * j:width * (j + 1)] for j in range(5)]
    assert [r[0] for r in rows] == [8 * c.bag for c in spec]
    assert [r[-2] for r in rows] == [c.rows for c in spec]
    assert [r[-1] for r in rows] == [13 + 16 * j for j in range(5)]


def test_ptx_does_not_grow_with_the_ragged_columns_of_a_cluster():
    from fsir.pipeline import PipelineOptions, emit_ptx, lower

    def ptx_lines(copies: int) -> int:
        lowered = lower(parse_module(to_mlir(_ragged_spec(copies), 8), "<test>"), PipelineOptions(fusion="stitch"))
        text = emit_ptx(lowered)
        start = text.index(".entry recom_k0")
        return text[start:text.index("\n}", start)].count("\n")

    small, large = ptx_lines(5), ptx_lines(40)  # (the same longest bag: one schedule)
    assert abs(large - small) <= 4, (small, large)


@pytest.mark.parametrize("batch", [1, 7, 37])
def test_ragged_columns_of_a_dynamic_batch_share_a_body(batch):
    """With a `?` batch every ragged column's rows are a size of its own, known at run
    time: the columns still share one body, the host writes each column's rows into
    its table row (`gpu.table_sizes`) and the kernel takes none of them as arguments."""
    from xdsl.dialects import scf
    from xdsl.dialects.builtin import IndexType

    from fsir.dialects import gpu
    from fsir.lowering import param_table

    spec = _ragged_spec(5)
    text = to_mlir(spec, "?", features=True)
    lowered = check(text, inputs=_inputs(text, batch, spec, seed=batch), fusion="stitch", ptxas=batch == 7)
    (f,) = [op for op in lowered.walk() if isinstance(op, gpu.FuncOp) and op.sym_name.data.endswith("_k0")]
    assert sum(isinstance(op, scf.ForOp) for op in f.walk()) == 1
    values, _ = param_table.table_layout(f)
    sizes = param_table.table_sizes(f)
    width = len(values) // 5
    assert sorted(sizes) == [width * j for j in range(5)]  # each row's first word: its rows
    assert sum(t == IndexType() for t in f.function_type.inputs.data) == 1  # the batch
    (table,) = [op for op in lowered.walk() if isinstance(op, gpu.AddressTableOp) and op.sizes]
    assert len(table.sizes) == 5


def test_a_tabled_size_is_loaded_where_the_kernel_used_it():
    """A size argument the host writes into the table leaves the signature; the kernel
    code that read it (here a loop bound) loads its word, outside the loop."""
    from xdsl.dialects import memref, scf

    from fsir.dialects import gpu
    from fsir.lowering import param_table

    m = parse_module("""
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: memref<?xf32>, %n: index, %b: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %n step %c1 {
        %v = memref.load %x[%i] : memref<?xf32>
        memref.store %v, %x[%b] : memref<?xf32>
      }
      gpu.return
    }
  }
}""", "<test>")
    f = next(op for op in m.walk() if isinstance(op, gpu.FuncOp))
    param_table.add_table(f, [7, f.body.blocks[0].args[1]], [])
    assert param_table.table_arguments(f)
    assert [str(t) for t in f.function_type.inputs.data] == ["memref<3xi64>", "index"]  # the table, %b
    assert param_table.table_sizes(f) == {1: 1}
    (loop,) = [op for op in f.walk() if isinstance(op, scf.ForOp)]
    bound = loop.ub.owner.operands[0].owner
    assert isinstance(bound, memref.LoadOp) and bound.parent_block() is f.body.blocks[0]
    assert bound.indices[0].owner.value.value.data == 1
