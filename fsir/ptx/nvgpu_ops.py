"""PTX of the tensor-core and async-copy ops (MLIR's NVGPU family, apart from the core gpu ops).

    gpu.mma_sync          mma.sync.aligned.m16n8k{16,8}.row.col.f32.<t>.<t>.f32
    gpu.ldmatrix          ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16
    gpu.cp_async          cp.async.{cg,ca}.shared.global (16-byte copies bypass L1)
    gpu.cp_async_commit_group / wait_group, gpu.round_tf32 (cvt.rna.tf32.f32)
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from fsir.dialects import gpu
from fsir.ptx.kernel import KernelEmitter, Lowering, rule, unsupported


def _shared_address(e: KernelEmitter, mem: SSAValue, indices: Sequence[SSAValue], op: Operation) -> str:
    buf, addr = e.address(mem, indices, op)
    if buf.space != "shared":
        raise unsupported(op, f"needs a shared-memory buffer, got {buf.space} memory")
    return addr


def _mma_sync(e: KernelEmitter, op: gpu.MmaSyncOp) -> None:
    """`mma.sync.aligned.m16n8k{16,8}.row.col.f32.<t>.<t>.f32 {d}, {a}, {b}, {c}`."""
    t = op.operand_type.data.value
    d = ", ".join(e.define(r) for r in op.d)
    a, b, c = (", ".join(e.reg(v) for v in vals) for vals in (op.a, op.b, op.c))
    e.ins(f"mma.sync.aligned.m16n8k{op.k}.row.col.f32.{t}.{t}.f32 {{{d}}}, {{{a}}}, {{{b}}}, {{{c}}}")


def _ldmatrix(e: KernelEmitter, op: gpu.LdMatrixOp) -> None:
    addr = _shared_address(e, op.memref, op.indices, op)
    dsts = ", ".join(e.define(r) for r in op.values)
    trans = ".trans" if op.trans is not None else ""
    e.ins(f"ldmatrix.sync.aligned.m8n8.x{len(op.values)}{trans}.shared.b16 {{{dsts}}}, {addr}")


def _cp_async(e: KernelEmitter, op: gpu.CpAsyncOp) -> None:
    """16-byte copies bypass L1 (`.cg`, the only form PTX allows at that size of the
    two); smaller ones are `.ca`."""
    dst = _shared_address(e, op.dst, op.dst_indices, op)
    sbuf, src = e.address(op.src, op.src_indices, op)
    if sbuf.space != "global":
        raise unsupported(op, f"copies from global memory, got {sbuf.space} memory")
    n = op.bytes.value.data
    size = "" if op.src_bytes is None else f", {e.operand(op.src_bytes)}"
    e.ins(f"cp.async.{'cg' if n == 16 else 'ca'}.shared.global {dst}, {src}, {n}{size}")


def _round_tf32(e: KernelEmitter, op: gpu.RoundTf32Op) -> None:
    e.ins(f"cvt.rna.tf32.f32 {e.define(op.result)}, {e.reg(op.value)}")


NVGPU_LOWERINGS: dict[type[Operation], Lowering] = dict([
    rule(gpu.MmaSyncOp, _mma_sync),
    rule(gpu.LdMatrixOp, _ldmatrix),
    rule(gpu.CpAsyncOp, _cp_async),
    rule(gpu.CpAsyncCommitGroupOp, lambda e, op: e.ins("cp.async.commit_group")),
    rule(gpu.CpAsyncWaitGroupOp, lambda e, op: e.ins(f"cp.async.wait_group {op.pending.value.data}")),
    rule(gpu.RoundTf32Op, _round_tf32),
])
