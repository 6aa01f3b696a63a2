"""Memory for the PTX simulator: the global-memory arena, fake device addresses, bounds and
alignment checks, profiler-style counters (bytes, 32-byte sectors, unique bytes) and the
vectorised atomic read-modify-write used by `atom`/`red` on global and shared memory.

Address map (64-bit generic address space, all fake):
  GLOBAL_BASE + arena offset     global buffers (kernel arguments, module `.global` variables);
                                 each buffer starts 256-byte aligned and is followed by a gap of at
                                 least GAP bytes, so any access that runs off a buffer is caught.
  SHARED_WINDOW + offset         the executing block's shared memory (what `cvta.shared` yields)
  LOCAL_WINDOW + offset          the executing thread's local memory (what `cvta.local` yields)
  PARAM_WINDOW + offset          kernel parameters (only reachable by `mov` of a parameter name)
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

GLOBAL_BASE = 0x7F00_0000_0000
SHARED_WINDOW = 0x1000_0000_0000
LOCAL_WINDOW = 0x2000_0000_0000
PARAM_WINDOW = 0x3000_0000_0000
WINDOW_SIZE = 1 << 32
GAP = 4096
ALIGN = 256


@dataclass
class Buffer:
    name: str  # e.g. "arg 1 (vec_add_param_1)" or "global var foo"
    start: int  # arena offset
    nbytes: int
    array: np.ndarray | None  # the caller's array (written back after the launch)
    written: bool = False


class GlobalMemory:
    """One launch's global memory: a byte arena holding every buffer at its fake address."""

    def __init__(self, sizes_and_names: list[tuple[int, str, np.ndarray | None]]):
        self.buffers: list[Buffer] = []
        off = ALIGN  # offset 0 stays unmapped: a null pointer faults
        for nbytes, name, arr in sizes_and_names:
            self.buffers.append(Buffer(name, off, nbytes, arr))
            off += nbytes + GAP
            off = (off + ALIGN - 1) // ALIGN * ALIGN
        self.size = off
        self.arena = np.zeros(self.size, np.uint8)
        self.touched = TouchMap(self.size)
        self.starts = [b.start for b in self.buffers]
        self.ends = [b.start + b.nbytes for b in self.buffers]
        self._starts_np = np.array(self.starts, np.int64)
        self._ends_np = np.array(self.ends, np.int64)
        self._views: dict = {}
        self.wseq = 0  # global writes so far (a spin loop parks only if none since its read)
        self.on_write: Callable[[np.ndarray, int], None] | None = None  # while warps are parked on global words

    def wrote(self, off: np.ndarray, width: int) -> None:
        """Global bytes at arena offsets `off` were written (a store or an atomic)."""
        self.wseq += 1
        if self.on_write is not None:
            self.on_write(off, width)

    def address(self, i: int) -> int:
        return GLOBAL_BASE + self.buffers[i].start

    def view(self, dtype) -> np.ndarray:
        v = self._views.get(dtype)
        if v is None:
            v = self._views[dtype] = self.arena.view(dtype)
        return v

    def bytes_of(self, i: int) -> np.ndarray:
        b = self.buffers[i]
        return self.arena[b.start : b.start + b.nbytes]

    def unique_bytes(self) -> int:
        return self.touched.count()

    # -- checks ------------------------------------------------------------------------
    def check(self, off: np.ndarray, width: int) -> int | None:
        """Check arena offsets `off` (int64) for accesses of `width` bytes.

        Returns the buffer index when every access falls in one buffer (the common case),
        None when they are spread over several valid buffers; raises BadAccess otherwise."""
        if off.size == 0:
            return None
        lo = int(off.min())
        hi = int(off.max())
        i = bisect.bisect_right(self.starts, lo) - 1
        if i >= 0 and lo >= self.starts[i] and hi + width <= self.ends[i]:
            return i
        j = np.searchsorted(self._starts_np, off, side="right") - 1
        ok = j >= 0
        jj = np.where(ok, j, 0)
        ok &= off + width <= self._ends_np[jj] if len(self.buffers) else False
        if not np.all(ok):
            bad = int(np.flatnonzero(~ok)[0])
            raise BadAccess(bad, int(off[bad]))
        return None

    def describe(self, off: int, width: int) -> str:
        """Say where arena offset `off` is relative to the buffers."""
        addr = GLOBAL_BASE + off
        if not self.buffers:
            return f"address {addr:#x} is not in any buffer (the launch has no buffers)"
        i = bisect.bisect_right(self.starts, off) - 1
        if i < 0:
            b = self.buffers[0]
            return (f"address {addr:#x} is {b.start - off} bytes before {b.name} "
                    f"({b.nbytes} bytes at {GLOBAL_BASE + b.start:#x})")
        b = self.buffers[i]
        past = off + width - (b.start + b.nbytes)
        return (f"address {addr:#x} ({width} bytes) is {past} bytes past the end of {b.name} "
                f"({b.nbytes} bytes at {GLOBAL_BASE + b.start:#x})")

    def mark_written(self, i: int | None, off: np.ndarray) -> None:
        if i is not None:
            self.buffers[i].written = True
            return
        j = np.unique(np.searchsorted(self._starts_np, off, side="right") - 1)
        for k in j:
            self.buffers[int(k)].written = True


