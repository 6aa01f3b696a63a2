"""The Ray measurer on a local `ray.init(num_cpus=2)`: the same records as the process
pool on the same candidates; a build or timing process that dies or hangs is a typed
result and the batch goes on; without Ray, a clear error naming the extra."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import time
from dataclasses import dataclass

import pytest
from test_measure_and_log import H100, TEXT, source

from fsir.errors import UserError
from fsir.tune.measure import (
    Built,
    MeasureError,
    MeasureInput,
    MeasureResult,
    ModelBackend,
    PoolMeasurer,
    task_space,
)
from fsir.tune.ray_measure import RayMeasurer, TimingResource, Workers, import_ray, make_measurer
from fsir.tune.space import Invalid, Knob, Trace


@pytest.fixture(scope="module")
def ray():
    ray = pytest.importorskip("ray")
    # the test backends below live in this module, which Ray's workers cannot import
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


def traces(n: int) -> list[Trace]:
    """stitch-codegen's configurations first, then rule-valid traces of the space
    without split-K (split kernels are simulated in full: slow)."""
    space = task_space(TEXT, H100, source().key)
    got = [t for t in (space.trace_of(c) for c in space.fixed) if t is not None]
    for t in space.traces():
        if len(got) >= n:
            break
        if t.number(Knob.SPLIT) > 1:
            continue
        with contextlib.suppress(Invalid):
            space.config(t)
            if t not in got:
                got.append(t)
    assert len(got) >= n
    return got[:n]


@dataclass(frozen=True)
class Misbehave:
    """Measures with the model, except that its build process dies on `build_crash`,
    its timing process dies on `time_crash` and hangs on `time_hang`."""

    build_crash: Trace
    time_crash: Trace
    time_hang: Trace

    def measure_one(self, inp: MeasureInput) -> MeasureResult:
        return self.time(inp, self.build(inp))  # type: ignore[arg-type]  # the tests never build wrongly

    def build(self, inp: MeasureInput) -> Built | MeasureResult:
        if inp.trace == self.build_crash:
            os._exit(3)
        return ModelBackend(samples=2).build(inp)

    def time(self, inp: MeasureInput, built: Built) -> MeasureResult:
        if inp.trace == self.time_crash:
            os._exit(4)
        if inp.trace == self.time_hang:
            time.sleep(600)
        return ModelBackend(samples=2).time(inp, built)


def test_ray_gives_the_pools_records_and_survives_crashing_and_hanging_workers(ray):
    """One batch: a build that dies, a timing that dies, two good candidates and one
    outside the space; the good ones and the invalid one get the process pool's records,
    the others `CRASH`. Then a timing that hangs is a `TIMEOUT`, and the actor that
    replaces the hung one measures the next batch; GPU actors that cannot start are a
    `TIMEOUT`. (The timeouts are generous where
    nothing hangs: a loaded machine must not turn a slow call into a timeout.)"""
    src = source()
    ts = traces(5)
    invalid = ts[3].with_value(Knob.K_TILE, 12)  # not in the space: INVALID from the build
    batch = [MeasureInput(src, t) for t in (ts[0], ts[1], ts[3], ts[4], invalid)]
    want = PoolMeasurer(ModelBackend(samples=2), workers=0).measure(batch[2:])
    measurer = RayMeasurer(Misbehave(ts[0], ts[1], ts[2]), timeout=120, actors=1)
    try:
        got = measurer.measure(batch)
        measurer.timeout, measurer.build_timeout = 4, 120  # a hung timing waits 4 s
        hung = measurer.measure([MeasureInput(src, ts[2])])
        measurer.timeout = 120
        again = measurer.measure(batch[2:3])
    finally:
        measurer.close()
    assert [r.trace for r in got] == [inp.trace for inp in batch]
    assert [r.error for r in got[:2]] == [MeasureError.CRASH, MeasureError.CRASH]
    assert "build task" in got[0].detail and "timing actor" in got[1].detail
    assert got[2:] == want and [r.ok for r in want] == [True, True, False]
    assert want[2].error == MeasureError.INVALID
    assert [r.error for r in hung] == [MeasureError.TIMEOUT] and hung[0].detail == "over 4 s"
    assert again == want[:1]

    # a GPU timing actor on a cluster without GPUs never starts: its candidates are
    # TIMEOUT once the timeout has passed, not a hang (one test: one local cluster,
    # whichever pytest worker runs it)
    gpu = RayMeasurer(ModelBackend(samples=2), timeout=2, build_timeout=120, resource=TimingResource.GPU, actors=1)
    try:
        stuck = gpu.measure(batch[2:3])
    finally:
        gpu.close()
    assert [(r.error, r.detail) for r in stuck] == [(MeasureError.TIMEOUT, "no timing actor ready within 2 s")]


def test_without_ray_the_error_names_the_extra(monkeypatch):
    real = importlib.import_module

    def no_ray(name: str, *args):
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_ray)
    with pytest.raises(UserError, match=r"pip install 'fsir\[ray\]'"):
        import_ray()
    with pytest.raises(UserError, match="fsir\\[ray\\]"):
        make_measurer(ModelBackend(), Workers.parse("ray"), 10)


def test_workers_option():
    assert Workers.parse("3") == Workers(3)
    assert Workers.parse("ray") == Workers(ray=True)
    assert Workers.parse("ray://head:10001") == Workers(ray=True, address="ray://head:10001")
    for bad in ("many", "-1", "ray://"):
        with pytest.raises(UserError):
            Workers.parse(bad)
    assert isinstance(make_measurer(ModelBackend(), Workers(0), 10), PoolMeasurer)


def test_fs_tune_refuses_a_bad_workers_option(tmp_path, capsys):
    from tune_graphs import EXAMPLES

    from fsir.tune.cli import main

    with pytest.raises(SystemExit) as exit_:
        main([str(EXAMPLES / "layernorm.mlir"), "--log", str(tmp_path / "t.jsonl"), "--workers", "many"])
    assert exit_.value.code == 1
    assert "--workers must be a number of processes, 'ray' or 'ray://ADDRESS'" in capsys.readouterr().err
