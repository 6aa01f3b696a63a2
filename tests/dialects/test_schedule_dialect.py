"""The schedule dialect's Python API: typed mapping parameters, the typed builders and
the kernel's accessors (the IR syntax is tested in lit_tests/schedule)."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from fsir.dialects import graph
from fsir.dialects.schedule import (
    Composition,
    GemmParamsAttr,
    GroupOp,
    KernelOp,
    LoopParamsAttr,
    Mapping,
    MappingParamsAttr,
    RowParamsAttr,
    Storage,
    YieldOp,
)


def kernel(params: MappingParamsAttr, block=(256, 1, 1)) -> KernelOp:
    t = TensorType(f32, [4, 8])
    body = Block(arg_types=[t])
    group_body = Block()
    group_body.add_op(YieldOp([body.args[0]]))
    g = GroupOp(Composition.THREAD, Storage.GLOBAL, [t], Region(group_body))
    body.add_ops([g, YieldOp([g.results[0]])])
    x = Block(arg_types=[t]).args[0]
    return KernelOp("k", params, (1, 1, 1), block, [x], [t], Region(body))


def test_params_are_typed_attributes():
    k = kernel(RowParamsAttr(32, 8, elements_per_thread=4, interleaved=True))
    k.verify()
    assert isinstance(k.params, RowParamsAttr)
    assert k.mapping.data == Mapping.ROW and k.mapping.data == "row"
    p = k.params
    assert (p.threads_per_row, p.rows_per_block, p.elements_per_thread, p.row_steps, p.vector_width,
            p.interleaved, p.threads) == (32, 8, 4, 1, 1, True, 256)
    assert str(p) == "#schedule.row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 4, interleaved>"


def test_typed_accessors():
    k = kernel(GemmParamsAttr(64, 32, 8, 4, 2))
    p = k.params
    assert isinstance(p, GemmParamsAttr) and k.mapping.data == Mapping.GEMM
    assert (p.tile_m, p.tile_n, p.tile_k, p.thread_m, p.thread_n, p.threads) == (64, 32, 8, 4, 2, 256)
    assert p.vector_width == 1  # a gemm kernel has no vectors
    row = RowParamsAttr(256, 1)
    assert (row.elements_per_thread, row.row_steps, row.vector_width, row.interleaved) == (None, 1, 1, False)
    assert LoopParamsAttr(4).vector_width == 4 and LoopParamsAttr().vector_width == 1


@pytest.mark.parametrize("attr", [
    LoopParamsAttr(), LoopParamsAttr(4),
    RowParamsAttr(1, 256), RowParamsAttr(32, 8, 8, row_steps=2, vector_width=4), RowParamsAttr(8, 32, interleaved=True),
    GemmParamsAttr(64, 64, 16, 4, 4), GemmParamsAttr(16, 16, 16),
])
def test_entries_and_from_entries_invert_each_other(attr: MappingParamsAttr):
    assert type(attr).from_entries(dict(attr.entries())) == attr


def test_typed_builders_and_their_checks():
    k = kernel(GemmParamsAttr(16, 16, 8, 2, 2), block=(64, 1, 1))
    k.verify()
    assert isinstance(k.params, GemmParamsAttr) and (k.params.tile_m, k.params.thread_n) == (16, 2)
    with pytest.raises(VerifyException, match="the micro-tile 3x2 must divide the block tile 16x16"):
        GemmParamsAttr(16, 16, 8, 3, 2)
    with pytest.raises(VerifyException, match="needs block \\[64, 1, 1\\], got \\[256, 1, 1\\]"):
        kernel(GemmParamsAttr(16, 16, 8, 2, 2)).verify()
    with pytest.raises(VerifyException, match="vector_width must be 1, 2 or 4, got 3"):
        LoopParamsAttr(3)
    with pytest.raises(VerifyException, match="vector_width needs elements_per_thread"):
        RowParamsAttr(32, 8, vector_width=2)


def test_group_enums():
    k = kernel(LoopParamsAttr())
    (g,) = k.groups()
    assert g.composition.data == Composition.THREAD and g.storage.data == Storage.GLOBAL
    assert isinstance(g.storage.data, Storage) and isinstance(g.composition.data, Composition)


def test_op_classes_are_an_enum():
    assert graph.OpClass.REDUCTION == "reduction"
    assert {t.kind for t in (graph.LightElementwise(), graph.ExpensiveElementwise(), graph.Reduction(),
                             graph.Gather(), graph.ComputeIntensive())} == set(graph.OpClass)
