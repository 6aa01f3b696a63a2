"""The simulator's engine: runs the decoded code of one kernel over a chunk of whole blocks.

  * Divergence: lanes with equal PC form a group; the engine always steps the group with the
    smallest PC (structured code reconverges where the groups meet, loops included). A branch
    splits a group; reaching another group's PC merges them. Lanes that `ret`/`exit` die; when a
    single group remains the chunk is compacted to its live lanes, so code after an early return
    runs without masks.
  * `bar.sync`: a group reaching a barrier parks there; when no group can run, every parked group
    passes its barrier together (so each block proceeds once all of its live lanes arrived; lanes
    that exited do not count). Shared-memory race tracking resets at that point. `bar.sync` with
    a thread count and named barriers behave like a full-block `bar.sync`.

Decoded code is a list of (kind, fn, target, PTX line): kind 0 runs `fn(chunk, lanes)`, 1 is a
branch (fn: its guard or None), 2 `ret`/`exit` (fn: its guard or None), 3 a barrier.
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
    code = ch.K.code
    runnable: dict = {0: None}
    parked: dict = {}
    stats = ch.stats
    executed = [0] * len(code)  # lanes that executed each instruction (by class: fsir/sim/classes.py)
    wc = 0
    steps = 0
    INF = 1 << 60
    pc = 0
    line = 0
    try:
        while True:
            if not runnable:
                if not parked:
                    break
                ch.barrier_passed()
                for p, idx in parked.items():
                    q = p + 1
                    runnable[q] = idx if q not in runnable else _union(runnable[q], idx, ch.n)
                parked = {}
                continue
            pc = min(runnable)
            idx = runnable.pop(pc)
            if idx is not None and not runnable and not parked:
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
                steps += 1
                if steps > MAX_STEPS:
                    raise Fault("the launch executed too many branches (an infinite loop?)")
                if kind == 1:  # bra
                    if fn is None:
                        pc = tgt
                        continue
                    p = fn(ch, idx)
                    k = (nl if p else 0) if p.ndim == 0 else int(np.count_nonzero(p))
                    if k == nl:
                        pc = tgt
                    elif k == 0:
                        pc += 1
                    else:
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
