"""A fake of cuda-python's driver bindings (`cuda.bindings.driver`), enough to run
CudaDevice's code without a GPU: memory is host arrays keyed by fake device pointers;
cuLaunchKernel decodes the kernelParams pointer array exactly as the driver would and runs
the kernel on the simulator; streams have priorities; events time a launch by a fixed
rule (`KERNEL_MS`, or `ms_per_block` × blocks) so that measurements can be ranked.

    drv = FakeDriver(name="NVIDIA H200")
    drv.fail_kernels = {"_k1"}           # launches of kernels whose name holds this fail
    install(monkeypatch, drv)           # CudaDevice() now drives `drv`
"""

from __future__ import annotations

import ctypes
import enum

import numpy as np

KERNEL_MS = 0.25  # what a launch takes, by default


class FakeDriver:
    class CUresult(enum.IntEnum):
        CUDA_SUCCESS = 0
        CUDA_ERROR_INVALID_VALUE = 1
        CUDA_ERROR_LAUNCH_FAILED = 719

    class CUfunction_attribute:
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

    class CUstream_flags:
        CU_STREAM_NON_BLOCKING = 1

    class CUdevice_attribute(enum.IntEnum):
        CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
        CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36
        CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37
        CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76

    # An H200's figures (kHz for clocks), as its driver reports them.
    ATTRIBUTES = {13: 1_980_000, 16: 132, 36: 2_619_000, 37: 6144, 38: 50 * 2**20, 75: 9, 76: 0}

    OK = CUresult.CUDA_SUCCESS

    def __init__(self, name: str = "Fake GPU", ms_per_block: float = 0.0, simulate: bool = True):
        self.name = name
        self.ms_per_block = ms_per_block  # 0: every launch takes KERNEL_MS
        self.simulate = simulate  # False: a launch is recorded and timed, not run (outputs stay as they were)
        self.fail_kernels: set[str] = set()  # a launch of a kernel whose name holds one of these fails
        self.mem: dict[int, np.ndarray] = {}
        self.next = 0x10000
        self.launches: list[tuple] = []
        self.streams: dict[str, int] = {}
        self.destroyed = 0
        self._last_ms = KERNEL_MS

    # -- device and context
    def cuInit(self, flags):
        return (self.OK,)

    def cuDeviceGetCount(self):
        return (self.OK, 1)

    def cuDeviceGet(self, i):
        return (self.OK, i)

    def cuDevicePrimaryCtxRetain(self, dev):
        return (self.OK, "ctx")

    def cuCtxSetCurrent(self, ctx):
        return (self.OK,)

    def cuDeviceGetName(self, n, dev):
        return (self.OK, self.name.encode() + b"\0\0\0")

    def cuDeviceGetAttribute(self, attr, dev):
        return (self.OK, self.ATTRIBUTES[int(attr)])

    def cuDeviceTotalMem(self, dev):
        return (self.OK, 141 * 10**9)

    def cuDriverGetVersion(self):
        return (self.OK, 12080)

    def cuGetErrorName(self, e):
        return (self.OK, self.CUresult(e).name.encode())

    # -- streams and events
    def cuStreamCreate(self, flags):
        return (self.OK, "stream")

    def cuCtxGetStreamPriorityRange(self):
        return (self.OK, 0, -5)  # (least, greatest), as CUDA reports them

    def cuStreamCreateWithPriority(self, flags, priority):
        name = f"s{len(self.streams)}"
        assert flags == self.CUstream_flags.CU_STREAM_NON_BLOCKING
        self.streams[name] = priority
        return (self.OK, name)

    def cuStreamDestroy(self, s):
        self.destroyed += 1
        return (self.OK,)

    def cuStreamSynchronize(self, s):
        return (self.OK,)

    def cuEventCreate(self, flags):
        return (self.OK, object())

    def cuEventDestroy(self, e):
        return (self.OK,)

    def cuEventRecord(self, e, s):
        return (self.OK,)

    def cuEventSynchronize(self, e):
        return (self.OK,)

    def cuEventElapsedTime(self, a, b):
        return (self.OK, self._last_ms)

    # -- modules and memory
    def cuModuleLoadData(self, ptr):
        return (self.OK, ctypes.string_at(ptr).decode())

    def cuModuleGetFunction(self, mod, name):
        return (self.OK, (mod, name.decode()))

    def cuFuncSetAttribute(self, f, attr, v):
        return (self.OK,)

    def cuMemAlloc(self, n):
        p = self.next
        self.next += (n + 511) // 256 * 256
        self.mem[p] = np.zeros(n, np.uint8)
        return (self.OK, p)

    def cuMemFree(self, p):
        del self.mem[p]
        return (self.OK,)

    def cuMemcpyHtoD(self, dst, src, n):
        self.mem[dst][:n] = np.frombuffer(ctypes.string_at(src, n), np.uint8)
        return (self.OK,)

    def cuMemcpyDtoH(self, dst, src, n):
        ctypes.memmove(dst, self.mem[src].ctypes.data, n)
        return (self.OK,)

    # -- launches
    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        from fsir.sim import parse_ptx, run_ptx
        from fsir.sim.decoder import NP

        ptx, name = f
        if any(part in name for part in self.fail_kernels):
            return (self.CUresult.CUDA_ERROR_LAUNCH_FAILED,)
        ps = parse_ptx(ptx).kernels[name].params
        ptrs = (ctypes.c_void_p * len(ps)).from_address(params)
        args = []
        for p, ptr in zip(ps, ptrs):
            dt = NP[p.type]
            v = np.frombuffer(ctypes.string_at(ptr, dt.itemsize), dt)[0]
            args.append(self.mem[int(v)] if dt.itemsize == 8 and int(v) in self.mem else v.item())
        self.launches.append((name, (gx, gy, gz), (bx, by, bz), smem, stream))
        if self.simulate:
            run_ptx(ptx, name, (gx, gy, gz), (bx, by, bz), args, smem)
        self._last_ms = self.ms_per_block * gx * gy * gz if self.ms_per_block else KERNEL_MS
        return (self.OK,)


def install(monkeypatch, driver: FakeDriver) -> FakeDriver:
    """Make CudaDevice (and probe_gpu) use `driver` for the rest of the test."""
    import fsir.runtime.cuda_device as cd

    monkeypatch.setattr(cd, "_driver", lambda: driver)
    monkeypatch.setattr(cd, "_PROBE", None)
    return driver
