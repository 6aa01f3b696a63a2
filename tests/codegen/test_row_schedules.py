"""Every row schedule (thread, warp, block, interleaved), forced with
stitch-codegen{rows=...}, computes every row fusion correctly: the schedules differ in
speed only, so the latency-evaluator may pick any of them."""

from __future__ import annotations

import pytest

from fsir.testing.graphs import GRAPH_LAYERNORM, SOFTMAX_FUSION, layernorm_fusion
from fsir.testing.pipeline import check

SCHEDULES = ["thread", "warp", "block", "interleaved"]

CASES = {
    "layernorm-200": (GRAPH_LAYERNORM, None, "stitch"),
    "layernorm-1030": (layernorm_fusion("3", 1030), None, "none"),
    "layernorm-dynamic": (layernorm_fusion("?", 70), [(5, 70), (70,), (70,)], "none"),
    "softmax-rows": (SOFTMAX_FUSION.format(R=7, C=50, D=1, K=7, KD=0), None, "none"),
    "softmax-columns": (SOFTMAX_FUSION.format(R=90, C=6, D=0, K=6, KD=1), None, "none"),
    "reduce-3d": ("""
func.func @f(%x: tensor<5x3x9xi32>) -> tensor<3xi32> {
  %r = graph.reduce max %x dims [0, 2] : (tensor<5x3x9xi32>) -> tensor<3xi32>
  func.return %r : tensor<3xi32>
}
""", None, "none"),
    "reduce-all-f16": ("""
func.func @f(%x: tensor<7x40xf16>) -> tensor<f16> {
  %r = graph.reduce sum %x dims [0, 1] : (tensor<7x40xf16>) -> tensor<f16>
  func.return %r : tensor<f16>
}
""", None, "none"),
    "reduce-i64-rows": ("""
func.func @f(%x: tensor<300x3xi64>) -> tensor<300xi64> {
  %r = graph.reduce sum %x dims [1] : (tensor<300x3xi64>) -> tensor<300xi64>
  func.return %r : tensor<300xi64>
}
""", None, "none"),
}


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("case", list(CASES))
def test_row_schedule(case, schedule):
    text, shapes, fusion = CASES[case]
    kinds = ["int"] if "i32" in case or "i64" in case else None
    check(text, shapes=shapes, fusion=fusion, rows=schedule, scale=8, kinds=kinds, ptxas=False)
