"""The `model` measurer's clock: the simulator's exact per-block counters of a sample
of a launch's blocks, turned into time by the timeline model (`fsir/sim/timeline.py`),
which reads nothing of the latency-evaluator.

Blocks of a kernel without inter-block waits are independent, so `SampledSimDevice`
runs only `samples` of them (evenly spaced, the first and the last included: edge
tiles are guarded) and gives every other block the counters of the nearest sampled
one; the timeline model then places all of them on SM slots. Occupancy is the resource
rule (`fsir.codegen.latency.occupancy`) on ptxas's registers when known: the
simulator's slots know threads and shared memory only, so each block is charged
`smem_per_sm / blocks_per_sm` shared bytes to hold the register limit.

A kernel whose blocks wait on each other (spin loops: a split-K GEMM's slices) is
sampled by groups (`sample_groups`): the blocks run one at a time in index order, as
the full simulation runs them, each to its end (a wait that is not satisfied then
means the structure below does not hold, and the launch is simulated in full). The
first group and the next group's first block show the structure: a group is the run
of consecutive blocks that wait on the same global words, the next group's words are
the first's shifted by a constant (checked on every sampled group), and a word that
every block increments by one is a ticket counter (the block's identity; set to a
sampled group's first ticket before it runs). Groups are the tiles
of the launch grid, x fastest (`_TileGrid`). Sampled groups (the first, `samples - 2`
evenly spaced with the last, and the first tiles last in x, in y and in both: edge
tiles are guarded, so their counters differ) run whole, in order, so every wait in
them is satisfied by the slices before; each must wait on the words the structure
predicts, for the blocks it predicts, or the launch is simulated in full. Every other
block takes the counters, the wait points (warp-instructions before each wait) and
the wait structure of the block at its position in the nearest sampled group of its
own edge class, shifted to its own group; the timeline model holds it at its wait
until those blocks have ended. `samples` at least the launch's blocks: the full
simulation.

Other launches of the module (not the task's kernel) are skipped: their outputs are
left as allocated, which the sampled kernel's counters do not depend on (no
data-dependent control flow in a GEMM, row or loop kernel).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

import numpy as np

from fsir.codegen.latency import occupancy
from fsir.gpuspec import GpuSpec
from fsir.runtime.device import SimDevice, unwrap_sim
from fsir.sim.chunk import Chunk, LaunchState
from fsir.sim.concurrent import BlockRecord, ConcurrentRun, Launch, WaitRecord, blocks_per_sm
from fsir.sim.engine import ChunkRunner, run_chunk
from fsir.sim.launcher import GlobalLayout, check_launch
from fsir.sim.params import pack_params
from fsir.sim.stats import LaunchStats
from fsir.sim.timeline import model_timeline

DEFAULT_SAMPLES = 4


@dataclass(frozen=True)
class SampledLaunch:
    """The modeled time of the task's launch and how it was simulated."""

    seconds: float
    blocks: int
    simulated: int  # blocks actually simulated
    blocks_per_sm: int
    group: int = 0  # blocks per group of a kernel sampled by groups (0: not)


def sample_indices(nblocks: int, samples: int) -> list[int]:
    """`samples` evenly spaced block indices, first and last included."""
    if nblocks <= samples:
        return list(range(nblocks))
    if samples < 2:
        return [0]
    return sorted({round(i * (nblocks - 1) / (samples - 1)) for i in range(samples)})


