"""The timeline model: where and when the blocks of simulated launches would run on a GPU.

    run = run_concurrent(launches, spec=spec, dispatch="fifo")   # concurrent.py
    tl = model_timeline(run)          # a MODEL, not a measurement
    tl.modeled_us, tl.launch_us       # the pipeline's and each launch's modeled time
    draw_timeline([tl], "timeline.png")

A discrete-event model over the simulator's per-block counters (docs/simulator.md gives the
formula). It places every block on an SM slot over model time in the simulation's dispatch
order, with each launch's latency, waves and the partial last wave falling out of the slot
count, stream order and priorities as in the simulator, and a block that waited on a global
word in the simulation held at that point of its work until the blocks whose posts its wait
saw (in simulation order) have ended in model time. It reads nothing of the
latency-evaluator (fsir/codegen/latency.py): it is the independent "measurement" a tuner can
check the evaluator against.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from fsir.errors import SimulatorError
from fsir.gpuspec import LANE_CLASSES, GpuSpec
from fsir.sim.concurrent import ConcurrentRun, DispatchQueue, SmPool, parse_dispatch
from fsir.sim.stats import LaunchStats

SHARED_BYTES_PER_CYCLE = 128  # an SM's shared memory: 32 banks of 4 bytes per cycle


def block_seconds(st: LaunchStats, spec: GpuSpec, share: int) -> float:
    """Modeled run time of one block whose SM is shared by `share` blocks: `share` times the
    slowest of its resources alone (issue, each lane class, tensor cores, its part of DRAM
    bandwidth, shared memory), plus one global-memory latency."""
    clk = spec.clock_hz
    times = [st.warp_instructions / (spec.issue_per_cycle * clk)]
    for cls in LANE_CLASSES:
        n = getattr(st, f"{cls}_instructions")
        if n:
            times.append(n / (max(spec.lanes_per_cycle.get(cls, 0), 1) * clk))
    tclk = spec.tensor_clock_hz or clk
    tf32 = st.tf32_tensor_flops
    f16 = st.tensor_flops - tf32
    for flops, prec in ((f16, "f16"), (tf32, "tf32")):
        if flops:
            times.append(flops / 2 / (max(spec.tensor_fma_per_cycle.get(prec, 0), 1) * tclk))
    times.append(st.global_sectors * 32 / (spec.hbm_bandwidth / spec.sms))
    times.append((st.shared_load_bytes + st.shared_store_bytes) / (SHARED_BYTES_PER_CYCLE * clk))
    return share * max(times) + spec.cpi["global"] / clk


def sharing(spec: GpuSpec, occupancy: int, blocks: int) -> int:
    """Blocks of a launch that share an SM: its occupancy, or fewer when its grid does not
    fill every SM that many times (the blocks spread over the SMs)."""
    return max(1, min(occupancy, math.ceil(blocks / spec.sms)))


@dataclass
class BlockSpan:
    """A block in model time: its SM slot, start, end and the intervals it waited."""

    launch: int
    block: int
    sm: int
    slot: int
    start: float = 0.0
    end: float = 0.0
    waited: list = field(default_factory=list)  # (from, to) in seconds


@dataclass
class Timeline:
    """The model's result for one set of concurrent launches (times in seconds from its start)."""

    kernels: list  # kernel name per launch
    spans: list  # BlockSpan per block
    launch_start: list  # when each launch could start (its launch latency after its stream allowed it)
    launch_end: list
    waves: list  # ceil(blocks / (SMs x blocks per SM)) per launch
    spec: GpuSpec
    total: float = 0.0

    @property
    def modeled_us(self) -> float:
        return self.total * 1e6

    @property
    def launch_us(self) -> list:
        """Modeled µs of each launch: from its issue (its launch latency before its start) to
        the end of its last block."""
        lat = self.spec.launch_cost
        return [(e - s + lat) * 1e6 for s, e in zip(self.launch_start, self.launch_end)]


