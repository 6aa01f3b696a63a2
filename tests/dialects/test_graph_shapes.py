"""The graph ops' shape rules (`reify_dims`, `DotOp.problem`) and index rules
(`operand_indices`, emit's `ELEMENT_RULES`, locality's symbolic algebra): on random
graphs the runtime sizes they compute, as `index` code or on ints, are the reference
interpreter's shapes, the static rule agrees with them, and the index rules read the
elements the reference reads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, SSAValue

from fsir.codegen import locality
from fsir.dialects import graph
from fsir.dialects.graph import DYN, STATIC, shape_of, static_dims
from fsir.errors import UserError
from fsir.lowering import emit
from fsir.lowering.scalar import Cursor, IndexBuilder
from fsir.lowering.shapes import ShapeCalc
from fsir.parse import parse_module
from fsir.runtime.reference import check_inputs, evaluate_op, find_function
from fsir.testing.random_graphs import graphs, random_inputs

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def evaluate_function(module: ModuleOp, seed: int):
    """The function, its inputs and every value's reference array."""
    f = find_function(module)
    block = f.body.block
    env: dict[SSAValue, np.ndarray] = dict(zip(block.args, check_inputs(f, random_inputs(f, seed))))
    for op in block.ops:
        if isinstance(op, graph.GraphOp):
            for r, x in zip(op.results, evaluate_op(op, [env[o] for o in op.operands])):
                env[r] = x
    return f, env


def run_index_code(block: Block, values: dict[SSAValue, int]) -> dict[SSAValue, int]:
    """Evaluate the `index` arithmetic IndexBuilder left in `block`."""
    binary = {arith.AddiOp: lambda a, b: a + b, arith.SubiOp: lambda a, b: a - b,
              arith.MuliOp: lambda a, b: a * b, arith.DivUIOp: lambda a, b: a // b,
              arith.RemUIOp: lambda a, b: a % b, arith.MaxSIOp: max, arith.MinSIOp: min}
    env = dict(values)
    for op in block.ops:
        if isinstance(op, arith.ConstantOp):
            assert isinstance(op.value, IntegerAttr)
            env[op.result] = op.value.value.data
        elif type(op) in binary:
            env[op.results[0]] = binary[type(op)](env[op.operands[0]], env[op.operands[1]])
        elif isinstance(op, arith.CmpiOp):
            a, b = env[op.lhs], env[op.rhs]
            env[op.result] = {0: a == b, 2: a < b}[op.predicate.value.data]
        elif isinstance(op, arith.SelectOp):
            env[op.result] = env[op.lhs] if env[op.cond] else env[op.rhs]
        else:
            raise AssertionError(f"unexpected {op.name} in index code")
    return env


def value_of(x, env) -> int:
    return x if isinstance(x, int) else env[x]


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------


@PROPERTY
@given(graphs(dynamic=0.5), st.integers(0, 2**16))
def test_runtime_dims_as_index_code_are_the_reference_shapes(text, seed):
    """Every `?` dim of an argument is an `index` value (as in a kernel); ShapeCalc asks
    each op for its result's dims; evaluated, they are the reference's shapes."""
    f, env = evaluate_function(parse_module(text), seed)
    block = Block()
    known, sizes = {}, {}
    for a in f.body.block.args:
        dims = []
        for s, n in zip(shape_of(a.type), env[a].shape):
            if s == DYN:
                v = block.insert_arg(IndexType(), len(block.args))
                sizes[v] = n
                dims.append(v)
            else:
                dims.append(s)
        known[a] = dims
    shapes = ShapeCalc(IndexBuilder(Cursor(block)), known)
    for op in f.body.block.ops:
        if not isinstance(op, graph.GraphOp):
            continue
        try:
            dims = shapes.dims(op.results[0])
        except UserError as err:  # a `?` no operand determines; the type keeps it
            assert "is not determined by its operands" in str(err)
            continue
        values = run_index_code(block, sizes)
        assert [value_of(d, values) for d in dims] == list(env[op.results[0]].shape), op.name


