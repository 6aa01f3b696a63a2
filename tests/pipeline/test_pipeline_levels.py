"""Every level runs on the reference interpreter: stitch.fusion and schedule.kernel
provide `reference_region`, so the IR after fusion-explore and after stitch-codegen
computes exactly what the graph function computes (the passes move ops, they do not
change what they compute)."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.inputs import random_inputs
from fsir.runtime.reference import find_function, run
from fsir.testing.graphs import GRAPH_LAYERNORM

SOFTMAX = """
func.func @softmax(%x: tensor<5x40xf32>) -> tensor<200xf32> {
  %m = graph.reduce max %x dims [1] : (tensor<5x40xf32>) -> tensor<5xf32>
  %mb = graph.broadcast %m dims [0] : (tensor<5xf32>) -> tensor<5x40xf32>
  %d = graph.sub %x, %mb : tensor<5x40xf32>
  %e = graph.exp %d : tensor<5x40xf32>
  %s = graph.reduce sum %e dims [1] : (tensor<5x40xf32>) -> tensor<5xf32>
  %sb = graph.broadcast %s dims [0] : (tensor<5xf32>) -> tensor<5x40xf32>
  %p = graph.div %e, %sb : tensor<5x40xf32>
  %r = graph.reshape %p : (tensor<5x40xf32>) -> tensor<200xf32>
  func.return %r : tensor<200xf32>
}
"""


@pytest.mark.parametrize("text", [GRAPH_LAYERNORM, SOFTMAX], ids=["layernorm", "softmax"])
@pytest.mark.parametrize("mode", ["none", "stitch"])
def test_levels_agree(text, mode):
    module = parse_module(text)
    inputs = random_inputs(find_function(module))
    want = run(module, inputs)
    got = {}

    def run_stage(stage, seconds, ir):
        got[stage] = run(ir, inputs)

    lower(module, PipelineOptions(fusion=mode), until="stitch-codegen", on_stage=run_stage)
    assert list(got) == ["prove-gather-bounds", "fusion-explore", "stitch-codegen"]
    for stage, outputs in got.items():
        for w, g in zip(want, outputs):
            np.testing.assert_array_equal(w, g, err_msg=stage)
