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
arrays in the reference (`NUMPY`), scalar code in a kernel (`_Folding`: the tiles'
counts are static, so the weights `n_b / n` are constants). The graph ops
`graph.tile_moments` and `graph.combine_moments` hold the statistic in a graph; their
elements are computed here by index propagation (`tile_moments_element`,
`combine_moments_element`, rows of `fsir.lowering.emit.ELEMENT_RULES`). The one-tile
form (`fsir/lowering/row_epilogue.py`) reduces whole rows instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeVar

import numpy as np
from xdsl.dialects.builtin import Float64Type
from xdsl.ir import SSAValue

from fsir.lowering.scalar import Index, ScalarBuilder, TrigBuilder, compute_type

if TYPE_CHECKING:
    from fsir.dialects import graph
    from fsir.lowering.emit import ElementEmitter

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


# -- kernels: the graph ops' elements -------------------------------------------------

Scalar = float | SSAValue


class _Folding:
    """Scalar arithmetic in a kernel whose operands may be Python floats (a tile's
    count), folded when both are: the weights of Chan's formula are constants."""

    def __init__(self, sb: ScalarBuilder, t):
        self.sb, self.t, self.ops = sb, t, TrigBuilder(sb)

    def _ssa(self, x: Scalar) -> SSAValue:
        return x if isinstance(x, SSAValue) else self.sb.const(x, self.t)

    def _apply(self, name: str, x: Scalar, y: Scalar) -> Scalar:
        if not isinstance(x, SSAValue) and not isinstance(y, SSAValue):
            return getattr(NUMPY, name)(self.np_t(x), self.np_t(y)).item()
        return getattr(self.ops, name)(self._ssa(x), self._ssa(y))

    def np_t(self, x: float):
        return np.float64(x) if isinstance(self.t, Float64Type) else np.float32(x)

    def add(self, x: Scalar, y: Scalar) -> Scalar:
        return self._apply("add", x, y)

    def sub(self, x: Scalar, y: Scalar) -> Scalar:
        return self._apply("sub", x, y)

    def mul(self, x: Scalar, y: Scalar) -> Scalar:
        return self._apply("mul", x, y)

    def div(self, x: Scalar, y: Scalar) -> Scalar:
        return self._apply("div", x, y)


def _pick(e: ElementEmitter, op: graph.GraphOp, idx: list[Index], first: SSAValue, second: SSAValue) -> SSAValue:
    """Element idx = (…, c) of the pair (first, second) along a last dim of 2; with a
    constant c the other element is provided too (a LayerNorm reads both)."""
    *rest, c = idx
    if isinstance(c, int):
        e.provide(op.results[0], [*rest, 1 - c], second if c == 0 else first)
        return first if c == 0 else second
    is_first = e.ib.eq(c, 0)
    assert not isinstance(is_first, bool)
    return e.sb.select(is_first, first, second)


def tile_moments_element(e: ElementEmitter, op: graph.TileMomentsOp, idx: list[Index]) -> SSAValue:
    """Element (…, t, c) of the partial moments: two serial loops over tile t of the
    row (its sum, then its squared deviations from the mean); the columns past a
    ragged last tile are skipped."""
    from fsir.lowering.emit import elem_type

    ib, sb = e.ib, e.sb
    *row, t, _ = idx
    n, w = e.shapes.dims(op.input)[-1], op.width
    ct = compute_type(elem_type(op.result))
    lo = ib.mul(t, w)
    ragged = not isinstance(n, int) or n % w != 0
    count = sb.index_to(ib.min(w, ib.sub(n, lo)), ct) if ragged else sb.const(float(w), ct)

    def over_tile(step) -> SSAValue:
        def body(j: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            col = ib.add(lo, j)
            inside = ib.lt(col, n) if ragged else True
            return [e.guarded(inside, lambda: step(carried[0], e.at(op.input, [*row, col])),
                              lambda: carried[0])]

        return e.for_loop(0, w, 1, [sb.const(0.0, ct)], body)[0]

    def widened(x: SSAValue) -> SSAValue:
        return x if x.type == ct else sb.convert(x, ct)

    mean = sb.arith("div", over_tile(lambda acc, x: sb.arith("add", acc, widened(x))), count)

    def square(acc: SSAValue, x: SSAValue) -> SSAValue:
        d = sb.arith("sub", widened(x), mean)
        return sb.multiply_add(d, d, acc)

    return _pick(e, op, idx, mean, over_tile(square))


def combine_moments_element(e: ElementEmitter, op: graph.CombineMomentsOp, idx: list[Index]) -> SSAValue:
    """Element (…, c) of a row's mean and variance: the row's partials loaded and
    combined tile 0 first (unrolled: the tiles are a few dozen)."""
    from fsir.lowering.emit import elem_type

    row = idx[:-1]
    ar = _Folding(e.sb, compute_type(elem_type(op.result)))
    acc: Moments | None = None
    for t, count in enumerate(op.counts()):
        part = Moments(float(count), e.at(op.input, [*row, t, 0]), e.at(op.input, [*row, t, 1]))
        acc = part if acc is None else combine(ar, acc, part)
    assert acc is not None
    mean, var = (ar._ssa(x) for x in (acc.mean, ar.div(acc.m2, float(op.row))))  # type: ignore[arg-type]  # Scalars
    return _pick(e, op, idx, mean, var)
