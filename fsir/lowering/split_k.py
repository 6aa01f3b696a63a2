"""Split-K GEMMs: `split_k = S` blocks compute each output tile, block s reducing the
s-th slice of the k-steps.

A block takes a ticket from one global counter at start (`gpu.next_tile`): tile
`ticket div S`, slice `ticket mod S`. A tile's slices thus take consecutive tickets,
so slice s only ever waits for slices that have already started (they took earlier
tickets and hold their SMs): no deadlock under any dispatch order. Once its k-loop
is done, slice s waits until the tile's semaphore says s slices are done
(`gpu.sem_wait`), adds its accumulators to the partial sum in the f32 workspace
(slice 0 adds nothing) and stores the sum back, then posts (`gpu.sem_post`). The last
slice instead passes the sum through the fused epilogue into the output and resets the
tile's semaphore; the block with the last ticket resets the counter. Slices add in
k order whatever order blocks run in, so results do not depend on dispatch; f32
results differ from an unsplit kernel's by the summation order only
(the partial sums of slices are added, rather than every product in turn).

Host side: the kernel takes two buffers after its dynamic sizes (`buffers`),
`i32[1 + tiles]` (the counter, then one semaphore per tile; zeroed once, as the kernel
leaves them zero) and the workspace `f32[tiles * bm * bn]` (a tile's partial sums,
row-major; never needs zeroing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, f32, i32
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


def buffer_sizes(k: KernelOp) -> tuple[int, int]:
    """(semaphore words, workspace floats) of a split kernel with a static grid."""
    p = k.params
    assert isinstance(p, GemmParamsAttr)
    (gx, gy, gz), _ = k.launch()
    tiles = gx * gy * (gz // p.split_k)
    return 1 + tiles, tiles * p.tile_m * p.tile_n


@dataclass
class SplitK:
    """A split kernel's slice: built at the start of the kernel, it takes the ticket
    and gives the block's tile ids (`block_id`), the slice's k range (`k_range`) and
    the reduction of the slices (`reduce`)."""

    ib: IndexBuilder
    sb: ScalarBuilder
    sems: SSAValue
    workspace: SSAValue
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

    def reduce(self, emit: ElementEmitter, tid: SSAValue, accs: list[SSAValue], places: list[tuple[Index, Index]],
               bm: int, bn: int, store: Callable[[list[SSAValue]], None]) -> None:
        """Add the thread's accumulators `accs` (at tile elements `places`) to the
        tile's partial sums once the slices before this one are done: slices after the
        first load them from the workspace, all in one branch (the workspace holds whole
        tiles: no edge guards); the last slice passes the sums to `store` (the output
        through the epilogue), the others store them back in one branch; then `post`."""
        ib, c = self.ib, self.ib.c
        c.insert(gpu.SemWaitOp(self.sems, ib.ssa(ib.add(self.tile, 1)), c.value(_i32(self, "slice"))))
        at = [ib.add(ib.mul(self.tile, bm * bn), ib.add(ib.mul(r, bn), col)) for r, col in places]
        then_block, else_block = Block(), Block()
        with c.at(then_block):
            loaded = [emit.load(self.workspace, a) for a in at]
            then_block.add_op(scf.YieldOp(*loaded))
        with c.at(else_block):
            zero = self.sb.const(0, f32)
            else_block.add_op(scf.YieldOp(*[zero] * len(at)))
        later = self.sb.not_(ib.ssa(ib.eq(self.slice, 0)))
        prev = c.insert(scf.IfOp(later, [f32] * len(at), Region(then_block), Region(else_block))).results
        sums = [self.sb.arith("add", p, a) for p, a in zip(prev, accs)]
        emit.when(self.last, lambda: store(sums))
        emit.when(self.not_last, lambda: [emit.store(v, self.workspace, a, f32) for v, a in zip(sums, at)])
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
