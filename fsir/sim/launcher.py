"""Launching a kernel on the simulator: checks the launch configuration, lays out global memory
(module `.global` variables, then the array arguments), packs the parameters, runs the blocks as
a sequence of chunks and writes the arrays the kernel stored to back to the caller.

Blocks are independent except through global memory, so a big launch runs as chunks of whole
blocks, bounded in lanes, shared memory and register/local state so a chunk stays in the CPU
caches and in RAM.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from fsir.errors import SimulatorError
from fsir.sim.chunk import Chunk, LaunchState
from fsir.sim.engine import run_chunk
from fsir.sim.loader import SimModule, load_module
from fsir.sim.memory import GlobalMemory
from fsir.sim.params import AddressTable, pack_params
from fsir.sim.stats import LaunchStats

CHUNK_LANES = 64 * 1024  # lanes per chunk (whole blocks); smaller chunks stay in the CPU caches
CHUNK_SMEM_BYTES = 32 << 20
CHUNK_STATE_BYTES = 512 << 20  # registers + local memory of a chunk if every register is materialised
MAX_SHARED_BYTES = 227 * 1024  # the largest per-block shared memory of any current GPU

# Who hears of finished blocks (a progress bar, fsir/runtime/progress.py). A context variable
# rather than a launch argument, so the launches of every device and pipeline report without
# threading a callback through each call between the executor and the chunk loop.
_BLOCKS_DONE: ContextVar[Callable[[int], None] | None] = ContextVar("fsir_sim_blocks_done", default=None)


@contextmanager
def on_blocks_done(callback: Callable[[int], None]) -> Iterator[None]:
    """Call `callback(n)` as simulated launches finish `n` more blocks, within the block."""
    token = _BLOCKS_DONE.set(callback)
    try:
        yield
    finally:
        _BLOCKS_DONE.reset(token)


def report_blocks_done(n: int) -> None:
    callback = _BLOCKS_DONE.get()
    if callback is not None:
        callback(n)


def launch_dims(d, what: str) -> tuple[int, int, int]:
    """`d` (an int or 1 to 3 positive ints) as an (x, y, z) grid or block shape; `what` names it
    in the error."""
    if isinstance(d, (int, np.integer)):
        d = (int(d),)
    try:
        d = tuple(int(x) for x in d)
    except TypeError:
        raise SimulatorError(f"{what} must be a tuple of 1 to 3 positive integers, got {d!r}") from None
    if not 1 <= len(d) <= 3 or any(x < 1 for x in d):
        raise SimulatorError(f"{what} must be a tuple of 1 to 3 positive integers, got {d!r}")
    x, y, z = d + (1,) * (3 - len(d))
    return x, y, z


def run_ptx(ptx: str, kernel: str, grid: tuple, block: tuple, args: list, shared_bytes: int = 0,
            *, check_races: bool = True) -> LaunchStats:
    """Run one launch of `kernel` from PTX text `ptx` on the simulator.

    numpy-array arguments are device buffers: copied in, written back in place after the launch
    (only arrays the kernel stored to). Python/numpy scalars are scalar parameters converted to the
    `.param` type. `grid`/`block` are 1-3 tuples. Raises SimulatorError on invalid PTX, bad
    arguments, out-of-bounds or misaligned accesses and shared-memory races."""
    mod = load_module(ptx)
    return launch(mod, kernel, grid, block, args, shared_bytes, check_races=check_races)


def check_launch(mod: SimModule, kernel: str, grid, block, args, shared_bytes: int = 0):
    """Check a launch's configuration and arguments; returns (kernel layout, grid, block,
    shared bytes, args) normalised. SimulatorError names what a GPU would refuse."""
    K = mod.kernel(kernel)
    grid = launch_dims(grid, "grid")
    block = launch_dims(block, "block")
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
        raise SimulatorError(
            f"kernel '{K.name}' needs {total_smem} bytes of shared memory per block; the limit is {MAX_SHARED_BYTES}"
        )
    return K, grid, block, shared_bytes, args


class GlobalLayout:
    """The global memory of one or more launches that share it: the modules' `.global`
    variables first (fixed addresses), then the array arguments, one buffer per distinct
    array (the same array, or reshaped views of it, passed twice or to two launches is one
    buffer). `build` copies everything in; `write_back` copies what kernels stored back."""

    def __init__(self):
        self.entries: list = []
        self.modules: list = []  # (module, its variable store, index of its first variable)
        self.arrays: dict[int, tuple[np.ndarray, str, int]] = {}  # buffer -> (array, kernel, arg index)
        self._buf_of: dict[object, int] = {}  # (data pointer, nbytes) of contiguous arrays, else id()
        self.tables: list[tuple[int, list[int], list[int]]] = []  # address tables: (buffer, values, buffers)

    def add_module(self, mod: SimModule, gstore: dict) -> None:
        if any(m is mod for m, _, _ in self.modules):
            return
        self.modules.append((mod, gstore, len(self.entries)))
        for v, _ in mod.global_vars:
            self.entries.append((v.nbytes, f"global variable '{v.name}'", None))

    def add_args(self, K, args: list) -> dict[int, int]:
        """Buffers of a launch's array arguments: {argument index: buffer index}."""
        arg_buf: dict[int, int] = {}
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray) and a.ndim > 0:
                arg_buf[i] = self._array(K, i, a, f"argument {i} ({K.params[i].name}, {a.dtype}{list(a.shape)})")
            elif isinstance(a, AddressTable):
                members = [self._array(K, i, x, f"buffer {j} of argument {i}'s address table "
                                                f"({K.params[i].name}, {x.dtype}{list(x.shape)})")
                           for j, x in enumerate(a.arrays)]
                arg_buf[i] = len(self.entries)
                self.tables.append((arg_buf[i], a.values, members))
                self.entries.append((8 * (len(a.values) + len(members)),
                                     f"argument {i} ({K.params[i].name}, address table)", None))
        return arg_buf

    def _array(self, K, i: int, a: np.ndarray, name: str) -> int:
        key = (a.__array_interface__["data"][0], a.nbytes) if a.flags.c_contiguous else id(a)
        if key in self._buf_of:
            return self._buf_of[key]
        self._buf_of[key] = b = len(self.entries)
        self.arrays[b] = (a, K.name, i)
        self.entries.append((a.nbytes, name, a))
        return b

    def build(self) -> GlobalMemory:
        gm = GlobalMemory(self.entries)
        for mod, gstore, base in self.modules:
            for j, (v, _) in enumerate(mod.global_vars):
                gm.bytes_of(base + j)[:] = gstore[v.name]
        for bi, (a, _, _) in self.arrays.items():
            gm.bytes_of(bi)[:] = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        for bi, values, members in self.tables:
            words = np.array(values, np.int64).view(np.uint64)
            addresses = np.array([gm.address(m) for m in members], np.uint64)
            gm.bytes_of(bi)[:] = np.concatenate([words, addresses]).view(np.uint8)
        return gm

    def write_back(self, gm: GlobalMemory) -> None:
        for mod, gstore, base in self.modules:
            for j, (v, _) in enumerate(mod.global_vars):
                gstore[v.name] = gm.bytes_of(base + j).copy()
        for bi, (a, kname, i) in self.arrays.items():
            if not gm.buffers[bi].written:
                continue
            data = gm.bytes_of(bi).view(a.dtype).reshape(a.shape)
            if not a.flags.writeable:
                raise SimulatorError(f"kernel '{kname}' wrote to argument {i}, a read-only numpy array")
            a[...] = data