def model_timeline(run: ConcurrentRun) -> Timeline:
    """Place every block of `run` on an SM slot over model time (module docstring)."""
    spec = run.spec
    launches = run.launches
    n = len(launches)
    recs = {(r.launch, r.block): r for r in run.blocks}
    nblocks = [sum(1 for r in run.blocks if r.launch == li) for li in range(n)]
    share = [sharing(spec, run.blocks_per_sm[li], nblocks[li]) for li in range(n)]
    work = {k: block_seconds(r.stats, spec, share[r.launch]) for k, r in recs.items()}
    lat = spec.cpi["global"] / spec.clock_hz  # a satisfied wait's acquire load
    kind, seed = parse_dispatch(run.dispatch)
    queue = DispatchQueue(kind, seed, launches, nblocks)
    ready_at: list[float | None] = [None] * n
    remaining = list(nblocks)
    end_of: dict = {}
    launch_end = [0.0] * n

    def stream_done(li: int) -> bool:
        s = launches[li].stream
        return all(remaining[j] == 0 for j in range(li) if launches[j].stream == s)

    def stream_prev_end(li: int) -> float:
        s = launches[li].stream
        return max((launch_end[j] for j in range(li) if launches[j].stream == s), default=0.0)

    events: list = []  # (time, seq, kind, key)
    seq = 0

    def push(t: float, what: str, key) -> None:
        nonlocal seq
        heapq.heappush(events, (t, seq, what, key))
        seq += 1

    for li in range(n):
        if stream_done(li):
            ready_at[li] = spec.launch_cost
            push(spec.launch_cost, "ready", li)
    sms = SmPool(spec)
    spans: dict = {}
    state: dict = {}  # key -> [next wait index, work done (s), sorted waits]
    suspended: dict = {}  # key -> poster keys not ended yet
    waiting_on: dict = {}  # poster key -> the suspended keys it is missing from, in suspension order
    now = 0.0

    def advance(key, t: float) -> None:
        """Run block `key` from time t to its next wait or its end."""
        i, done, waits = state[key]
        total = work[key]
        if i < len(waits):
            frac, _ = waits[i]
            push(t + max(frac * total - done, 0.0), "wait", key)
            state[key][1] = max(frac * total, done)
        else:
            push(t + total - done, "end", key)

    def try_wait(key, t: float) -> bool:
        i, _, waits = state[key]
        _, posters = waits[i]
        missing = [p for p in posters if p not in end_of]
        if missing:
            suspended[key] = (set(missing), t)
            for p in dict.fromkeys(missing):  # a block that posted a word twice is one poster
                waiting_on.setdefault(p, []).append(key)
            return False
        resume = max([t] + [end_of[p] for p in posters])
        if resume > t or posters:
            spans[key].waited.append((t, resume + lat))
            resume += lat
        state[key][0] += 1
        advance(key, resume)
        return True

    def dispatch(t: float) -> None:
        queue.arrive([li for li, ra in enumerate(ready_at) if ra is not None and ra <= t], t)
        for li, b in queue.queued():
            place = sms.place(run.threads[li], run.smem[li])
            if place is None:
                return
            key = (li, b)
            queue.take(key)
            spans[key] = BlockSpan(li, b, place[0], place[1], start=t)
            r = recs[key]
            total_wi = max(r.stats.warp_instructions, 1)
            waits = sorted((min(1.0, w.progress / total_wi), w.posters) for w in r.waits.values())
            state[key] = [0, 0.0, waits]
            advance(key, t)

    dispatch(now)
    while events:
        now, _, what, key = heapq.heappop(events)
        if what == "wait":
            try_wait(key, now)
        elif what == "end":
            sp = spans[key]
            sp.end = now
            end_of[key] = now
            li = key[0]
            sms.free(sp.sm, sp.slot, run.threads[li], run.smem[li])
            remaining[li] -= 1
            launch_end[li] = max(launch_end[li], now)
            if remaining[li] == 0:
                for lj in range(li + 1, n):
                    if ready_at[lj] is None and stream_done(lj):
                        t_ready = stream_prev_end(lj) + spec.launch_cost
                        ready_at[lj] = t_ready
                        push(t_ready, "ready", lj)
            for wk in waiting_on.pop(key, ()):
                miss, t0 = suspended[wk]
                miss.discard(key)
                if not miss:
                    del suspended[wk]
                    try_wait(wk, t0)
        dispatch(now)
    if queue.waiting() or suspended:
        names = sorted({launches[li].kernel for li, _ in suspended} | {launches[li].kernel
                                                                        for li, _ in queue.waiting()})
        raise SimulatorError(f"the timeline model deadlocks (kernels {', '.join(names)}): blocks waiting in model "
                             "time hold every slot a block they wait for needs")
    total = max((sp.end for sp in spans.values()), default=0.0)
    waves = []
    for li in range(n):
        per_wave = spec.sms * run.blocks_per_sm[li]
        waves.append(math.ceil(nblocks[li] / per_wave))
    start = [ra if ra is not None else 0.0 for ra in ready_at]
    return Timeline([ln.kernel for ln in launches], list(spans.values()), start, launch_end, waves, spec, total)


def draw_timeline(timelines: list[Timeline], path: str, title: str | None = None) -> None:
    """Draw the model's timelines one after another (SM slots x time, blocks coloured by
    kernel, waits hatched) into a PNG file."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    kernels: dict[str, int] = {}
    for tl in timelines:
        for k in tl.kernels:
            kernels.setdefault(k, len(kernels))
    cmap = plt.get_cmap("tab10")
    rows: dict[tuple[int, int], int] = {}
    for tl in timelines:
        for sp in tl.spans:
            rows.setdefault((sp.sm, sp.slot), 0)
    row_of = {k: i for i, k in enumerate(sorted(rows))}
    height = max(2.0, min(12.0, 0.12 * len(row_of) + 1.5))
    fig, ax = plt.subplots(figsize=(10, height))
    offset = 0.0
    for tl in timelines:
        for sp in tl.spans:
            y = row_of[(sp.sm, sp.slot)]
            colour = cmap(kernels[tl.kernels[sp.launch]] % 10)
            ax.broken_barh([((offset + sp.start) * 1e6, (sp.end - sp.start) * 1e6)], (y - 0.4, 0.8),
                           facecolors=colour, edgecolors="black", linewidth=0.2)
            for a, b in sp.waited:
                ax.broken_barh([((offset + a) * 1e6, (b - a) * 1e6)], (y - 0.4, 0.8), facecolors="white",
                               edgecolors=colour, hatch="///", linewidth=0.2)
        offset += tl.total
    ax.set_xlabel("modeled time (µs) -- a model, not a measurement")
    ax.set_ylabel("SM slot (SM, slot)")
    ax.set_ylim(-1, len(row_of))
    if len(row_of) <= 40:
        ax.set_yticks(range(len(row_of)))
        ax.set_yticklabels([f"{s},{k}" for s, k in sorted(rows)], fontsize=6)
    handles = [Patch(color=cmap(i % 10), label=k) for k, i in kernels.items()]
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="///", label="waiting"))
    ax.legend(handles=handles, loc="upper right", fontsize=7)
    total_us = sum(tl.total for tl in timelines) * 1e6
    ax.set_title(title or f"timeline model on {timelines[0].spec.name if timelines else '?'}: {total_us:.2f} µs "
                 "(modeled)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
