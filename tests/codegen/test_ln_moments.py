"""The two-pass LayerNorm statistic (`fsir/lowering/moments.py`): per-tile partial
moments combined with Chan's formula against float64, on rows with a large mean
offset where the one-pass sum-of-squares form cancels."""

import numpy as np
import pytest

from fsir.interpreters.moments import NUMPY, Moments, combine, combine_tiles, row_mean_var, tile_moments

F32_EPS = float(np.finfo(np.float32).eps)


def _rows(dtype, offset: float, shape=(256, 768), seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (offset + rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("tile", [64, 100, 768])
def test_partial_moments_do_not_cancel(dtype, tile):
    """Rows of 100 + N(0, 1): the combined moments are within 1e-5 of the variance and
    4 ulps of the mean (tiles of 64 as BERT's 768 columns over 12 column tiles, 100
    with a short last tile, and one tile), while E[x²] - E[x]² in f32 is off by
    more than 1e-3 of it."""
    x = _rows(dtype, 100.0)
    exact = x.astype(np.float64)
    mean, var = row_mean_var(x, tile)
    assert mean.dtype == np.float32 and var.dtype == np.float32
    rel = np.abs(var - exact.var(-1)) / exact.var(-1)
    assert rel.max() < 1e-5
    assert np.abs(mean - exact.mean(-1)).max() <= 4 * F32_EPS * 100
    x32 = x.astype(np.float32)
    n = np.float32(x.shape[-1])
    one_pass = (x32 * x32).sum(-1, dtype=np.float32) / n - (x32.sum(-1, dtype=np.float32) / n) ** 2
    assert (np.abs(one_pass - exact.var(-1)) / exact.var(-1)).max() > 1e-3


def test_tiles_cover_the_row():
    """Counts follow the tiles (a short last one); each tile's mean and M2 are its own."""
    x = np.arange(10, dtype=np.float32).reshape(1, 10)
    parts = tile_moments(x, 4)
    np.testing.assert_array_equal(parts.n, [[4, 4, 2]])
    np.testing.assert_array_equal(parts.mean, [[1.5, 5.5, 8.5]])
    np.testing.assert_array_equal(parts.m2, [[5.0, 5.0, 0.5]])
    total = combine_tiles(parts)
    assert total.n == 10 and total.mean == 4.5 and total.m2 == pytest.approx(82.5)


def test_combine_is_chan_formula():
    """Two halves of different sizes combine to the union's moments exactly (small
    integers: every step is exact in f64)."""
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([10.0, 14.0])

    def moments(v):
        return Moments(float(len(v)), v.mean(), ((v - v.mean()) ** 2).sum())

    both = np.concatenate([a, b])
    got = combine(NUMPY, moments(a), moments(b))
    assert got == pytest.approx(moments(both))


def test_deterministic_order():
    """The same rows give the same bits (tile 0 first, no order of blocks involved)."""
    x = _rows(np.float32, -50.0, (8, 3072), seed=1)
    first = row_mean_var(x, 128)
    second = row_mean_var(x.copy(), 128)
    assert all(np.array_equal(p, q) for p, q in zip(first, second))


def test_bad_tile():
    with pytest.raises(ValueError, match="tile width"):
        tile_moments(np.zeros((2, 4), np.float32), 0)
