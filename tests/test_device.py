"""The device interface: SimDevice runs PTX on the simulator; CudaDevice needs a GPU and says so
in one line when there is none."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fsir.errors import UserError
from fsir.runtime.cuda_device import probe_gpu
from fsir.runtime.device import CudaTiming, DeviceBuffer, SimDevice, select_device
from fsir.runtime.simulator import LaunchStats

VADD = (Path(__file__).parent / "runtime" / "cuda" / "vecadd.ptx").read_text()
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
