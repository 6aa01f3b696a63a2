"""The simulator's engine: runs the decoded code of one kernel over a chunk of whole blocks.

  * Divergence: lanes with equal PC form a group; the engine always steps the group with the
    smallest PC (structured code reconverges where the groups meet, loops included). A branch
    splits a group; reaching another group's PC merges them. Lanes that `ret`/`exit` die; when a
    single group remains the chunk is compacted to its live lanes, so code after an early return
    runs without masks.
  * Spin loops (a backward branch around acquire/volatile/relaxed loads that writes nothing,
    found by loader.sync_roles): lanes taking the back edge park until another block writes
    what they read (ChunkRunner.run returns False; concurrent.py wakes them).
  * `bar.sync`: a group reaching a barrier parks there; when no group can run, every parked group
    passes its barrier together (so each block proceeds once all of its live lanes arrived; lanes
    that exited do not count). Shared-memory race tracking resets at that point. `bar.sync` with
    a thread count and named barriers behave like a full-block `bar.sync`.

Decoded code is a list of (kind, fn, target, PTX line): kind 0 runs `fn(chunk, lanes)`, 1 is a
branch (fn: its guard or None), 2 `ret`/`exit` (fn: its guard or None), 3 a barrier, 4 a spin
loop's back edge (a branch), 5 a wait's first read (kind 0 that notes the block's progress first).
"""

from __future__ import annotations

import numpy as np

from fsir.errors import SimulatorError
from fsir.sim.chunk import Chunk
from fsir.sim.classes import add_class_counts
from fsir.sim.decoder import Fault

MAX_STEPS = 50_000_000  # control-flow instructions a chunk executes before its launch is declared hung


def _union(a, b, n):
    """Union of two disjoint sorted lane-index arrays (None = all n lanes)."""
    if a is None or b is None:
        return None
    k = a.size + b.size
    if k == n:
        return None
    if k * 8 < n:  # small groups: sorting is cheaper than a mask over all lanes
        u = np.concatenate((a, b))
        u.sort(kind="stable")
        return u
    m = np.zeros(n, bool)
    m[a] = True
    m[b] = True
    return np.flatnonzero(m)


def run_chunk(ch: Chunk) -> None:
    """Run the chunk's lanes to completion; adds the executed instructions to its stats. A fault
    becomes a SimulatorError naming the kernel and the PTX line."""
    if not ChunkRunner(ch).run():  # pragma: no cover - kernels with spin loops run in concurrent.py
        raise SimulatorError(f"kernel '{ch.K.name}': a spin loop waits outside a concurrent launch")


