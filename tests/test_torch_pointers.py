"""Torch tensors by pointer on a GPU (fsir/torch/device.py), on the fake CUDA driver.

There is no GPU in CI: tests/runtime/fake_cuda.py stands in for cuda-python's driver and
runs each launch on the simulator, reading the kernel parameters from the packed
pointer array as the driver would. The tensors live in host memory here, registered
with the fake under their `data_ptr()`, so a launch that takes a tensor's address
reads and writes the tensor itself. The test checks that the kernels were given the
inputs' addresses and wrote an output torch allocated, and that no byte was copied
between host and device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parent / "runtime"))

from fake_cuda import FakeDriver, install  # noqa: E402
from test_torch_backend import MLP  # noqa: E402

import fsir.torch  # noqa: E402
from fsir.torch.device import TorchCudaDevice  # noqa: E402


class Addresses(dict):
    """The fake's memory, recording every address a launch looks up."""

    def __init__(self):
        super().__init__()
        self.read: list[int] = []

    def __getitem__(self, key):
        self.read.append(int(key))
        return super().__getitem__(key)


def test_tensors_by_pointer_without_host_copies(monkeypatch):
    drv = install(monkeypatch, FakeDriver())
    drv.mem = Addresses()
    copies: list[str] = []
    for name in ("cuMemcpyHtoD", "cuMemcpyDtoH"):
        real = getattr(drv, name)
        monkeypatch.setattr(drv, name, lambda *a, _real=real, _name=name: (copies.append(_name), _real(*a))[1])
    wrap = TorchCudaDevice.tensor_buffer

    def registered(self, t):  # the fake's "device memory" is the tensor's own bytes
        drv.mem[t.data_ptr()] = t.detach().reshape(-1).view(torch.uint8).numpy()
        return wrap(self, t)

    monkeypatch.setattr(TorchCudaDevice, "tensor_buffer", registered)

    torch._dynamo.reset()
    torch.manual_seed(0)
    model, x = MLP(), torch.randn(4, 32)
    with torch.no_grad():
        want = model(x)
        torch.compile(model, backend=fsir.torch.backend(device="sim"))(x)  # compiled once (on the simulator)
        graph = fsir.torch.compiles[-1]
        params = [p.detach().contiguous() for p in model.parameters()]
        inputs = _inputs_in_order(graph, params, x)
        (got,) = graph._by_pointer(inputs, memory="cpu")
    torch._dynamo.reset()
    assert copies == []  # no host <-> device copy, in either direction
    launched = set(drv.mem.read)
    assert {t.data_ptr() for t in inputs} <= launched  # the kernels took the tensors' addresses
    assert got.data_ptr() in launched and got.data_ptr() not in {t.data_ptr() for t in inputs}
    assert len(drv.launches) == len(graph.executable.kernels) >= 1
    torch.testing.assert_close(got, want, rtol=2e-4, atol=2e-5)
    assert np.shares_memory(got.numpy(), drv.mem[got.data_ptr()])  # the output is the memory the kernel wrote


def _inputs_in_order(graph, params, x):
    """The FX graph's tensor inputs: AOTAutograd lifts the parameters (in
    `named_parameters` order) before the model's own input."""
    shapes = [tuple(a.type.get_shape()) for a in graph.converted.module.body.block.ops.first.body.block.args]
    pool = [*params, x]
    out = []
    for shape in shapes:
        i = next(i for i, t in enumerate(pool) if tuple(t.shape) == shape)
        out.append(pool.pop(i))
    return out
