"""Asynchronous compilation: `fsir.compile(..., background=...)` and the torch backend's
`background` option.

The compile is made slow on purpose and deterministically: `Background.hold` is an
event the worker waits on before it compiles, so a test knows which runs came before
the compile was done (no sleeps). Runs before it use the quick plan, runs after it the
compiled kernels, with equal results; the swap is reported (`swapped_at`, `last_plan`).
"""

from __future__ import annotations

import multiprocessing
import threading

import numpy as np
import pytest

import fsir
from fsir.api import Background, QuickPlan, Worker
from fsir.errors import UserError
from fsir.runtime.compare import compare
from fsir.runtime.reference import run as run_reference

LAYERNORM = """
func.func @norm(%x: tensor<4x64xf32>, %gamma: tensor<64xf32>) -> tensor<4x64xf32> {
  %n = graph.constant dense<6.400000e+01> : tensor<4xf32>
  %s = graph.reduce sum %x dims [1] : (tensor<4x64xf32>) -> tensor<4xf32>
  %mean = graph.div %s, %n : tensor<4xf32>
  %mb = graph.broadcast %mean dims [0] : (tensor<4xf32>) -> tensor<4x64xf32>
  %xc = graph.sub %x, %mb : tensor<4x64xf32>
  %gb = graph.broadcast %gamma dims [1] : (tensor<64xf32>) -> tensor<4x64xf32>
  %y = graph.mul %xc, %gb : tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}
"""


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((4, 64), np.float32), rng.standard_normal(64, np.float32)]


@pytest.mark.parametrize("worker", [Worker.THREAD, Worker.PROCESS])
def test_quick_plan_until_the_compile_is_done_then_swap(worker: Worker):
    hold = threading.Event() if worker == Worker.THREAD else multiprocessing.get_context("spawn").Event()
    exe = fsir.compile(LAYERNORM, background=Background(worker=worker, hold=hold))
    assert not exe.ready and exe.plan == "none" and exe.swapped_at is None
    xs = _inputs()
    want = run_reference(fsir.pipeline.load(LAYERNORM), xs)[0]
    quick = [exe.run(xs, device="sim")[0] for _ in range(2)]
    assert exe.last_plan == "none" and not exe.ready
    assert exe.last_stats is not None and exe.last_stats.launches > 1  # one kernel per op
    hold.set()
    compiled = exe.wait(timeout=300)
    assert exe.ready and exe.swapped_at is None  # no run has started since: nothing swapped yet
    got = exe.run(xs, device="sim")[0]
    assert exe.last_plan == "compiled" and exe.swapped_at == 2 and exe.runs == 3
    assert exe.last_stats is not None and exe.last_stats.launches == len(compiled.kernels) == 1  # stitched
    for out in (*quick, got):
        assert compare(out, want).ok


def test_reference_and_blocking_quick_plans():
    hold = threading.Event()
    exe = fsir.compile(LAYERNORM, background=Background(quick=QuickPlan.REFERENCE, worker=Worker.THREAD, hold=hold))
    xs = _inputs()
    first = exe.run(xs)[0]
    assert exe.last_plan == "reference" and exe.quick is None
    hold.set()
    blocking = fsir.compile(LAYERNORM, background=Background(quick=QuickPlan.BLOCK, worker=Worker.THREAD))
    got = blocking.run(xs, device="sim")[0]  # waits for the compile
    assert blocking.last_plan == "compiled" and blocking.swapped_at == 0
    assert compare(got, first).ok


def test_background_compile_error_is_raised_where_asked():
    hold = threading.Event()
    hold.set()
    exe = fsir.compile(LAYERNORM, background=Background(quick=QuickPlan.REFERENCE, worker=Worker.THREAD, hold=hold),
                       gemm="no-such-gemm")
    with pytest.raises(UserError, match="gemm=no-such-gemm"):
        exe.wait(timeout=300)
    with pytest.raises(UserError, match="gemm=no-such-gemm"):
        exe.run(_inputs())


def test_torch_backend_runs_eagerly_until_the_compile_is_done():
    torch = pytest.importorskip("torch")
    from test_torch_backend import MLP

    import fsir.torch

    torch._dynamo.reset()
    torch.manual_seed(0)
    model, x = MLP(), torch.randn(4, 32)
    hold = threading.Event()
    compiled = torch.compile(model, backend=fsir.torch.backend(device="sim",
                                                               background=Background(worker=Worker.THREAD, hold=hold)))
    with torch.no_grad():
        want = model(x)
        early = [compiled(x) for _ in range(2)]
        graph = fsir.torch.compiles[-1]
        assert (graph.eager_runs, graph.runs, graph.swapped_at) == (2, 0, None)
        hold.set()
        assert not isinstance(graph.executable, fsir.Executable)
        graph.executable.wait(timeout=300)
        late = compiled(x)
        later = compiled(x)
    assert (graph.eager_runs, graph.runs, graph.swapped_at) == (2, 2, 2)
    assert graph.executable.last_plan == "compiled" and graph.executable.last_stats is not None
    assert graph.executable.last_stats.launches == len(graph.executable.wait().kernels)  # the swap, in the stats
    for out in (*early, late, later):
        torch.testing.assert_close(out, want, rtol=2e-4, atol=2e-5)
    torch._dynamo.reset()
