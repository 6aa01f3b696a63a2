"""One compile of a transformer exported with a symbolic batch AND sequence runs every
(batch, seq): BERT and GPT-2 (and with `--full` LLaMA, RoBERTa, DistilBERT, GPT-NeoX,
OPT, ALBERT, BLOOM and DeBERTa-v2) from transformers configurations (examples/zoo/archs.py),
exported by the TorchScript exporter with `dynamic_axes` {0: batch, 1: seq} on every
input, compiled once by fsir and run on the simulator at (1, 7), (3, 32) and (8, 5)
against onnxruntime, with a padded attention mask. The exports hold what fsir must
follow through run-time sizes: `position_ids[:, :seq]` of a static buffer (a Slice
with a run-time end), BERT's mask flattened to [batch * seq] and reshaped back, GPT-2's
`x.view(-1, seq)` and its Conv1D's `addmm(...).view(batch, seq, n)`, LLaMA's grouped
key/value heads merged ([batch, 2, 2, seq, 16] -> [batch, 4, seq, 16]), BLOOM's and
DeBERTa-v2's heads merged into the batch next to the sequence ([batch, 4, seq] ->
[batch * 4, 1, seq], a reshape with dim groups).

BERT in stitch mode runs in CI; the others, and the xla and none modes, with `--full`.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

if any(importlib.util.find_spec(name) is None for name in ("transformers", "torchvision")):
    raise ImportError("tests/zoo needs the zoo extra: pip install -e '.[test,zoo]' (.ci/run installs it)")

import onnxruntime as ort  # noqa: E402

import fsir  # noqa: E402

ZOO = Path(__file__).resolve().parents[2] / "examples" / "zoo"
SIZES = [(1, 7), (3, 32), (8, 5)]


def export(arch_name: str, out: Path) -> Path:
    sys.path.insert(0, str(ZOO))
    try:
        import build  # examples/zoo/build.py
        build._import_torchvision()
        from archs import ARCHS
    finally:
        sys.path.remove(str(ZOO))
    import torch

    arch = next(a for a in ARCHS if a.name == arch_name)
    torch.manual_seed(0)
    module = arch.module().eval()
    path = out / f"{arch_name}.onnx"
    with torch.no_grad():
        build.export(module, arch.inputs(), path, "torchscript", symbolic_batch=True, symbolic_seq=True)
    return path


def check_every_size(path: Path, mode: str) -> None:
    model = path.read_bytes()
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    (ids_info, mask_info) = session.get_inputs()
    assert ids_info.shape == ["batch", "seq"] and mask_info.shape == ["batch", "seq"]
    exe = fsir.compile(model, fusion=mode)
    rng = np.random.default_rng(0)
    launches = set()
    for batch, seq in SIZES:
        ids = rng.integers(0, 128, (batch, seq), dtype=np.int64)
        mask = np.ones((batch, seq), np.int64)
        if batch > 1:
            mask[1, seq // 2:] = 0  # a padded sample: the mask reaches the scores
        (want,) = session.run(None, {"input_ids": ids, "attention_mask": mask})
        (got,) = exe.run([ids, mask], device="sim")
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{mode} (batch, seq) = {(batch, seq)}")
        launches.add(tuple(launch.kernel for launch in exe.last_stats.per_launch))
    assert len(launches) == 1  # the same kernels, in the same order, at every size


def test_bert_one_compile_every_batch_and_seq(tmp_path: Path):
    check_every_size(export("bert", tmp_path), "stitch")


@pytest.mark.full
@pytest.mark.parametrize(("arch", "mode"), [("bert", "xla"), ("bert", "none"), ("gpt2", "stitch"), ("gpt2", "xla"),
                                            ("gpt2", "none"), ("llama", "stitch"), ("roberta", "stitch"),
                                            ("distilbert", "stitch"), ("gpt_neox", "stitch"), ("opt", "stitch"),
                                            ("albert", "stitch"), ("bloom", "stitch"), ("bloom", "xla"),
                                            ("bloom", "none"), ("deberta_v2", "stitch"), ("deberta_v2", "xla"),
                                            ("deberta_v2", "none")])
def test_one_compile_every_batch_and_seq(tmp_path: Path, arch: str, mode: str):
    check_every_size(export(arch, tmp_path), mode)
