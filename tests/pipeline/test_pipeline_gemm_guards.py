"""Guards and row reductions next to a GEMM, as exporters write attention (found by
tests/pipeline/test_pipeline_fuzz_attention.py; each ran right with fusion none and
failed to compile, or ran wrong, with stitch):

- a GEMM prologue whose A operand is selected by a per-row guard (a compare of a
  row's max, i1) computed in the kernel: the row statistics' shared buffer holds f32,
  so an i1 statistic is computed per staged row instead (`computed_statistics`);
- a batched dot with a batch of one whose epilogue reduces its rows (a softmax's max):
  the reduction was provided at the batch index of grid z, and the broadcast reading
  it asks at 0, the only index of a size-1 dim (`provide_row_reductions`);
- a per-row scale of a one-row product (M = 1, a batch on grid z): every staged row
  reads the statistic's one element, and a staged row beyond M provided it as 0 for
  all (wrong results on the tensor cores; `varies_with_row`).
"""

from __future__ import annotations

import numpy as np
import pytest

from fsir.testing.pipeline import check

ROW_GUARD = """
func.func @f(%p: tensor<5x8xf32>, %mask: tensor<5x8xf32>, %v: tensor<8x4xf32>) -> tensor<5x4xf32> {
  %m = graph.reduce max %mask dims [1] : (tensor<5x8xf32>) -> tensor<5xf32>
  %c = graph.constant dense<0.5> : tensor<5xf32>
  %bad = graph.compare gt %m, %c : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
  %b = graph.broadcast %bad dims [0] : (tensor<5xi1>) -> tensor<5x8xi1>
  %z = graph.constant dense<0.0> : tensor<5x8xf32>
  %g = graph.select %b, %z, %p : (tensor<5x8xi1>, tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
  %d = graph.dot %g, %v : (tensor<5x8xf32>, tensor<8x4xf32>) -> tensor<5x4xf32>
  func.return %d : tensor<5x4xf32>
}
"""

ONE_BATCH_ROW_MAX = """
func.func @f(%a: tensor<1x33x8xf32>, %b: tensor<1x8x33xf32>) -> tensor<1x33x33xf32> {
  %d = graph.dot %a, %b : (tensor<1x33x8xf32>, tensor<1x8x33xf32>) -> tensor<1x33x33xf32>
  %m = graph.reduce max %d dims [2] : (tensor<1x33x33xf32>) -> tensor<1x33xf32>
  %mb = graph.broadcast %m dims [0, 1] : (tensor<1x33xf32>) -> tensor<1x33x33xf32>
  %s = graph.sub %d, %mb : tensor<1x33x33xf32>
  func.return %s : tensor<1x33x33xf32>
}
"""


def _kernels(lowered) -> int:
    from fsir.dialects import gpu

    return sum(isinstance(op, gpu.FuncOp) for op in lowered.walk())


@pytest.mark.parametrize("gemm", ["auto", "16x16x16/1x1", "32x32x16/4x4"])
def test_row_guard_selects_a_gemm_operand(gemm):
    rng = np.random.default_rng(1)
    p, v = rng.standard_normal((5, 8)).astype(np.float32), rng.standard_normal((8, 4)).astype(np.float32)
    mask = np.zeros((5, 8), np.float32)
    mask[[1, 3], 2] = 1.0  # rows 1 and 3 are guarded: their products are 0
    check(ROW_GUARD, fusion="stitch", gemm=gemm, inputs=[p, mask, v])


def test_row_guard_on_the_tensor_cores():
    check(ROW_GUARD.replace("f32", "f16"), fusion="stitch")


def test_row_max_of_a_one_batch_product():
    lowered = check(ONE_BATCH_ROW_MAX, fusion="stitch")
    assert _kernels(lowered) == 1  # the max is the GEMM's epilogue, not a kernel of its own


ONE_ROW_SCALE = """
func.func @f(%x: tensor<3x1x24xf16>, %s: tensor<3x1xf16>, %w: tensor<24x33xf16>) -> tensor<3x1x33xf16> {
  %sb = graph.broadcast %s dims [0, 1] : (tensor<3x1xf16>) -> tensor<3x1x24xf16>
  %xs = graph.mul %x, %sb : tensor<3x1x24xf16>
  %d = graph.dot %xs, %w : (tensor<3x1x24xf16>, tensor<24x33xf16>) -> tensor<3x1x33xf16>
  func.return %d : tensor<3x1x33xf16>
}
"""


@pytest.mark.parametrize("elem", ["f16", "f32"])
@pytest.mark.parametrize("gemm", ["auto", "16x16x16/1x1", "32x32x16/4x4"])
def test_row_scale_of_a_one_row_product(elem, gemm):
    check(ONE_ROW_SCALE.replace("f16", elem), fusion="stitch", gemm=gemm)
