"""`cp.async` (global -> shared copies that complete asynchronously) and its groups.

    cp.async.ca.shared.global [dst], [src], 4|8|16 {, src-size | ignore-src predicate};
    cp.async.cg.shared.global [dst], [src], 16 {, src-size | ignore-src predicate};
    cp.async.commit_group;  cp.async.wait_group N;  cp.async.wait_all;

Model (per thread, as the PTX ISA defines it): a thread's cp.async operations join its current,
uncommitted group; `commit_group` closes that group (empty groups count); `wait_group N` waits until
at most the N most recent committed groups of the thread are pending; `wait_all` commits and waits
for everything. The simulator reads the source when the copy is issued and writes the destination
when the copy completes — at the wait that covers its group — so the data is visible only after the
wait, as on hardware.

Races (reported as shared-memory races naming the kernel, PTX line and address, when race checking is
on): any thread reading or writing shared memory that a copy still in flight will write (before the
issuing thread's wait covers it), and a cp.async whose destination is still being written by another
copy. A completed copy counts as a write by its thread at the wait, so another thread reading it needs
a barrier after the wait, as on hardware; the issue itself is checked as a write against the accesses
since the last barrier.

Bytes beyond `src-size` are zero-filled and not read (src-size 0 reads nothing, so its source address
may be anything); a true `ignore-src` predicate zero-fills the whole copy.
"""

from __future__ import annotations

import numpy as np

from fsir.sim.decoder.loadstore import Addr
from fsir.sim.decoder.numeric import DecodeError, Fault
from fsir.sim.parser import Imm, Mem, NotReg, Reg

_U8 = np.dtype(np.uint8)
_GRAN = 4  # bytes per granule of the in-flight shadow (cp.async sizes are multiples of 4)


class _Copies:
    """The copies one cp.async instruction issued for a set of threads, not yet complete."""

    __slots__ = ("data", "group", "lid", "lin", "line", "size")

    def __init__(self, lid, group, lin, data, size, line):
        self.lid = lid  # issuing threads (the chunk's original lane ids), sorted
        self.group = group  # the group number each copy belongs to
        self.lin = lin  # destination: byte offset in the chunk's shared memory
        self.data = data  # (m, size) uint8, read at issue
        self.size = size
        self.line = line


