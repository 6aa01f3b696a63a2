"""The measurer's error typing (a crashing worker included) and the log's
robustness to corrupt and foreign lines."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

from tune_graphs import gemm

from fsir.pipeline import PipelineOptions
from fsir.tune.database import Database, Record, fsir_version
from fsir.tune.measure import (
    MeasureError,
    MeasureInput,
    MeasureResult,
    ModelBackend,
    PoolMeasurer,
    TaskSource,
    stitched_from_text,
    task_space,
)
from fsir.tune.space import Decision, Knob, Trace
from fsir.tune.task import discover

H100 = PipelineOptions(fusion="stitch", gpu="H100")
TEXT = gemm(64, 64, 64, "f16")


def source() -> TaskSource:
    (task,) = discover(stitched_from_text(TEXT, H100), H100)
    return TaskSource(TEXT, H100, task.key, task.kernel)


@dataclass(frozen=True)
class CrashOn:
    """A backend whose worker dies on one trace (the others are measured)."""

    trace: Trace

    def measure_one(self, inp: MeasureInput) -> MeasureResult:
        if inp.trace == self.trace:
            os._exit(3)
        return ModelBackend(samples=2).measure_one(inp)


def test_model_measurer_times_and_types_errors():
    src = source()
    space = task_space(TEXT, H100, src.key)
    good = space.trace_of(space.fixed[0])
    assert good is not None
    bad = good.with_value(Knob.K_TILE, 12)
    foreign = Trace((Decision(Knob.SKETCH, "loop"), Decision(Knob.BLOCK, 128), Decision(Knob.VECTOR, 1)))
    results = PoolMeasurer(ModelBackend(samples=2, check=True), workers=0).measure(
        [MeasureInput(src, t) for t in (good, bad, foreign)])
    assert results[0].ok and results[0].seconds is not None and results[0].seconds > 0
    assert results[0].registers is not None and results[0].blocks >= results[0].simulated_blocks >= 1
    assert [r.error for r in results[1:]] == [MeasureError.INVALID, MeasureError.INVALID]


def test_a_crashing_worker_is_an_error_and_tuning_goes_on():
    src = source()
    space = task_space(TEXT, H100, src.key)
    traces = [t for t in (space.trace_of(c) for c in space.fixed[:3]) if t is not None]
    assert len(traces) >= 2
    measurer = PoolMeasurer(CrashOn(traces[0]), workers=1, timeout=120)
    try:
        results = measurer.measure([MeasureInput(src, t) for t in traces])
    finally:
        measurer.close()
    assert results[0].error == MeasureError.CRASH
    assert all(r.ok for r in results[1:])
    assert [r.trace for r in results] == traces


@dataclass(frozen=True)
class HangOn:
    """A backend whose worker hangs on one trace."""

    trace: Trace

    def measure_one(self, inp: MeasureInput) -> MeasureResult:
        if inp.trace == self.trace:
            import time

            time.sleep(600)
        return MeasureResult(inp.trace, 1e-6)


def test_a_worker_past_the_timeout_is_an_error_and_tuning_goes_on():
    src = source()
    space = task_space(TEXT, H100, src.key)
    traces = [t for t in (space.trace_of(c) for c in space.fixed[:3]) if t is not None]
    measurer = PoolMeasurer(HangOn(traces[0]), workers=1, timeout=3)
    try:
        results = measurer.measure([MeasureInput(src, t) for t in traces])
        again = measurer.measure([MeasureInput(src, traces[1])])  # a fresh pool
    finally:
        measurer.close()
    assert results[0].error == MeasureError.TIMEOUT
    assert all(r.ok for r in results[1:]) and again[0].ok


def record(seconds: float | None, config: str = "gemm/16x16x16/1x1", fsir: str | None = None) -> Record:
    trace = Trace((Decision(Knob.SKETCH, "fixed"), Decision(Knob.FIXED, 0)))
    return Record("k1", "gemm", config, trace, seconds, None if seconds else MeasureError.TIMEOUT, "", "H100",
                  "sm_80", "model", fsir or fsir_version())


def test_the_log_skips_corrupt_and_foreign_lines_with_located_warnings(tmp_path):
    log = tmp_path / "tune.jsonl"
    db = Database(log)
    db.add(record(2e-6, "gemm/a"))
    db.add(record(None, "gemm/b"))
    with log.open("a") as f:
        f.write("{not json\n")
        f.write('{"key": 3}\n')
        f.write(record(1e-6, "gemm/c", fsir="0.0.0-other").to_json() + "\n")
        f.write("[1, 2]\n")
    db.add(record(1.5e-6, "gemm/d"))
    warn = io.StringIO()
    again = Database(log, warn=warn)
    assert [r.config for r in again.records] == ["gemm/a", "gemm/b", "gemm/d"]
    lines = warn.getvalue().splitlines()
    assert [line.split(": warning:")[0] for line in lines] == [f"{log}:{n}" for n in (3, 4, 5, 6)]
    assert "fsir 0.0.0-other" in lines[2]
    best = again.best("k1")
    assert best is not None and best.config == "gemm/d"
    assert again.best("k1", gpu="A100") is None


def test_cuda_backend_times_the_task_kernel_on_the_fake_driver(monkeypatch):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
    from fake_cuda import FakeDriver, install

    from fsir.tune.measure import CudaBackend

    drv = install(monkeypatch, FakeDriver())
    drv.ms_per_block = 0.01  # the fake's events: 10 µs per block
    src = source()
    space = task_space(TEXT, H100, src.key)
    traces = [t for t in (space.trace_of(c) for c in space.fixed[:2]) if t is not None]
    results = PoolMeasurer(CudaBackend(warmup=1, repeats=3, check=True), workers=0).measure(
        [MeasureInput(src, t) for t in traces])
    for t, r in zip(traces, results):
        config = space.config(t)
        blocks = -(-64 // config.bm) * -(-64 // config.bn) * config.split
        assert r.ok and r.seconds is not None
        assert abs(r.seconds - blocks * 1e-5) < 1e-12  # the median of the fake's times
    # 1 warm-up and 3 timed launches of the task's kernel per candidate
    assert sum(1 for launch in drv.launches if launch[0] == src.kernel) == 4 * len(traces)
