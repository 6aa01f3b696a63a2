"""benchmarks/gpu_check.py end to end against the fake CUDA driver (tests/runtime/fake_cuda.py):
every step on tiny models, an injected launch error reported without stopping the run, the
reports written after each step, and the budget stopping it cleanly."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from fake_cuda import FakeDriver, install

from fsir.testing.paths import EXAMPLES

sys.path.insert(0, str(EXAMPLES.parent / "benchmarks"))
import gpu_check  # noqa: E402

# examples/bert_layer.mlir shrunk to B=2 S=16 H=64, one head, FFN 128 (simulated in a second)
SIZES = {"128": "16", "12": "1", "768": "64", "3072": "128"}


def tiny_bert(folder: Path) -> Path:
    text = (EXAMPLES / "bert_layer.mlir").read_text()
    text = re.sub(r"\b((?:\d+x)+)f32", lambda m: "x".join(SIZES.get(d, d) for d in m.group(1).split("x")[:-1])
                  + "xf32", text)
    path = folder / "bert_layer.mlir"
    path.write_text(text.replace("dense<7.680000e+02>", "dense<6.400000e+01>"))
    return path


def small_argv(tmp_path: Path, *extra: str) -> list[str]:
    bert = str(tiny_bert(tmp_path))
    return ["--out", str(tmp_path / "report"), "--steps", "abcde", "--examples", "examples/hlo/softmax.hlo", bert,
            "--onnx-every", "100000", "--onnx-limit", "2", "--bert", bert, "--precisions", "fp32,bf16", "--cnns",
            str(EXAMPLES / "hlo" / "layernorm.hlo"), "--warmup", "0", "--repeats", "1", "--sim-workers", "0",
            "--mlp-tokens", "16", "--mlp-hidden", "64", "--mlp-repeats", "1", *extra]


def read(tmp_path: Path) -> tuple[dict, str]:
    out = tmp_path / "report"
    return json.loads((out / "gpu_check.json").read_text()), (out / "gpu_check.md").read_text()


@pytest.fixture
def fake(monkeypatch):
    return install(monkeypatch, FakeDriver(name="NVIDIA H200", ms_per_block=0.001))


def test_every_step_runs_and_a_launch_error_is_reported(tmp_path, fake, monkeypatch):
    fake.fail_kernels = {"main_k"}  # every kernel of the HLO models fails to launch
    written = []
    run_step = gpu_check.run_step

    def recording(ctx, name, title, fn):
        run_step(ctx, name, title, fn)
        report, md = read(tmp_path)
        written.append(([s["name"] for s in report["steps"]], f"## {name}." in md))

    monkeypatch.setattr(gpu_check, "run_step", recording)
    assert gpu_check.main(small_argv(tmp_path)) == 0
    assert written == [(list("abcde"[:i + 1]), True) for i in range(5)]  # the reports after every step
    report, md = read(tmp_path)
    steps = {s["name"]: s for s in report["steps"]}
    assert all(s["status"] == "ok" for s in steps.values()), {n: s["error"] for n, s in steps.items()}
    (device,) = steps["a"]["rows"]
    assert device["name"] == "NVIDIA H200" and device["sms"] == 132 and device["gpuspec"].startswith("H200")
    cases = {r["case"]: r for r in steps["b"]["rows"]}
    assert cases["examples/hlo/softmax.hlo"]["status"] == "error"
    assert "CUDA_ERROR_LAUNCH_FAILED" in cases["examples/hlo/softmax.hlo"]["message"]
    assert cases[str(tmp_path / "bert_layer.mlir")]["status"] == "pass"
    assert sum(r["suite"] == "onnx" for r in steps["b"]["rows"]) == 2
    # c: the BERT layer in two precisions measured and modeled; the failing CNN reported
    rows = steps["c"]["rows"]
    assert {r["config"] for r in rows} == {"bert_layer fp32", "bert_layer bf16"}
    assert all(r["measured_us"] > 0 and r["estimate_us"] and r["timeline_us"] and r["fs_bench_us"] for r in rows)
    assert any("layernorm fp32" in n and "CUDA_ERROR_LAUNCH_FAILED" in n for n in steps["c"]["notes"])
    fits = {(f["config"], f["model"]): f for f in steps["c"]["fits"]}
    assert fits[("all", "estimate")]["kernels"] == len(rows) and -1 <= fits[("all", "timeline")]["spearman"] <= 1
    assert fits[("all", "fs_bench")]["median_ratio"] > 0
    peers = {r["system"]: r for r in steps["d"]["rows"]}
    fp32 = [r for r in rows if r["config"] == "bert_layer fp32"]
    assert peers["fsir stitch"]["status"] == "ok" and peers["fsir stitch"]["launches"] == len(fp32)
    assert peers["fsir xla"]["launches"] > peers["fsir stitch"]["launches"]
    if "torch" not in sys.modules:
        assert peers["torch eager"]["status"] == "skipped" and "not importable" in peers["torch eager"]["note"]
    mlp = {r["tile_sync"]: r for r in steps["e"]["rows"]}
    assert set(mlp) == {"off", "tile", "row"} and all(r["check"] == "ok" for r in mlp.values())
    assert "Models against the measurement" in md and "| softmax" not in md


def test_the_budget_stops_it_cleanly(tmp_path, fake):
    assert gpu_check.main(small_argv(tmp_path, "--budget-s", "0")) == 0
    report, md = read(tmp_path)
    status = {s["name"]: s["status"] for s in report["steps"]}
    assert status == {"a": "ok", **dict.fromkeys("bcde", "not run (budget spent)")}
    assert "not run (budget spent)" in md


def test_a_budget_spent_mid_step_stops_that_step(tmp_path, fake):
    ticks = iter(range(1000))  # a clock that advances 1 s per reading: the budget lasts a few cases
    assert gpu_check.main(small_argv(tmp_path, "--budget-s", "4", "--steps", "ab"), clock=lambda: next(ticks)) == 0
    report, _ = read(tmp_path)
    (b,) = [s for s in report["steps"] if s["name"] == "b"]
    assert b["status"] == "stopped (budget spent)" and 0 < len(b["rows"]) < 4


def test_without_a_gpu_every_step_reports_why(tmp_path, monkeypatch):
    drv = install(monkeypatch, FakeDriver())
    drv.cuDeviceGetCount = lambda: (drv.OK, 0)
    assert gpu_check.main(small_argv(tmp_path, "--steps", "ae", "--mlp-tokens", "16")) == 0
    report, _ = read(tmp_path)
    a, e = report["steps"]
    assert a["status"] == "failed" and "no CUDA GPU found" in a["error"]
    assert e["status"] == "ok" and all("no CUDA GPU found" in r["note"] for r in e["rows"])


def test_the_simulator_models_in_a_worker_and_from_a_file(tmp_path, fake):
    bert = str(tiny_bert(tmp_path))
    models = tmp_path / "models"
    argv = ["--bert", bert, "--precisions", "fp32", "--cnns", "--sim-workers", "1"]
    assert gpu_check.main(["--sim-models-only", "--out", str(models), *argv]) == 0
    saved = json.loads((models / "sim_models.json").read_text())
    assert saved["gpu"] == "H200" and len(saved["configs"][0]["launches"]) == 5
    out = tmp_path / "report"
    assert gpu_check.main(["--out", str(out), "--steps", "ac", "--sim-models", str(models / "sim_models.json"),
                           "--warmup", "0", "--repeats", "1", *argv]) == 0
    (c,) = [s for s in json.loads((out / "gpu_check.json").read_text())["steps"] if s["name"] == "c"]
    assert c["status"] == "ok" and all(r["timeline_us"] for r in c["rows"]) and len(c["rows"]) == 5