class BadAccess(Exception):
    """An access outside every buffer: `lane` is its position among the accesses checked, `off`
    its arena offset."""

    def __init__(self, lane: int, off: int):
        self.lane = lane
        self.off = off


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_LOG2 = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4, 32: 5}
_ONES = {1: np.uint8(0xFF), 2: np.uint16(0xFFFF), 4: np.uint32(0xFFFFFFFF), 8: np.uint64(0xFFFFFFFFFFFFFFFF)}


class TouchMap:
    """Which bytes of a byte array have been touched (a parallel uint8 array, viewed per width)."""

    def __init__(self, size: int):
        self.bits = np.zeros(size, np.uint8)
        self._views: dict = {}

    def view(self, dtype):
        v = self._views.get(dtype)
        if v is None:
            v = self._views[dtype] = self.bits.view(dtype)
        return v

    def mark(self, off: np.ndarray, width: int) -> None:
        n = off.size
        if n > 1:  # coalesced accesses cover one contiguous range: mark it with a slice
            lo, hi = int(off[0]), int(off[-1])
            if hi - lo == (n - 1) * width and np.all(np.diff(off) == width):
                self.bits[lo: hi + width] = 0xFF
                return
        if width in (1, 2, 4, 8):
            self.view(_UINT[width])[off >> _LOG2[width]] = _ONES[width]
        else:
            k = width // 8
            self.view(np.uint64)[(off >> 3)[:, None] + np.arange(k)] = _ONES[8]

    def count(self) -> int:
        return int(np.count_nonzero(self.bits))


def count_sectors(off: np.ndarray, warp: np.ndarray) -> int:
    """Distinct 32-byte sectors per warp-level request, summed over the warps.

    `off` are the byte offsets of the active lanes (in lane order), `warp` their warp ids
    (non-decreasing). Each lane's aligned access (≤ 32 bytes) lies in one sector."""
    n = off.size
    if n == 0:
        return 0
    sec = off >> 5
    if n == 1:
        return 1
    dw = warp[1:] != warp[:-1]
    ds = sec[1:] != sec[:-1]
    # fast path: sectors non-decreasing inside every warp -> runs are distinct sectors
    if not np.any(~dw & (sec[1:] < sec[:-1])):
        return 1 + int(np.count_nonzero(dw | ds))
    key = (warp.astype(np.int64) << 36) | (sec - sec.min())
    return int(np.unique(key).size)


# ------------------------------------------------------------------------------ atomics