class SampledSimDevice(SimDevice):
    """A simulator device that times only the launches of `kernel` (module docstring);
    `results` has one `SampledLaunch` per such launch."""

    def __init__(self, kernel: str, spec: GpuSpec, samples: int = DEFAULT_SAMPLES, registers: int | None = None):
        super().__init__(check_races=False, gpu=spec.name)
        self.kernel = kernel
        self.spec = spec
        self.samples = samples
        self.registers = registers
        self.results: list[SampledLaunch] = []

    def occupancy(self, threads: int, smem: int) -> int:
        if self.registers is None:
            return blocks_per_sm(self.spec, threads, smem)
        return occupancy(threads, self.registers, smem, self.spec).blocks_per_sm

    def launch(self, module, kernel: str, grid, block, args, shared_bytes: int = 0) -> LaunchStats:
        if kernel != self.kernel:
            return LaunchStats()
        if isinstance(module, str):
            module = self.load(module)
        args = [unwrap_sim(a) for a in args]
        K, grid, block, shared_bytes, args = check_launch(module, kernel, grid, block, args, shared_bytes)
        layout = GlobalLayout()
        layout.add_module(module, module.global_data)
        arg_buf = layout.add_args(K, args)
        gm = layout.build()
        addrs = {i: gm.address(bi) for i, bi in arg_buf.items()}
        params = pack_params(K.name, K.params, K.param_offsets, K.param_size, args, addrs)
        state = LaunchState(K, grid, block, shared_bytes, gm, params, False)
        if K.spin_loops and self.samples >= state.nblocks:  # every block: the full simulation, waits and all
            return self._full(module, kernel, grid, block, args, shared_bytes)
        if K.spin_loops:
            with np.errstate(all="ignore"):
                grouped = sample_groups(state, self.samples, self.spec.sms)
            if grouped is None:
                return self._full(module, kernel, grid, block, args, shared_bytes)
            records, simulated, size = grouped
            stats = state.stats + sum((r.stats for r in records if r.block in simulated), LaunchStats())
            self.results.append(self._model(kernel, grid, block, state.smem_size, state.nthreads, records,
                                            len(simulated), size))
            return stats
        picked = sample_indices(state.nblocks, self.samples)
        per_block: dict[int, LaunchStats] = {}
        with np.errstate(all="ignore"):
            for b in picked:
                before = _copy(state.stats)
                run_chunk(Chunk(state, b, 1))
                per_block[b] = _minus(state.stats, before)
        records = [BlockRecord(0, b, per_block[min(picked, key=lambda p: abs(p - b))]) for b in range(state.nblocks)]
        self.results.append(self._model(kernel, grid, block, state.smem_size, state.nthreads, records, len(picked)))
        return state.stats

    def launch_pipeline(self, requests):
        return [self.launch(r.module, r.kernel, r.grid, r.block, r.args, r.shared_bytes) for r in requests]

    def _model(self, kernel: str, grid, block, smem: int, threads: int, records: list[BlockRecord],
               simulated: int, group: int = 0) -> SampledLaunch:
        nblocks = len(records)
        occ = self.occupancy(threads, smem)
        if occ == 0:
            return SampledLaunch(math.inf, nblocks, simulated, 0, group)
        held = max(smem, self.spec.smem_per_sm // occ) if self.registers is not None else smem
        launch = Launch(None, kernel, grid, block, [], smem)  # type: ignore[arg-type]  # the model reads no module
        run = ConcurrentRun([launch], [], records, [occ], [threads], [held], self.spec, "fifo")
        tl = model_timeline(run)
        return SampledLaunch(tl.launch_us[0] * 1e-6, nblocks, simulated, occ, group)

    def _full(self, module, kernel: str, grid, block, args, shared_bytes: int) -> LaunchStats:
        from fsir.sim.concurrent import run_concurrent

        run = run_concurrent([Launch(module, kernel, grid, block, args, shared_bytes)], spec=self.spec,
                             check_races=False)
        threads = math.prod(block)
        occ = self.occupancy(threads, shared_bytes or run.smem[0])
        if occ == 0:
            self.results.append(SampledLaunch(math.inf, len(run.blocks), len(run.blocks), 0))
            return run.stats[0]
        held = max(run.smem[0], self.spec.smem_per_sm // occ) if self.registers is not None else run.smem[0]
        run.blocks_per_sm[0], run.smem[0] = occ, held
        tl = model_timeline(run)
        self.results.append(SampledLaunch(tl.launch_us[0] * 1e-6, len(run.blocks), len(run.blocks), occ))
        return run.stats[0]


# -- kernels whose blocks wait on each other: sampled by groups ------------------------


class _Sync:
    """One block's recorder of spin-loop reads and posts (`Chunk.sync`), as
    `fsir.sim.concurrent` records them: a wait per word read, at the block's progress at
    its first read, with the blocks whose posts to the word its last read saw."""

    def __init__(self, rec: BlockRecord, posters: dict[int, list]):
        self.rec = rec
        self.posters = posters

    def read(self, ch: Chunk, off: np.ndarray, head: bool) -> None:
        waits = self.rec.waits
        for w in np.unique(off >> 2).tolist():
            wr = waits.get(w)
            if wr is None:
                wr = waits[w] = WaitRecord(w, ch.progress)
            wr.posters = tuple(self.posters.get(w, ()))

    def post(self, off: np.ndarray) -> None:
        for w in np.unique(off >> 2).tolist():
            self.posters.setdefault(w, []).append((0, self.rec.block))


class _Blocks:
    """Blocks of one launch run one at a time on one global memory, each to its end;
    `tickets` follows the words every block so far wrote and left holding the number of
    blocks run (a ticket counter each block increments)."""

    def __init__(self, state: LaunchState, sms: int):
        self.state = state
        self.sms = sms
        self.posters: dict[int, list] = {}
        self.records: dict[int, BlockRecord] = {}
        self.tickets: set[int] | None = None
        self.counting = True  # blocks run in index order from the first so far

    def run(self, b: int) -> BlockRecord | None:
        """Run block `b` to its end (None: it waits for a word no block it follows wrote)."""
        state = self.state
        ch = Chunk(state, b, 1)
        ch.sconst = {**state.sconst, "%smid": 0, "%nsmid": self.sms}
        rec = BlockRecord(0, b, LaunchStats())
        ch.stats = rec.stats
        ch.sync = _Sync(rec, self.posters)
        wrote: set[int] = set()
        gm = state.gm

        def note(off: np.ndarray, width: int) -> None:
            wrote.update((off >> 2).tolist())

        self.counting = self.counting and b == len(self.records)
        gm.on_write = note if self.counting else None  # the writes only matter to `tickets`
        try:
            if not ChunkRunner(ch).run():
                return None
        finally:
            gm.on_write = None
        self.records[b] = rec
        if self.counting:
            view = gm.view(np.uint32)
            held = wrote if self.tickets is None else self.tickets & wrote
            self.tickets = {w for w in held if int(view[w]) == b + 1}
        return rec


def _waits(rec: BlockRecord) -> tuple[int, ...]:
    return tuple(sorted(rec.waits))


def _shifted(rec: BlockRecord, words: int, blocks: int) -> dict[int, WaitRecord]:
    """The waits of `rec` moved `words` words and `blocks` blocks on."""
    return {w + words: WaitRecord(w + words, wr.progress, tuple((li, p + blocks) for li, p in wr.posters))
            for w, wr in rec.waits.items()}


def _same_waits(got: BlockRecord, want: dict[int, WaitRecord]) -> bool:
    return set(got.waits) == set(want) and all(got.waits[w].posters == want[w].posters for w in want)


@dataclass(frozen=True)
class _TileGrid:
    """The groups of a launch as tiles of its grid: a grid (x, y, z) of groups of `size`
    blocks along z holds (x, y, z / size) tiles, x fastest (group g is tile g). A tile
    last in x or in y is an edge tile (guarded: its counters differ); `nearest` gives a
    tile the nearest sampled tile of its own edge class. A grid whose z is no multiple of
    the group size is one row of tiles."""

    gx: int
    gy: int
    # an edge whose first tile's first slice counts what the first tile's does is
    # not guarded differently (the problem divides into whole tiles that way)
    whole_x: bool = False
    whole_y: bool = False

    @staticmethod
    def of(grid: tuple, size: int) -> _TileGrid:
        gx, gy, gz = grid
        return _TileGrid(gx, gy) if gz % size == 0 else _TileGrid(gx * gy * gz // size, 1)

    def edge(self, g: int) -> tuple[bool, bool]:
        return (not self.whole_x and g % self.gx == self.gx - 1,
                not self.whole_y and (g // self.gx) % self.gy == self.gy - 1)

    def unguarded(self, g: int) -> _TileGrid:
        """This grid knowing that tile `g`'s first slice counts what the first tile's does:
        if g is the first tile last in x (in y), that edge is not guarded."""
        gx, gy = self.gx, self.gy
        return replace(self, whole_x=self.whole_x or (gx > 1 and g == gx - 1),
                       whole_y=self.whole_y or (gy > 1 and g == (gy - 1) * gx))

    def edges(self) -> list[int]:
        """The first tile last in x, the first last in y and the first last in both."""
        gx, gy = self.gx, self.gy
        return [gx - 1, (gy - 1) * gx, gy * gx - 1]

    def nearest(self, g: int, picked: list[int]) -> int:
        same = [p for p in picked if self.edge(p) == self.edge(g)]
        return min(same or picked, key=lambda p: abs(p - g))


def sample_groups(state: LaunchState, samples: int, sms: int) -> tuple[list[BlockRecord], set[int], int] | None:
    """Records of every block of a launch whose blocks wait on each other, from the
    sampled groups (module docstring): (records, blocks simulated, blocks per group);
    None when the observed structure does not hold (the caller simulates in full)."""
    n = state.nblocks
    run = _Blocks(state, sms)
    first = run.run(0)
    if first is None or not first.waits:
        return None
    size = 0
    for b in range(1, n):
        rec = run.run(b)
        if rec is None:
            return None
        if _waits(rec) != _waits(first):
            size = b
            break
    if size == 0:  # one group: every block ran
        return [run.records[b] for b in range(n)], set(range(n)), n
    groups = n // size
    if n % size or groups < 2:
        return None
    step = {b - a for a, b in zip(_waits(first), _waits(run.records[size]))}
    if len(step) != 1 or len(_waits(first)) != len(_waits(run.records[size])):
        return None
    words = step.pop()
    counters = sorted(run.tickets or ())
    if len(counters) > 1:
        return None
    tiles = _TileGrid.of(state.grid, size)
    view = state.gm.view(np.uint32)
    picked = [0]
    for g in sorted({*sample_indices(groups, max(samples - 2, 2)), *tiles.edges()} & set(range(1, groups))):
        for r in range(size):
            b = g * size + r
            if b not in run.records:  # (the first block of group 1 ran, and left the counter at its next)
                if r == 0 and counters:
                    view[counters[0]] = b
                if run.run(b) is None:
                    return None
            if not _same_waits(run.records[b], _shifted(run.records[r], g * words, g * size)):
                return None
            if r == 0:
                if run.records[b].stats == first.stats:
                    tiles = tiles.unguarded(g)
                like = [p for p in picked if tiles.edge(p) == tiles.edge(g)]
                if like and run.records[b].stats == run.records[like[0] * size].stats:
                    break  # like a sampled tile of its class: not run further, not sampled
        else:
            picked.append(g)
    records = []
    for b in range(n):
        g, r = divmod(b, size)
        near = tiles.nearest(g, picked)
        src = run.records[near * size + r]
        records.append(BlockRecord(0, b, src.stats, _shifted(src, (g - near) * words, (g - near) * size)))
    return records, set(run.records), size


def _copy(st: LaunchStats) -> LaunchStats:
    return st + LaunchStats()


def _minus(a: LaunchStats, b: LaunchStats) -> LaunchStats:
    return LaunchStats(**{f.name: getattr(a, f.name) - getattr(b, f.name) for f in fields(a)})
