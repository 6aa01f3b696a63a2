"""Loading PTX for the simulator: a module is parsed once, and each kernel is decoded on first
use (device-function calls inlined, registers numbered, shared/local/param symbols laid out,
every instruction turned into a closure). Loaded modules are cached by PTX text."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from fsir.errors import SimulatorError
from fsir.gpuspec import STATIC_SHARED_LIMIT
from fsir.sim.decoder import NP, DecodeError, Decoder
from fsir.sim.inline import InlineError, has_calls, inline_calls
from fsir.sim.memory import (
    ALIGN,
    GAP,
    GLOBAL_BASE,
    LOCAL_WINDOW,
    PARAM_WINDOW,
    SHARED_WINDOW,
)
from fsir.sim.params import check_param_space, param_layout
from fsir.sim.parser import (
    Function,
    Imm,
    Instr,
    Label,
    Mem,
    NotReg,
    Pair,
    PTXModule,
    Reg,
    VarDecl,
    Vec,
    parse_ptx,
    type_size,
)


class KernelLayout:
    """Registers, symbols and the decoded code of one kernel (independent of the launch)."""

    def __init__(self, module: SimModule, fn: Function):
        self.module = module
        self.name = fn.name
        self.params = fn.params
        self.regs: dict[str, tuple[int, str]] = {}
        self.reg_dtypes: list = []
        self.shared_syms: dict[str, int] = {}
        self.local_syms: dict[str, int] = {}
        self.min_shared_access = 16
        self.param_offsets, self.param_size = param_layout(fn.params)
        check_param_space(self.name, self.param_size, module.ptx.version, module.ptx.target, fn.line)
        if has_calls(fn):
            try:
                body = inline_calls(module.ptx, fn)
            except InlineError as e:
                raise SimulatorError(f"kernel '{self.name}', PTX line {e.line}:{e.col}: {e}") from None
        else:
            body = fn.body or []
        # shared: module-scope statics, then this function's, then the dynamic (extern) region
        shared_decls = [v for v in module.ptx.variables if v.space == "shared"]
        body_decls = [s for s in body if isinstance(s, VarDecl)]
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
        if soff > STATIC_SHARED_LIMIT:
            last = next(v for v in reversed(shared_decls) if v not in externs)
            raise SimulatorError(
                f"kernel '{self.name}', PTX line {last.line}: {soff} bytes of static .shared arrays; ptxas "
                f"accepts at most {STATIC_SHARED_LIMIT} (more must be dynamic shared memory)")
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
                raise SimulatorError(
                    f"kernel '{self.name}', PTX line {v.line}: function-scope .{v.space} variables are not supported"
                )
        self.local_size = (loff + 15) // 16 * 16
        self._decode(body, fn.line)

    def _add_reg(self, name, typ, line):
        if name in self.regs:
            if self.regs[name][1] != typ:
                raise SimulatorError(
                    f"kernel '{self.name}', PTX line {line}: register {name} redeclared with a different type"
                )
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

    def _decode(self, body: list, line: int):
        labels: dict[str, int] = {}
        instrs: list[Instr] = []
        for s in body:
            if isinstance(s, Label):
                labels[s.name] = len(instrs)
            elif isinstance(s, Instr):
                instrs.append(s)
        # falling off the end of the body (or branching to a label there) returns
        instrs.append(Instr("ret", [], None, instrs[-1].line if instrs else line, 1))
        self.labels = labels
        roles, spin_edges = sync_roles(instrs, labels)
        self.spin_loops = len(spin_edges)  # spin loops park their warps (concurrent.py)
        D = Decoder(self)
        code = []
        for i, ins in enumerate(instrs):
            D.sync_role = roles.get(i)
            try:
                kind, fn, tgt, ln = self._decode_one(D, ins, labels)
            except DecodeError as e:
                raise SimulatorError(f"kernel '{self.name}', PTX line {ins.line}:{ins.col}: {e}") from None
            if i in spin_edges:
                kind = 4  # the back edge of a spin loop (engine.py parks the lanes that take it)
            elif roles.get(i) == "head":
                kind = 5  # a wait's first read: the engine notes the block's progress first
            code.append((kind, fn, tgt, ln))
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


_SYNC_LOAD = {"acquire", "relaxed", "volatile"}
_LOOP_WRITES = {"st", "red", "bar", "barrier", "cp", "stmatrix", "call", "wmma"}


def _space_of(parts) -> str:
    return next((p for p in ("global", "shared", "local", "param", "const") if p in parts), "generic")


def _reads_only_atom(ins: Instr) -> bool:
    """An atomic that leaves memory as it is when it fails or adds nothing: `cas` (a lock
    acquired when it succeeds, which leaves the loop) or add/or/xor of 0 (an atomic load)."""
    parts = ins.opcode.split(".")
    if "cas" in parts:
        return True
    last = ins.operands[-1] if ins.operands else None
    return any(p in parts for p in ("add", "or", "xor")) and isinstance(last, Imm) and last.value == 0


def sync_roles(instrs: list[Instr], labels: dict[str, int]) -> tuple[dict[int, str], set[int]]:
    """Find the spin loops of a kernel: a backward branch whose body reads global memory with
    an acquire, relaxed or volatile load (or an atomic that only reads) and writes no memory
    and passes no barrier, and whose registers carry nothing from one iteration to the next, so
    an iteration depends on nothing but memory other blocks write.
    Returns the synchronisation role of instructions by index ("head": a loop's first such
    read, "wait": its other reads, "post": a release/acq_rel atomic, reduction or store
    outside spin loops, or a relaxed one right after a fence) and the indices of the spin
    loops' back edges."""
    roles: dict[int, str] = {}
    edges: set[int] = set()
    for i, ins in enumerate(instrs):
        if not ins.opcode.startswith("bra") or not ins.operands or not isinstance(ins.operands[0], Reg):
            continue
        t = labels.get(ins.operands[0].name)
        if t is None or t > i:
            continue
        reads = []
        pure = True
        for j in range(t, i):
            parts = instrs[j].opcode.split(".")
            base = parts[0]
            if base == "atom":
                if _space_of(parts) == "shared" or not _reads_only_atom(instrs[j]):
                    pure = False
                    break
                reads.append(j)
            elif base == "ld" and _SYNC_LOAD & set(parts) and _space_of(parts) in ("global", "generic"):
                reads.append(j)
            elif base in _LOOP_WRITES:
                pure = False
                break
        if pure and reads and not _loop_carried(instrs, t, i + 1):
            edges.add(i)
            for j in reads:
                roles.setdefault(j, "wait")
            if roles[reads[0]] == "wait":
                roles[reads[0]] = "head"
    starts = set(labels.values())
    for i, ins in enumerate(instrs):
        parts = ins.opcode.split(".")
        if (i not in roles and parts[0] in ("atom", "red", "st") and _space_of(parts) in ("global", "generic")
                and ("release" in parts or "acq_rel" in parts or _after_fence(instrs, starts, i))):
            roles[i] = "post"
    return roles, edges