@PROPERTY
@given(graphs(dynamic=0.5), st.integers(0, 2**16))
def test_reify_on_ints_is_the_reference_shape_and_static_rule_agrees(text, seed):
    """`reify_dims` on runtime sizes (ints: IndexBuilder folds them, emitting nothing)
    gives the reference's shape wherever it determines a dim; `StaticDims` on the types
    gives the inferred type, which the runtime shape fits."""
    f, env = evaluate_function(parse_module(text), seed)
    block = Block()
    ib = IndexBuilder(Cursor(block))
    for op in f.body.block.ops:
        if not isinstance(op, graph.GraphOp):
            continue
        result = op.results[0]
        runtime = op.reify_dims(lambda v: list(env[v].shape), ib)
        for d, (got, want, declared) in enumerate(zip(runtime, env[result].shape, shape_of(result.type))):
            assert got == want or (got == DYN and declared != DYN), (op.name, d)
        static = op.reify_dims(static_dims, STATIC)
        inferred = shape_of(op.infer_type())
        assert graph.shapes_compatible(static, inferred) and graph.shapes_compatible(env[result].shape, inferred)
        if not isinstance(op, graph.BroadcastOp):  # (a size-1 operand dim keeps a `?` in the type)
            assert tuple(static) == inferred, op.name
    assert not list(block.ops)


@PROPERTY
@given(graphs(dynamic=0.0), st.integers(0, 2**16))
def test_static_graphs_reify_to_their_types(text, seed):
    """With static types the runtime rule (on ints) and the static rule are the type."""
    f = find_function(parse_module(text))
    ib = IndexBuilder(Cursor(Block()))
    for op in f.body.block.ops:
        if isinstance(op, graph.GraphOp):
            want = list(shape_of(op.infer_type()))
            assert op.reify_dims(static_dims, ib) == want == op.reify_dims(static_dims, STATIC), op.name


