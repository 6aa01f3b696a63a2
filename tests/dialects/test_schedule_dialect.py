"""The schedule dialect's Python API: typed mapping parameters, the builders' dict and
string forms, and the kernel's accessors (the IR syntax is tested in lit_tests/schedule)."""

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


def kernel(mapping, params, block=(256, 1, 1)) -> KernelOp:
    t = TensorType(f32, [4, 8])
    body = Block(arg_types=[t])
    group_body = Block()
    group_body.add_op(YieldOp([body.args[0]]))
    g = GroupOp("thread", "global", [t], Region(group_body))
    body.add_ops([g, YieldOp([g.results[0]])])
    x = Block(arg_types=[t]).args[0]
    return KernelOp("k", mapping, params, (1, 1, 1), block, [x], [t], Region(body))


def test_dict_params_become_typed_attributes():
    k = kernel("row", {"threads_per_row": 32, "rows_per_block": 8, "interleaved": 1, "elements_per_thread": 4})
    k.verify()
    assert isinstance(k.params, RowParamsAttr)
    assert k.mapping.data == Mapping.ROW and k.mapping.data == "row"
    p = k.params
    assert (p.threads_per_row, p.rows_per_block, p.elements_per_thread, p.row_steps, p.vector_width,
            p.interleaved, p.threads) == (32, 8, 4, 1, 1, True, 256)
    assert str(p) == "#schedule.row<threads_per_row = 32, rows_per_block = 8, elements_per_thread = 4, interleaved>"


def test_migration_accessors_keep_the_dictionary_view():
    k = kernel("gemm", {"tile_m": 64, "tile_n": 32, "tile_k": 8, "thread_m": 4, "thread_n": 2})
    assert k.param("tile_n") == 32 and k.param("thread_m") == 4
    assert "thread_n" in k.params.data
    row = kernel("row", {"threads_per_row": 256, "rows_per_block": 1})
    assert "elements_per_thread" not in row.params.data and "row_steps" not in row.params.data
    with pytest.raises(KeyError):
        row.param("elements_per_thread")


@pytest.mark.parametrize("attr", [
    LoopParamsAttr(), LoopParamsAttr(4),
    RowParamsAttr(1, 256), RowParamsAttr(32, 8, 8, row_steps=2, vector_width=4), RowParamsAttr(8, 32, interleaved=True),
    GemmParamsAttr(64, 64, 16, 4, 4), GemmParamsAttr(16, 16, 16),
])
def test_as_dict_and_from_dict_invert_each_other(attr: MappingParamsAttr):
    assert type(attr).from_dict(attr.as_dict()) == attr


def test_loop_builders_may_give_elements_per_thread_as_the_vector():
    assert LoopParamsAttr.from_dict({"elements_per_thread": 2, "vector_width": 2}) == LoopParamsAttr(2)
    assert LoopParamsAttr.from_dict({"elements_per_thread": 1}) == LoopParamsAttr()
    with pytest.raises(VerifyException, match="elements_per_thread 4 must be its vector_width 2"):
        LoopParamsAttr.from_dict({"elements_per_thread": 4, "vector_width": 2})


def test_typed_builders_and_their_checks():
    k = kernel(Mapping.GEMM, GemmParamsAttr(16, 16, 8, 2, 2), block=(64, 1, 1))
    k.verify()
    assert (k.params.tile_m, k.params.thread_n) == (16, 2)  # type: ignore[attr-defined]
    with pytest.raises(VerifyException, match="row parameters given for a loop kernel"):
        kernel("loop", RowParamsAttr(256, 1))
    with pytest.raises(VerifyException, match="unknown row parameters \\['steps'\\]"):
        kernel("row", {"threads_per_row": 256, "rows_per_block": 1, "steps": 2})
    with pytest.raises(VerifyException, match="the micro-tile 3x2 must divide the block tile 16x16"):
        GemmParamsAttr(16, 16, 8, 3, 2)
    with pytest.raises(VerifyException, match="needs block \\[64, 1, 1\\], got \\[256, 1, 1\\]"):
        kernel("gemm", GemmParamsAttr(16, 16, 8, 2, 2)).verify()
    with pytest.raises(ValueError):
        kernel("tiles", {})


def test_group_enums():
    k = kernel("loop", {})
    (g,) = k.groups()
    assert g.composition.data == Composition.THREAD and g.storage.data == Storage.GLOBAL
    assert g.storage.data == "global"


def test_op_classes_are_an_enum():
    assert graph.OpClass.REDUCTION == "reduction"
    assert {t.kind for t in (graph.LightElementwise(), graph.ExpensiveElementwise(), graph.Reduction(),
                             graph.Gather(), graph.ComputeIntensive())} == set(graph.OpClass)
