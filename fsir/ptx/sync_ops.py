"""PTX of tile synchronisation (cuSync): the tile counter, semaphore waits and posts.

    gpu.next_tile %counter     thread 0: atom.global.add.u32, st.shared; bar.sync; ld.shared
                               (in a shared word of its own, or the first word of the
                               kernel's first shared array, then a second bar.sync)
    gpu.sem_wait %s[%i], %v    thread 0 spins on ld.acquire.gpu.global.u32 until >= v; bar.sync
    gpu.sem_post %s[%i], %v    bar.sync; thread 0: fence.acq_rel.gpu, red.release.gpu.global.add.u32

The acquire load and the release reduction order the producer's tile stores before the
consumer's loads at GPU scope (the PTX memory model's release/acquire pattern); the
barriers extend it to every thread of the two blocks.
"""

from __future__ import annotations

from xdsl.ir import Operation

from fsir.dialects import gpu
from fsir.ptx import types as T
from fsir.ptx.kernel import KernelEmitter, Lowering, linear_tid, rule, unsupported


def _thread0(e: KernelEmitter) -> str:
    p = e.new(T.PRED)
    e.ins(f"setp.eq.u32 {p}, {linear_tid(e)}, 0")
    return p


def _semaphore(e: KernelEmitter, op: gpu.SemWaitOp | gpu.SemPostOp) -> str:
    buf, addr = e.address(op.sems, [op.index], op)
    if buf.space != "global":
        raise unsupported(op, f"semaphores live in global memory, got {buf.space} memory")
    return addr


def _next_tile(e: KernelEmitter, op: gpu.NextTileOp) -> None:
    buf = e.buffers.get(op.counter)
    if buf is None or buf.space != "global":
        raise unsupported(op, "the tile counter must be a kernel argument in global memory")
    addr = f"[{buf.base}]"
    first = _thread0(e)
    sym = _borrowed_word(e, op)
    if sym is None:
        sym = f"{e.name}_tile{len(e.decls)}"
        e.decls.append(f"\t.shared .align 4 .b32 {sym}[1];")
    slot, taken, tile = e.new(T.B64), e.new(T.B32), e.new(T.B32)
    e.ins(f"mov.u64 {slot}, {sym}")
    e.ins(f"@{first} atom.global.add.u32 {taken}, {addr}, 1")
    e.ins(f"@{first} st.shared.u32 [{slot}], {taken}")
    e.ins("bar.sync 0")
    e.ins(f"ld.shared.u32 {tile}, [{slot}]")
    if sym in e.shared_arrays:
        e.ins("bar.sync 0")  # every thread has the ticket before the array is written
    e.ins(f"cvt.u64.u32 {e.define(op.result)}, {tile}")


def _borrowed_word(e: KernelEmitter, op: gpu.NextTileOp) -> str | None:
    """A shared array of the kernel whose first word can pass the ticket on, or None.

    A kernel whose tiles fill the 48 KB of static shared memory ptxas allows has no room
    for a word of its own. Its arrays hold nothing yet when the ticket is taken at the
    top of the kernel before any shared access, so the first one can carry it (a second
    barrier then keeps the array's first writes after every thread's read)."""
    if not e.shared_arrays or op.parent_block() is not e.func.body.blocks[0]:
        return None
    if any(".shared" in line for line in e.lines):
        return None
    return next(iter(e.shared_arrays))


def _sem_wait(e: KernelEmitter, op: gpu.SemWaitOp) -> None:
    addr = _semaphore(e, op)
    first = _thread0(e)
    value = e.operand(op.value)
    spin, done = e.new_label(), e.new_label()
    seen, waiting = e.new(T.B32), e.new(T.PRED)
    e.ins(f"@!{first} bra {done}")
    e.place(spin)
    e.ins(f"ld.acquire.gpu.global.u32 {seen}, {addr}")
    e.ins(f"setp.lt.u32 {waiting}, {seen}, {value}")
    e.ins(f"@{waiting} bra {spin}")
    e.place(done)
    e.ins("bar.sync 0")


def _sem_post(e: KernelEmitter, op: gpu.SemPostOp) -> None:
    addr = _semaphore(e, op)
    first = _thread0(e)
    e.ins("bar.sync 0")
    e.ins(f"@{first} fence.acq_rel.gpu")
    e.ins(f"@{first} red.release.gpu.global.add.u32 {addr}, {e.operand(op.value)}")


SYNC_LOWERINGS: dict[type[Operation], Lowering] = dict([
    rule(gpu.NextTileOp, _next_tile),
    rule(gpu.SemWaitOp, _sem_wait),
    rule(gpu.SemPostOp, _sem_post),
])
