"""A fixed sample of the model corpus (examples/zoo/): one model of each kind the corpus
covers, built from transformers/torchvision configurations, exported with the
TorchScript exporter in f32 (the transformers with a symbolic batch dim), and BERT in
f16 too, compiled in stitch mode and run on the simulator against onnxruntime's outputs.

Every model must pass or be refused with its known, located message; a crash or a wrong
result fails. `benchmarks/zoo.py` runs the whole corpus in every mode.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

# torchvision is looked up, not imported: build.py imports it where its C++ ops may not load
if any(importlib.util.find_spec(name) is None for name in ("transformers", "torchvision")):
    raise ImportError("tests/zoo needs the zoo extra: pip install -e '.[test,zoo]' (.ci/run installs it)")

from fsir.onnx.conformance import Outcome  # noqa: E402
from fsir.onnx.zoo import run_variant, variants  # noqa: E402

ZOO = Path(__file__).resolve().parents[2] / "examples" / "zoo"

# One architecture per kind: encoder; causal decoder with rotary, RMSNorm and GQA;
# ALiBi; encoder-decoder; windowed attention; hybrid conv + attention; conv front end;
# depthwise + squeeze-excite CNN; grouped-conv CNN; DLRM with EmbeddingBag.
SAMPLE = ("bert", "llama", "bloom", "bart", "swin", "mobilevit", "whisper_encoder", "mobilenet_v3", "regnet",
          "dlrm")

# What fsir still refuses, by architecture: a substring of the located message.
REFUSED: dict[str, str] = {}


def build_sample(names: list[str], dtypes: list[str], out: Path) -> Path:
    """Export `names` into `out` (each test builds only its own models, so the workers
    of `pytest -n` never export one twice)."""
    sys.path.insert(0, str(ZOO))
    try:
        import build  # examples/zoo/build.py
    finally:
        sys.path.remove(str(ZOO))
    entries = build.build(names, ["torchscript"], dtypes, out, progress=False)
    assert [e["arch"] for e in entries] == [n for n in names for _ in dtypes]
    assert not [e for e in entries if "export_error" in e]
    return out


REQUIRED_KINDS = {"encoder", "decoder", "encoder-decoder", "rotary", "alibi", "rmsnorm", "gqa", "windowed-attention",
                  "hybrid-conv-attention", "conv-front-end", "depthwise", "grouped", "squeeze-excite",
                  "embedding-bag"}


def test_sample_covers_every_kind():
    sys.path.insert(0, str(ZOO))
    try:
        from archs import ARCHS
    finally:
        sys.path.remove(str(ZOO))
    assert len({a.name for a in ARCHS}) >= 30
    assert REQUIRED_KINDS <= {k for a in ARCHS for k in a.kinds}
    assert REQUIRED_KINDS <= {k for a in ARCHS if a.name in SAMPLE for k in a.kinds}


@pytest.mark.parametrize("arch", SAMPLE)
def test_sample_model(tmp_path: Path, arch: str):
    (variant,) = variants(build_sample([arch], ["f32"], tmp_path))
    result = run_variant(variant, modes=("stitch",))
    run = result.modes["stitch"]
    if arch in REFUSED:
        assert run.outcome == Outcome.REFUSED, run.message
        assert REFUSED[arch] in run.message
        assert ":" in run.message.split(" ")[0]  # located: file:line:col
        return
    assert run.outcome == Outcome.PASSED, run.message
    assert run.kernels > 0
    assert run.distinct_bytes >= result.lower_bound // 4  # weights, inputs and outputs are read


def test_f16_encoder_as_the_torchscript_exporter_writes_it(tmp_path: Path):
    """BERT in f16: the exporter promotes the residual stream to f32 after the first
    LayerNormalization and leaves that layer's scale and bias f16 (onnxruntime refuses the
    graph, so its expected outputs are the f32 export's); held to f16 tolerances."""
    (variant,) = [v for v in variants(build_sample(["bert"], ["f32", "f16"], tmp_path)) if v.dtype == "f16"]
    run = run_variant(variant, modes=("stitch",)).modes["stitch"]
    assert run.outcome == Outcome.PASSED, run.message
