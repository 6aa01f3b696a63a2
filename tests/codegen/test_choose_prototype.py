"""`Mapping.choose` scores the configurations whose kernels clone the same ops (a
GEMM's tiles, a row kernel's block sizes) on one kernel re-targeted to each
(`FusionContext.retarget`) instead of building every candidate: the chosen kernels,
their estimates and costs are those of building every candidate, with fewer kernels
built."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsir.codegen.mappings import base
from fsir.codegen.options import PipelineOptions
from fsir.pipeline import load, lower

ROOT = Path(__file__).resolve().parents[2]
# (model, whether its GEMMs or convolutions have several candidate configurations)
MODELS = [("examples/cusync/gpt3_mlp.mlir", True), ("examples/cusync/conv2.mlir", False),
          ("examples/onnx/bert_layer.onnx", True), ("examples/layernorm.mlir", True), ("examples/softmax.mlir", True)]


def schedule_ir(model: str, monkeypatch, share: bool, precision: str = "fp32") -> tuple[str, int]:
    """The schedule IR of `model` and the candidate kernels built for it."""
    built = [0]
    real = base.FusionContext._kernel

    def counted(self, *args):
        built[0] += 1
        return real(self, *args)

    monkeypatch.setattr(base, "SHARE_PROTOTYPES", share)
    monkeypatch.setattr(base.FusionContext, "_kernel", counted)
    text = str(lower(load(str(ROOT / model)), PipelineOptions(precision=precision), until="stitch-codegen"))
    return text, built[0]


@pytest.mark.parametrize("model, several", MODELS)
def test_the_choices_are_those_of_building_every_candidate(model, several, monkeypatch):
    shared, fewer = schedule_ir(model, monkeypatch, True)
    every, built = schedule_ir(model, monkeypatch, False)
    assert shared == every  # kernels, parameters, launch, shared buffers, estimates, costs
    assert "schedule.kernel" in shared
    assert fewer < built if several else fewer == built


def test_tensor_core_choices_too(monkeypatch):
    model = "examples/cusync/llama_mlp.mlir"
    assert schedule_ir(model, monkeypatch, True, "tf32")[0] == schedule_ir(model, monkeypatch, False, "tf32")[0]


def test_no_candidate_is_left_holding_the_functions_values():
    """Every candidate not chosen drops its uses: each kernel operand's uses are the
    chosen kernels' (and the function's return)."""
    module = lower(load(str(ROOT / "examples/cusync/gpt3_mlp.mlir")), until="stitch-codegen")
    for op in module.walk():
        for v in op.results:
            for use in v.uses:
                assert use.operation.parent_op() is not None  # attached: not a dropped candidate
