"""Split-K GEMMs: `split_k = S` blocks compute each output tile, block s reducing the
s-th slice of the k-steps.

A block takes a ticket from one global counter at start (`gpu.next_tile`): tile
`ticket div S`, slice `ticket mod S`. A tile's slices thus take consecutive tickets,
so slice s only ever waits for slices that have already started (they took earlier
tickets and hold their SMs): no deadlock under any dispatch order. Once its k-loop
is done, slice s waits until the tile's semaphore says s slices are done
(`gpu.sem_wait`), adds its accumulators to the tile's running sums (slice 0 adds
nothing) and stores the sums back, then posts (`gpu.sem_post`). The last slice instead
passes the sums through the fused epilogue into the output and resets the tile's
semaphore; the block with the last ticket resets the counter. Slices add in k order
whatever order blocks run in, so results do not depend on dispatch; f32 results differ
from an unsplit kernel's by the summation order only (the partial sums of slices are
added, rather than every product in turn).

Where the running sums live (`in_output`): a kernel with one f32 output keeps them in
the output itself (CUTLASS's "serial" split-K): slices before the last store their
sums at the output elements the epilogue will write, and the next slice reads them
back there, so no workspace is needed; the sums are exactly the f32 values the
workspace would hold, so both forms give bitwise the same result. Other kernels (a
16-bit output, whose elements cannot hold the f32 partial sums) keep them in an f32
workspace of whole tiles.

Host side: the kernel takes its buffers after its dynamic sizes (`buffers`),
`i32[1 + tiles]` (the counter, then one semaphore per tile; zeroed once, as the kernel
leaves them zero) and, unless it reduces in its output, the workspace
`f32[tiles * bm * bn]` (a tile's partial sums, row-major; never needs zeroing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, TensorType, f32, i32
from xdsl.ir import Block, Operation, Region, SSAValue

from fsir.dialects import gpu
from fsir.dialects.schedule import GemmParamsAttr, KernelOp
from fsir.lowering.emit import ElementEmitter
from fsir.lowering.scalar import Index, IndexBuilder, ScalarBuilder

SEMAPHORES = MemRefType(i32, [DYNAMIC_INDEX])
WORKSPACE = MemRefType(f32, [DYNAMIC_INDEX])


def split_of(k: KernelOp) -> int:
    """The kernel's split_k (1: not split)."""
    return k.params.split_k if isinstance(k.params, GemmParamsAttr) else 1


def in_output(k: KernelOp) -> bool:
    """Whether a split kernel keeps its running sums in its output (serial split-K):
    it has one output, of f32 elements (one per product element: the epilogue is
    elementwise, perhaps reshaped)."""
    outs = k.yielded()
    return len(outs) == 1 and isinstance(outs[0].type, TensorType) and outs[0].type.element_type == f32


def buffer_types(k: KernelOp) -> list[MemRefType]:
    """The buffers a split kernel takes after its dynamic sizes: the semaphores, and
    the workspace unless it reduces in its output."""
    if split_of(k) == 1:
        return []
    return [SEMAPHORES] if in_output(k) else [SEMAPHORES, WORKSPACE]