class ChunkRunner:
    """The execution state of a chunk (its groups of lanes and their PCs), resumable: `run`
    returns False when every live lane waits in a spin loop (kind 4, a spin loop's back edge
    taken while no global write happened since the iteration's reads: parked in `spinning`)
    or at a barrier its block's spinning lanes have not reached; `wake` makes the spinning
    lanes runnable again at their loop head."""

    def __init__(self, ch: Chunk):
        self.ch = ch
        self.runnable: dict = {0: None}
        self.parked: dict = {}
        self.spinning: dict = {}
        self.executed = [0] * len(ch.K.code)  # lanes that executed each instruction (classes.py)
        self.wc = 0
        self.steps = 0
        self.done = False
        self.park_seq = 0  # global write sequence number when its first lanes parked

    def wake(self) -> None:
        ch = self.ch
        for q, idx in self.spinning.items():
            self.runnable[q] = idx if q not in self.runnable else _union(self.runnable[q], idx, ch.n)
        self.spinning = {}

    def run(self) -> bool:
        """Run until every lane has exited (True) or every live lane waits (False)."""
        ch = self.ch
        code = ch.K.code
        runnable = self.runnable
        parked = self.parked
        spinning = self.spinning
        stats = ch.stats
        executed = self.executed
        wc = self.wc
        steps = self.steps
        INF = 1 << 60
        pc = 0
        line = 0
        try:
            while True:
                if not runnable:
                    if spinning:
                        self.wc, self.steps = wc, steps
                        return False
                    if not parked:
                        break
                    ch.barrier_passed()
                    for p, idx in parked.items():
                        q = p + 1
                        runnable[q] = idx if q not in runnable else _union(runnable[q], idx, ch.n)
                    parked.clear()
                    continue
                pc = min(runnable)
                idx = runnable.pop(pc)
                if idx is not None and not runnable and not parked and not spinning:
                    if idx.size == 0:
                        break
                    ch.compact(idx)  # every other lane has exited
                    idx = None
                limit = min(runnable) if runnable else INF
                nl = ch.n if idx is None else idx.size
                nw = ch.count_warps(idx)
                while True:
                    if pc >= limit:
                        runnable[pc] = idx if pc not in runnable else _union(runnable[pc], idx, ch.n)
                        break
                    kind, fn, tgt, line = code[pc]
                    executed[pc] += nl
                    wc += nw
                    if kind == 0:
                        fn(ch, idx)
                        pc += 1
                        continue
                    if kind == 5:  # a wait's first read
                        ch.progress = wc
                        fn(ch, idx)
                        pc += 1
                        continue
                    steps += 1
                    if steps > MAX_STEPS:
                        raise Fault("the launch executed too many branches (an infinite loop?)")
                    if kind == 1 or kind == 4:  # bra (4: a spin loop's back edge)
                        if fn is None:
                            p = None
                            k = nl
                        else:
                            p = fn(ch, idx)
                            k = (nl if p else 0) if p.ndim == 0 else int(np.count_nonzero(p))
                        if kind == 4 and k:
                            stats.spins += k
                            stats.waits -= k  # the next iteration's first read is no new wait
                            if ch.may_park():
                                if not spinning:
                                    self.park_seq = ch.gm.wseq
                                if k == nl:
                                    taken, fall = idx, None
                                elif p is None:  # pragma: no cover - an unguarded branch is taken by all
                                    raise AssertionError
                                elif idx is None:
                                    taken, fall = np.flatnonzero(p), np.flatnonzero(~p)
                                else:
                                    taken, fall = idx[p], idx[~p]
                                spinning[tgt] = taken if tgt not in spinning else _union(spinning[tgt], taken, ch.n)
                                if fall is not None:
                                    q = pc + 1
                                    runnable[q] = fall if q not in runnable else _union(runnable[q], fall, ch.n)
                                break
                        if k == nl:
                            pc = tgt
                        elif k == 0:
                            pc += 1
                        else:
                            assert p is not None
                            if idx is None:
                                taken, fall = np.flatnonzero(p), np.flatnonzero(~p)
                            else:
                                taken, fall = idx[p], idx[~p]
                            for q, lanes in ((tgt, taken), (pc + 1, fall)):
                                runnable[q] = lanes if q not in runnable else _union(runnable[q], lanes, ch.n)
                            break
                    elif kind == 2:  # ret / exit
                        if fn is None:
                            ch.kill(idx)
                            break
                        p = fn(ch, idx)
                        k = (nl if p else 0) if p.ndim == 0 else int(np.count_nonzero(p))
                        if k == nl:
                            ch.kill(idx)
                            break
                        if k:
                            ch.kill(np.flatnonzero(p) if idx is None else idx[p])
                            idx = (np.flatnonzero(~p) if idx is None else idx[~p])
                            nl = idx.size
                            nw = ch.count_warps(idx)
                        pc += 1
                    else:  # barrier
                        parked[pc] = idx if pc not in parked else _union(parked[pc], idx, ch.n)
                        break
        except Fault as e:
            K = ch.K
            src = K.module.lines[line - 1].strip() if 0 < line <= len(K.module.lines) else ""
            raise SimulatorError(f"kernel '{K.name}', PTX line {line} (`{src}`): {e}") from None
        stats.instructions += sum(executed)
        stats.warp_instructions += wc
        add_class_counts(stats, ch.K, executed)
        self.wc, self.steps = wc, steps
        self.done = True
        return True