_SCAN_UFUNC = {
    "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}


def _seg_scan(x: np.ndarray, segid: np.ndarray, uf) -> np.ndarray:
    """Inclusive segmented scan (Hillis-Steele doubling); segments are contiguous runs."""
    x = x.copy()
    n = x.size
    k = 1
    while k < n:
        same = segid[k:] == segid[:-k]
        if not same.any():
            break
        x[k:] = np.where(same, uf(x[:-k], x[k:]), x[k:])
        k *= 2
    return x


def atomic_rmw(mem: np.ndarray, e: np.ndarray, op: str, b, c=None, is_float: bool = False) -> np.ndarray:
    """Apply `op` at element indices `e` of `mem` for every lane, in lane order, as if each
    lane's read-modify-write were done one after another. Returns the old value each lane saw.

    ops: add, min, max, and, or, xor, exch, cas (b = compare, c = new), inc, dec."""
    n = e.size
    dt = mem.dtype
    b = np.broadcast_to(np.asarray(b, dtype=dt), (n,))
    if c is not None:
        c = np.broadcast_to(np.asarray(c, dtype=dt), (n,))
    if n == 0:
        return np.zeros(0, dt)
    order = np.argsort(e, kind="stable")
    se = e[order]
    first = np.empty(n, bool)
    first[0] = True
    np.not_equal(se[1:], se[:-1], out=first[1:])
    if first.all():  # every lane has its own address
        old = mem[e]
        mem[e] = _apply1(op, old, b, c, is_float)
        return old
    sb = b[order]
    sc = c[order] if c is not None else None
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], n] - 1
    segid = np.cumsum(first) - 1
    uniq = se[starts]
    m0 = mem[uniq]
    if op == "add" and is_float:
        acc = np.cumsum(sb.astype(np.float64))
        base = acc[starts] - sb[starts].astype(np.float64)
        excl = acc - sb.astype(np.float64) - base[segid]
        old_s = (m0[segid].astype(np.float64) + excl).astype(dt)
        np.add.at(mem, e, b)  # sequential in lane order: the exact final value
    elif op == "add":
        cs = np.cumsum(sb, dtype=dt)
        excl = cs - sb - (cs[starts] - sb[starts])[segid]
        old_s = (m0[segid] + excl).astype(dt)
        mem[uniq] = m0 + (cs[ends] - (cs[starts] - sb[starts]))
    elif op in _SCAN_UFUNC:
        uf = _SCAN_UFUNC[op]
        if is_float:
            uf = np.fmin if op == "min" else np.fmax
        incl = _seg_scan(sb, segid, uf)
        old_s = m0[segid].copy()
        nf = ~first
        old_s[nf] = uf(m0[segid[nf]], incl[np.flatnonzero(nf) - 1])
        mem[uniq] = uf(m0, incl[ends])
    elif op == "exch":
        old_s = np.empty(n, dt)
        old_s[first] = m0
        old_s[1:][~first[1:]] = sb[:-1][~first[1:]]
        mem[uniq] = sb[ends]
    elif op == "cas":
        assert sc is not None  # cas always carries its new value
        old_s = np.empty(n, dt)
        cur = m0.copy()
        pos = np.arange(n)
        remaining = np.ones(n, bool)
        while True:
            match = remaining & (sb == cur[segid])
            cand = np.where(match, pos, n)
            firstm = np.minimum.reduceat(cand, starts)
            fail = remaining & (pos < firstm[segid])
            old_s[fail] = cur[segid[fail]]
            remaining &= ~fail
            has = firstm < n
            mi = firstm[has]
            old_s[mi] = cur[has]
            cur[has] = sc[mi]
            remaining[mi] = False
            if not remaining.any():
                break
        mem[uniq] = cur
    elif op in ("inc", "dec"):
        old_s = np.empty(n, dt)
        cur = m0.copy()
        rank = np.arange(n) - starts[segid]
        for r in range(int(rank.max()) + 1):
            sel = np.flatnonzero(rank == r)
            s = segid[sel]
            old_s[sel] = cur[s]
            cur[s] = _apply1(op, cur[s], sb[sel], None, False)
        mem[uniq] = cur
    else:  # pragma: no cover - decoder only passes known ops
        raise ValueError(op)
    old = np.empty(n, dt)
    old[order] = old_s
    return old


def _apply1(op, old, b, c, is_float):
    if op == "add":
        return old + b
    if op == "min":
        return np.fmin(old, b) if is_float else np.minimum(old, b)
    if op == "max":
        return np.fmax(old, b) if is_float else np.maximum(old, b)
    if op == "and":
        return old & b
    if op == "or":
        return old | b
    if op == "xor":
        return old ^ b
    if op == "exch":
        return b.copy()
    if op == "cas":
        return np.where(old == b, c, old)
    if op == "inc":
        return np.where(old >= b, np.zeros_like(old), old + old.dtype.type(1))
    if op == "dec":
        return np.where((old == 0) | (old > b), b, old - old.dtype.type(1))
    raise ValueError(op)
