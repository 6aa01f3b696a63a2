"""The BERT layer example in the three fusion modes: stitch launches
fewer kernels and moves fewer global bytes than xla, and xla fewer than none.

Bytes are the schedule's static accounting (each kernel reads its inputs and writes
its outputs once: `cost.global_bytes`, what the simulator reports as distinct bytes
per launch); a simulator run of the stitch plan checks that accounting.
Measured on the simulator (loads+stores / distinct bytes, MB): stitch 12 launches
1000.3 / 63.0, xla 25 launches 1004.2 / 81.9, none 72 launches 1094.0 / 184.1.

That simulator run takes minutes at full size, so CI checks the accounting on the
same layer at B=2 S=16 H=64 (examples/hlo/bert_layer*.hlo, dumped from JAX before
and after XLA's optimizations; their weights are arguments, as in bert_layer.mlir, and
examples/onnx/bert_layer.onnx, whose weights are initializers) and the full-size run is
a `full` case (`pytest --full`).
"""


import numpy as np
import pytest

from fsir.dialects.graph import numpy_dtype
from fsir.dialects.schedule import KernelOp
from fsir.lowering.split_k import buffer_sizes
from fsir.pipeline import PipelineOptions, lower, read_model
from fsir.runtime.executor import execute
from fsir.runtime.reference import find_function
from fsir.testing.paths import EXAMPLES

BERT = EXAMPLES / "bert_layer.mlir"


def plan(mode: str, path=BERT) -> tuple[int, int]:
    module = lower(read_model(path), PipelineOptions(fusion=mode), until="stitch-codegen")
    kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
    planned = sum(k.cost.data["global_bytes"].value.data for k in kernels)  # type: ignore[union-attr]
    # a split-K kernel's semaphores and workspace (`fsir/lowering/split_k.py`) are buffers
    # of its own beside the ones its cost counts
    splits = [buffer_sizes(k) for k in kernels if getattr(k.params, "split_k", 1) > 1]
    return len(kernels), planned + sum(4 * (sems + floats) for sems, floats in splits)


def test_stitch_beats_xla_beats_none():
    stitch, xla, none = plan("stitch"), plan("xla"), plan("none")
    assert stitch[0] < xla[0] < none[0], (stitch, xla, none)
    assert stitch[1] < xla[1] < none[1], (stitch, xla, none)


@pytest.mark.parametrize("path", [
    pytest.param(EXAMPLES / "hlo" / "bert_layer.hlo", id="hlo-small"),
    pytest.param(EXAMPLES / "hlo" / "bert_layer.opt.hlo", id="hlo-opt-small"),
    # its weights are initializers: constant tables the kernels read (`constant_table_bytes`)
    pytest.param(EXAMPLES / "onnx" / "bert_layer.onnx", id="onnx-small"),
    pytest.param(BERT, id="full-size", marks=pytest.mark.full),
])
def test_stitch_plan_on_the_simulator_matches_its_accounting(path):
    kernels, planned = plan("stitch", path)
    types = find_function(read_model(path)).function_type.inputs.data
    rng = np.random.default_rng(0)
    inputs = [(0.1 * rng.standard_normal(tuple(t.get_shape()))).astype(numpy_dtype(t.element_type)) for t in types]
    _, stats = execute(lower(read_model(path), PipelineOptions(fusion="stitch")), inputs)
    assert stats.launches == kernels
    # distinct bytes: at most what the kernels read and write (shared inputs count once)
    assert stats.global_unique_bytes <= planned
