"""Step f of benchmarks/gpu_check.py (benchmarks/gpu_check_tuner.py) against the fake CUDA
driver: three kernels of a small BERT layer, each candidate timed by the `cuda` measurer
(the fake's events: a fixed time per block) and the `model` measurer, the rank
correlations and gaps in the reports; its time cap stops it, and without a GPU it is
skipped with the reason."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from fake_cuda import FakeDriver, install

from fsir.testing.graphs import small_bert_layer
from fsir.testing.paths import EXAMPLES

sys.path.insert(0, str(EXAMPLES.parent / "benchmarks"))
import gpu_check  # noqa: E402

MS_PER_BLOCK = 0.001
HEADER = "| kernel | mapping | candidates | pairs | spearman | kendall | best_us |"


def small_bert(folder: Path) -> Path:
    path = folder / "bert_layer.mlir"
    path.write_text(small_bert_layer())
    return path


def run(tmp_path: Path, *extra: str) -> tuple[dict, str]:
    out = tmp_path / "report"
    argv = ["--out", str(out), "--bert", str(small_bert(tmp_path)), "--steps", "af", "--tuner-top", "1",
            "--tuner-samples", "1", "--warmup", "0", "--repeats", "1", "--sim-workers", "0", *extra]
    assert gpu_check.main(argv) == 0
    report = json.loads((out / "gpu_check.json").read_text())
    (f,) = [s for s in report["steps"] if s["name"] == "f"]
    return f, (out / "gpu_check.md").read_text()


def test_the_tuner_step_compares_the_measurers_on_three_kernels(tmp_path, monkeypatch):
    # the fake times launches without simulating them: the model measurer simulates
    drv = install(monkeypatch, FakeDriver(name="NVIDIA H200", ms_per_block=MS_PER_BLOCK, simulate=False))
    f, md = run(tmp_path)
    assert f["status"] == "ok", f["error"]
    rows = f["rows"]
    assert [r["mapping"] for r in rows] == ["gemm", "attention", "row"]
    launched = {name for name, *_ in drv.launches}
    for r in rows:
        assert 1 <= r["candidates"] <= 2 and r["pairs"] <= r["candidates"]  # the prior's top 1 and today's choice
        # built as the model measurer builds a candidate: the task's fusion alone, its kernel renamed
        assert any(name == r["kernel"] or name.startswith(f"{r['kernel']}_alone") for name in launched)
        for corr in (r["spearman"], r["kendall"]):
            assert corr is None or math.isnan(corr) or -1.0 <= corr <= 1.0
        # the fake's time is a whole number of blocks; the model's pick is never faster than the best
        assert r["best_us"] > 0 and (r["best_us"] / (MS_PER_BLOCK * 1e3)).is_integer()
        if r["model_pick_us"] is not None:
            assert r["model_pick_us"] >= r["best_us"] and r["model_gap_pct"] >= 0
    assert any(r["pairs"] == 2 for r in rows)  # a ranking of two was compared
    assert "## f. the tuner's cuda and model measurers" in md and HEADER in md
    assert any("prior's top 1 candidates" in n for n in f["notes"])


def test_the_tuner_step_stops_at_its_time_cap(tmp_path, monkeypatch):
    install(monkeypatch, FakeDriver(name="NVIDIA H200", ms_per_block=MS_PER_BLOCK, simulate=False))
    f, md = run(tmp_path, "--tuner-cap-s", "0")
    assert f["status"] == "stopped (budget spent)" and f["rows"] == []
    assert any("time cap (0 s) passed" in n for n in f["notes"]) and "time cap" in md


def test_without_a_gpu_the_tuner_step_is_skipped_with_the_reason(tmp_path, monkeypatch):
    drv = install(monkeypatch, FakeDriver())
    drv.cuDeviceGetCount = lambda: (drv.OK, 0)
    f, md = run(tmp_path)
    assert f["status"] == "skipped" and f["rows"] == []
    assert f["notes"] == ["skipped: no CUDA GPU found: the driver reports 0 devices"]
    assert "status: **skipped**" in md