_NO_DEST = {"st", "red", "bra", "bar", "barrier", "ret", "exit", "membar", "fence", "prefetch", "prefetchu", "trap",
            "cp", "stmatrix", "nanosleep"}


def _names(op) -> list[str]:
    if isinstance(op, (Reg, NotReg)):
        return [op.name]
    if isinstance(op, Mem):
        return [op.base] if op.base else []
    if isinstance(op, Vec):
        return [n for x in op.items for n in _names(x)]
    if isinstance(op, Pair):
        return [op.first, op.second]
    return []


def _loop_carried(instrs: list[Instr], t: int, end: int) -> bool:
    """Does the loop body instrs[t:end] read a register it writes before writing it (in program
    order)? Then an iteration depends on the previous one (a counter, a CAS loop's expected
    value), not only on memory, and the loop is no wait."""
    dests: list[list[str]] = []
    srcs: list[list[str]] = []
    for ins in instrs[t:end]:
        ops = ins.operands
        has_dest = ins.opcode.split(".")[0] not in _NO_DEST and bool(ops)
        dests.append(_names(ops[0]) if has_dest else [])
        srcs.append([n for op in (ops[1:] if has_dest else ops) for n in _names(op)]
                    + ([ins.guard[0]] if ins.guard else []))
    written = {n for d in dests for n in d}
    defined: set[str] = set()
    for d, r in zip(dests, srcs):
        if any(n in written and n not in defined for n in r):
            return True
        defined.update(d)
    return False


def _after_fence(instrs: list[Instr], starts: set[int], i: int) -> bool:
    """Is instruction i preceded, in its straight-line code and with no memory access between,
    by a fence or membar? (CUDA's `__threadfence(); atomicAdd(sem, 1)` is `membar.gl` and a
    relaxed `red`: a release by other means.)"""
    j = i - 1
    while j >= 0:
        base = instrs[j].opcode.split(".")[0]
        if base in ("fence", "membar"):
            return True
        if base in ("ld", "st", "atom", "red", "bra", "ret", "exit", "bar", "barrier", "cp") or j in starts:
            return False
        j -= 1
    return False


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


_CACHE: OrderedDict[str, SimModule] = OrderedDict()
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
