"""The device interface: SimDevice runs PTX on the simulator; CudaDevice needs a GPU and says so
in one line when there is none."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.errors import UserError
from fsir.runtime.cuda_device import probe_gpu
from fsir.runtime.device import CudaTiming, DeviceBuffer, SimDevice, select_device
from fsir.sim import LaunchStats
from fsir.testing.paths import CUDA_PTX

VADD = (CUDA_PTX / "vecadd.ptx").read_text()
HAS_GPU = probe_gpu()[0]


def test_sim_device_runs_and_accumulates_stats():
    dev = SimDevice()
    mod = dev.load(VADD)
    assert dev.load(VADD) is mod  # parsed once
    n = 1000
    a = np.arange(n, dtype=np.float32)
    b = np.ones(n, np.float32)
    c = np.zeros(n, np.float32)
    st = dev.launch(mod, "vec_add", (4,), (256,), [a, b, c, n])
    assert isinstance(st, LaunchStats) and st.global_store_bytes == 4 * n
    np.testing.assert_array_equal(c, a + 1)
    dev.launch(mod, "vec_add", (4,), (256,), [c, b, c, n])
    dev.synchronize()
    np.testing.assert_array_equal(c, a + 2)
    assert dev.stats.launches == 2 and dev.stats.global_load_bytes == 16 * n


def test_sim_device_buffers():
    dev = SimDevice()
    n = 300
    a = dev.to_device(np.arange(n, dtype=np.float32))
    b = dev.alloc(n, np.float32)
    dev.copy_to(b, np.full(n, 2, np.float32))
    c = dev.alloc((n,), np.float32)
    assert isinstance(c, DeviceBuffer) and c.nbytes == 4 * n
    dev.launch(dev.load(VADD), "vec_add", (3,), (128,), [a, b, c, n])
    out = dev.copy_from(c)
    np.testing.assert_array_equal(out, np.arange(n) + 2)
    host = np.zeros(n, np.float32)
    assert dev.copy_from(c, host) is host and host[5] == 7
    with pytest.raises(UserError, match="bytes"):
        dev.copy_to(c, np.zeros(3, np.float32))
    dev.free(c)
    with pytest.raises(UserError, match="freed"):
        dev.launch(dev.load(VADD), "vec_add", (3,), (128,), [a, b, c, n])


def test_select_device():
    assert isinstance(select_device("sim"), SimDevice)
    auto = select_device("auto")
    assert isinstance(auto, SimDevice) != HAS_GPU
    with pytest.raises(UserError, match="unknown device 'tpu'"):
        select_device("tpu")


@pytest.mark.skipif(HAS_GPU, reason="a GPU is present")
def test_cuda_device_without_gpu_is_one_line():
    from fsir.runtime.cuda_device import CudaDevice

    for make in (CudaDevice, lambda: select_device("cuda")):
        with pytest.raises(UserError) as e:
            make()
        msg = str(e.value)
        assert msg.startswith("no CUDA GPU found")
        assert "\n" not in msg and len(msg) < 200
        assert e.value.__cause__ is None and e.value.__suppress_context__
    ok, reason = probe_gpu()
    assert not ok and reason and "\n" not in reason


@pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU")
def test_cuda_device_matches_simulator():  # pragma: no cover - no GPU in CI
    from fsir.runtime.cuda_device import CudaDevice

    dev = CudaDevice()
    n = 5000
    a = np.random.rand(n).astype(np.float32)
    b = np.random.rand(n).astype(np.float32)
    c = np.zeros(n, np.float32)
    t = dev.launch(dev.load(VADD), "vec_add", ((n + 255) // 256,), (256,), [a, b, c, n])
    assert isinstance(t, CudaTiming) and t.launches == 1 and t.kernel_ms > 0
    np.testing.assert_array_equal(c, a + b)


def test_timing_adds():
    t = CudaTiming(1, 0.5) + CudaTiming(2, 1.0)
    assert t == CudaTiming(3, 1.5) and sum([t, t]) == CudaTiming(6, 3.0)


class FakeDriver:
    """Just enough of cuda.bindings.driver to run CudaDevice's code without a GPU: memory is
    host arrays keyed by fake device pointers; cuLaunchKernel decodes the kernelParams pointer
    array exactly as the driver would and runs the kernel on the simulator."""

    import enum as _enum

    class CUresult(_enum.IntEnum):
        CUDA_SUCCESS = 0
        CUDA_ERROR_INVALID_VALUE = 1

    class CUfunction_attribute:
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

    OK = CUresult.CUDA_SUCCESS

    def __init__(self):
        self.mem: dict[int, np.ndarray] = {}
        self.next = 0x10000
        self.launches = []

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
        return (self.OK, b"Fake GPU\0\0\0")

    def cuStreamCreate(self, flags):
        return (self.OK, "stream")

    def cuEventCreate(self, flags):
        return (self.OK, object())

    def cuModuleLoadData(self, ptr):
        import ctypes
        return (self.OK, ctypes.string_at(ptr).decode())

    def cuModuleGetFunction(self, mod, name):
        return (self.OK, (mod, name.decode()))

    def cuMemAlloc(self, n):
        p = self.next
        self.next += (n + 511) // 256 * 256
        self.mem[p] = np.zeros(n, np.uint8)
        return (self.OK, p)

    def cuMemFree(self, p):
        del self.mem[p]
        return (self.OK,)

    def cuMemcpyHtoD(self, dst, src, n):
        import ctypes
        self.mem[dst][:n] = np.frombuffer(ctypes.string_at(src, n), np.uint8)
        return (self.OK,)

    def cuMemcpyDtoH(self, dst, src, n):
        import ctypes
        ctypes.memmove(dst, self.mem[src].ctypes.data, n)
        return (self.OK,)

    def cuFuncSetAttribute(self, f, attr, v):
        return (self.OK,)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        import ctypes

        from fsir.sim import parse_ptx, run_ptx
        from fsir.sim.decoder import NP

        ptx, name = f
        ps = parse_ptx(ptx).kernels[name].params
        ptrs = (ctypes.c_void_p * len(ps)).from_address(params)
        args = []
        for p, ptr in zip(ps, ptrs):
            dt = NP[p.type]
            v = np.frombuffer(ctypes.string_at(ptr, dt.itemsize), dt)[0]
            args.append(self.mem[int(v)] if dt.itemsize == 8 and int(v) in self.mem else v.item())
        self.launches.append((name, (gx, gy, gz), (bx, by, bz), smem))
        run_ptx(ptx, name, (gx, gy, gz), (bx, by, bz), args, smem)
        return (self.OK,)

    def cuEventRecord(self, e, s):
        return (self.OK,)

    def cuEventSynchronize(self, e):
        return (self.OK,)

    def cuEventElapsedTime(self, a, b):
        return (self.OK, 0.25)

    def cuStreamSynchronize(self, s):
        return (self.OK,)

    def cuGetErrorName(self, e):
        return (self.OK, b"CUDA_ERROR_INVALID_VALUE")


@pytest.fixture
def fake_gpu(monkeypatch):
    import fsir.runtime.cuda_device as cd

    drv = FakeDriver()
    monkeypatch.setattr(cd, "_driver", lambda: drv)
    monkeypatch.setattr(cd, "_PROBE", None)
    yield drv
    cd._PROBE = None


def test_cuda_device_marshalling_with_fake_driver(fake_gpu):
    from fsir.runtime.cuda_device import CudaDevice

    dev = select_device("auto")
    assert isinstance(dev, CudaDevice) and dev.name == "cuda:Fake GPU"
    mod = dev.load(VADD)
    n = 1000
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 0.5, np.float32)
    c = np.zeros(n, np.float32)
    t = dev.launch(mod, "vec_add", (4,), (256,), [a, b, c, n])
    np.testing.assert_array_equal(c, a + 0.5)  # copied back into the caller's array
    assert t == CudaTiming(1, 0.25) and not fake_gpu.mem  # temporaries freed
    # resident buffers
    da, dc = dev.to_device(a), dev.alloc(n, np.float32)
    dev.launch(mod, "vec_add", (4,), (256,), [da, da, dc, n])
    dev.synchronize()
    np.testing.assert_array_equal(dev.copy_from(dc), 2 * a)
    assert dev.timing.launches == 2
    with pytest.raises(UserError, match="takes 4 arguments"):
        dev.launch(mod, "vec_add", (4,), (256,), [da, da, dc])
    with pytest.raises(UserError, match="integer parameter, got float"):
        dev.launch(mod, "vec_add", (4,), (256,), [da, da, dc, 1.5])
    with pytest.raises(UserError, match="unknown kernel 'nope'"):
        dev.launch(mod, "nope", (1,), (1,), [])
    softmax = (CUDA_PTX / "softmax.ptx").read_text()
    x = np.random.default_rng(0).standard_normal((3, 70)).astype(np.float32)
    y = np.zeros_like(x)
    dev.launch(dev.load(softmax), "softmax_rows", (3,), (128,), [x, y, 70], 512)
    np.testing.assert_allclose(y.sum(1), 1, rtol=1e-5)
    assert fake_gpu.launches[-1] == ("softmax_rows", (3, 1, 1), (128, 1, 1), 512)


class PipelineFakeDriver(FakeDriver):
    """FakeDriver with prioritised streams; launches run at once (in issue order)."""

    class CUstream_flags:
        CU_STREAM_NON_BLOCKING = 1

    def __init__(self):
        super().__init__()
        self.streams: dict[str, int] = {}
        self.destroyed = 0

    def cuCtxGetStreamPriorityRange(self):
        return (self.OK, 0, -5)  # (least, greatest), as CUDA reports them

    def cuStreamCreateWithPriority(self, flags, priority):
        name = f"s{len(self.streams)}"
        assert flags == self.CUstream_flags.CU_STREAM_NON_BLOCKING
        self.streams[name] = priority
        return (self.OK, name)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        out = super().cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra)
        self.launches[-1] = (*self.launches[-1], stream)
        return out

    def cuEventDestroy(self, e):
        return (self.OK,)

    def cuStreamDestroy(self, s):
        self.destroyed += 1
        return (self.OK,)


def test_cuda_device_launches_a_pipeline_on_prioritised_streams(monkeypatch):
    """A tile-synchronised pipeline through CudaDevice.launch_pipeline: a stream per
    stage, created with the stage's priority mapped onto the device's range."""
    import fsir.runtime.cuda_device as cd
    from fsir.pipeline import PipelineOptions, read_model
    from fsir.runtime.executor import execute
    from fsir.runtime.inputs import random_inputs
    from fsir.runtime.reference import find_function, run_function
    from fsir.testing.paths import EXAMPLES
    from fsir.testing.tile_sync import lower_synced
    from fsir.transforms.tile_sync import TileSyncPass

    drv = PipelineFakeDriver()
    monkeypatch.setattr(cd, "_driver", lambda: drv)
    monkeypatch.setattr(cd, "_PROBE", None)
    module = read_model(EXAMPLES / "cusync" / "fig4a.mlir")
    f = find_function(module)
    inputs = random_inputs(f, 0)
    lowered = lower_synced(module, TileSyncPass(policy="row", wait_kernel="true", tile_order="row-major"),
                           PipelineOptions())
    dev = cd.CudaDevice()
    (got,), timing = execute(lowered, inputs, dev)
    np.testing.assert_allclose(got, run_function(f, inputs)[0], rtol=1e-4, atol=1e-4)
    assert [(name, drv.streams[s]) for name, *_, s in drv.launches] == [
        ("fig4a_k0", -5), ("fig4a_k1_wait", -4), ("fig4a_k1", -4)]
    assert drv.destroyed == 2 and timing == CudaTiming(3, 0.75) and not drv.mem
