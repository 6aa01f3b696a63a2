"""The row statistic of a two-pass LayerNorm epilogue: per-tile partial moments of a
row, combined with Chan's parallel formula.

A GEMM whose result (after its epilogue: bias, residual) is normalised over its rows
cannot normalise in its own epilogue when a block tile spans only `bn` of the row's
`N` columns. It can write, besides the pre-LayerNorm value `z`, one partial per row
and column tile `t`: the tile's count `n_t`, mean `mean_t` and `M2_t`, the sum of
squared deviations from the tile's own mean (two passes over the values the block
holds in registers). The consumer of the LayerNorm's output combines a row's `T`
partials (`T = ceil(N / bn)`, a few dozen values) before it normalises:

    n = n_a + n_b,  d = mean_b - mean_a,
    mean = mean_a + d * n_b / n,   M2 = M2_a + M2_b + d² * n_a * n_b / n

(Chan, Golub, LeVeque, "Algorithms for computing the sample variance", 1983), then
`var = M2 / N`, `rstd = rsqrt(var + eps)`.

Numerics. The partials are combined left to right, tile 0 first, so the result does
not depend on the order blocks finish (no atomics): the same inputs give the same
bits. Every term of the combination is a deviation from a mean, never a raw square,
so a row with a large offset does not cancel. Measured on 256 rows of 768 values
100 + N(0, 1) in tiles of 64 (tests/codegen/test_ln_moments.py): the one-pass
`E[x²] - E[x]²` in f32 is off by 4e-3 of the variance (about log2(100²) ≈ 13 of
f32's 24 bits are lost), the partial moments by 2e-6, and the mean by 2e-5, about
two ulps of 100. f16 and bf16 rows are widened to f32 before their moments are
taken (the kernels' compute type), so their statistic has f32's error too (1e-6 of
the variance measured). The tests assert 1e-5 of the variance and 4 f32 ulps of the
mean.

`combine` is written once over an arithmetic (`add`, `sub`, `mul`, `div`): numpy
arrays here (`NUMPY`, the reference of `graph.tile_moments` and
`graph.combine_moments`), scalar code in a kernel (`fsir/lowering/moments.py`). The
one-tile form (`fsir/lowering/row_epilogue.py`) reduces whole rows instead.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, TypeVar

import numpy as np

T = TypeVar("T")


class Arithmetic(Protocol[T]):
    """The four float operations `combine` needs."""

    def add(self, x: T, y: T, /) -> T: ...

    def sub(self, x: T, y: T, /) -> T: ...

    def mul(self, x: T, y: T, /) -> T: ...

    def div(self, x: T, y: T, /) -> T: ...


class Moments(NamedTuple):
    """A tile's (or a combination of tiles') count, mean and sum of squared deviations."""

    n: object
    mean: object
    m2: object


def combine(ar: Arithmetic, a: Moments, b: Moments) -> Moments:
    """The moments of the union of `a`'s and `b`'s values (Chan's formula)."""
    n = ar.add(a.n, b.n)
    d = ar.sub(b.mean, a.mean)
    w = ar.div(b.n, n)  # the weight of b in the union
    mean = ar.add(a.mean, ar.mul(d, w))
    m2 = ar.add(ar.add(a.m2, b.m2), ar.mul(ar.mul(d, d), ar.mul(a.n, w)))
    return Moments(n, mean, m2)


class _Numpy:
    """numpy arithmetic in the operands' dtype."""

    @staticmethod
    def add(x, y):
        return np.add(x, y)

    @staticmethod
    def sub(x, y):
        return np.subtract(x, y)

    @staticmethod
    def mul(x, y):
        return np.multiply(x, y)

    @staticmethod
    def div(x, y):
        return np.divide(x, y)


NUMPY = _Numpy()


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The type the moments are taken in: f32 for narrower floats (the kernels'
    compute type), else the input's."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def tile_moments(x: np.ndarray, tile: int) -> Moments:
    """The partial moments of `x`'s last dim in tiles of `tile` columns (the last tile
    may be shorter): arrays of shape x.shape[:-1] + (T,), in `compute_dtype`. Each
    tile's mean first, then the squared deviations from it (two passes)."""
    if tile <= 0:
        raise ValueError(f"tile width must be positive, not {tile}")
    ct = compute_dtype(x.dtype)
    x = x.astype(ct)
    n = x.shape[-1]
    counts, means, m2s = [], [], []
    for lo in range(0, n, tile):
        part = x[..., lo:lo + tile]
        c = ct.type(part.shape[-1])
        mean = np.sum(part, axis=-1, dtype=ct) / c
        dev = part - mean[..., None]
        counts.append(np.full(mean.shape, c, ct))
        means.append(mean.astype(ct))
        m2s.append(np.sum(dev * dev, axis=-1, dtype=ct))
    return Moments(np.stack(counts, -1), np.stack(means, -1), np.stack(m2s, -1))


def combine_tiles(parts: Moments) -> Moments:
    """A row's moments from its tiles' (the last axis), combined tile 0 first."""
    n, mean, m2 = (np.asarray(p) for p in parts)
    acc = Moments(n[..., 0], mean[..., 0], m2[..., 0])
    for t in range(1, n.shape[-1]):
        acc = combine(NUMPY, acc, Moments(n[..., t], mean[..., t], m2[..., t]))
    return acc


def row_mean_var(x: np.ndarray, tile: int) -> tuple[np.ndarray, np.ndarray]:
    """The mean and (population) variance of `x`'s rows through per-tile partials."""
    total = combine_tiles(tile_moments(x, tile))
    return np.asarray(total.mean), np.asarray(total.m2) / np.asarray(total.n)
