"""fsir's gpu dialect: MLIR syntax round-trips, builders, and the PTX printer gives the
same PTX after a print/parse round trip (so every op the printer supports round-trips)."""

from __future__ import annotations

import io

import pytest
from xdsl.dialects import arith, builtin, func
from xdsl.dialects.builtin import DYNAMIC_INDEX, FunctionType, IndexType, MemRefType, SymbolRefAttr, f32, i32
from xdsl.ir import Block, Region
from xdsl.printer import Printer
from xdsl.utils.arg_spec import parse_spec

from fsir.dialects import gpu
from fsir.testing.paths import LIT_TESTS
from fsir.testing.ptx import PTX_LIT, parse, ptx_of

INPUTS = sorted(p for p in PTX_LIT.glob("*.mlir") if p.name != "errors.mlir") + sorted(
    p for p in (LIT_TESTS / "gpu").glob("*.mlir") if "invalid" not in p.name
)


def printed(op) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue()


@pytest.mark.parametrize("path", INPUTS, ids=[p.name for p in INPUTS])
def test_roundtrip_is_stable_and_keeps_ptx(path):
    text = path.read_text()
    once = printed(parse(text))
    twice = printed(parse(once))
    assert once == twice
    assert ptx_of(text) == ptx_of(once)


def test_builders():
    smem = MemRefType(f32, [256], memory_space=builtin.IntegerAttr(3, builtin.i64))
    kernel = gpu.FuncOp("k", ([MemRefType(f32, [DYNAMIC_INDEX]), IndexType()], []), kernel=True, workgroup=[smem],
                        known_block_size=[256, 1, 1])  # fmt: skip
    block = kernel.body.block
    tid = gpu.ThreadIdOp("x")
    c1 = arith.ConstantOp.from_int_and_width(1, i32)
    c32 = arith.ConstantOp.from_int_and_width(32, i32)
    v = arith.ConstantOp(builtin.FloatAttr(1.0, f32))
    shfl = gpu.ShuffleOp("down", v, c1, c32)
    block.add_ops([tid, c1, c32, v, shfl, gpu.BarrierOp(), gpu.ReturnOp()])
    module_body = Region(Block([kernel]))
    gmod = gpu.ModuleOp("kernels", module_body)
    host = func.FuncOp("host", FunctionType.from_lists([MemRefType(f32, [DYNAMIC_INDEX]), IndexType()], []))
    hb = host.body.block
    one = arith.ConstantOp.from_int_and_width(1, IndexType())
    launch = gpu.LaunchFuncOp(
        SymbolRefAttr("kernels", ["k"]), [one, one, one], [one, one, one], list(hb.args)
    )
    hb.add_ops([one, launch, func.ReturnOp()])
    top = builtin.ModuleOp([gmod, host])
    top.attributes["gpu.container_module"] = builtin.UnitAttr()
    top.verify()
    text = printed(top)
    assert "workgroup(%2 : memref<256xf32, 3 : i64>) kernel attributes" in text
    assert "gpu.shuffle down" in text and "gpu.launch_func @kernels::@k blocks in" in text
    assert kernel.workgroup_buffers == (block.args[2],)
    assert ".visible .entry k(" in ptx_of(text)


def test_plain_xdsl_gpu_is_untouched():
    from xdsl.dialects import gpu as xgpu

    assert xgpu.GPU is not gpu.GPU
    assert gpu.GPU.name == xgpu.GPU.name == "gpu"
    names = {op.name for op in gpu.GPU.operations}
    assert {"gpu.shuffle", "gpu.dynamic_shared_memory", "gpu.launch", "gpu.alloc"} <= names


def test_registered_as_overriding_dialect():
    from fsir.registry import OVERRIDING_DIALECTS, TARGETS

    assert OVERRIDING_DIALECTS["gpu"]() is gpu.GPU
    target = TARGETS["ptx"]()
    assert target.name == "ptx" and target().arch == "sm_80"
    assert target.from_spec(parse_spec("ptx{arch=sm_90}")).arch == "sm_90"
