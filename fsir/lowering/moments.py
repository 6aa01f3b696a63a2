"""The row statistic of a two-pass LayerNorm in a kernel: the elements of
`graph.tile_moments` and `graph.combine_moments` by index propagation
(`tile_moments_element`, `combine_moments_element`, rows of
`fsir.lowering.emit.ELEMENT_RULES`).

Chan's combination is written once over an arithmetic (`fsir/interpreters/moments.py`,
with the numerics); here it runs on scalar code (`_Folding`: the tiles' counts are
static, so the weights `n_b / n` are constants).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import Float64Type
from xdsl.ir import SSAValue

from fsir.interpreters.moments import NUMPY, Moments, combine
from fsir.lowering.libm import TrigBuilder
from fsir.lowering.scalar import Index, ScalarBuilder, compute_type

if TYPE_CHECKING:
    from fsir.dialects import graph
    from fsir.lowering.emit import ElementEmitter

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
