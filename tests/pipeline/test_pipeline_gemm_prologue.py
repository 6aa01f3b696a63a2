"""A GEMM whose operands are scaled by one value the whole tile shares (a scalar, or a
value per batch): ONNX's expanded attention computes 1/sqrt(sqrt(head size)) from the
shape in the graph and multiplies Q and K by it before Q·Kᵀ. The A operand's row
statistics (`fsir/lowering/prologue.py`) include such a broadcast; it must be provided
to every thread unguarded, since the B operand's staging reads the same element. Each
case runs on the simulator against the reference, in several tile configurations."""

from __future__ import annotations

import pytest

from fsir.testing.pipeline import check

# The smallest graph that showed the fault: one scalar scales both operands.
BOTH_SCALED = """
func.func @f(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %s: tensor<f32>) -> tensor<1x2x3x3xf32> {
  %b = graph.broadcast %s dims [] : (tensor<f32>) -> tensor<1x2x3x4xf32>
  %qs = graph.mul %q, %b : tensor<1x2x3x4xf32>
  %ks = graph.mul %k, %b : tensor<1x2x3x4xf32>
  %kt = graph.transpose %ks perm [0, 1, 3, 2] : (tensor<1x2x3x4xf32>) -> tensor<1x2x4x3xf32>
  %d = graph.dot %qs, %kt : (tensor<1x2x3x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %d : tensor<1x2x3x3xf32>
}
"""

# The scale as the expanded ONNX functions compute it: from the head size, in the kernel.
SHAPE_SCALE = """
func.func @f(%q: tensor<2x5x8xf32>, %k: tensor<2x5x8xf32>) -> tensor<2x5x5xf32> {
  %shape = graph.constant dense<[2, 5, 8]> : tensor<3xi64>
  %i = graph.constant dense<2> : tensor<i64>
  %h = graph.gather %shape, %i : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %hf = graph.convert %h : (tensor<i64>) -> tensor<f32>
  %sq = graph.sqrt %hf : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %inv = graph.div %one, %sq : tensor<f32>
  %s = graph.sqrt %inv : tensor<f32>
  %bq = graph.broadcast %s dims [] : (tensor<f32>) -> tensor<2x5x8xf32>
  %qs = graph.mul %q, %bq : tensor<2x5x8xf32>
  %bk = graph.broadcast %s dims [] : (tensor<f32>) -> tensor<2x5x8xf32>
  %ks = graph.mul %k, %bk : tensor<2x5x8xf32>
  %kt = graph.transpose %ks perm [0, 2, 1] : (tensor<2x5x8xf32>) -> tensor<2x8x5xf32>
  %d = graph.dot %qs, %kt : (tensor<2x5x8xf32>, tensor<2x8x5xf32>) -> tensor<2x5x5xf32>
  func.return %d : tensor<2x5x5xf32>
}
"""

# One scale per batch: the index of the statistic holds the batch, not the row.
BATCH_SCALED = """
func.func @f(%q: tensor<3x20x12xf32>, %k: tensor<3x12x9xf32>, %s: tensor<3xf32>) -> tensor<3x20x9xf32> {
  %bq = graph.broadcast %s dims [0] : (tensor<3xf32>) -> tensor<3x20x12xf32>
  %qs = graph.mul %q, %bq : tensor<3x20x12xf32>
  %bk = graph.broadcast %s dims [0] : (tensor<3xf32>) -> tensor<3x12x9xf32>
  %ks = graph.mul %k, %bk : tensor<3x12x9xf32>
  %d = graph.dot %qs, %ks : (tensor<3x20x12xf32>, tensor<3x12x9xf32>) -> tensor<3x20x9xf32>
  func.return %d : tensor<3x20x9xf32>
}
"""

TILES = ["auto", "16x16x16/1x1", "32x32x16/4x4", "64x64x16/4x4"]


@pytest.mark.parametrize("gemm", TILES)
@pytest.mark.parametrize("graph", [BOTH_SCALED, SHAPE_SCALE, BATCH_SCALED], ids=["both", "shape", "batch"])
def test_tile_wide_scale_reaches_both_operands(graph, gemm):
    check(graph, fusion="stitch", gemm=gemm)


@pytest.mark.parametrize("graph", [BOTH_SCALED, BATCH_SCALED], ids=["both", "batch"])
def test_tile_wide_scale_on_the_tensor_cores(graph):
    """f16 operands: the mma path's staging reads the same provided scale."""
    check(graph.replace("f32", "f16"), fusion="stitch")