def launch(mod: SimModule, kernel: str, grid, block, args, shared_bytes: int = 0, *, check_races: bool = True,
           global_store: dict | None = None) -> LaunchStats:
    """Run a launch of an already loaded module (see run_ptx). A kernel with spin loops
    (loader.sync_roles) runs its blocks concurrently (concurrent.py), so a block may wait for
    another block of the same launch."""
    K, grid, block, shared_bytes, args = check_launch(mod, kernel, grid, block, args, shared_bytes)
    if K.spin_loops:
        from fsir.sim.concurrent import Launch, run_concurrent

        return run_concurrent([Launch(mod, kernel, grid, block, args, shared_bytes)],
                              check_races=check_races).stats[0]
    layout = GlobalLayout()
    layout.add_module(mod, global_store if global_store is not None else mod.global_data)
    arg_buf = layout.add_args(K, args)
    gm = layout.build()
    addrs = {i: gm.address(bi) for i, bi in arg_buf.items()}
    params = pack_params(K.name, K.params, K.param_offsets, K.param_size, args, addrs)
    L = LaunchState(K, grid, block, shared_bytes, gm, params, check_races)
    T = L.nthreads
    per = max(1, CHUNK_LANES // T)
    if L.smem_size:
        per = max(1, min(per, CHUNK_SMEM_BYTES // L.smem_size))
    lane_bytes = sum(d.itemsize for d in K.reg_dtypes) + K.local_size + 64  # + per-lane bookkeeping
    per = max(1, min(per, CHUNK_STATE_BYTES // (lane_bytes * T)))
    with np.errstate(all="ignore"):
        for b0 in range(0, L.nblocks, per):
            ch = Chunk(L, b0, min(per, L.nblocks - b0))
            run_chunk(ch)
            report_blocks_done(min(per, L.nblocks - b0))
    layout.write_back(gm)
    L.stats.global_unique_bytes = gm.unique_bytes()
    return L.stats
