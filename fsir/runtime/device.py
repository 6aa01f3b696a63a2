"""Devices that run fsir's PTX: one interface, two implementations.

    dev = select_device("auto")          # CudaDevice if a GPU is present, else SimDevice
    mod = dev.load(ptx_text)
    stats = dev.launch(mod, "kernel", grid, block, [x, y, n], shared_bytes=0)

Kernel arguments are numpy arrays (device buffers: copied to the device before the launch and
back into the same array after it), `DeviceBuffer`s from `alloc` (stay on the device; move data
with `copy_to`/`copy_from`), or Python/numpy scalars (converted to the `.param` type).

`SimDevice` runs the PTX on fsir's simulator and returns the profiler-style `LaunchStats` of
each launch (summed over launches in `dev.stats`). `CudaDevice` (cuda_device.py) runs it on an
NVIDIA GPU through cuda-python and returns `CudaTiming` (event-measured kernel time).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from fsir.errors import UserError
from fsir.sim import LaunchStats, SimModule, load_module
from fsir.sim import launch as _sim_launch


class DeviceBuffer:
    """Memory on a device: `nbytes` bytes, with a numpy shape/dtype for copies."""

    def __init__(self, device: Device, shape: tuple, dtype, handle):
        self.device = device
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.handle = handle  # SimDevice: the numpy array; CudaDevice: the CUdeviceptr (int)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"DeviceBuffer({self.device.name}, shape={self.shape}, dtype={self.dtype})"


class BufferTable:
    """A launch argument (`gpu.address_table`): `values` (64-bit immediates) then the
    device addresses of `buffers`, in a table in global memory, which each device builds
    for the launch."""

    def __init__(self, buffers: Sequence[DeviceBuffer], values: Sequence[int] = ()):
        self.buffers = list(buffers)
        self.values = [int(v) for v in values]


@dataclass(frozen=True)
class LaunchRequest:
    """One kernel launch of a pipeline (`Device.launch_pipeline`): the launch's arguments as
    `Device.launch` takes them, plus the stream it is issued on and that stream's priority
    (lower number = higher priority, as CUDA's `cuStreamCreateWithPriority`)."""

    module: object
    kernel: str
    grid: tuple
    block: tuple
    args: list = field(hash=False)
    shared_bytes: int = 0
    stream: int = 0
    priority: int = 0


class Device(ABC):
    """What fsir needs from a device."""

    name: str

    @abstractmethod
    def load(self, ptx: str) -> object:
        """Load a PTX module; returns a module handle for `launch`."""

    @abstractmethod
    def alloc(self, shape, dtype) -> DeviceBuffer:
        """Allocate an (uninitialised on a GPU, zeroed on the simulator) device buffer."""

    @abstractmethod
    def copy_to(self, buf: DeviceBuffer, host: np.ndarray) -> None:
        """Host -> device."""

    @abstractmethod
    def copy_from(self, buf: DeviceBuffer, out: np.ndarray | None = None) -> np.ndarray:
        """Device -> host (into `out` if given)."""

    @abstractmethod
    def free(self, buf: DeviceBuffer) -> None:
        """Release a buffer."""

    @abstractmethod
    def launch(self, module, kernel: str, grid, block, args, shared_bytes: int = 0) -> LaunchStats | CudaTiming:
        """Launch `kernel` of a loaded module; returns the launch's stats or timing."""

    def launch_pipeline(self, requests: Sequence[LaunchRequest]) -> list:
        """Launch kernels that may run concurrently and synchronise with each other through
        global memory (a tile-synchronised pipeline); returns each launch's stats or timing.
        This default runs them one after another in order, which is correct whenever a
        kernel waits only on kernels launched before it."""
        return [self.launch(r.module, r.kernel, r.grid, r.block, r.args, r.shared_bytes) for r in requests]

    def synchronize(self) -> None:
        """Wait for all launched work (a no-op on the simulator, whose launches are synchronous)."""
        return None

    def to_device(self, host: np.ndarray) -> DeviceBuffer:
        host = np.require(host, requirements="C")  # (np.ascontiguousarray makes rank 0 rank 1)
        buf = self.alloc(host.shape, host.dtype)
        self.copy_to(buf, host)
        return buf

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def _check_copy(buf: DeviceBuffer, host: np.ndarray) -> np.ndarray:
    host = np.asarray(host)
    if host.nbytes != buf.nbytes:
        raise UserError(f"copy of {host.nbytes} bytes into a device buffer of {buf.nbytes} bytes")
    return host


class SimDevice(Device):
    """fsir's PTX simulator as a device. `stats` accumulates LaunchStats over all launches.

    `launch_pipeline` runs its launches concurrently (fsir/sim/concurrent.py) on the SM slots of
    `gpu` in the block dispatch order `dispatch` (fifo, reverse, consumer-first, random:SEED)
    and models their timeline (fsir/sim/timeline.py, appended to `timelines`). With
    `model_launches`, single launches also run block by block and are modeled (slower: what
    `fs-run --timeline` needs); otherwise they run as before, chunk by chunk. `launch_log` has
    one (kernel, LaunchStats, modeled µs or None) per launch."""

    name = "sim"

    def __init__(self, check_races: bool = True, dispatch: str = "fifo", gpu: str = "A100",
                 model_launches: bool = False):
        from fsir.gpuspec import gpu_spec
        from fsir.sim.concurrent import parse_dispatch

        parse_dispatch(dispatch)  # a bad name is an error now, not at the first pipeline
        self.check_races = check_races
        self.dispatch = dispatch
        self.spec = gpu_spec(gpu)
        self.model_launches = model_launches
        self.stats = LaunchStats()
        self.timelines: list = []
        self.launch_log: list = []

    def load(self, ptx: str) -> SimModule:
        return load_module(ptx)

    def alloc(self, shape, dtype) -> DeviceBuffer:
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        return DeviceBuffer(self, shape, dtype, np.zeros(shape, dtype))

    def copy_to(self, buf: DeviceBuffer, host: np.ndarray) -> None:
        host = _check_copy(buf, host)
        buf.handle.reshape(-1).view(np.uint8)[:] = np.ascontiguousarray(host).reshape(-1).view(np.uint8)

    def copy_from(self, buf: DeviceBuffer, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            return buf.handle.copy()
        out = _check_copy(buf, out)
        out.reshape(-1).view(np.uint8)[:] = buf.handle.reshape(-1).view(np.uint8)
        return out

    def free(self, buf: DeviceBuffer) -> None:
        buf.handle = None

    def launch(self, module, kernel: str, grid, block, args, shared_bytes: int = 0) -> LaunchStats:
        if self.model_launches:
            return self.launch_pipeline([LaunchRequest(module, kernel, grid, block, list(args), shared_bytes)])[0]
        if isinstance(module, str):
            module = self.load(module)
        args = [unwrap_sim(a) for a in args]
        st = _sim_launch(module, kernel, grid, block, args, shared_bytes, check_races=self.check_races)
        self.stats = self.stats + st
        self.launch_log.append((kernel, st, None))
        return st

    def launch_pipeline(self, requests: Sequence[LaunchRequest]) -> list:
        """Run the launches together (fsir/sim/concurrent.py): a block may wait for blocks of
        other launches; a deadlock is a DeadlockError naming the waiting blocks."""
        from fsir.sim.concurrent import Launch, run_concurrent
        from fsir.sim.timeline import model_timeline

        launches = [Launch(_sim_module(self, r.module), r.kernel, r.grid, r.block,
                           [unwrap_sim(a) for a in r.args], r.shared_bytes, r.stream, r.priority) for r in requests]
        run = run_concurrent(launches, spec=self.spec, dispatch=self.dispatch, check_races=self.check_races)
        tl = model_timeline(run)
        self.timelines.append(tl)
        for ln, st, us in zip(launches, run.stats, tl.launch_us):
            self.stats = self.stats + st
            self.launch_log.append((ln.kernel, st, us))
        return run.stats


def _sim_module(dev: SimDevice, module) -> SimModule:
    if isinstance(module, str):
        return dev.load(module)
    if not isinstance(module, SimModule):
        raise UserError(f"launch of a module of another device ({type(module).__name__}) on the simulator")
    return module


def unwrap_sim(a):
    if isinstance(a, BufferTable):
        from fsir.sim.params import AddressTable

        return AddressTable([unwrap_sim(b) for b in a.buffers], a.values)
    if isinstance(a, DeviceBuffer):
        if a.handle is None:
            raise UserError("kernel argument is a freed device buffer")
        if not isinstance(a.handle, np.ndarray):
            raise UserError(f"kernel argument is a buffer of another device ({a.device.name})")
        return a.handle
    return a


@dataclass
class CudaTiming:
    """What a GPU launch reports: the launch count and event-timed kernel milliseconds."""

    launches: int = 0
    kernel_ms: float = 0.0

    def __add__(self, other: CudaTiming) -> CudaTiming:
        if not isinstance(other, CudaTiming):
            return NotImplemented
        return CudaTiming(self.launches + other.launches, self.kernel_ms + other.kernel_ms)

    def __radd__(self, other):
        if other == 0:
            return self
        return NotImplemented


def gpu_available() -> bool:
    """True when cuda-python finds a CUDA driver and at least one GPU (never raises)."""
    from fsir.runtime.cuda_device import probe_gpu

    return probe_gpu()[0]


def select_device(kind: str = "auto") -> Device:
    """'cuda' (error without a GPU), 'sim', or 'auto' (cuda when a GPU is present, else sim)."""
    kind = (kind or "auto").lower()
    if kind in ("sim", "simulator"):
        return SimDevice()
    if kind in ("cuda", "gpu"):
        from fsir.runtime.cuda_device import CudaDevice

        return CudaDevice()
    if kind == "auto":
        from fsir.runtime.cuda_device import CudaDevice, probe_gpu

        if probe_gpu()[0]:
            return CudaDevice()
        return SimDevice()
    raise UserError(f"unknown device '{kind}' (choose auto, cuda or sim)")
