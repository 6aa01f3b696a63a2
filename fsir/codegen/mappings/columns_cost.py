"""What a columns kernel's blocks cost, warp by warp (the columns mapping's summary).

A columns kernel is no grid of equal threads: operand i owns its own range of warps
(`ColumnsParamsAttr.spans`), and its threads' work follows its (lanes, vector). The
average thread over the warps (the summary's instruction counts) says how much work the
launch holds, not how it falls on the blocks: a block of a long bag's warps issues
many times the instructions of a block of short bags, and the kernel ends with its
heaviest block. So each operand's warp is costed from its thread (`WarpCost`):

- instructions: a warp issues its threads' program once (SIMT), so `lanes` threads
  sharing one (row, elements) issue ⌈bag / lanes⌉ loop steps, and lanes past the bag
  idle through them; thread-instructions per lane class count the active threads only
  (a warp past the operand's rows, or its partial last warp, holds fewer);
- DRAM sectors: per loop step a warp's lanes gather `rows x lanes` distinct table rows,
  each a run of the elements its threads take (`vector` per thread, consecutive), in
  32-byte sectors; the ids and weights of a row's lanes are consecutive; the stores
  write each row's run once;

and a block's cycles are the longest of its warps' issue (`issue_per_cycle`), each
lane class's pipe and its sectors over an SM's share of the HBM bandwidth. The kernel
takes at least its heaviest block times the blocks resident beside it (they share the
SM's pipes), and at least the blocks' cycles spread over the SMs (`block_cycles`); the
summary states them as its `ilp_cycles` per wave, which `estimate_summary` bounds by
the pipes' and the bytes' throughput floors.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from fsir.gpuspec import GpuSpec

SECTOR = 32  # bytes of a global memory transaction
LANE_CLASS = {"alu": "fp32", "int": "int", "sfu": "sfu", "div": "sfu", "shuffle": "lsu", "smem": "lsu",
              "shared": "lsu", "global": "lsu", "barrier": "int"}


@dataclass(frozen=True)
class Traffic:
    """A column thread's global accesses: per bag step, the bytes of its non-table
    loads (ids, weights) and of one table element; the result element's bytes; its bag
    (steps are ⌈bag / lanes⌉) and bytes read once (a ragged bag's offsets)."""

    step_bytes: int
    table_bytes: int
    out_bytes: int
    bag: float
    once_bytes: int = 0


@dataclass
class WarpCost:
    """One warp: warp-instructions issued, thread-instructions by lane class, sectors."""

    issued: float = 0.0
    lanes: dict[str, float] = field(default_factory=dict)
    sectors: float = 0.0

    def add(self, other: WarpCost, times: float = 1.0) -> None:
        self.issued += other.issued * times
        for cls, n in other.lanes.items():
            self.lanes[cls] = self.lanes.get(cls, 0.0) + n * times
        self.sectors += other.sectors * times

    def cycles(self, spec: GpuSpec) -> float:
        """Cycles of this work alone on an SM: the longest of issue, pipes, bytes."""
        times = [self.issued / spec.issue_per_cycle]
        times += [n / max(1, spec.lanes_per_cycle.get(cls, 0)) for cls, n in self.lanes.items()]
        times.append(self.sectors * SECTOR / (spec.hbm_bandwidth / spec.sms / spec.clock_hz))
        return max(times)


def warp_cost(counts: Counter[str], active: int, lanes: int, vector: int, dim: int,
              traffic: Traffic | None) -> WarpCost:
    """A warp of `active` threads of one operand, each doing `counts` (a thread's
    instructions by class), `lanes` threads per (row, `vector` elements) of rows of
    `dim` elements; `traffic` None: a dense copy (a thread per element)."""
    cost = WarpCost(float(sum(counts.values())))
    for cls, n in counts.items():
        lane = LANE_CLASS.get(cls, "int")
        cost.lanes[lane] = cost.lanes.get(lane, 0.0) + n * active
    groups = max(1, active // lanes)  # (row, elements) the warp's threads take
    per_row = max(1, dim // vector)
    rows = -(-groups // per_row)
    run = min(dim, groups * vector)  # consecutive elements of a row the warp takes
    if traffic is None:
        cost.sectors = 2 * rows * -(-run * 4 // SECTOR)
        return cost
    steps = math.ceil(traffic.bag / lanes) if traffic.bag else 1
    fetched = min(lanes, max(1, math.ceil(traffic.bag)))  # lanes past the bag fetch nothing
    table = rows * fetched * -(-run * traffic.table_bytes // SECTOR)
    other = rows * -(-fetched * traffic.step_bytes // SECTOR) if traffic.step_bytes else 0
    once = rows * -(-traffic.once_bytes // SECTOR) if traffic.once_bytes else 0
    cost.sectors = steps * (table + other) + once + rows * -(-run * traffic.out_bytes // SECTOR)
    return cost


@dataclass(frozen=True)
class OperandWarps:
    """Operand i's warps: its first warp, how many, the threads its rows need and the
    cost of a full warp and of its partial last one."""

    start: int
    count: int
    threads: int
    full: WarpCost
    last: WarpCost


def block_costs(operands: Sequence[OperandWarps], warps_per_block: int, warp_size: int) -> list[WarpCost]:
    """Each block's work (of grid x), by difference arrays: linear in the operands and
    the blocks."""
    nblocks = max(1, -(-max((o.start + o.count for o in operands), default=1) // warps_per_block))
    blocks = [WarpCost() for _ in range(nblocks)]
    full_from: list[list[tuple[WarpCost, float]]] = [[] for _ in range(nblocks + 1)]
    for o in operands:
        if o.count <= 0:
            continue
        full = o.count - 1 if o.threads % warp_size else o.count
        last_warp = o.start + o.count - 1
        if full < o.count:
            blocks[last_warp // warps_per_block].add(o.last)
        lo, hi = o.start, o.start + full  # the full warps [lo, hi)
        if hi <= lo:
            continue
        b0, b1 = lo // warps_per_block, (hi - 1) // warps_per_block
        if b0 == b1:
            blocks[b0].add(o.full, hi - lo)
            continue
        blocks[b0].add(o.full, (b0 + 1) * warps_per_block - lo)
        blocks[b1].add(o.full, hi - b1 * warps_per_block)
        if b1 > b0 + 1:  # whole blocks of this operand's warps
            full_from[b0 + 1].append((o.full, warps_per_block))
            full_from[b1].append((o.full, -warps_per_block))
    running = WarpCost()
    for b in range(nblocks):
        for cost, n in full_from[b]:
            running.add(cost, n)
        blocks[b].add(running)
    return blocks


def block_cycles(operands: Sequence[OperandWarps], warps_per_block: int, tiles: int, blocks_per_sm: int,
                 spec: GpuSpec) -> tuple[float, float]:
    """The kernel's cycles and the launch's sectors; `tiles` grid-y tiles repeat the
    blocks of grid x. The busiest SM runs ⌈blocks / SMs⌉ of them, `blocks_per_sm` at a
    time, each slot's blocks one after another (a global access's latency each): the
    blocks' mean cycles times that many, or the heaviest block's cycles times the
    blocks it shares the SM with, the longer."""
    if blocks_per_sm <= 0:
        return math.inf, 0.0
    blocks = block_costs(operands, warps_per_block, spec.warp_size)
    nblocks = len(blocks)
    cycles = [blk.cycles(spec) for blk in blocks]
    per_sm = -(-nblocks * tiles // spec.sms)  # blocks the busiest SM runs
    share = min(blocks_per_sm, per_sm)  # blocks resident beside each other
    latency = spec.cpi["global"]
    heaviest = share * max(cycles) + latency
    spread = sum(cycles) / nblocks * per_sm + latency * -(-per_sm // blocks_per_sm)
    return max(heaviest, spread), sum(blk.sectors for blk in blocks) * tiles
