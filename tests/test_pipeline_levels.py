"""Every level runs on the reference interpreter: stitch.fusion and schedule.kernel
provide `reference_region`, so the IR after fusion-explore and after stitch-codegen
computes exactly what the graph function computes (the passes move ops, they do not
change what they compute)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from fsir.codegen.stitch_codegen import StitchCodegenPass
from fsir.fusion.explore import FusionExplorePass
from fsir.ir import parse_module, verify
from fsir.runtime.inputs import random_inputs
from fsir.runtime.reference import find_function, run
from test_pipeline_fusion import GRAPH_LAYERNORM

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
    FusionExplorePass(mode=mode).apply(Context(), module)
    verify(module)
    stitched = run(module, inputs)
    StitchCodegenPass().apply(Context(), module)
    verify(module)
    scheduled = run(module, inputs)
    for w, a, b in zip(want, stitched, scheduled):
        np.testing.assert_array_equal(w, a)
        np.testing.assert_array_equal(w, b)
