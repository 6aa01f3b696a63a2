"""Launches that run together on the simulator: SM slots, a block dispatch order, warps that
park on global words, a deadlock report, and the per-block counters the timeline model reads.

    run = run_concurrent([Launch(mod, "producer", ...), Launch(mod, "consumer", ...)],
                         spec=gpu_spec("A100"), dispatch="fifo")
    run.stats        # LaunchStats per launch (waits, posts, spins among them)
    run.blocks       # BlockRecord per block: its counters and its waits

Resources. A block occupies an SM slot while it runs: an SM holds blocks (of any launches)
while their threads (rounded to whole warps), shared memory and block count fit the GPU's
per-SM limits (gpuspec). Registers are not counted: the PTX names virtual registers, and how
many physical ones ptxas allocates is not known here. A new block goes to the SM with the fewest
resident blocks (the lowest index among equals), as a GPU's block scheduler spreads a grid;
its `%smid` is that SM and `%nsmid` the GPU's SM count.

Dispatch order (`dispatch`). A launch arrives at the block scheduler when every earlier launch on
its stream has finished (kernels on one stream run one after another); its blocks then queue for
SM slots behind the blocks of launches that arrived before it:
  fifo            by stream priority (lower number first), then arrival, then launch order, each
                  grid's blocks in index order (x fastest) -- what a GPU does
  reverse         the launches as in fifo, each grid's blocks from its last to its first
  consumer-first  by arrival, later launches first among launches arriving together, priorities
                  ignored, blocks in index order: the adversarial order in which a consumer's launch
                  reaches the scheduler before its producer's (cuSync's case for the wait-kernel: a
                  consumer launched behind a wait-kernel arrives after the producer's blocks queued)
  random:SEED     a random permutation of the blocks of every arrived launch (default_rng(SEED))
Blocks are dispatched strictly in the order, so the first queued block that does not fit an SM
stops dispatching until a slot frees.

Execution. Each resident block is a chunk of one block (chunk.py) with a resumable engine
(engine.ChunkRunner). The oldest runnable block runs until it exits or all its live lanes wait:
lanes taking a spin loop's back edge (loader.sync_roles) park on the global words the loop read,
and wake when any block writes one of them. A parked warp costs nothing. When no block can run
and no slot can be freed the launch set is deadlocked: a DeadlockError names the kernels, the
waiting blocks and the words they wait on. The simulator is sequentially consistent (one block
runs at a time, each access completes before the next), so `fence`, `membar` and the
acquire/release qualifiers order nothing further.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from fsir.errors import SimulatorError, UserError
from fsir.gpuspec import GpuSpec, gpu_spec
from fsir.sim.chunk import Chunk, ChunkTemplate, LaunchState
from fsir.sim.engine import ChunkRunner
from fsir.sim.launcher import GlobalLayout, check_launch, report_blocks_done
from fsir.sim.loader import SimModule
from fsir.sim.memory import GLOBAL_BASE, GlobalMemory, TouchMap
from fsir.sim.params import pack_params
from fsir.sim.stats import LaunchStats

DEFAULT_GPU = "A100"
DISPATCH_ORDERS = ("fifo", "reverse", "consumer-first", "random:SEED")


@dataclass(frozen=True)
class Launch:
    """One launch of a concurrent set (the simulator's LaunchRequest)."""

    module: SimModule
    kernel: str
    grid: tuple | int
    block: tuple | int
    args: list = field(hash=False)
    shared_bytes: int = 0
    stream: int = 0
    priority: int = 0


@dataclass
class WaitRecord:
    """One global word a block waited on: the block's warp-instructions executed before its
    first read of it, and the blocks (launch, block) whose posts to it the block's last read
    saw, in simulation order."""

    word: int  # arena offset / 4
    progress: int
    posters: tuple = ()


@dataclass
class BlockRecord:
    """A simulated block: its counters (LaunchStats of this block only) and its waits."""

    launch: int
    block: int  # linear block index (x fastest)
    stats: LaunchStats = field(default_factory=LaunchStats)
    waits: dict = field(default_factory=dict)  # word -> WaitRecord
    dispatched: int = 0  # position in simulation order of its dispatch and of its end
    finished: int = 0


@dataclass
class ConcurrentRun:
    """What run_concurrent returns."""

    launches: list
    stats: list  # LaunchStats per launch
    blocks: list  # BlockRecord of every block, in the order they finished
    blocks_per_sm: list  # occupancy of each launch alone (blocks per SM)
    threads: list  # threads per block of each launch
    smem: list  # shared bytes per block of each launch
    spec: GpuSpec
    dispatch: str


class DeadlockError(SimulatorError):
    """Every resident block waits and no slot can be freed."""


def parse_dispatch(dispatch: str) -> tuple[str, int]:
    """('fifo'|'reverse'|'consumer-first'|'random', seed) of a dispatch-order name."""
    d = (dispatch or "fifo").strip().lower()
    if d in ("fifo", "reverse", "consumer-first"):
        return d, 0
    if d.startswith("random:"):
        try:
            return "random", int(d.split(":", 1)[1])
        except ValueError:
            pass
    raise UserError(f"unknown dispatch order '{dispatch}' (choose {', '.join(DISPATCH_ORDERS)})")


def blocks_per_sm(spec: GpuSpec, threads: int, smem: int) -> int:
    """Blocks of `threads` threads and `smem` shared bytes one SM holds (0: none fits)."""
    warps = -(-threads // spec.warp_size)
    n = min(spec.max_blocks_per_sm, spec.max_warps_per_sm // warps if warps else spec.max_blocks_per_sm)
    if smem:
        n = min(n, spec.smem_per_sm // smem)
    return max(n, 0)


class SmPool:
    """The SMs' free resources; `place` puts a block on the least loaded SM it fits."""

    def __init__(self, spec: GpuSpec):
        self.spec = spec
        self.warps = [0] * spec.sms
        self.smem = [0] * spec.sms
        self.slots = [[False] * spec.max_blocks_per_sm for _ in range(spec.sms)]
        self.count = [0] * spec.sms

    def place(self, threads: int, smem: int) -> tuple[int, int] | None:
        spec = self.spec
        w = -(-threads // spec.warp_size)
        # the limits as locals: the timeline model places every block of a launch of
        # tens of thousands, each a scan over the SMs
        blocks_cap, warps_cap, smem_cap = spec.max_blocks_per_sm, spec.max_warps_per_sm - w, spec.smem_per_sm - smem
        count, warps, used = self.count, self.warps, self.smem
        best = None
        least = blocks_cap
        for s in range(spec.sms):
            c = count[s]
            if c < least and warps[s] <= warps_cap and used[s] <= smem_cap:
                best, least = s, c
                if c == 0:
                    break
        if best is None:
            return None
        slot = self.slots[best].index(False)
        self.slots[best][slot] = True
        self.count[best] += 1
        self.warps[best] += w
        self.smem[best] += smem
        return best, slot

    def free(self, sm: int, slot: int, threads: int, smem: int) -> None:
        self.slots[sm][slot] = False
        self.count[sm] -= 1
        self.warps[sm] -= -(-threads // self.spec.warp_size)
        self.smem[sm] -= smem


def _launch_key(kind: str, launch: Launch, li: int, arrival) -> tuple:
    if kind == "consumer-first":
        return (arrival, -li)
    return (launch.priority, arrival, li)


def dispatch_order(kind: str, seed: int, launches: list, nblocks: list[int],
                   arrival: list | None = None) -> list[tuple[int, int]]:
    """Every (launch, block) of the launches that arrived (`arrival[i]` not None: when launch i
    arrived; all at once if `arrival` is None) in dispatch order (see the module docstring)."""
    arrival = [0] * len(launches) if arrival is None else arrival
    idx = sorted((i for i in range(len(launches)) if arrival[i] is not None),
                 key=lambda i: _launch_key(kind, launches[i], i, arrival[i]))
    order = []
    for i in idx:
        blocks = range(nblocks[i] - 1, -1, -1) if kind == "reverse" else range(nblocks[i])
        order.extend((i, b) for b in blocks)
    if kind == "random":
        # one permutation of all blocks, restricted to the arrived launches: a launch arriving
        # later does not reshuffle the blocks already queued
        every = [(i, b) for i in range(len(launches)) for b in range(nblocks[i])]
        perm = np.random.default_rng(seed).permutation(len(every))
        queued = set(idx)
        order = [every[int(j)] for j in perm if every[int(j)][0] in queued]
    return order


class DispatchQueue:
    """Blocks waiting for an SM slot, in dispatch order; `arrive` adds a launch's blocks,
    `take` removes a dispatched block. The simulator and the timeline model share it."""

    def __init__(self, kind: str, seed: int, launches: list, nblocks: list[int]):
        self.kind, self.seed, self.launches, self.nblocks = kind, seed, launches, nblocks
        self.arrival: list = [None] * len(launches)
        self.order: list[tuple[int, int]] = []
        self.taken: set[tuple[int, int]] = set()
        self.first = 0  # order[:first] are taken

    def arrive(self, lis, when) -> None:
        lis = [li for li in lis if self.arrival[li] is None]
        if not lis:
            return
        for li in lis:
            self.arrival[li] = when
        self.order = [k for k in dispatch_order(self.kind, self.seed, self.launches, self.nblocks, self.arrival)
                      if k not in self.taken]
        self.first = 0

    def queued(self):
        """The queued blocks in order (take() while iterating is allowed)."""
        order, taken = self.order, self.taken
        while self.first < len(order) and order[self.first] in taken:
            self.first += 1
        for k in range(self.first, len(order)):
            if order[k] not in taken:
                yield order[k]

    def take(self, key: tuple[int, int]) -> None:
        self.taken.add(key)

    def waiting(self) -> list[tuple[int, int]]:
        """Blocks not dispatched, arrived or not."""
        return [(li, b) for li in range(len(self.launches)) for b in range(self.nblocks[li])
                if (li, b) not in self.taken]


class _Resident:
    """A resident block: its chunk, engine state, record and SM slot."""

    def __init__(self, li: int, b: int, ch: Chunk, rec: BlockRecord, place: tuple[int, int], tpl: ChunkTemplate):
        self.li = li
        self.b = b
        self.ch = ch
        self.runner = ChunkRunner(ch)
        self.rec = rec
        self.place = place
        self.tpl = tpl
        self.watch: set[int] = set()  # words read by its spin loops since it last ran


class _BlockSync:
    """The chunk's recorder of reads and posts (chunk.note_sync_read / note_post)."""

    def __init__(self, res: _Resident, posters: dict):
        self.res = res
        self.posters = posters

    def read(self, ch: Chunk, off: np.ndarray, head: bool) -> None:
        words = np.unique(off >> 2).tolist()
        res = self.res
        res.watch.update(words)
        waits = res.rec.waits
        for w in words:
            wr = waits.get(w)
            if wr is None:
                wr = waits[w] = WaitRecord(w, ch.progress)
            wr.posters = tuple(self.posters.get(w, ()))

    def post(self, off: np.ndarray) -> None:
        token = (self.res.li, self.res.b)
        for w in np.unique(off >> 2).tolist():
            self.posters.setdefault(w, []).append(token)


def _words(off: np.ndarray, width: int) -> np.ndarray:
    w = off >> 2
    if width > 4:
        w = (w[:, None] + np.arange(width // 4)).reshape(-1)
    return w


def describe_word(gm: GlobalMemory, word: int) -> str:
    off = word * 4
    for b in gm.buffers:
        if b.start <= off < b.start + b.nbytes:
            return f"{GLOBAL_BASE + off:#x} ({b.name} + {off - b.start})"
    return f"{GLOBAL_BASE + off:#x}"


def _block_name(grid: tuple, b: int) -> str:
    gx, gy, _ = grid
    return f"({b % gx},{(b // gx) % gy},{b // (gx * gy)})"


def run_concurrent(launches: list[Launch], *, spec: GpuSpec | None = None, dispatch: str = "fifo",
                   check_races: bool = True) -> ConcurrentRun:
    """Run launches together on one global memory (see the module docstring). Array arguments
    are written back after every launch finished."""
    spec = spec or gpu_spec(DEFAULT_GPU)
    kind, seed = parse_dispatch(dispatch)
    layout = GlobalLayout()
    checked = []
    for ln in launches:
        K, grid, block, shared, args = check_launch(ln.module, ln.kernel, ln.grid, ln.block, ln.args, ln.shared_bytes)
        layout.add_module(ln.module, ln.module.global_data)
        checked.append((K, grid, block, shared, args, layout.add_args(K, args)))
    gm = layout.build()
    states: list[LaunchState] = []
    for K, grid, block, shared, args, arg_buf in checked:
        addrs = {i: gm.address(bi) for i, bi in arg_buf.items()}
        params = pack_params(K.name, K.params, K.param_offsets, K.param_size, args, addrs)
        states.append(LaunchState(K, grid, block, shared, gm, params, check_races))
    threads = [L.nthreads for L in states]
    smem = [L.smem_size for L in states]
    occ = [blocks_per_sm(spec, t, s) for t, s in zip(threads, smem)]
    for L, o in zip(states, occ):
        if o == 0:
            raise SimulatorError(f"kernel '{L.K.name}': a block of {L.nthreads} threads and {L.smem_size} bytes of "
                                 f"shared memory does not fit an SM of {spec.name}")
    touched = [TouchMap(gm.size) for _ in states]
    nblocks = [L.nblocks for L in states]
    queue = DispatchQueue(kind, seed, launches, nblocks)
    remaining = list(nblocks)  # blocks of each launch not finished
    pools: list[list[ChunkTemplate]] = [[] for _ in states]
    posters: dict[int, list] = {}
    watchers: dict[int, set] = {}  # word -> resident blocks parked on it
    watched = np.zeros(0, np.int64)
    ready: deque[_Resident] = deque()
    waiting: set[_Resident] = set()
    sms = SmPool(spec)
    done_records: list[BlockRecord] = []
    seq = 0

    def eligible(li: int) -> bool:  # every earlier launch on its stream has finished
        s = launches[li].stream
        return all(remaining[j] == 0 for j in range(li) if launches[j].stream == s)

    def wake(res: _Resident) -> None:
        nonlocal watched
        for w in res.watch:
            ws = watchers.get(w)
            if ws is not None:
                ws.discard(res)
                if not ws:
                    del watchers[w]
        watched = np.fromiter(watchers, np.int64, len(watchers))
        res.watch.clear()
        waiting.discard(res)
        res.runner.wake()
        ready.append(res)

    def on_write(off: np.ndarray, width: int) -> None:
        if not watchers:
            return
        hit = np.intersect1d(_words(off, width), watched)
        for w in hit.tolist():
            for res in list(watchers.get(w, ())):
                wake(res)

    gm.on_write = on_write

    def dispatch_blocks() -> None:
        nonlocal seq
        queue.arrive([li for li in range(len(launches)) if queue.arrival[li] is None and eligible(li)], seq)
        for li, b in queue.queued():
            place = sms.place(threads[li], smem[li])
            if place is None:
                return
            queue.take((li, b))
            L = states[li]
            tpl = pools[li].pop() if pools[li] else ChunkTemplate(L, 1)
            ch = Chunk(L, b, 1, tpl)
            ch.sconst = {**L.sconst, "%smid": place[0], "%nsmid": spec.sms}
            rec = BlockRecord(li, b, LaunchStats(), dispatched=seq)
            seq += 1
            ch.stats = rec.stats
            res = _Resident(li, b, ch, rec, place, tpl)
            ch.sync = _BlockSync(res, posters)
            ready.append(res)

    with np.errstate(all="ignore"):
        while True:
            dispatch_blocks()
            if not ready:
                if not waiting and all(r == 0 for r in remaining):
                    break
                raise _deadlock(waiting, states, gm, queue.waiting())
            res = ready.popleft()
            gm.touched = touched[res.li]
            if res.runner.run():
                res.rec.finished = seq
                seq += 1
                done_records.append(res.rec)
                sms.free(*res.place, threads[res.li], smem[res.li])
                pools[res.li].append(res.tpl)
                remaining[res.li] -= 1
                report_blocks_done(1)
                continue
            if res.runner.park_seq != gm.wseq or not res.watch:
                # a write since its lanes parked (by the block itself) may be the one they wait for
                res.runner.wake()
                ready.append(res)
                continue
            waiting.add(res)
            for w in res.watch:
                watchers.setdefault(w, set()).add(res)
            watched = np.fromiter(watchers, np.int64, len(watchers))
    gm.on_write = None
    layout.write_back(gm)
    stats = []
    per_launch: list[list[LaunchStats]] = [[] for _ in states]
    for r in done_records:
        per_launch[r.launch].append(r.stats)
    for li, L in enumerate(states):
        st = L.stats + sum(per_launch[li], LaunchStats())
        st.global_unique_bytes = touched[li].count()
        stats.append(st)
    return ConcurrentRun(list(launches), stats, done_records, occ, threads, smem, spec, dispatch)


def _deadlock(waiting: set, states: list, gm: GlobalMemory, undispatched_blocks: list) -> DeadlockError:
    by_kernel: dict[str, list[str]] = {}
    for res in sorted(waiting, key=lambda r: (r.li, r.b)):
        L = states[res.li]
        words = ", ".join(describe_word(gm, w) for w in sorted(res.watch)) or "a barrier"
        by_kernel.setdefault(f"kernel '{L.K.name}' (launch {res.li})", []).append(
            f"block {_block_name(L.grid, res.b)} on {words}")
    parts = [f"{k}: " + "; ".join(v) for k, v in by_kernel.items()]
    undispatched: dict[str, int] = {}
    for li, _ in undispatched_blocks:
        name = f"'{states[li].K.name}'"
        undispatched[name] = undispatched.get(name, 0) + 1
    tail = ""
    if undispatched:
        tail = "; not dispatched for want of a free SM slot: " + ", ".join(
            f"{n} block{'s' if n > 1 else ''} of {k}" for k, n in undispatched.items())
    return DeadlockError(f"deadlock: every resident block waits on a global word no block can still write "
                         f"({len(waiting)} waiting): " + " | ".join(parts) + tail)


def modeled_fraction(progress: int, total: int) -> float:
    """Where in a block's work a wait happens (0..1), from warp-instructions."""
    return min(1.0, progress / total) if total else 0.0


__all__ = ["BlockRecord", "ConcurrentRun", "DeadlockError", "Launch", "SmPool", "WaitRecord", "blocks_per_sm",
           "DispatchQueue", "dispatch_order", "parse_dispatch", "run_concurrent"]
