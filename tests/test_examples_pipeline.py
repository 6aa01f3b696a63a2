"""Every example (hand-written .mlir, JAX-dumped .hlo, PyTorch-exported .onnx) compiles
under every fusion mode, its PTX assembles with ptxas for sm_80 and sm_90, and it runs
on the simulator within tolerance of the reference interpreter (the BERT-shaped models
run in the default stitch mode only, to keep the suite fast; the full-size BERT layer,
`bert_layer.mlir`, takes minutes on the simulator and runs there with `--full`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsir.pipeline import PipelineOptions, lower, read_model
from fsir.runtime.compare import compare
from fsir.runtime.executor import execute
from fsir.runtime.inputs import random_inputs
from fsir.runtime.reference import find_function, run_function, run_function_float64
from fsir.testing.paths import EXAMPLES
from fsir.testing.pipeline import assemble_all

MODELS = sorted(p for p in EXAMPLES.rglob("*") if p.suffix in (".mlir", ".hlo", ".onnx"))
BIG = ("bert",)  # simulated in stitch mode only
FULL_SIZE = ("bert_layer.mlir",)  # simulated only with --full (B=2, S=128, H=768: minutes)
MODES = ("stitch", "xla", "none")


def _id(p: Path) -> str:
    return str(p.relative_to(EXAMPLES))


@pytest.fixture(scope="module")
def loaded():
    cache = {}

    def get(path):
        if path not in cache:
            cache[path] = read_model(path)
        return cache[path]

    return get


@pytest.fixture(scope="module")
def lowered(loaded):
    """Each (model, mode) is lowered once per worker: assembling and simulating only read it."""
    cache = {}

    def get(path, mode):
        if (path, mode) not in cache:
            cache[path, mode] = lower(loaded(path), PipelineOptions(fusion=mode))
        return cache[path, mode]

    return get


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", MODELS, ids=_id)
def test_example_assembles(path, mode, lowered):
    assemble_all(lowered(path, mode))


def _has_f32_dot(path: Path) -> bool:
    from xdsl.dialects.builtin import Float32Type

    from fsir.dialects import graph

    return any(isinstance(op, graph.DotOp) and isinstance(op.result.type.element_type, Float32Type)
               for op in read_model(path).walk())


F32_GEMMS = [p for p in MODELS if _has_f32_dot(p)]


@pytest.mark.parametrize("path", F32_GEMMS, ids=_id)
def test_example_assembles_under_tf32(path, loaded):
    """The f32 GEMMs on the tensor cores (larger, deeper-pipelined tiles, split-K)."""
    assemble_all(lower(loaded(path), PipelineOptions(fusion="stitch", gpu="A100", precision="tf32")))


CASES = [
    pytest.param(p, m, id=f"{_id(p)}-{m}", marks=[pytest.mark.full] if p.name in FULL_SIZE else [])
    for p in MODELS for m in MODES if m == "stitch" or not any(b in p.name for b in BIG)
]


@pytest.mark.parametrize("path, mode", CASES)
def test_example_runs_on_simulator(path, mode, loaded, lowered):
    module = loaded(path)
    f = find_function(module)
    inputs = random_inputs(f, 0)
    want = run_function(f, inputs)
    exact = run_function_float64(f, inputs)
    got, stats = execute(lowered(path, mode), inputs)
    assert stats.launches >= 1
    for i, (g, w, e) in enumerate(zip(got, want, exact)):
        c = compare(g, w, exact=e)
        assert c.ok, f"output {i}: {c}"
