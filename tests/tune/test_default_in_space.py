"""Today's choice lies in every task's space: for each mapping kind, the configuration
stitch-codegen picks for a sample of kernels has a trace that replays to it and passes
the static checks, so the tuner measures it first and a tuned kernel is never slower
than today's under the measurer."""

from __future__ import annotations

import pytest
from tune_graphs import EXAMPLES, column_sum, elementwise, gemm, layernorm

from fsir.pipeline import PipelineOptions
from fsir.testing.graphs import small_bert_layer
from fsir.tune.measure import stitched_from_text
from fsir.tune.space import Checked, Checker, space_for, today_splits
from fsir.tune.task import capture, discover

H100 = PipelineOptions(fusion="stitch", gpu="H100")

MODELS = {
    "skinny gemm f16": gemm(16, 1024, 1024, "f16"),  # today's 32x32 tile is larger than m needs
    "split-K gemm f16": gemm(64, 64, 4096, "f16"),
    "gemm f32": gemm(200, 300, 96, "f32"),
    "layernorm": layernorm(),
    "column sum": column_sum(),
    "loop": elementwise(),
    "attention": (EXAMPLES / "cusync" / "attention.mlir").read_text(),
    # 16 queries and keys: today's 32x32 tiles are larger than the pruning rule allows
    "short attention": small_bert_layer(),
    "conv": (EXAMPLES / "cusync" / "conv2.mlir").read_text(),
    "embedding columns": (EXAMPLES / "recom" / "recom_8.mlir").read_text(),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_today_replays_from_a_trace(name):
    text = MODELS[name]
    stitched = stitched_from_text(text, H100)
    tasks = discover(stitched, H100)
    assert tasks
    for task in tasks:
        request = capture(stitched, H100, task.key)
        space = space_for(request, today_splits(request))
        (today,) = [c for c in space.fixed if c.describe() == task.default_config]
        trace = space.trace_of(today)
        assert trace is not None, (name, task.mapping, task.default_config)
        assert space.config(trace) == today
        got = Checker(request, space).check(trace)
        assert isinstance(got, Checked), (name, task.default_config, got)
        assert got.description == task.default_config
