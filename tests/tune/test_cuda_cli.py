"""`fs-tune --measurer cuda` end to end on the fake CUDA driver (tests/runtime/fake_cuda.py):
the CLI tunes a tiny GEMM in fast mode, every trial timed by CUDA events on the task's
kernel, the records written with measurer `cuda`, and the table printed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tune_graphs import gemm

from fsir.codegen.gemm_config import GemmConfig
from fsir.pipeline import PipelineOptions
from fsir.tune import cli
from fsir.tune.database import Database
from fsir.tune.measure import stitched_from_text
from fsir.tune.task import discover

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from fake_cuda import FakeDriver, install  # noqa: E402

TRIALS = 3
H100 = PipelineOptions(fusion="stitch", gpu="H100")


def test_fs_tune_with_the_cuda_measurer_end_to_end(tmp_path, monkeypatch, capsys):
    drv = install(monkeypatch, FakeDriver(name="NVIDIA H100", ms_per_block=0.01))
    model = tmp_path / "gemm.mlir"
    model.write_text(gemm(64, 64, 64, "f16"))
    log = tmp_path / "tune.jsonl"
    cli.main([str(model), "--measurer", "cuda", "--mode", "fast", "--trials", str(TRIALS), "--workers", "0",
              "--gpu", "H100", "--log", str(log)])
    db = Database(str(log))
    assert len(db.records) == TRIALS and len({r.trace for r in db.records}) == TRIALS
    assert all(r.measurer == "cuda" and r.ok and r.seconds for r in db.records)
    (task,) = discover(stitched_from_text(model.read_text(), H100), H100)
    assert {r.key for r in db.records} == {task.key}
    # each trial: 2 warm-up and 10 timed launches of the task's kernel on the (fake) GPU
    assert sum(1 for launch in drv.launches if launch[0] == task.kernel) == 12 * TRIALS
    # the fake's events take 10 µs per block: each record's time is its grid's
    for r in db.records:
        c = GemmConfig.parse(r.config)
        assert r.seconds == pytest.approx(-(-64 // c.bm) * -(-64 // c.bn) * c.split * 1e-5)
    best = min(db.records, key=lambda r: r.seconds or 0)
    table = capsys.readouterr().out
    assert task.kernel in table and best.config in table


def test_fs_tune_cuda_without_a_gpu_is_a_located_error(tmp_path, monkeypatch, capsys):
    drv = install(monkeypatch, FakeDriver())
    drv.cuDeviceGetCount = lambda: (drv.OK, 0)
    model = tmp_path / "gemm.mlir"
    model.write_text(gemm(64, 64, 64, "f16"))
    log = tmp_path / "tune.jsonl"
    with pytest.raises(SystemExit) as exit_:
        cli.main([str(model), "--measurer", "cuda", "--mode", "fast", "--trials", "2", "--workers", "0",
                  "--log", str(log)])
    assert exit_.value.code == 1
    assert "--measurer cuda: no CUDA GPU found: the driver reports 0 devices" in capsys.readouterr().err
