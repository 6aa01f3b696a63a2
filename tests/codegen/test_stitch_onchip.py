"""Keeping the row on chip and the evaluator's compositions (FusionStitching §4.2),
measured on the simulator: the fused LayerNorm, softmax and RMSNorm examples read each
input once and write each output once (distinct bytes within 1.05x of that bound, bytes
the threads request within 1.3x), and short / long rows get warp / block composition.
"""


import pytest

from fsir.runtime.executor import module_ptx
from fsir.testing.graphs import softmax
from fsir.testing.paths import EXAMPLES
from fsir.testing.pipeline import check, measure


@pytest.mark.parametrize("name", ["layernorm", "softmax", "rmsnorm"])
def test_row_read_once_and_gamma_reused(name):
    lowered, stats, bound = measure((EXAMPLES / f"{name}.mlir").read_text())
    assert stats.launches == 1
    assert stats.global_unique_bytes <= 1.05 * bound, (stats.global_unique_bytes, bound)
    requested = stats.global_load_bytes + stats.global_store_bytes
    assert requested <= 1.3 * bound, (requested / bound, stats)


def test_short_rows_get_warp_composition():
    lowered = check(softmax(512, 64), fusion="stitch")
    ptx = module_ptx(lowered)
    assert "shfl.sync" in ptx and "bar.sync" not in ptx


def test_long_rows_get_block_composition():
    lowered = check(softmax(16, 8192), fusion="stitch", scale=4.0)
    ptx = module_ptx(lowered)
    assert "bar.sync" in ptx and ".shared" in ptx and "shfl.sync" in ptx
