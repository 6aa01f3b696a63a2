"""fsir's vectorised PTX simulator.

    run_ptx(ptx, kernel, grid, block, args, shared_bytes=0) -> LaunchStats

executes one kernel launch of PTX text on the CPU. Every thread of the launch is one lane of
numpy arrays (a register is an array over lanes), so a launch of a million threads costs a few
hundred numpy operations per PTX instruction *executed by a lane group*, not a million Python steps.

How it works
  * The PTX is parsed once with a lark grammar (ptx.lark / ptx_parser.py) and every instruction is
    pre-decoded into a closure (sim_decode.py). Both are cached by PTX text.
  * Blocks are independent except through global memory, so a big launch runs as a sequence of
    chunks of whole blocks (at most CHUNK_LANES lanes and CHUNK_SMEM_BYTES of shared memory each).
  * Divergence: lanes with equal PC form a group; the engine always steps the group with the
    smallest PC (structured code reconverges where the groups meet, loops included). A branch
    splits a group; reaching another group's PC merges them. Lanes that `ret`/`exit` die; when a
    single group remains the chunk is compacted to its live lanes, so code after an early return
    runs without masks.
  * `bar.sync`: a group reaching a barrier parks there; when no group can run, every parked group
    passes its barrier together (so each block proceeds once all of its live lanes arrived; lanes
    that exited do not count). Shared-memory race tracking resets at that point.
  * Memory: global buffers live in one byte arena at fake, gap-separated device addresses
    (sim_memory.py) so out-of-bounds and misaligned accesses are caught and reported with the
    kernel, PTX line, thread and buffer; shared memory is one array per chunk indexed by
    (block, offset); local memory one per lane.

Counters (LaunchStats) are what a profiler reports: dynamic thread instructions, warp instructions,
global bytes requested, 32-byte sectors per warp request, distinct global bytes touched, shared
accesses. Predicated-off lanes still count as executing the instruction (as `inst_executed` does).

Semantics worth knowing
  * Registers are typed numpy arrays (f32 math in float32, integer wraparound, PTX shift clamping);
    a register holding the same value in every lane is kept as a 0-d array ("uniform").
  * `.approx` transcendentals use exact numpy functions; f32 `fma` is computed in float64 and
    rounded once; directed rounding (.rz/.rm/.rp) is honoured for f32 add/sub/mul/fma/div/cvt.
  * Atomics within one instruction apply in lane order (thread order); float `atom.add` returns old
    values accumulated in float64 while memory gets the exact sequential float32 sums.
  * Shared-memory races: two different threads of a block touching the same shared byte between
    two barriers, at least one writing, is an error (atomics exempt; `bar.warp.sync` orders the
    accesses of the threads of the synced warps).
  * `shfl.sync` from a lane that has exited or does not exist returns the lane's own value with a
    false predicate. The member mask is checked: a live lane named in it that does not execute the
    same shfl.sync (a divergent shuffle), or an executing lane outside it, is an error. `vote`,
    `redux` and `activemask` see the active lanes (their member masks are not checked).
    `bar.sync` with a thread count and named barriers behave like a full-block `bar.sync`.
  * Device functions (`.func` + `call`) are inlined at decode time (ptx_inline.py).

Not supported (a SimulatorError names the instruction and PTX line): texture/surface instructions,
`.const` space, `mma`/`wmma`/`ldmatrix`, `bar.arrive`/`bar.red`, indirect or recursive calls,
carry chains (`add.cc`, `addc`), `brx.idx`, `.b128`, packed-pair (f16x2/bf16x2) comparisons and
conversions, `match`, `elect`, clusters/TMA (`cp.async.bulk`), `f16`/`bf16` atomics.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, fields, replace

import numpy as np

from fsir.errors import SimulatorError
from fsir.runtime.ptx_inline import InlineError, has_calls, inline_calls
from fsir.runtime.ptx_parser import Imm, Instr, Label, NotReg, PTXModule, Reg, VarDecl, parse_ptx, type_size
from fsir.runtime.sim_decode import NP, DecodeError, Decoder, Fault
from fsir.runtime.sim_memory import (
    ALIGN, GAP, GLOBAL_BASE, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE, GlobalMemory, _BadAccess,
    atomic_rmw, count_sectors,
)

CHUNK_LANES = 64 * 1024  # lanes per chunk (whole blocks); smaller chunks stay in the CPU caches
CHUNK_SMEM_BYTES = 32 << 20
CHUNK_STATE_BYTES = 512 << 20  # registers + local memory of a chunk if every register is materialised
MAX_SHARED_BYTES = 227 * 1024  # the largest per-block shared memory of any current GPU
MAX_STEPS = 50_000_000  # executed group-instructions before a launch is declared hung

__all__ = ["run_ptx", "LaunchStats", "load_module", "SimModule", "CHUNK_LANES"]


# ----------------------------------------------------------------------------- stats


@dataclass
class LaunchStats:
    """Profiler-style counters of one launch (or, summed with `+`, of several)."""

    launches: int = 0
    threads: int = 0
    instructions: int = 0  # dynamic thread-instructions (active lanes summed over executed instructions)
    warp_instructions: int = 0  # dynamic warp-instructions
    global_load_bytes: int = 0  # bytes requested by threads
    global_store_bytes: int = 0
    global_atomic_bytes: int = 0
    global_unique_bytes: int = 0  # distinct global bytes touched (what a perfect cache sends to DRAM)
    global_sectors: int = 0  # 32-byte sectors per warp-level request, summed (loads, stores, atomics)
    global_load_sectors: int = 0
    global_store_sectors: int = 0  # stores and atomics
    global_load_requests: int = 0  # warp-level global load instructions
    global_store_requests: int = 0
    shared_loads: int = 0  # warp-level shared-memory load instructions
    shared_stores: int = 0  # warp-level shared-memory store instructions (atomics included)
    shared_load_bytes: int = 0
    shared_store_bytes: int = 0
    barriers: int = 0  # barrier releases

    def __add__(self, other: "LaunchStats") -> "LaunchStats":
        if not isinstance(other, LaunchStats):
            return NotImplemented
        return LaunchStats(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def __radd__(self, other):
        if other == 0:  # sum([...])
            return self
        return NotImplemented

    @property
    def global_bytes(self) -> int:
        return self.global_load_bytes + self.global_store_bytes + self.global_atomic_bytes


# ------------------------------------------------------------------------- kernels


class KernelLayout:
    """Registers, symbols and the decoded code of one kernel (independent of the launch)."""

    def __init__(self, module: "SimModule", fn):
        self.module = module
        self.name = fn.name
        self.params = fn.params
        self.regs: dict[str, tuple[int, str]] = {}
        self.reg_dtypes: list = []
        self.shared_syms: dict[str, int] = {}
        self.local_syms: dict[str, int] = {}
        self.param_offsets: dict[str, int] = {}
        self.min_shared_access = 16
        self.param_offsets, self.param_size = param_layout(fn.params)
        # shared: module-scope statics, then this function's, then the dynamic (extern) region
        if has_calls(fn):
            try:
                body = inline_calls(module.ptx, fn)
            except InlineError as e:
                raise SimulatorError(f"kernel '{self.name}', PTX line {e.line}:{e.col}: {e}") from None
            fn = replace(fn, body=body)
        shared_decls = [v for v in module.ptx.variables if v.space == "shared"]
        body_decls = [s for s in fn.body if isinstance(s, VarDecl)]
        shared_decls += [v for v in body_decls if v.space == "shared"]
        soff = 0
        externs = []
        for v in shared_decls:
            if "extern" in v.linkage or (v.dims and v.dims[-1] is None):
                externs.append(v)
                continue
            al = v.align or type_size(v.type)
            soff = (soff + al - 1) // al * al
            self.shared_syms[v.name] = soff
            soff += v.nbytes
        dyn_align = max([16] + [v.align or 1 for v in externs])
        self.dynamic_shared_offset = (soff + dyn_align - 1) // dyn_align * dyn_align if externs else soff
        for v in externs:
            self.shared_syms[v.name] = self.dynamic_shared_offset
        self.static_shared = soff
        loff = 0
        for v in body_decls:
            if v.space == "local":
                al = v.align or type_size(v.type)
                loff = (loff + al - 1) // al * al
                self.local_syms[v.name] = loff
                loff += v.nbytes
            elif v.space == "reg":
                if v.count is not None:
                    for i in range(v.count):
                        self._add_reg(f"{v.name}{i}", v.type, v.line)
                else:
                    self._add_reg(v.name, v.type, v.line)
            elif v.space in ("global", "const"):
                raise SimulatorError(f"kernel '{self.name}', PTX line {v.line}: function-scope .{v.space} variables are not supported")
        self.local_size = (loff + 15) // 16 * 16
        self._decode(fn)

    def _add_reg(self, name, typ, line):
        if name in self.regs:
            if self.regs[name][1] != typ:
                raise SimulatorError(f"kernel '{self.name}', PTX line {line}: register {name} redeclared with a different type")
            return
        if typ not in NP:
            raise SimulatorError(f"kernel '{self.name}', PTX line {line}: unsupported register type .{typ}")
        self.regs[name] = (len(self.reg_dtypes), typ)
        self.reg_dtypes.append(NP[typ])

    # symbol queries used by the decoder
    def symbol_address(self, name: str, space: str | None = None):
        if name in self.shared_syms and space in (None, "shared"):
            return self.shared_syms[name]
        if name in self.local_syms and space in (None, "local"):
            return self.local_syms[name]
        if name in self.module.global_addrs and space in (None, "global", "generic"):
            return self.module.global_addrs[name]
        if name in self.param_offsets and space in (None,):
            return PARAM_WINDOW + self.param_offsets[name]
        if name in self.shared_syms and space == "generic":
            return SHARED_WINDOW + self.shared_syms[name]
        if name in self.local_syms and space == "generic":
            return LOCAL_WINDOW + self.local_syms[name]
        return None

    def param_offset(self, name):
        return self.param_offsets.get(name)

    def special_const(self, name):
        return None

    def note_access(self, space, esize):
        if space in ("shared", "generic"):
            self.min_shared_access = min(self.min_shared_access, esize)

    def _decode(self, fn):
        labels: dict[str, int] = {}
        instrs: list[Instr] = []
        for s in fn.body:
            if isinstance(s, Label):
                labels[s.name] = len(instrs)
            elif isinstance(s, Instr):
                instrs.append(s)
        # falling off the end of the body (or branching to a label there) returns
        instrs.append(Instr("ret", [], None, instrs[-1].line if instrs else fn.line, 1))
        self.labels = labels
        D = Decoder(self)
        code = []
        for ins in instrs:
            try:
                code.append(self._decode_one(D, ins, labels))
            except DecodeError as e:
                raise SimulatorError(f"kernel '{self.name}', PTX line {ins.line}:{ins.col}: {e}") from None
        self.code = code
        self.instrs = instrs
        g = self.min_shared_access
        self.race_gran = g if g in (1, 2, 4, 8, 16) else 1

    def _decode_one(self, D, ins, labels):
        parts = ins.opcode.split(".")
        base = parts[0]
        guard = None
        if ins.guard is not None:
            gname, neg = ins.guard
            guard = D.pred(NotReg(gname) if neg else Reg(gname))
        if base == "bra" or base == "brx":
            if base == "brx" or not ins.operands or not isinstance(ins.operands[0], Reg):
                raise DecodeError(f"unsupported instruction '{ins.opcode}'")
            tgt = ins.operands[0].name
            if tgt not in labels:
                raise DecodeError(f"unknown label '{tgt}'")
            return (1, guard, labels[tgt], ins.line)
        if base in ("ret", "exit"):
            return (2, guard, 0, ins.line)
        if base in ("bar", "barrier"):
            if "warp" in parts:
                return (0, _guarded(lambda ch, idx: ch.warp_sync(idx), guard), 0, ins.line)
            if any(p in parts for p in ("arrive", "red")):
                raise DecodeError(f"unsupported instruction '{ins.opcode}'")
            if guard is not None:
                raise DecodeError("predicated barriers are not supported")
            return (3, None, 0, ins.line)
        if base == "call":  # pragma: no cover - calls are inlined before decoding
            raise DecodeError("unexpected call")
        fn = D.decode(ins)
        return (0, _guarded(fn, guard), 0, ins.line)


def _guarded(fn, guard):
    if guard is None:
        return fn

    def g(ch, idx):
        p = guard(ch, idx)
        if p.ndim == 0:  # uniform predicate
            if p:
                fn(ch, idx)
            return
        k = int(np.count_nonzero(p))
        if k == p.size:
            fn(ch, idx)
        elif k:
            fn(ch, np.flatnonzero(p) if idx is None else idx[p])
    return g


class SimModule:
    """A parsed PTX module with lazily decoded kernels and its `.global` variables."""

    def __init__(self, ptx: str):
        self.text = ptx
        self.ptx: PTXModule = parse_ptx(ptx)
        self.lines = ptx.splitlines()
        self._kernels: dict[str, KernelLayout] = {}
        self._lock = threading.Lock()
        # module-scope .global variables get fixed arena offsets (they come first in every launch)
        self.global_vars: list[tuple[VarDecl, int]] = []
        self.global_addrs: dict[str, int] = {}
        off = ALIGN
        for v in self.ptx.variables:
            if v.space == "global":
                self.global_vars.append((v, off))
                self.global_addrs[v.name] = GLOBAL_BASE + off
                off += v.nbytes + GAP
                off = (off + ALIGN - 1) // ALIGN * ALIGN
            elif v.space == "const":
                pass  # rejected when an instruction uses it
        self.global_data = {v.name: _init_bytes(v) for v, _ in self.global_vars}

    @property
    def kernel_names(self) -> list[str]:
        return list(self.ptx.kernels)

    def kernel(self, name: str) -> KernelLayout:
        k = self._kernels.get(name)
        if k is not None:
            return k
        fn = self.ptx.kernels.get(name)
        if fn is None or fn.body is None:
            avail = ", ".join(self.ptx.kernels) or "none"
            raise SimulatorError(f"unknown kernel '{name}' (the PTX defines: {avail})")
        with self._lock:
            k = self._kernels.get(name) or KernelLayout(self, fn)
            self._kernels[name] = k
        return k


def _init_bytes(v: VarDecl) -> np.ndarray:
    data = np.zeros(v.nbytes, np.uint8)
    if v.init is not None:
        vals = v.init if isinstance(v.init, list) else [v.init]
        flat = []

        def walk(x):
            if isinstance(x, list):
                for y in x:
                    walk(y)
            else:
                flat.append(x)
        walk(vals)
        dt = NP[v.type] if v.type in NP else np.dtype(np.uint8)
        arr = np.zeros(max(v.nbytes // dt.itemsize, 0), dt)
        for i, x in enumerate(flat[: arr.size]):
            if isinstance(x, Imm):
                if dt.kind == "f":
                    arr[i] = x.value
                else:
                    arr[i] = np.array(int(x.value) & ((1 << (8 * dt.itemsize)) - 1), np.uint64).astype(dt)
        data[: arr.nbytes] = arr.view(np.uint8)
    return data


_CACHE: "OrderedDict[str, SimModule]" = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 64


def load_module(ptx: str) -> SimModule:
    """Parse (or fetch from the cache) the PTX module `ptx`."""
    with _CACHE_LOCK:
        m = _CACHE.get(ptx)
        if m is not None:
            _CACHE.move_to_end(ptx)
            return m
    m = SimModule(ptx)
    with _CACHE_LOCK:
        _CACHE[ptx] = m
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return m


# --------------------------------------------------------------------------- chunk


class _Launch:
    """State shared by the chunks of one launch."""

    def __init__(self, K: KernelLayout, grid, block, shared_bytes, gm, params, check_races):
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


class _Template:
    """Lane layout shared by every chunk of `nblk` blocks of a launch, and reusable buffers."""

    def __init__(self, L: "_Launch", nblk: int):
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


class _Chunk:
    """One chunk of whole blocks: registers and per-lane state as arrays over its lanes."""

    def __init__(self, L: _Launch, b0: int, nblk: int):
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
        tpl = L.templates.get(nblk)
        if tpl is None:
            tpl = L.templates[nblk] = _Template(L, nblk)
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
            "%lanemask_eq": lambda: (np.uint32(1) << (self.tid_lin & 31).astype(np.uint32)),
            "%lanemask_lt": lambda: ((np.uint64(1) << (self.tid_lin & 31).astype(np.uint64)) - np.uint64(1)).astype(np.uint32),
            "%lanemask_le": lambda: ((np.uint64(2) << (self.tid_lin & 31).astype(np.uint64)) - np.uint64(1)).astype(np.uint32),
            "%lanemask_gt": lambda: (~((np.uint64(2) << (self.tid_lin & 31).astype(np.uint64)) - np.uint64(1))).astype(np.uint32),
            "%lanemask_ge": lambda: (~((np.uint64(1) << (self.tid_lin & 31).astype(np.uint64)) - np.uint64(1))).astype(np.uint32),
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
        self.local_size = K.local_size
        self.local = tpl.buffer("local", n * K.local_size, np.uint8, 0) if K.local_size else None
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

    # --- memory ---------------------------------------------------------------------
    def _lanes(self, idx):
        return self.arange if idx is None else idx

    def _check_align(self, a, width, idx, what):
        if width > 1:
            mis = (a & (width - 1)) != 0
            if mis.any():
                k = int(np.flatnonzero(mis)[0])
                lane = int(self._lanes(idx)[k])
                raise Fault(f"misaligned {what} of {width} bytes at address {int(a[k]):#x} by {self.describe_lane(lane)}")

    def _global_off(self, a, width, idx, what):
        off = a - GLOBAL_BASE
        try:
            bi = self.gm.check(off, width)
        except _BadAccess as e:
            lane = int(self._lanes(idx)[e.lane])
            raise Fault(f"out-of-bounds global {what} by {self.describe_lane(lane)}: {self.gm.describe(e.off, width)}") from None
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
            self._scatter(self.gm.view(dt), off, esz, nv, v)
        elif space == "shared":
            lin = self._shared_lin(a, idx, width, "store")
            st = self.stats
            st.shared_stores += self.count_warps(idx)
            st.shared_store_bytes += a.size * width
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
            return atomic_rmw(self.gm.view(dt), off >> _LOG2[esz], op, b, c, is_float)
        lin = self._shared_lin(a, idx, esz, "atomic")
        self.stats.shared_stores += self.count_warps(idx)
        self.stats.shared_store_bytes += n * esz
        return atomic_rmw(self._smem_view(dt), lin >> _LOG2[esz], op, b, c, is_float)

    def load_param(self, a, dt, nv, line):
        w = dt.itemsize * nv
        if a.size and (int(a.min()) < 0 or int(a.max()) + w > self.params.size):
            raise Fault(f"parameter load at offset {int(a.min())} is outside the {self.params.size} bytes of parameters")
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
                self._race_fault(gi[k], tid[k], f"reads shared memory that {self.describe_lid(int(w0[k]))} of the same block wrote",
                                 line, int(self.sh_line[gi[k]]))
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
            self._race_fault(gi[k], tid[k], f"writes shared memory that {self.describe_lid(int(w0[k]))} of the same block wrote",
                             line, int(self.sh_line[gi[k]]))
        W[gi] = tid
        dup = W[gi] != tid
        if dup.any():
            k = int(np.flatnonzero(dup)[0])
            self._race_fault(gi[k], tid[k], f"and {self.describe_lid(int(W[gi[k]]))} of the same block both write the same shared memory",
                             line, None)
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


_LOG2 = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4, 32: 5}
_WINDOW = {"global": 0, "shared": SHARED_WINDOW, "local": LOCAL_WINDOW}


# -------------------------------------------------------------------------- engine


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


def _run_chunk(ch: _Chunk) -> None:
    code = ch.K.code
    runnable: dict = {0: None}
    parked: dict = {}
    stats = ch.stats
    ic = 0
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
                ic += nl
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
    stats.instructions += ic
    stats.warp_instructions += wc


# -------------------------------------------------------------------------- launch


def _dims(d, what) -> tuple[int, int, int]:
    if isinstance(d, (int, np.integer)):
        d = (int(d),)
    try:
        d = tuple(int(x) for x in d)
    except TypeError:
        raise SimulatorError(f"{what} must be a tuple of 1 to 3 positive integers, got {d!r}") from None
    if not 1 <= len(d) <= 3 or any(x < 1 for x in d):
        raise SimulatorError(f"{what} must be a tuple of 1 to 3 positive integers, got {d!r}")
    return d + (1,) * (3 - len(d))


def param_layout(params) -> tuple[dict, int]:
    """Byte offsets of kernel parameters in the parameter buffer (natural alignment) and its size."""
    offsets = {}
    off = 0
    for p in params:
        al = p.align or type_size(p.type)
        off = (off + al - 1) // al * al
        offsets[p.name] = off
        off += p.nbytes
    return offsets, off


def _pack_params(K: KernelLayout, args: list, gm_addrs: dict) -> np.ndarray:
    return pack_params(K.name, K.params, K.param_offsets, K.param_size, args, gm_addrs)


def pack_params(kname: str, params, offsets: dict, size: int, args: list, gm_addrs: dict) -> np.ndarray:
    """The parameter buffer of a launch: `args[i]` converted to the type of `params[i]`; array
    arguments (indices in `gm_addrs`) become their device addresses. Raises on mismatches."""

    class K:  # names used in the messages below
        name = kname
    buf = np.zeros(max(size, 8) + 16, np.uint8)
    for i, (p, a) in enumerate(zip(params, args)):
        off = offsets[p.name]
        what = f"argument {i} ({p.name}: .{p.type}{''.join(f'[{d}]' for d in p.dims)})"
        if p.dims:  # by-value byte array (struct)
            if isinstance(a, (bytes, bytearray)):
                raw = np.frombuffer(bytes(a), np.uint8)
            elif isinstance(a, np.ndarray) and i in gm_addrs:
                raise SimulatorError(f"kernel '{K.name}': {what} is passed by value; give bytes, not an array")
            else:
                raise SimulatorError(f"kernel '{K.name}': {what} needs a bytes object of {p.nbytes} bytes")
            if raw.size != p.nbytes:
                raise SimulatorError(f"kernel '{K.name}': {what} needs {p.nbytes} bytes, got {raw.size}")
            buf[off: off + raw.size] = raw
            continue
        dt = NP.get(p.type)
        if dt is None or dt == np.bool_:
            raise SimulatorError(f"kernel '{K.name}': unsupported parameter type for {what}")
        if i in gm_addrs:
            if dt.itemsize != 8 or dt.kind == "f":
                raise SimulatorError(f"kernel '{K.name}': {what} is not a 64-bit pointer parameter; "
                                     f"got a numpy array (arrays are device buffers)")
            v = np.array(gm_addrs[i], np.uint64)
        else:
            if isinstance(a, np.ndarray) and a.ndim == 0:
                a = a[()]
            if isinstance(a, (bool, np.bool_)):
                a = int(a)
            if dt.kind == "f" or p.type == "bf16":
                if not isinstance(a, (int, float, np.integer, np.floating)):
                    raise SimulatorError(f"kernel '{K.name}': {what} needs a number, got {type(a).__name__}")
                v = np.array(a, np.float32 if p.type == "bf16" else dt)
                if p.type == "bf16":
                    from fsir.runtime.sim_decode import to_bf16
                    v = to_bf16(v)
            else:
                if isinstance(a, (float, np.floating)):
                    raise SimulatorError(f"kernel '{K.name}': {what} is an integer parameter, got float {a!r}")
                if not isinstance(a, (int, np.integer)):
                    raise SimulatorError(f"kernel '{K.name}': {what} needs an integer or a numpy array, got {type(a).__name__}")
                a = int(a)
                bits = dt.itemsize * 8
                # nvcc declares C `int` parameters .u32 too: any value with a two's-complement
                # representation in the parameter's width is accepted
                lo = -(1 << (bits - 1))
                hi = (1 << bits) - 1 if dt.kind == "u" else (1 << (bits - 1)) - 1
                if not lo <= a <= hi:
                    raise SimulatorError(f"kernel '{K.name}': {what}: {a} does not fit .{p.type}")
                v = np.array(a & ((1 << bits) - 1), np.uint64).astype(UINT_OF[dt.itemsize]).view(dt)
        raw = np.atleast_1d(v).view(np.uint8)
        buf[off: off + raw.size] = raw
    return buf


UINT_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def run_ptx(ptx: str, kernel: str, grid: tuple, block: tuple, args: list, shared_bytes: int = 0,
            *, check_races: bool = True) -> LaunchStats:
    """Run one launch of `kernel` from PTX text `ptx` on the simulator.

    numpy-array arguments are device buffers: copied in, written back in place after the launch
    (only arrays the kernel stored to). Python/numpy scalars are scalar parameters converted to the
    `.param` type. `grid`/`block` are 1-3 tuples. Raises SimulatorError on invalid PTX, bad
    arguments, out-of-bounds or misaligned accesses and shared-memory races."""
    mod = load_module(ptx)
    return launch(mod, kernel, grid, block, args, shared_bytes, check_races=check_races)


def launch(mod: SimModule, kernel: str, grid, block, args, shared_bytes: int = 0, *, check_races: bool = True,
           global_store: dict | None = None) -> LaunchStats:
    """Run a launch of an already loaded module (see run_ptx)."""
    K = mod.kernel(kernel)
    grid = _dims(grid, "grid")
    block = _dims(block, "block")
    nthreads = block[0] * block[1] * block[2]
    if nthreads > 1024:
        raise SimulatorError(f"block {block} has {nthreads} threads; the limit is 1024")
    dirs = mod.ptx.kernels[kernel].directives
    if "maxntid" in dirs and nthreads > math.prod(dirs["maxntid"]):
        raise SimulatorError(f"kernel '{kernel}' declares .maxntid {', '.join(map(str, dirs['maxntid']))}; "
                             f"block {block} has {nthreads} threads (a GPU refuses this launch)")
    if "reqntid" in dirs and block[: len(dirs["reqntid"])] != tuple(dirs["reqntid"]):
        raise SimulatorError(f"kernel '{kernel}' declares .reqntid {', '.join(map(str, dirs['reqntid']))}; "
                             f"launched with block {block} (a GPU refuses this launch)")
    if block[2] > 64:
        raise SimulatorError(f"block z dimension {block[2]} exceeds 64")
    if grid[1] > 65535 or grid[2] > 65535 or grid[0] > 2**31 - 1:
        raise SimulatorError(f"grid {grid} exceeds the limits (2^31-1, 65535, 65535)")
    shared_bytes = int(shared_bytes)
    if shared_bytes < 0:
        raise SimulatorError(f"shared_bytes must be >= 0, got {shared_bytes}")
    args = list(args)
    if len(args) != len(K.params):
        sig = ", ".join(f".{p.type} {p.name}" for p in K.params)
        raise SimulatorError(f"kernel '{K.name}' takes {len(K.params)} arguments ({sig}), got {len(args)}")
    total_smem = (K.dynamic_shared_offset + shared_bytes) if shared_bytes else K.static_shared
    if total_smem > MAX_SHARED_BYTES:
        raise SimulatorError(f"kernel '{K.name}' needs {total_smem} bytes of shared memory per block; the limit is {MAX_SHARED_BYTES}")
    # global memory: module variables first (fixed addresses), then the array arguments
    entries = []
    gstore = global_store if global_store is not None else mod.global_data
    for v, _ in mod.global_vars:
        entries.append((v.nbytes, f"global variable '{v.name}'", None))
    arr_args = {}  # argument index -> array; the same array object passed twice is one buffer
    buf_of: dict[int, int] = {}
    arg_buf: dict[int, int] = {}
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.ndim > 0:
            # arrays over the same memory (the same array, or reshaped views of it) are one buffer
            key = (a.__array_interface__["data"][0], a.nbytes) if a.flags.c_contiguous else id(a)
            if key in buf_of:
                arg_buf[i] = buf_of[key]
                continue
            buf_of[key] = arg_buf[i] = len(entries)
            arr_args[i] = a
            entries.append((a.nbytes, f"argument {i} ({K.params[i].name}, {a.dtype}{list(a.shape)})", a))
    gm = GlobalMemory(entries)
    for j, (v, _) in enumerate(mod.global_vars):
        gm.bytes_of(j)[:] = gstore[v.name]
    for i, a in arr_args.items():
        gm.bytes_of(arg_buf[i])[:] = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    addrs = {i: gm.address(bi) for i, bi in arg_buf.items()}
    params = _pack_params(K, args, addrs)
    L = _Launch(K, grid, block, shared_bytes, gm, params, check_races)
    T = L.nthreads
    per = max(1, CHUNK_LANES // T)
    if L.smem_size:
        per = max(1, min(per, CHUNK_SMEM_BYTES // L.smem_size))
    lane_bytes = sum(d.itemsize for d in K.reg_dtypes) + K.local_size + 64  # + per-lane bookkeeping
    per = max(1, min(per, CHUNK_STATE_BYTES // (lane_bytes * T)))
    with np.errstate(all="ignore"):
        for b0 in range(0, L.nblocks, per):
            ch = _Chunk(L, b0, min(per, L.nblocks - b0))
            _run_chunk(ch)
    # write back
    for j, (v, _) in enumerate(mod.global_vars):
        gstore[v.name] = gm.bytes_of(j).copy()
    for i, a in arr_args.items():  # one array per buffer (the first argument that used it)
        b = gm.buffers[arg_buf[i]]
        if not b.written:
            continue
        data = gm.bytes_of(arg_buf[i]).view(a.dtype).reshape(a.shape)
        if not a.flags.writeable:
            raise SimulatorError(f"kernel '{K.name}' wrote to argument {i}, a read-only numpy array")
        a[...] = data
    L.stats.global_unique_bytes = gm.unique_bytes()
    return L.stats
