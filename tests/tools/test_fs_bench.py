"""fs-bench on one small imported model: tables, JSON and chart, and fusion measurably
reducing launches and global traffic."""

import json

import pytest

from fsir.testing.paths import EXAMPLES
from fsir.tools.fs_bench import main_impl  # noqa: E402


def test_fs_bench_layernorm(tmp_path, capsys):
    status = main_impl([str(EXAMPLES / "hlo" / "layernorm.hlo"), "--out", str(tmp_path),
                        "--modes", "none,stitch", "--gpu", "H100"])
    assert status == 0
    table = capsys.readouterr().out
    assert "layernorm.hlo" in table and "modeled = H100 model, not measured" in table
    data = json.loads((tmp_path / "bench.json").read_text())
    assert data["gpu"] == "H100" and data["modes"] == ["none", "stitch"]
    none, stitch = data["results"]
    assert none["check"] == stitch["check"] == "ok"
    assert stitch["kernels"] == 1 < none["kernels"]
    # LayerNorm stitched into one kernel reads x once and writes y once: the lower bound
    assert stitch["ratio"] == pytest.approx(1.0, rel=0.05)
    assert stitch["ratio"] < none["ratio"]
    assert stitch["modeled_us"] < none["modeled_us"]
    # the model's split: per launch max(memory, compute) + launch cost, summed
    for r in (none, stitch):
        assert len(r["per_launch"]) == r["launches"]
        assert r["modeled_us"] == pytest.approx(sum(max(k["memory_us"], k["compute_us"]) + 1.0
                                                    for k in r["per_launch"]))
        assert r["modeled_memory_us"] == pytest.approx(sum(k["memory_us"] for k in r["per_launch"]))
        assert r["modeled_compute_us"] == pytest.approx(sum(k["compute_us"] for k in r["per_launch"]))
        assert r["modeled_memory_us"] > 0 and r["modeled_compute_us"] > 0
        assert r["flops"] == sum(k["flops"] for k in r["per_launch"]) > 0
    assert "memory" in table and "compute" in table
    assert set(stitch["compile_s"]) == {"import", "prove-gather-bounds", "fusion-explore", "stitch-codegen", "schedule-to-gpu", "ptx"}
    assert (tmp_path / "bench.png").read_bytes()[:4] == b"\x89PNG"


def test_fs_bench_onnx_bert_layer_stitched_on_the_simulator(tmp_path):
    """An exported PyTorch model through the whole pipeline: fewer kernels than one per
    op, results within tolerance of the reference interpreter."""
    model = EXAMPLES / "onnx" / "bert_layer_legacy.onnx"
    assert main_impl([str(model), "--out", str(tmp_path), "--modes", "stitch"]) == 0
    (r,) = json.loads((tmp_path / "bench.json").read_text())["results"]
    assert r["check"] == "ok"
    assert 8 <= r["kernels"] <= 30  # 8 GEMMs plus a few stitched memory-intensive kernels