class AsyncCopies:
    """The in-flight cp.async state of one chunk (created by its first cp.async)."""

    def __init__(self, ch):
        n0 = ch.tpl.lane.size
        self.committed = np.zeros(n0, np.int64)  # groups each thread has committed
        self.pending: list[_Copies] = []
        self.tracking = ch.check_races
        if self.tracking:
            self.owner = ch.tpl.buffer("cp_async_owner", ch.smem.size // _GRAN + 1, np.int32, -1)

    # --- checks used by every shared-memory access -------------------------------------------
    def check_access(self, ch, lin, idx, width, is_store, line):
        """Fault if shared bytes [lin, lin+width) of any lane are the destination of a copy in flight."""
        if not self.pending or not self.tracking:
            return
        gi = _granules(lin, width)
        own = self.owner[gi]
        busy = own >= 0
        if busy.any():
            k = int(np.flatnonzero(busy)[0]) // max(1, (width + _GRAN - 1) // _GRAN)
            lanes = ch.arange if idx is None else idx
            who = ch.describe_lid(int(ch.lid[lanes[k]]))
            verb = "writes" if is_store else "reads"
            self._fault(ch, int(gi[np.flatnonzero(busy)[0]]), f"{who} {verb}")

    def _fault(self, ch, gran, who_does):
        byte = gran * _GRAN
        owner = int(self.owner[gran])
        line = next((int(c.line) for c in self.pending if (c.lid == owner).any()
                     and ((c.lin <= byte) & (byte < c.lin + c.size))[c.lid == owner].any()), 0)
        S = ch.smem_size
        blk = byte // S + ch.b0
        off = byte % S
        gx, gy, _ = ch.L.grid
        sym = ch._shared_symbol(off)
        where = f"offset {off}" + (f" ({sym})" if sym else "")
        raise Fault(f"shared-memory race in block ({blk % gx},{(blk // gx) % gy},{blk // (gx * gy)}): "
                    f"{who_does} shared memory at {where} that the cp.async of {ch.describe_lid(owner)} "
                    f"at PTX line {line} is still copying (its cp.async.wait_group has not completed it)")

    # --- the instructions -----------------------------------------------------------------------
    def issue(self, ch, idx, lin, data, size, line):
        lanes = ch.arange if idx is None else idx
        lid = ch.lid[lanes]
        if self.tracking:
            self.check_access(ch, lin, idx, size, True, line)
        if ch.check_races:  # the write may land any time from now: ordered after this interval's reads
            ch._race(lin, idx, size, True, line)
        if self.tracking:
            gi = _granules(lin, size)
            tid = np.repeat(lid, size // _GRAN).astype(np.int32)
            self.owner[gi] = tid
            dup = self.owner[gi] != tid  # two copies of this instruction with one destination
            if dup.any():
                k = int(np.flatnonzero(dup)[0])
                self._fault(ch, int(gi[k]), f"the cp.async of {ch.describe_lid(int(tid[k]))} writes")
        self.pending.append(_Copies(lid, self.committed[lid], lin, data, size, line))

    def commit(self, ch, idx):
        lid = ch.lid if idx is None else ch.lid[idx]
        self.committed[lid] += 1

    def wait(self, ch, idx, n_recent):
        """Complete the copies of the executing threads in all but their `n_recent` latest groups."""
        if not self.pending:
            return
        lid = ch.lid if idx is None else ch.lid[idx]
        limit = np.full(self.committed.size, -1, np.int64)
        limit[lid] = self.committed[lid] - n_recent
        keep = []
        for c in self.pending:
            done = c.group < limit[c.lid]
            if done.all():
                self._complete(ch, c, None)
            elif done.any():
                self._complete(ch, c, done)
                rest = ~done
                keep.append(_Copies(c.lid[rest], c.group[rest], c.lin[rest], c.data[rest], c.size, c.line))
            else:
                keep.append(c)
        self.pending = keep

    def _complete(self, ch, c, sel):
        lid, lin, data = (c.lid, c.lin, c.data) if sel is None else (c.lid[sel], c.lin[sel], c.data[sel])
        ch.smem[lin[:, None] + np.arange(c.size)] = data
        if self.tracking:
            self.owner[_granules(lin, c.size)] = -1
        if ch.check_races:  # the copy lands now: a write by its thread in this barrier interval
            lanes = np.searchsorted(ch.lid, lid)
            ch._race(lin, lanes, c.size, True, c.line)


def _granules(lin, width):
    k = max(1, (width + _GRAN - 1) // _GRAN)
    g = lin // _GRAN
    return g if k == 1 else (g[:, None] + np.arange(k)).ravel()


def _state(ch) -> AsyncCopies:
    s = ch.cp_async
    if s is None:
        s = ch.cp_async = AsyncCopies(ch)
    return s


def op_cp(D, ins, parts, ops):
    parts = [p.split("::")[0] if p.startswith("shared") else p for p in parts]
    if parts[:1] != ["async"] or any(p in parts for p in ("bulk", "mbarrier")):
        raise DecodeError(f"unsupported instruction '{ins.opcode}'")
    if "commit_group" in parts:
        return lambda ch, idx: _state(ch).commit(ch, idx)
    if "wait_all" in parts:
        def wait_all(ch, idx):
            s = _state(ch)
            s.commit(ch, idx)
            s.wait(ch, idx, 0)
        return wait_all
    if "wait_group" in parts:
        if len(ops) != 1 or not isinstance(ops[0], Imm) or int(ops[0].value) < 0:
            raise DecodeError(f"'{ins.opcode}' expects a non-negative integer constant")
        n = int(ops[0].value)
        return lambda ch, idx: _state(ch).wait(ch, idx, n)
    if "shared" not in parts or "global" not in parts:
        raise DecodeError(f"unsupported instruction '{ins.opcode}'")
    ops = list(ops)
    if any(p.startswith("L2") and "cache_hint" in p for p in parts):
        ops = ops[:-1]  # the cache-policy operand does not change results
    if len(ops) not in (3, 4) or not isinstance(ops[0], Mem) or not isinstance(ops[1], Mem) \
            or not isinstance(ops[2], Imm):
        raise DecodeError(f"'{ins.opcode}' expects [dst], [src], cp-size{{, src-size}}")
    size = int(ops[2].value)
    if size not in (4, 8, 16) or ("cg" in parts and size != 16):
        raise DecodeError(f"'{ins.opcode}': cp-size must be 4, 8 or 16 (16 for .cg), got {size}")
    dsta = Addr(D, ops[0], "shared")
    srca = Addr(D, ops[1], "global")
    ignore = srcsize = None
    if len(ops) == 4:
        x = ops[3]
        if isinstance(x, NotReg) or (isinstance(x, Reg) and x.name in D.K.regs and D.K.regs[x.name][1] == "pred"):
            ignore = D.pred(x)
        else:
            srcsize = D.rd(x, "u32")
    line = ins.line
    D.K.note_access("shared", size)
    dt = np.dtype(np.uint32)
    nv = size // 4

    def fn(ch, idx):
        n = ch.n if idx is None else idx.size
        s = srca(ch, idx)
        if ignore is not None:
            ss = np.where(np.broadcast_to(np.asarray(ignore(ch, idx)), (n,)), 0, size)
        elif srcsize is not None:
            ss = np.broadcast_to(np.asarray(srcsize(ch, idx)).astype(np.int64), (n,))
        else:
            ss = None
        if ss is None or (ss >= size).all():
            data = ch.mem_load("global", s, idx, dt, nv, line).reshape(n, nv).view(_U8)
        else:
            data = _partial_load(ch, idx, s, np.minimum(ss, size), size, line)
        d = dsta(ch, idx)
        lin = ch._shared_lin(d, idx, size, "cp.async store")
        st = ch.stats
        st.shared_stores += ch.count_warps(idx)
        st.shared_store_bytes += n * size
        _state(ch).issue(ch, idx, lin, np.ascontiguousarray(data), size, line)
    return fn


def _partial_load(ch, idx, s, ss, size, line):
    """Source bytes [0, ss) of each lane's copy, zeros after: only those bytes are read."""
    n = s.size
    data = np.zeros((n, size), _U8)
    lanes = ch.arange if idx is None else idx
    full = ss == size
    if full.any():
        data[full] = ch.mem_load("global", s[full], lanes[full], np.dtype(np.uint32), size // 4,
                                 line).reshape(-1, size // 4).view(_U8)
    for b in range(size):
        m = (ss > b) & ~full
        if m.any():
            data[m, b] = ch.mem_load("global", s[m] + b, lanes[m], _U8, 1, line)
    return data