def buffer_sizes(k: KernelOp) -> tuple[int, int]:
    """(semaphore words, workspace floats: 0 when it reduces in its output) of a split
    kernel with a static grid."""
    p = k.params
    assert isinstance(p, GemmParamsAttr)
    (gx, gy, gz), _ = k.launch()
    tiles = gx * gy * (gz // p.split_k)
    return 1 + tiles, 0 if in_output(k) else tiles * p.tile_m * p.tile_n


@dataclass
class Partials:
    """Where a thread's running sums live: per accumulator, its offset in the f32
    `buffer` and whether it exists there (an output element past a ragged edge does
    not; the workspace holds whole tiles)."""

    buffer: SSAValue
    offsets: list[Index]
    exists: list[bool | SSAValue]


@dataclass
class SplitK:
    """A split kernel's slice: built at the start of the kernel, it takes the ticket
    and gives the block's tile ids (`block_id`), the slice's k range (`k_range`) and
    the reduction of the slices (`reduce`)."""

    ib: IndexBuilder
    sb: ScalarBuilder
    sems: SSAValue
    workspace: SSAValue | None  # None: the running sums live in the output (`in_output`)
    split: int
    grid: tuple[int, int, int]  # the tile grid (x, y, batch), without the slices

    def __post_init__(self) -> None:
        ib = self.ib
        self.ticket = ib.c.value(gpu.NextTileOp(self.sems))
        self.ticket.name_hint = "ticket"
        gx, gy, gz = self.grid
        self.tile: Index = ib.div(self.ticket, self.split)
        self.slice: Index = ib.rem(self.ticket, self.split)
        self.ids: dict[str, Index] = {"x": ib.rem(self.tile, gx), "y": ib.rem(ib.div(self.tile, gx), gy),
                                      "z": ib.div(self.tile, gx * gy)}
        self.last: bool | SSAValue = ib.eq(self.slice, self.split - 1)
        self.not_last = _not(self, self.last)
        self.tickets = gx * gy * gz * self.split

    def k_range(self, k_size: Index, bk: int) -> tuple[Index, Index]:
        """The slice's k range: ceil(steps / S) k-steps of bk each (the last slices may
        have fewer, or none, unless S divides the static steps)."""
        ib = self.ib
        per = ib.mul(ib.ceildiv(ib.ceildiv(k_size, bk), self.split), bk)
        lo = ib.mul(self.slice, per)
        return lo, ib.add(lo, per) if self.even(k_size, bk) else ib.min(ib.add(lo, per), k_size)

    def even(self, k_size: Index, bk: int) -> bool:
        """Whether every slice has the same static number of k-steps."""
        return isinstance(k_size, int) and (-(-k_size // bk)) % self.split == 0

    def k_loop(self, emit: ElementEmitter, k_size: Index, bk: int, inits: list[SSAValue],
               k_step: Callable[[SSAValue, list[SSAValue]], list[SSAValue]]) -> list[SSAValue]:
        """The slice's k-loop, `k_step(k0, accs)` per k-step: with even slices from 0 to
        the slice's static extent, offset by its start (a static trip count, which the
        evaluator counts)."""
        ib = self.ib
        lo, hi = self.k_range(k_size, bk)
        if not self.even(k_size, bk):
            return emit.for_loop(lo, hi, bk, inits, k_step)
        assert isinstance(k_size, int)
        extent = -(-k_size // bk) // self.split * bk
        return emit.for_loop(0, extent, bk, inits, lambda k0, accs: k_step(ib.ssa(ib.add(lo, k0)), accs))

    def workspace_partials(self, places: list[tuple[Index, Index]], bm: int, bn: int) -> Partials:
        """The running sums of the thread's tile elements `places` in the workspace
        (row-major whole tiles: no edge guards)."""
        ib = self.ib
        assert self.workspace is not None
        at: list[Index] = [ib.add(ib.mul(self.tile, bm * bn), ib.add(ib.mul(r, bn), col)) for r, col in places]
        return Partials(self.workspace, at, [True] * len(at))

    def reduce(self, emit: ElementEmitter, tid: SSAValue, accs: list[SSAValue], partials: Partials,
               store: Callable[[list[SSAValue]], None]) -> None:
        """Add the thread's accumulators `accs` to the tile's running sums (`partials`,
        in the workspace or the output) once the slices before this one are done:
        slices after the first load them, all in one branch; the last slice passes the
        sums to `store` (the output through the epilogue), the others store them back
        in one branch; then `post`."""
        ib, c = self.ib, self.ib.c
        c.insert(gpu.SemWaitOp(self.sems, ib.ssa(ib.add(self.tile, 1)), c.value(_i32(self, "slice"))))
        entries = list(zip(partials.offsets, partials.exists))
        then_block, else_block = Block(), Block()
        with c.at(then_block):
            zero = self.sb.const(0, f32)
            loaded = [emit.guarded(ex, lambda a=a: emit.load(partials.buffer, a), lambda: zero) for a, ex in entries]
            then_block.add_op(scf.YieldOp(*loaded))
        with c.at(else_block):
            zero = self.sb.const(0, f32)
            else_block.add_op(scf.YieldOp(*[zero] * len(entries)))
        later = self.sb.not_(ib.ssa(ib.eq(self.slice, 0)))
        prev = c.insert(scf.IfOp(later, [f32] * len(entries), Region(then_block), Region(else_block))).results
        sums = [self.sb.arith("add", p, a) for p, a in zip(prev, accs)]
        emit.when(self.last, lambda: store(sums))
        emit.when(self.not_last, lambda: [emit.when(ex, lambda v=v, a=a: emit.store(v, partials.buffer, a, f32))
                                          for v, (a, ex) in zip(sums, entries)])
        self.post(tid, emit)

    def post(self, tid: SSAValue, emit: ElementEmitter) -> None:
        """Slices before the last post the tile's semaphore; the last resets it, and
        the block with the last ticket resets the counter."""
        ib, c = self.ib, self.ib.c
        one = c.value(_i32(self, 1))
        emit.when(self.not_last,
                  lambda: c.insert(gpu.SemPostOp(self.sems, ib.ssa(ib.add(self.tile, 1)), one)))
        first = ib.eq(tid, 0)
        zero = self.sb.const(0, i32)
        emit.when(emit.and_(first, self.last), lambda: emit.store(zero, self.sems, ib.add(self.tile, 1), i32))
        emit.when(emit.and_(first, ib.eq(self.ticket, self.tickets - 1)),
                  lambda: emit.store(zero, self.sems, 0, i32))


def _not(s: SplitK, cond: bool | SSAValue) -> bool | SSAValue:
    if isinstance(cond, bool):
        return not cond
    return s.sb.not_(cond)


def _i32(s: SplitK, v: int | str) -> Operation:
    """An i32 constant, or (`"slice"`) the slice index as i32."""
    if v == "slice":
        return arith.IndexCastOp(s.ib.ssa(s.slice), i32)
    assert isinstance(v, int)
    return arith.ConstantOp(IntegerAttr(v, i32))
