"""The state of a chunk of whole blocks of one launch, as arrays over its lanes: registers,
special registers, live lanes, shared memory (one array per chunk indexed by (block, offset)) and
local memory (one per lane). Its methods are what the decoded
instructions call: memory accesses (address checks, generic-address dispatch, counters) and
shared-memory race detection.

Shared-memory races: two different threads of a block touching the same shared byte between two
barriers, at least one writing, is an error (atomics exempt; `bar.warp.sync` orders the accesses
of the threads of the synced warps).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fsir.sim.decoder import Fault
from fsir.sim.loader import KernelLayout
from fsir.sim.memory import (
    GLOBAL_BASE,
    LOCAL_WINDOW,
    SHARED_WINDOW,
    WINDOW_SIZE,
    BadAccess,
    GlobalMemory,
    atomic_rmw,
    count_sectors,
)
from fsir.sim.stats import LaunchStats

_LOG2 = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4, 32: 5}
_WINDOW = {"global": 0, "shared": SHARED_WINDOW, "local": LOCAL_WINDOW}


class LaunchState:
    """State shared by the chunks of one launch."""

    def __init__(self, K: KernelLayout, grid: tuple[int, int, int], block: tuple[int, int, int], shared_bytes: int,
                 gm: GlobalMemory, params: np.ndarray, check_races: bool):
        self.K = K
        self.grid = grid
        self.block = block
        self.nthreads = block[0] * block[1] * block[2]
        self.nblocks = grid[0] * grid[1] * grid[2]
        self.gm = gm
        self.params = params
        self.smem_size = K.dynamic_shared_offset + shared_bytes if shared_bytes else K.static_shared
        self.smem_size = (self.smem_size + 15) // 16 * 16 if self.smem_size else 0
        self.check_races = check_races
        self.stats = LaunchStats(launches=1, threads=self.nthreads * self.nblocks)
        self.templates: dict = {}
        wpb = (self.nthreads + 31) // 32
        self.sconst = {
            "%ntid.x": block[0], "%ntid.y": block[1], "%ntid.z": block[2],
            "%nctaid.x": grid[0], "%nctaid.y": grid[1], "%nctaid.z": grid[2],
            "%nwarpid": wpb, "%smid": 0, "%nsmid": 1, "%gridid": 0, "%globaltimer": 0,
            "%dynamic_smem_size": shared_bytes, "%total_smem_size": self.smem_size,
        }


_CHUNK_INDEPENDENT = {"%tid.x", "%tid.y", "%tid.z", "%laneid", "%warpid", "%lanemask_eq", "%lanemask_lt",
                      "%lanemask_le", "%lanemask_gt", "%lanemask_ge"}


class ChunkTemplate:
    """Lane layout shared by every chunk of `nblk` blocks of a launch, and reusable buffers."""

    def __init__(self, L: LaunchState, nblk: int):
        T = L.nthreads
        n = nblk * T
        wpb = (T + 31) // 32
        self.lane = np.arange(n, dtype=np.int64)
        self.t = self.lane % T
        self.blk = self.lane // T
        self.slot = self.blk * (wpb * 32) + self.t
        self.warp = self.slot >> 5
        self.nwarp_slots = nblk * wpb
        self.slot2lane = np.full(nblk * wpb * 32, -1, np.int64)
        self.slot2lane[self.slot] = self.lane
        self.sregs: dict = {}
        self._buffers: dict = {}

    def buffer(self, name, size, dtype, fill):
        """A buffer reused by successive chunks, reset to `fill` (None: left as is)."""
        b = self._buffers.get(name)
        if b is None:
            b = self._buffers[name] = np.zeros(size, dtype) if fill in (0, None) else np.full(size, fill, dtype)
        elif fill is not None:
            b.fill(fill)
        return b


class Chunk:
    """One chunk of whole blocks: registers and per-lane state as arrays over its lanes."""

    def __init__(self, L: LaunchState, b0: int, nblk: int, tpl: ChunkTemplate | None = None):
        """`tpl`: the lane layout and buffers to use (by default the launch's template for `nblk`
        blocks, whose buffers successive chunks reuse; chunks alive at the same time need their own)."""
        K = L.K
        self.L = L
        self.K = K
        T = L.nthreads
        n = nblk * T
        self.n = n
        self.b0 = b0
        self.nblk = nblk
        self.regs: list = [None] * len(K.reg_dtypes)
        self.params = L.params
        self.gm = L.gm
        self.stats = L.stats
        self.sconst = L.sconst
        if tpl is None:
            tpl = L.templates.get(nblk)
            if tpl is None:
                tpl = L.templates[nblk] = ChunkTemplate(L, nblk)
        self.tpl = tpl
        bx, by, _ = L.block
        gx, gy, _ = L.grid
        self.lane_blk = tpl.blk
        self.lid = tpl.lane  # original lane index (identity of the thread inside the chunk)
        self.lane_slot = tpl.slot
        self.lane_warp = tpl.warp
        self.nwarp_slots = tpl.nwarp_slots
        self.slot2lane = tpl.slot2lane  # replaced (never mutated) on compaction
        self.tid_lin = tpl.t
        self.dense = T % 32 == 0  # lane i is slot i: warps are whole rows of 32 lanes
        self.compacted = False
        self.alive = None  # None: every lane of the chunk is live; else a bool array
        self._sreg_src = {
            "%tid.x": lambda: (self.tid_lin % bx).astype(np.uint32),
            "%tid.y": lambda: ((self.tid_lin // bx) % by).astype(np.uint32),
            "%tid.z": lambda: (self.tid_lin // (bx * by)).astype(np.uint32),
            "%ctaid.x": lambda: ((self.lane_blk + b0) % gx).astype(np.uint32),
            "%ctaid.y": lambda: (((self.lane_blk + b0) // gx) % gy).astype(np.uint32),
            "%ctaid.z": lambda: ((self.lane_blk + b0) // (gx * gy)).astype(np.uint32),
            "%laneid": lambda: (self.tid_lin & 31).astype(np.uint32),
            "%warpid": lambda: (self.tid_lin >> 5).astype(np.uint32),
            "%lanemask_eq": lambda: np.uint32(1) << (self.tid_lin & 31).astype(np.uint32),
            "%lanemask_lt": lambda: ((np.uint64(1) << (self.tid_lin & 31).astype(np.uint64)) - np.uint64(1)).astype(
                np.uint32
            ),
            "%lanemask_le": lambda: ((np.uint64(2) << (self.tid_lin & 31).astype(np.uint64)) - np.uint64(1)).astype(
                np.uint32
            ),
            "%lanemask_gt": lambda: (~((np.uint64(2) << (self.tid_lin & 31).astype(np.uint64)) - np.uint64(1))).astype(
                np.uint32
            ),
            "%lanemask_ge": lambda: (~((np.uint64(1) << (self.tid_lin & 31).astype(np.uint64)) - np.uint64(1))).astype(
                np.uint32
            ),
            "%clock": lambda: np.full(self.n, self.stats.instructions & 0xFFFFFFFF, np.uint32),
            "%clock64": lambda: np.full(self.n, self.stats.instructions, np.uint64),
        }
        self._sregs: dict = dict(tpl.sregs)
        self.arange = tpl.lane
        # shared memory (+ race shadow) and local memory: the template's buffers, cleared
        S = L.smem_size
        self.smem_size = S
        self.smem = tpl.buffer("smem", nblk * S, np.uint8, 0)
        self._smem_views: dict = {}
        self.check_races = L.check_races and S > 0
        if self.check_races:
            g = K.race_gran
            self.race_gran = g
            self.race_shift = int(math.log2(g))
            ng = nblk * S // g
            self.sh_w = tpl.buffer("sh_w", ng, np.int32, -1)
            self.sh_r = tpl.buffer("sh_r", ng, np.int32, -1)
            self.sh_line = tpl.buffer("sh_line", ng, np.int32, None)
            self.shadow_dirty = False
            self.read_log: list = []
        self.cp_async = None  # asynccopy.AsyncCopies once a cp.async executes
        # inter-block synchronisation (concurrent.py): the block's recorder, the global write
        # sequence number at the current spin iteration's first read, the warp-instructions
        # executed before the current wait (set by the engine)
        self.sync: Any = None  # concurrent._BlockSync
        self.read_seq: int | None = None
        self.progress = 0
        self.local_size = K.local_size
        self.local = tpl.buffer("local", n * K.local_size, np.uint8, 0)
        self._local_views: dict = {}

    # --- registers ----------------------------------------------------------------
    def zero_reg(self, ri):
        """An unwritten register reads as a uniform 0."""
        a = self.regs[ri] = np.zeros((), self.K.reg_dtypes[ri])
        return a

    def sreg(self, name):
        a = self._sregs.get(name)
        if a is None or name in ("%clock", "%clock64"):
            a = self._sregs[name] = self._sreg_src[name]()
            if not self.compacted and name in _CHUNK_INDEPENDENT:
                self.tpl.sregs[name] = a  # the same for every chunk of this size
        return a

    def compact(self, idx):
        """Keep only lanes `idx` (all other lanes have exited)."""
        self.regs = [r if r is None or r.ndim == 0 else r[idx] for r in self.regs]
        for name in list(self._sregs):
            self._sregs[name] = self._sregs[name][idx]
        self.lane_blk = self.lane_blk[idx]
        self.lid = self.lid[idx]
        self.lane_slot = self.lane_slot[idx]
        self.lane_warp = self.lane_warp[idx]
        self.tid_lin = self.tid_lin[idx]
        self.n = idx.size
        self.dense = False
        self.compacted = True
        self.alive = None
        self.arange = np.arange(self.n, dtype=np.int64)
        self.slot2lane = np.full(self.slot2lane.size, -1, np.int64)
        self.slot2lane[self.lane_slot] = self.arange

    def kill(self, lanes):
        """Lanes `lanes` (None: all) executed ret/exit."""
        if self.alive is None:
            self.alive = np.ones(self.n, bool)
        if lanes is None:
            self.alive[:] = False
        else:
            self.alive[lanes] = False

    def count_warps(self, idx):
        w = self.lane_warp if idx is None else self.lane_warp[idx]
        if w.size == 0:
            return 0
        return 1 + int(np.count_nonzero(w[1:] != w[:-1]))

    def describe_lane(self, lane: int) -> str:
        T = self.L.nthreads
        orig = int(self.lid[lane])
        t = orig % T
        b = orig // T + self.b0
        bx, by, _ = self.L.block
        gx, gy, _ = self.L.grid
        tid = (t % bx, (t // bx) % by, t // (bx * by))
        cta = (b % gx, (b // gx) % gy, b // (gx * gy))
        return f"thread ({tid[0]},{tid[1]},{tid[2]}) of block ({cta[0]},{cta[1]},{cta[2]})"

    def describe_lid(self, orig: int) -> str:
        T = self.L.nthreads
        t = orig % T
        bx, by, _ = self.L.block
        return f"thread ({t % bx},{(t // bx) % by},{t // (bx * by)})"

    # --- synchronisation through global memory (concurrent.py) -------------------------
    def note_sync_read(self, a, idx, head: bool) -> None:
        """A spin loop read global addresses `a` (generic or global: both are fake device
        addresses); `head`: the loop's first read, one wait per executing thread."""
        if head:
            self.stats.waits += a.size
        if self.read_seq is None:
            self.read_seq = self.gm.wseq
        if self.sync is not None:
            self.sync.read(self, np.asarray(a, np.int64) - GLOBAL_BASE, head)

    def note_post(self, a, idx) -> None:
        """A release atomic, reduction or store wrote global addresses `a`."""
        self.stats.posts += a.size
        if self.sync is not None:
            self.sync.post(np.asarray(a, np.int64) - GLOBAL_BASE)

    def may_park(self) -> bool:
        """At a spin loop's back edge: may the lanes taking it park until another block writes
        what they read? Only inside a concurrent launch, and only when no global write happened
        since the iteration's first read (else the write could have been missed)."""
        ok = self.sync is not None and self.read_seq == self.gm.wseq
        self.read_seq = None
        return ok

    # --- memory ---------------------------------------------------------------------
    def _lanes(self, idx):
        return self.arange if idx is None else idx

    def _check_align(self, a, width, idx, what):
        if width > 1:
            mis = (a & (width - 1)) != 0
            if mis.any():
                k = int(np.flatnonzero(mis)[0])
                lane = int(self._lanes(idx)[k])
                raise Fault(
                    f"misaligned {what} of {width} bytes at address {int(a[k]):#x} by {self.describe_lane(lane)}"
                )

    def _global_off(self, a, width, idx, what):
        off = a - GLOBAL_BASE
        try:
            bi = self.gm.check(off, width)
        except BadAccess as e:
            lane = int(self._lanes(idx)[e.lane])
            raise Fault(
                f"out-of-bounds global {what} by {self.describe_lane(lane)}: {self.gm.describe(e.off, width)}"
            ) from None
        self._check_align(a, width, idx, f"global {what}")
        return off, bi

    def _global_stats(self, off, idx, width, kind):
        st = self.stats
        n = off.size
        warp = self.lane_warp if idx is None else self.lane_warp[idx]
        sectors = count_sectors(off, warp)
        st.global_sectors += sectors
        if kind == "load":
            st.global_load_sectors += sectors
        else:
            st.global_store_sectors += sectors
        nw = 1 + int(np.count_nonzero(warp[1:] != warp[:-1])) if n else 0
        if kind == "load":
            st.global_load_bytes += n * width
            st.global_load_requests += nw
        elif kind == "store":
            st.global_store_bytes += n * width
            st.global_store_requests += nw
        else:
            st.global_atomic_bytes += n * width
        self.gm.touched.mark(off, width)

    def _shared_lin(self, a, idx, width, what):
        S = self.smem_size
        if a.size == 0:
            return a
        lo, hi = int(a.min()), int(a.max())
        if lo < 0 or hi + width > S:
            bad = np.flatnonzero((a < 0) | (a + width > S))[0]
            lane = int(self._lanes(idx)[bad])
            raise Fault(f"out-of-bounds shared {what} by {self.describe_lane(lane)}: offset {int(a[bad])} "
                        f"({width} bytes) is outside the block's {S} bytes of shared memory")
        self._check_align(a, width, idx, f"shared {what}")
        blk = self.lane_blk if idx is None else self.lane_blk[idx]
        return blk * S + a

    def _smem_view(self, dt):
        v = self._smem_views.get(dt)
        if v is None:
            v = self._smem_views[dt] = self.smem.view(dt)
        return v

    def _local_lin(self, a, idx, width, what):
        Ls = self.local_size
        if a.size and (int(a.min()) < 0 or int(a.max()) + width > Ls):
            bad = np.flatnonzero((a < 0) | (a + width > Ls))[0]
            lane = int(self._lanes(idx)[bad])
            raise Fault(f"out-of-bounds local {what} by {self.describe_lane(lane)}: offset {int(a[bad])} "
                        f"({width} bytes) is outside the thread's {Ls} bytes of local memory")
        self._check_align(a, width, idx, f"local {what}")
        lid = self.lid if idx is None else self.lid[idx]
        return lid * Ls + a

    def _local_view(self, dt):
        v = self._local_views.get(dt)
        if v is None:
            v = self._local_views[dt] = self.local.view(dt)
        return v

    @staticmethod
    def _gather(view, lin, esz, nv):
        e = lin >> _LOG2[esz]
        if nv == 1:
            return view[e]
        return view[e[:, None] + np.arange(nv)]

    @staticmethod
    def _scatter(view, lin, esz, nv, v):
        e = lin >> _LOG2[esz]
        if nv == 1:
            view[e] = v
        else:
            view[e[:, None] + np.arange(nv)] = v

    def _split_generic(self, a):
        """Classify generic addresses; returns {space: mask} for the spaces present."""
        g = a >= GLOBAL_BASE
        if g.all():
            return {"global": None}
        sh = (a >= SHARED_WINDOW) & (a < SHARED_WINDOW + WINDOW_SIZE)
        if sh.all():
            return {"shared": None}
        lo = (a >= LOCAL_WINDOW) & (a < LOCAL_WINDOW + WINDOW_SIZE)
        if lo.all():
            return {"local": None}
        out = {}
        other = ~(g | sh | lo)
        if other.any():
            out["global"] = g | other  # reported as out of bounds
        else:
            if g.any():
                out["global"] = g
        if sh.any():
            out["shared"] = sh
        if lo.any():
            out["local"] = lo
        return out

    def mem_load(self, space, a, idx, dt, nv, line):
        if space == "generic":
            parts = self._split_generic(a)
            if len(parts) == 1:
                sp = next(iter(parts))
                return self.mem_load(sp, a - _WINDOW[sp], idx, dt, nv, line)
            out = np.empty((a.size, nv) if nv > 1 else a.size, dt)
            lanes = self._lanes(idx)
            for sp, m in parts.items():
                out[m] = self.mem_load(sp, a[m] - _WINDOW[sp], lanes[m], dt, nv, line)
            return out
        esz = dt.itemsize
        width = esz * nv
        if space == "global":
            off, _ = self._global_off(a, width, idx, "load")
            self._global_stats(off, idx, width, "load")
            return self._gather(self.gm.view(dt), off, esz, nv)
        if space == "shared":
            lin = self._shared_lin(a, idx, width, "load")
            st = self.stats
            st.shared_loads += self.count_warps(idx)
            st.shared_load_bytes += a.size * width
            if self.cp_async is not None:
                self.cp_async.check_access(self, lin, idx, width, False, line)
            if self.check_races:
                self._race(lin, idx, width, False, line)
            return self._gather(self._smem_view(dt), lin, esz, nv)
        if space == "local":
            lin = self._local_lin(a, idx, width, "load")
            return self._gather(self._local_view(dt), lin, esz, nv)
        raise Fault(f"loads from .{space} are not supported")

    def mem_store(self, space, a, idx, dt, nv, v, line):
        if space == "generic":
            parts = self._split_generic(a)
            if len(parts) == 1:
                sp = next(iter(parts))
                return self.mem_store(sp, a - _WINDOW[sp], idx, dt, nv, v, line)
            lanes = self._lanes(idx)
            for sp, m in parts.items():
                self.mem_store(sp, a[m] - _WINDOW[sp], lanes[m], dt, nv, v[m], line)
            return
        esz = dt.itemsize
        width = esz * nv
        if space == "global":
            off, bi = self._global_off(a, width, idx, "store")
            self._global_stats(off, idx, width, "store")
            self.gm.mark_written(bi, off)
            self.gm.wrote(off, width)
            self._scatter(self.gm.view(dt), off, esz, nv, v)
        elif space == "shared":
            lin = self._shared_lin(a, idx, width, "store")
            st = self.stats
            st.shared_stores += self.count_warps(idx)
            st.shared_store_bytes += a.size * width
            if self.cp_async is not None:
                self.cp_async.check_access(self, lin, idx, width, True, line)
            if self.check_races:
                self._race(lin, idx, width, True, line)
            self._scatter(self._smem_view(dt), lin, esz, nv, v)
        elif space == "local":
            lin = self._local_lin(a, idx, width, "store")
            self._scatter(self._local_view(dt), lin, esz, nv, v)
        else:
            raise Fault(f"stores to .{space} are not supported")

    def mem_atomic(self, space, a, idx, dt, op, b, c, is_float, line):
        if space == "generic":
            parts = self._split_generic(a)
            if len(parts) != 1 or "local" in parts:
                raise Fault("generic atomics must all address global or all address shared memory")
            sp = next(iter(parts))
            return self.mem_atomic(sp, a - _WINDOW[sp], idx, dt, op, b, c, is_float, line)
        esz = dt.itemsize
        n = a.size
        b = np.broadcast_to(np.asarray(b, dt), (n,))
        if c is not None:
            c = np.broadcast_to(np.asarray(c, dt), (n,))
        if space == "global":
            off, bi = self._global_off(a, esz, idx, "atomic")
            self._global_stats(off, idx, esz, "atomic")
            self.gm.mark_written(bi, off)
            self.gm.wrote(off, esz)
            return atomic_rmw(self.gm.view(dt), off >> _LOG2[esz], op, b, c, is_float)
        lin = self._shared_lin(a, idx, esz, "atomic")
        if self.cp_async is not None:
            self.cp_async.check_access(self, lin, idx, esz, True, line)
        self.stats.shared_stores += self.count_warps(idx)
        self.stats.shared_store_bytes += n * esz
        return atomic_rmw(self._smem_view(dt), lin >> _LOG2[esz], op, b, c, is_float)

    def load_param(self, a, dt, nv, line):
        w = dt.itemsize * nv
        if a.size and (int(a.min()) < 0 or int(a.max()) + w > self.params.size):
            raise Fault(
                f"parameter load at offset {int(a.min())} is outside the {self.params.size} bytes of parameters"
            )
        return self._gather(self.params.view(np.uint8).view(dt) if self.params.size % dt.itemsize == 0 else
                            np.frombuffer(self.params.tobytes() + b"\0" * 16, dt), a, dt.itemsize, nv)

    # --- shared-memory race detection ------------------------------------------------
    def _race(self, lin, idx, width, is_store, line):
        """Check one shared access against the accesses since the last barrier.

        Shadow state per granule (race_gran bytes): W = the thread that wrote it (-1 none), R = the
        thread that read it (-1 none, -2 several). Reads are only logged (a cheap check against W);
        the log is folded into R when a write follows in the same barrier interval."""
        g = self.race_gran
        sh = self.race_shift
        lid = (self.lid if idx is None else self.lid[idx]).astype(np.int32)
        if width == g:
            gi = lin >> sh
            tid = lid
        else:
            k = width // g
            gi = ((lin >> sh)[:, None] + np.arange(k)).ravel()
            tid = np.repeat(lid, k)
        W = self.sh_w
        self.shadow_dirty = True
        w0 = W[gi]
        bad = (w0 != tid) & (w0 >= 0)
        if not is_store:
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                self._race_fault(
                    gi[k],
                    tid[k],
                    f"reads shared memory that {self.describe_lid(int(w0[k]))} of the same block wrote",
                    line,
                    int(self.sh_line[gi[k]]),
                )
            self.read_log.append((gi, tid))
            return
        if self.read_log:
            self._fold_reads()
        R = self.sh_r
        r0 = R[gi]
        badr = (r0 == -2) | ((r0 >= 0) & (r0 != tid))
        if badr.any():
            k = int(np.flatnonzero(badr)[0])
            other = int(r0[k])
            who = self.describe_lid(other) if other >= 0 else "other threads"
            self._race_fault(gi[k], tid[k], f"writes shared memory that {who} of the same block read", line, None)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            self._race_fault(
                gi[k],
                tid[k],
                f"writes shared memory that {self.describe_lid(int(w0[k]))} of the same block wrote",
                line,
                int(self.sh_line[gi[k]]),
            )
        W[gi] = tid
        dup = W[gi] != tid
        if dup.any():
            k = int(np.flatnonzero(dup)[0])
            self._race_fault(
                gi[k],
                tid[k],
                f"and {self.describe_lid(int(W[gi[k]]))} of the same block both write the same shared memory",
                line,
                None,
            )
        self.sh_line[gi] = line

    def _fold_reads(self):
        R = self.sh_r
        for gi, tid in self.read_log:
            r0 = R[gi]
            R[gi] = tid
            multi = (R[gi] != tid) | ((r0 != -1) & (r0 != tid))
            if multi.any():
                R[gi[multi]] = -2
        self.read_log = []

    def _race_fault(self, gran, tid, what, line, other_line, same_instr=False):
        S = self.smem_size
        byte = int(gran) * self.race_gran
        blk = byte // S + self.b0
        off = byte % S
        gx, gy, _ = self.L.grid
        sym = self._shared_symbol(off)
        where = f"offset {off}" + (f" ({sym})" if sym else "")
        since = f" at PTX line {other_line}" if other_line else ""
        raise Fault(f"shared-memory race in block ({blk % gx},{(blk // gx) % gy},{blk // (gx * gy)}): "
                    f"{self.describe_lid(int(tid))} {what}{since} at {where} with no barrier in between")

    def _shared_symbol(self, off):
        best = None
        for name, o in self.K.shared_syms.items():
            if o <= off and (best is None or o > best[1]):
                best = (name, o)
        if best is None:
            return None
        return f"{best[0]}+{off - best[1]}"

    def barrier_passed(self):
        self.stats.barriers += 1
        if self.check_races and self.shadow_dirty:
            self.sh_w.fill(-1)
            self.sh_r.fill(-1)
            self.read_log = []
            self.shadow_dirty = False

    def warp_sync(self, idx):
        """bar.warp.sync: accesses of the syncing warps' threads are ordered from now on."""
        if not (self.check_races and self.shadow_dirty):
            return
        if self.read_log:
            self._fold_reads()
        warps = np.zeros(self.nwarp_slots + 1, bool)
        warps[self.lane_warp if idx is None else self.lane_warp[idx]] = True
        T = self.L.nthreads
        wpb = (T + 31) // 32

        def owner_warp(x):
            return (x // T) * wpb + (x % T) // 32
        for arr in (self.sh_w, self.sh_r):
            own = arr >= 0
            ow = np.where(own, owner_warp(np.where(own, arr, 0)), self.nwarp_slots)
            arr[own & warps[ow]] = -1


