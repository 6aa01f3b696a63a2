"""CudaDevice: fsir's PTX on an NVIDIA GPU through cuda-python's driver bindings.

The driver API is used directly (cuModuleLoadData on the PTX text, cuMemAlloc/cuMemcpy, cuLaunchKernel,
events for timing). Kernel parameters are packed with the simulator's parameter layout (same type
checks and conversions), so both devices accept exactly the same arguments.

`time_launch` launches one kernel repeatedly, one launch at a time between two events (what
benchmarks/gpu_check.py measures kernels with); `properties()` is what the driver reports
about the GPU (SMs, clocks, memory); `last_pipeline_ms` spans the last pipeline's launches.

Without a GPU (no libcuda, cuInit failing, zero devices) constructing a CudaDevice raises a
one-line UserError `no CUDA GPU found: <reason>`; `probe_gpu()` answers the question without raising.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from fsir.errors import UserError
from fsir.runtime.device import BufferTable, CudaTiming, Device, DeviceBuffer
from fsir.sim import launch_dims, pack_params, param_layout, parse_ptx

_PROBE: tuple[bool, str] | None = None


def _driver() -> ModuleType:
    """cuda-python's driver bindings: a compiled module without type stubs, hence imported
    by name (its attributes are then `Any` to a type checker)."""
    try:
        return importlib.import_module("cuda.bindings.driver")  # cuda-python >= 12.6
    except ImportError:  # pragma: no cover - older cuda-python
        try:
            return importlib.import_module("cuda.cuda")
        except ImportError as e:
            raise _NoGPU("cuda-python is not installed") from e


class _NoGPU(Exception):
    pass


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def _init_driver():
    """Import the bindings and cuInit; returns (driver, device count) or raises _NoGPU."""
    try:
        driver = _driver()
    except _NoGPU:
        raise
    except Exception as e:  # pragma: no cover - broken installation
        raise _NoGPU(_first_line(e)) from None
    try:
        (err,) = driver.cuInit(0)
    except Exception as e:  # libcuda missing: cuda.pathfinder raises DynamicLibNotFoundError
        raise _NoGPU(_first_line(e)) from None
    if err != driver.CUresult.CUDA_SUCCESS:
        raise _NoGPU(f"cuInit failed ({_err_name(driver, err)})")
    err, n = driver.cuDeviceGetCount()
    if err != driver.CUresult.CUDA_SUCCESS:
        raise _NoGPU(f"cuDeviceGetCount failed ({_err_name(driver, err)})")
    if n == 0:
        raise _NoGPU("the driver reports 0 devices")
    return driver, n


def probe_gpu() -> tuple[bool, str]:
    """(True, "") when a GPU is usable, else (False, reason). Cached; never raises."""
    global _PROBE
    if _PROBE is None:
        try:
            _init_driver()
            _PROBE = (True, "")
        except _NoGPU as e:
            _PROBE = (False, str(e))
        except Exception as e:  # pragma: no cover - anything else also means "no GPU"
            _PROBE = (False, _first_line(e))
    return _PROBE


def _err_name(driver, err) -> str:
    try:
        e2, name = driver.cuGetErrorName(err)
        if e2 == driver.CUresult.CUDA_SUCCESS:
            return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # pragma: no cover
        pass
    return str(err)


class CudaModule:
    def __init__(self, handle, ptx: str):
        self.handle = handle
        self.ptx = ptx
        self.parsed = parse_ptx(ptx)
        self.functions: dict = {}


@dataclass(frozen=True)
class DeviceProperties:
    """What the driver reports about a GPU (None: an attribute this driver does not report)."""

    name: str
    compute_capability: str | None
    sms: int | None
    clock_mhz: float | None  # the SMs' peak clock
    memory_clock_mhz: float | None
    memory_bus_bits: int | None
    memory_bytes: int | None
    l2_bytes: int | None
    driver_version: int | None


# DeviceProperties fields read with cuDeviceGetAttribute, and the attribute of each.
_ATTRIBUTES = {"sms": "MULTIPROCESSOR_COUNT", "clock_mhz": "CLOCK_RATE", "memory_clock_mhz": "MEMORY_CLOCK_RATE",
               "memory_bus_bits": "GLOBAL_MEMORY_BUS_WIDTH", "l2_bytes": "L2_CACHE_SIZE",
               "cc_major": "COMPUTE_CAPABILITY_MAJOR", "cc_minor": "COMPUTE_CAPABILITY_MINOR"}


class CudaDevice(Device):
    """A CUDA GPU driven by cuda-python. Launches are timed with events on one stream."""

    def __init__(self, ordinal: int = 0):
        try:
            driver, n = _init_driver()
        except _NoGPU as e:
            raise UserError(f"no CUDA GPU found: {e}") from None
        if not 0 <= ordinal < n:
            raise UserError(f"no CUDA GPU found: device {ordinal} requested, {n} present")
        self._d = driver
        self._dev = self._check(driver.cuDeviceGet(ordinal), "cuDeviceGet")
        self._ctx = self._check(driver.cuDevicePrimaryCtxRetain(self._dev), "cuDevicePrimaryCtxRetain")
        self._check(driver.cuCtxSetCurrent(self._ctx), "cuCtxSetCurrent")
        raw = self._check(driver.cuDeviceGetName(256, self._dev), "cuDeviceGetName")
        self.name = "cuda:" + (raw.split(b"\0")[0].decode() if isinstance(raw, bytes) else str(raw))
        self._stream = self._check(driver.cuStreamCreate(0), "cuStreamCreate")
        self._start = self._check(driver.cuEventCreate(0), "cuEventCreate")
        self._end = self._check(driver.cuEventCreate(0), "cuEventCreate")
        self.timing = CudaTiming()
        self._borrowed: set[int] = set()  # addresses of `wrap`ped memory, freed by its owner
        self.last_pipeline_ms: float | None = None  # first start to last end of the last pipeline

    def properties(self) -> DeviceProperties:
        """The GPU's name, compute capability, SMs, clocks and memory, as the driver reports them."""
        v = {field: self._attribute(attr) for field, attr in _ATTRIBUTES.items()}

        def mhz(khz: int | None) -> float | None:
            return None if khz is None else khz / 1000

        major = v["cc_major"]
        return DeviceProperties(name=self.name.removeprefix("cuda:"),
                                compute_capability=None if major is None else f"{major}.{v['cc_minor']}",
                                sms=v["sms"], clock_mhz=mhz(v["clock_mhz"]),
                                memory_clock_mhz=mhz(v["memory_clock_mhz"]),
                                memory_bus_bits=v["memory_bus_bits"], l2_bytes=v["l2_bytes"],
                                memory_bytes=self._optional(self._d.cuDeviceTotalMem, self._dev),
                                driver_version=self._optional(self._d.cuDriverGetVersion))

    def _attribute(self, name: str) -> int | None:
        attr = getattr(self._d.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}", None)
        return None if attr is None else self._optional(self._d.cuDeviceGetAttribute, attr, self._dev)

    def _optional(self, call, *args) -> int | None:
        """A driver query's integer value, None when the driver lacks it or refuses."""
        try:
            err, value = call(*args)
        except Exception:  # an attribute or entry point a driver version removed
            return None
        return int(value) if err == self._d.CUresult.CUDA_SUCCESS else None

    # -- helpers ----------------------------------------------------------------------
    def _check(self, result, what: str) -> Any:
        """cuda-python returns (CUresult, values...): raise on error, return the values."""
        err, *vals = result if isinstance(result, tuple) else (result,)
        if err != self._d.CUresult.CUDA_SUCCESS:
            raise UserError(f"CUDA error in {what}: {_err_name(self._d, err)}")
        if not vals:
            return None
        return vals[0] if len(vals) == 1 else tuple(vals)

    def _current(self):
        self._check(self._d.cuCtxSetCurrent(self._ctx), "cuCtxSetCurrent")

    # -- Device API -------------------------------------------------------------------
    def load(self, ptx: str) -> CudaModule:
        self._current()
        image = np.frombuffer(ptx.encode() + b"\0", np.uint8)  # NUL-terminated, alive during the call
        handle = self._check(self._d.cuModuleLoadData(image.ctypes.data), "cuModuleLoadData (PTX JIT)")
        return CudaModule(handle, ptx)

    def alloc(self, shape, dtype) -> DeviceBuffer:
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        nbytes = max(int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize, 1)
        self._current()
        ptr = self._check(self._d.cuMemAlloc(nbytes), "cuMemAlloc")
        return DeviceBuffer(self, shape, dtype, ptr)

    def copy_to(self, buf: DeviceBuffer, host: np.ndarray) -> None:
        host = np.ascontiguousarray(host)
        if host.nbytes != buf.nbytes:
            raise UserError(f"copy of {host.nbytes} bytes into a device buffer of {buf.nbytes} bytes")
        if host.nbytes:
            self._check(self._d.cuMemcpyHtoD(buf.handle, host.ctypes.data, host.nbytes), "cuMemcpyHtoD")

    def copy_from(self, buf: DeviceBuffer, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            out = np.empty(buf.shape, buf.dtype)
        if out.nbytes != buf.nbytes or not out.flags.c_contiguous:
            raise UserError("copy_from needs a C-contiguous array of the buffer's size")
        if out.nbytes:
            self._check(self._d.cuMemcpyDtoH(out.ctypes.data, buf.handle, out.nbytes), "cuMemcpyDtoH")
        return out

    def wrap(self, ptr: int, shape, dtype) -> DeviceBuffer:
        """Device memory this device did not allocate (a torch tensor's `data_ptr()`) as a
        buffer: launches take its address as it is (no copy); `free` leaves the memory
        to its owner."""
        self._borrowed.add(int(ptr))
        return DeviceBuffer(self, tuple(shape), dtype, int(ptr))

    def free(self, buf: DeviceBuffer) -> None:
        if buf.handle is not None:
            if int(buf.handle) not in self._borrowed:
                self._check(self._d.cuMemFree(buf.handle), "cuMemFree")
            buf.handle = None

    def synchronize(self) -> None:
        self._check(self._d.cuStreamSynchronize(self._stream), "cuStreamSynchronize")

    def _function(self, module: CudaModule, kernel: str):
        f = module.functions.get(kernel)
        if f is None:
            if kernel not in module.parsed.kernels:
                avail = ", ".join(module.parsed.kernels) or "none"
                raise UserError(f"unknown kernel '{kernel}' (the PTX defines: {avail})")
            f = self._check(self._d.cuModuleGetFunction(module.handle, kernel.encode()), "cuModuleGetFunction")
            module.functions[kernel] = f
        return f

    def _prepare(self, module, kernel: str, grid, block, args, shared_bytes: int, temps: list) -> tuple:
        """The function, dims and packed parameters of a launch; numpy-array arguments are
        copied to device buffers appended to `temps` as (buffer, array)."""
        grid = launch_dims(grid, "grid")
        block = launch_dims(block, "block")
        f = self._function(module, kernel)
        params = module.parsed.kernels[kernel].params
        args = list(args)
        if len(args) != len(params):
            sig = ", ".join(f".{p.type} {p.name}" for p in params)
            raise UserError(f"kernel '{kernel}' takes {len(params)} arguments ({sig}), got {len(args)}")
        addrs: dict[int, int] = {}
        seen: dict[int, DeviceBuffer] = {}
        for i, a in enumerate(args):
            if isinstance(a, BufferTable):  # the buffers' addresses, in a buffer of this launch
                for b in a.buffers:
                    if b.device is not self or b.handle is None:
                        raise UserError(f"argument {i}'s address table holds a buffer that is not a live "
                                        "buffer of this device")
                table = np.concatenate([np.array(a.values, np.int64).view(np.uint64),
                                        np.array([int(b.handle) for b in a.buffers], np.uint64)])
                buf = self.to_device(table)
                temps.append((buf, table))
                addrs[i] = int(buf.handle)
                args[i] = table
            elif isinstance(a, DeviceBuffer):
                if a.device is not self or a.handle is None:
                    raise UserError(f"argument {i} is not a live buffer of this device")
                addrs[i] = int(a.handle)
            elif isinstance(a, np.ndarray) and a.ndim > 0:
                buf = seen.get(id(a))
                if buf is None:
                    buf = seen[id(a)] = self.to_device(a)
                    temps.append((buf, a))
                addrs[i] = int(buf.handle)
        offsets, size = param_layout(params)
        packed = pack_params(kernel, params, offsets, size, args, addrs)
        base = packed.ctypes.data
        ptrs = np.array([base + offsets[p.name] for p in params], dtype=np.uint64)
        d = self._d
        if shared_bytes > 48 * 1024:  # opt in to large dynamic shared memory
            attr = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self._check(d.cuFuncSetAttribute(f, attr, int(shared_bytes)), "cuFuncSetAttribute")
        # (packed stays referenced by the caller until the launch is issued)
        return f, grid, block, packed, ptrs if len(params) else None

    def _finish(self, temps: list, copy_back: bool) -> None:
        """Copy numpy-array arguments back (after a completed launch) and free their buffers."""
        try:
            if copy_back:
                for buf, a in temps:
                    if a.flags.writeable:
                        host = np.empty(a.shape, a.dtype)
                        self.copy_from(buf, host)
                        a[...] = host
        finally:
            for buf, _ in temps:
                try:
                    self.free(buf)
                except UserError:  # pragma: no cover - a failed launch may poison the context
                    pass

    def launch(self, module, kernel: str, grid, block, args, shared_bytes: int = 0) -> CudaTiming:
        (ms,) = self.time_launch(module, kernel, grid, block, args, shared_bytes, warmup=0, repeats=1)
        return CudaTiming(1, ms)

    def time_launch(self, module, kernel: str, grid, block, args, shared_bytes: int = 0, warmup: int = 2,
                    repeats: int = 10) -> list[float]:
        """Launch one kernel `warmup` + `repeats` times, one at a time, each between two
        events on the device's stream; returns the repeats' kernel milliseconds. The
        arguments are those of `launch` (numpy arrays are copied back after the last)."""
        if isinstance(module, str):
            module = self.load(module)
        self._current()
        temps: list[tuple[DeviceBuffer, np.ndarray]] = []
        done = False
        try:
            f, grid, block, _packed, ptrs = self._prepare(module, kernel, grid, block, args, shared_bytes, temps)
            times = [self._timed_launch(kernel, f, grid, block, shared_bytes, ptrs) for _ in range(warmup + repeats)]
            done = True
        finally:
            self._finish(temps, done)
        self.timing = self.timing + CudaTiming(warmup + repeats, sum(times))
        return times[warmup:]

    def _timed_launch(self, kernel: str, f, grid, block, shared_bytes: int, ptrs) -> float:
        """One launch between the start and end events; waits for it and returns its milliseconds."""
        d = self._d
        self._check(d.cuEventRecord(self._start, self._stream), "cuEventRecord")
        self._check(d.cuLaunchKernel(f, *grid, *block, int(shared_bytes), self._stream,
                                     ptrs.ctypes.data if ptrs is not None else 0, 0), "cuLaunchKernel")
        self._check(d.cuEventRecord(self._end, self._stream), "cuEventRecord")
        self._check(d.cuEventSynchronize(self._end), f"kernel '{kernel}'")
        return float(self._check(d.cuEventElapsedTime(self._start, self._end), "cuEventElapsedTime"))

    def launch_pipeline(self, requests) -> list[CudaTiming]:
        """Launches that synchronise with each other through global memory (a cuSync
        pipeline), each on a stream of its own created with its priority
        (`cuStreamCreateWithPriority`; fsir's priority 0 is the device's greatest), with
        no synchronisation between them: a consumer's blocks wait on the semaphores
        its producers post. Earlier launches have completed (`launch` waits for each);
        this returns once every launch of the pipeline has."""
        requests = list(requests)
        if not requests:
            return []
        self._current()
        d = self._d
        least, greatest = self._check(d.cuCtxGetStreamPriorityRange(), "cuCtxGetStreamPriorityRange")
        flags = d.CUstream_flags.CU_STREAM_NON_BLOCKING
        streams: dict[int, Any] = {}
        events: list[tuple[Any, Any]] = []
        temps: list[tuple[DeviceBuffer, np.ndarray]] = []
        keep: list = []  # packed parameters, alive until their launch has been issued
        done = False
        try:
            for r in requests:
                module = self.load(r.module) if isinstance(r.module, str) else r.module
                f, grid, block, packed, ptrs = self._prepare(module, r.kernel, r.grid, r.block, r.args,
                                                             r.shared_bytes, temps)
                keep.append((packed, ptrs))
                stream = streams.get(r.stream)
                if stream is None:
                    # CUDA priorities: a lower number runs first, from `greatest` (e.g. -5) to `least` (0)
                    priority = max(greatest, min(least, greatest + r.priority))
                    stream = streams[r.stream] = self._check(d.cuStreamCreateWithPriority(flags, priority),
                                                             "cuStreamCreateWithPriority")
                start = self._check(d.cuEventCreate(0), "cuEventCreate")
                end = self._check(d.cuEventCreate(0), "cuEventCreate")
                events.append((start, end))
                self._check(d.cuEventRecord(start, stream), "cuEventRecord")
                self._check(d.cuLaunchKernel(f, *grid, *block, int(r.shared_bytes), stream,
                                             ptrs.ctypes.data if ptrs is not None else 0, 0),
                            f"cuLaunchKernel ('{r.kernel}')")
                self._check(d.cuEventRecord(end, stream), "cuEventRecord")
            for r, (_, end) in zip(requests, events):
                self._check(d.cuEventSynchronize(end), f"kernel '{r.kernel}'")
            out = [CudaTiming(1, float(self._check(d.cuEventElapsedTime(s, e), "cuEventElapsedTime")))
                   for s, e in events]
            first = events[0][0]
            self.last_pipeline_ms = max(float(self._check(d.cuEventElapsedTime(first, e), "cuEventElapsedTime"))
                                        for _, e in events)
            done = True
        finally:
            for s, e in events:
                d.cuEventDestroy(s)
                d.cuEventDestroy(e)
            for stream in streams.values():
                d.cuStreamDestroy(stream)
            self._finish(temps, done)
        for t in out:
            self.timing = self.timing + t
        return out
