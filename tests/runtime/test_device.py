"""The device interface: SimDevice runs PTX on the simulator; CudaDevice needs a GPU and says so
in one line when there is none."""

from __future__ import annotations

import numpy as np
import pytest
from fake_cuda import FakeDriver, install

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


@pytest.fixture
def fake_gpu(monkeypatch):
    return install(monkeypatch, FakeDriver())


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
    assert fake_gpu.launches[-1] == ("softmax_rows", (3, 1, 1), (128, 1, 1), 512, "stream")


def test_cuda_device_launches_a_pipeline_on_prioritised_streams(monkeypatch):
    """A tile-synchronised pipeline through CudaDevice.launch_pipeline: a stream per
    stage, created with the stage's priority mapped onto the device's range."""
    import fsir.runtime.cuda_device as cd
    from fsir.codegen.tile_sync import TileSyncPass
    from fsir.pipeline import PipelineOptions, read_model
    from fsir.runtime.executor import execute
    from fsir.runtime.inputs import random_inputs
    from fsir.runtime.reference import find_function, run_function
    from fsir.testing.paths import EXAMPLES
    from fsir.testing.tile_sync import lower_synced

    drv = install(monkeypatch, FakeDriver())
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
    assert dev.last_pipeline_ms == 0.25


def test_cuda_device_times_one_kernel_and_reports_its_properties(fake_gpu):
    """time_launch: warm-up and repeats of one launch, each between events; properties:
    the driver's attributes (clocks in MHz)."""
    from fsir.runtime.cuda_device import CudaDevice, DeviceProperties

    fake_gpu.name, fake_gpu.ms_per_block = "NVIDIA H200", 0.5
    dev = CudaDevice()
    n = 300
    a = np.arange(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    times = dev.time_launch(dev.load(VADD), "vec_add", (2,), (256,), [a, a, c, n], warmup=2, repeats=3)
    assert times == [1.0, 1.0, 1.0] and len(fake_gpu.launches) == 5 and not fake_gpu.mem
    np.testing.assert_array_equal(c, 2 * a)
    assert dev.timing == CudaTiming(5, 5.0)
    props = dev.properties()
    assert props == DeviceProperties("NVIDIA H200", "9.0", sms=132, clock_mhz=1980.0, memory_clock_mhz=2619.0,
                                     memory_bus_bits=6144, memory_bytes=141 * 10**9, l2_bytes=50 * 2**20,
                                     driver_version=12080)
    fake_gpu.fail_kernels = {"vec_"}
    with pytest.raises(UserError, match="CUDA_ERROR_LAUNCH_FAILED"):
        dev.time_launch(dev.load(VADD), "vec_add", (2,), (256,), [a, a, c, n])
    assert not fake_gpu.mem