DOT_SHAPES = [((2, 3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
              ((1, 3, 4), (6, 4, 5)), ((6, 1, 3, 4), (2, 4, 5)), ((7, 2, 3), (1, 3, 2))]


@pytest.mark.parametrize("a,b", DOT_SHAPES)
@pytest.mark.parametrize("erase", [(), (0,), (1,), (0, 1)])
def test_dot_problem(a, b, erase):
    """One matmul rule: with some operands' dims `?` the static problem is a coarser
    view of numpy's, and on runtime sizes it is numpy's (batch, m, n, k)."""
    want = np.matmul(np.zeros(a), np.zeros(b)).shape
    sa = tuple(DYN for _ in a) if 0 in erase else a
    sb = tuple(DYN for _ in b) if 1 in erase else b
    assert graph.shapes_compatible(graph.matmul_shape(sa, sb), want)
    p = graph.matmul_problem(a, b, sa, sb, IndexBuilder(Cursor(Block())))
    assert tuple(p.result_dims()) == want
    assert (p.m, p.n, p.k) == (1 if len(a) == 1 else a[-2], 1 if len(b) == 1 else b[-1], a[-1])
    assert p.batch == list(want[: len(want) - (len(a) > 1) - (len(b) > 1)])


def test_dynamic_batch_dim_is_chosen_at_run_time():
    """Two `?` batch dims: the broadcast picks the one that is not 1, in index code."""
    block = Block(arg_types=[IndexType(), IndexType()])
    x, y = block.args
    p = graph.matmul_problem([x, 3, 4], [y, 4, 5], [DYN, 3, 4], [DYN, 4, 5], IndexBuilder(Cursor(block)))
    for sx, sy, want in ((1, 6, 6), (6, 1, 6), (6, 6, 6), (1, 1, 1)):
        env = run_index_code(block, {x: sx, y: sy})
        assert value_of(p.batch[0], env) == want


def test_undetermined_dim_keeps_its_located_error():
    """A broadcast `?` no operand dim maps to is rejected where its size is needed."""
    module = parse_module("func.func @f(%m: tensor<6xf32>) -> tensor<6x?xf32> {\n"
                          "  %b = graph.broadcast %m dims [0] : (tensor<6xf32>) -> tensor<6x?xf32>\n"
                          "  func.return %b : tensor<6x?xf32>\n}\n", "b.mlir")
    f = find_function(module)
    op = next(iter(f.body.block.ops))
    shapes = ShapeCalc(IndexBuilder(Cursor(Block())), {f.body.block.args[0]: [6]})
    with pytest.raises(UserError, match=r"'graph.broadcast' op: a '\?' result dim is not determined") as err:
        shapes.dims(op.results[0])
    assert err.value.loc is not None and err.value.loc.line == 2


# ---------------------------------------------------------------------------
# Index propagation
# ---------------------------------------------------------------------------


def concrete_reads(op: graph.GraphOp, idx: list[int], dims_of, ib) -> list[tuple[SSAValue, list[int]]]:
    """The operand elements that reading `op`'s result at `idx` reads (concat: the one
    operand whose piece holds idx)."""
    indices = op.operand_indices(idx, dims_of, ib)
    assert indices is not None
    if isinstance(op, graph.ConcatOp):
        d = op.dim.value.data  # type: ignore[attr-defined]
        offsets = op.offsets(dims_of, ib)
        i = max(j for j in range(len(offsets)) if offsets[j] <= idx[d] and dims_of(op.operands[j])[d] > 0)
        return [(op.operands[i], indices[i])]
    return list(zip(op.operands, indices))


INDEX_ONLY = (graph.BroadcastOp, graph.ReshapeOp, graph.TransposeOp, graph.SliceOp, graph.ConcatOp)


@PROPERTY
@given(graphs(dynamic=0.3), st.integers(0, 2**16))
def test_index_rules_read_the_reference_elements(text, seed):
    """An index-only op's element at idx is its operand's element at the rule's index;
    every other rule reads indices inside its operands. The symbolic rule (locality)
    agrees: a coordinate it names is the concrete index, ZERO is 0."""
    f, env = evaluate_function(parse_module(text), seed)
    rng = np.random.default_rng(seed)
    ib = IndexBuilder(Cursor(Block()))

    def dims_of(v):
        return list(env[v].shape)

    for op in f.body.block.ops:
        if not isinstance(op, graph.GraphOp) or env[op.results[0]].size == 0:
            continue
        out = env[op.results[0]]
        for _ in range(4):
            idx = [int(rng.integers(0, n)) for n in out.shape]
            if isinstance(op, graph.GatherOp):
                row = int(np.clip(env[op.ids][tuple(op.ids_index(idx))], 0, env[op.table].shape[0] - 1))
                np.testing.assert_array_equal(out[tuple(idx)], env[op.table][tuple(op.table_index(row, idx))])
            indices = op.operand_indices(idx, dims_of, ib)
            if indices is None:
                continue
            reads = concrete_reads(op, idx, dims_of, ib)
            for operand, oidx in reads:
                assert all(0 <= i < n for i, n in zip(oidx, env[operand].shape)), op.name
            if isinstance(op, INDEX_ONLY):
                ((operand, oidx),) = reads
                got, want = np.asarray(out[tuple(idx)]), np.asarray(env[operand][tuple(oidx)])
                if got.dtype.kind == "V":  # bf16 (ml_dtypes): numpy's testing sees its NaNs as unequal
                    got, want = got.astype(np.float32), want.astype(np.float32)
                np.testing.assert_array_equal(got, want)
            syms = locality.operand_syms(op, tuple(range(len(idx))))
            for oidx, osyms in zip(indices, syms):
                for i, s in zip(oidx, osyms):
                    assert s is None or (s == locality.ZERO and i == 0) or (isinstance(s, int) and i == idx[s]), op.name


def test_elementwise_ops_take_every_rule_from_their_table_row():
    """Adding a row to ELEMENTWISE is all it takes: shape, index, symbolic and element
    rules come from the ElementwiseOp base, not per op."""
    for cls in graph.ELEMENTWISE_OPS.values():
        assert cls.reify_dims is graph.ElementwiseOp.reify_dims
        assert cls.operand_indices is graph.ElementwiseOp.operand_indices
        assert emit._element_rule(cls) is emit.ELEMENT_RULES[graph.ElementwiseOp]
    spec = graph.Elementwise(1, graph.LightElementwise, graph.FLOAT, lambda x: x * x,
                             lambda b, x: b.arith("mul", x, x))
    cube = graph.make_elementwise("square_test", spec)
    x = Block(arg_types=[graph.tensor(graph.f32, [DYN, 8])]).args[0]
    op = cube.build(operands=[[x]], result_types=[graph.tensor(graph.f32, [DYN, 8])])
    block = Block(arg_types=[IndexType()])
    shapes = ShapeCalc(IndexBuilder(Cursor(block)), {x: [block.args[0], 8]})
    assert shapes.dims(op.results[0]) == [block.args[0], 8]
    assert locality.operand_syms(op, (1, locality.ZERO)) == [(1, locality.ZERO)]
    assert emit._element_rule(cube) is emit.ELEMENT_RULES[graph.ElementwiseOp]
