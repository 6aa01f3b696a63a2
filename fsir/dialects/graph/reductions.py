"""Reductions: reduce, reduce_window, segment_reduce (ragged bags), and the two-pass
row statistics (tile_moments, combine_moments).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import I64, DenseArrayBase, Float32Type, Float64Type, IntegerAttr, TensorType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from fsir.dialects.graph.base import (
    Gather,
    GraphCanonicalization,
    GraphOp,
    Reduction,
    check_dims_in_rank,
    dims_property,
    operand_tensor_types,
    tensor_type,
)
from fsir.dialects.graph.types import (
    DYN,
    FLOAT_TYPES,
    STATIC,
    DimBuilder,
    DimsOf,
    f32,
    fmt_shape,
    is_bool,
    is_float,
    is_int,
    shape_of,
    static_dims,
    tensor,
)

# ---------------------------------------------------------------------------
# Reductions: reduce, reduce_window
# ---------------------------------------------------------------------------

class ReduceKind(StrEnum):
    """The reductions of `graph.reduce` and `graph.reduce_window`."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


@irdl_attr_definition
class ReduceKindAttr(EnumAttribute[ReduceKind], SpacedOpaqueSyntaxAttribute):
    """`#graph<reduce_kind max>`; printed as the bare word after the op name."""

    name = "graph.reduce_kind"


@irdl_op_definition
class ReduceOp(GraphOp):
    """Reduce over dims (`sum max min prod`); reduced dims are removed. Floats accumulate
    in f32; max/min propagate NaN.

        %m = graph.reduce sum %x dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
    """

    name = "graph.reduce"
    KEYWORD_PROP: ClassVar = "kind"
    KEYWORD_ENUM: ClassVar = ReduceKindAttr
    INT_PROPS: ClassVar = (("dims", "dims", True),)
    kind = prop_def(ReduceKindAttr)
    dims = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Reduction(), GraphCanonicalization())

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        dims = dims_property(self, "dims")
        check_dims_in_rank(dims, len(src), "reduction dimension")
        elem = tensor_type(self.input).element_type
        if is_bool(elem):
            raise VerifyException("cannot reduce i1 tensors (convert them first)")
        return tensor(elem, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        reduced = dims_property(self, "dims")
        return [s for i, s in enumerate(dims_of(self.input)) if i not in reduced]


def reduce_identity(kind: ReduceKind, dtype: np.dtype) -> Any:
    """The identity of a reduction on `dtype` (what padded window positions hold)."""
    if kind == ReduceKind.SUM:
        return dtype.type(0)
    if kind == ReduceKind.PROD:
        return dtype.type(1)
    if dtype.kind == "f" or dtype == ml_dtypes.bfloat16:
        return dtype.type(-np.inf if kind == ReduceKind.MAX else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if kind == ReduceKind.MAX else info.max)


@irdl_op_definition
class ReduceWindowOp(GraphOp):
    """StableHLO reduce_window with one operand: result element i reduces (`sum max min
    prod`) the operand over the window of `window[d]` positions starting at
    `i[d] * strides[d] - low[d]`, `dilations[d]` apart; positions in the padding
    (`low`/`high` per dim, outside the operand) hold the reduction's identity. Result
    dim d has `(n + low + high - (window - 1) * dilation - 1) / stride + 1` elements.
    Floats accumulate in f32; max/min propagate NaN.

        %p = graph.reduce_window max %x window [3, 3] strides [2, 2] dilations [1, 1]
               low [1, 1] high [1, 1] : (tensor<16x16xf32>) -> tensor<8x8xf32>

    Each result element is computed on its own (a small serial loop over its window),
    so it belongs to the gather class: it reads a neighbourhood of its operand, which
    a kernel takes from memory (`fsir.codegen.capability`), and its consumers stitch
    onto it like onto any per-element op.
    """

    name = "graph.reduce_window"
    KEYWORD_PROP: ClassVar = "kind"
    KEYWORD_ENUM: ClassVar = ReduceKindAttr
    INT_PROPS: ClassVar = (("window", "window", True), ("strides", "strides", True),
                           ("dilations", "dilations", True), ("low", "low", True), ("high", "high", True))
    kind = prop_def(ReduceKindAttr)
    window = prop_def(DenseArrayBase[I64])
    strides = prop_def(DenseArrayBase[I64])
    dilations = prop_def(DenseArrayBase[I64])
    low = prop_def(DenseArrayBase[I64])
    high = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Gather(), GraphCanonicalization())

    def params(self) -> tuple[tuple[int, ...], ...]:
        """(window, strides, dilations, low, high), one entry per dim each."""
        return tuple(dims_property(self, p) for p in ("window", "strides", "dilations", "low", "high"))

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        window, strides, dilations, low, high = self.params()
        for name, values in zip(("window", "strides", "dilations", "low", "high"), self.params()):
            if len(values) != len(src):
                raise VerifyException(f"{name} has {len(values)} entries but the operand has rank {len(src)}")
        for d, (k, s, r, lo, hi) in enumerate(zip(window, strides, dilations, low, high)):
            if k < 1 or s < 1 or r < 1:
                raise VerifyException(f"window {k}, stride {s} and dilation {r} of dim {d} must be positive")
            if lo < 0 or hi < 0:
                raise VerifyException(f"padding {lo}, {hi} of dim {d} must not be negative (slice the operand)")
            if src[d] != DYN and src[d] + lo + hi < (k - 1) * r + 1:
                raise VerifyException(f"the window of dim {d} ({(k - 1) * r + 1} positions) is larger than "
                                      f"the padded operand ({src[d] + lo + hi})")
        elem = tensor_type(self.input).element_type
        if is_bool(elem):
            raise VerifyException("cannot reduce i1 tensors (convert them first)")
        return tensor(elem, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        out = []
        for n, k, s, r, lo, hi in zip(dims_of(self.input), *self.params()):
            out.append(b.add(b.div(b.sub(b.add(n, lo + hi), (k - 1) * r + 1), s), 1))
        return out

    def window_index(self, idx: Sequence, offsets: Sequence, b: DimBuilder) -> list:
        """The operand position of window element `offsets` (one per dim, in
        [0, window)) of the result's `idx`; it may lie in the padding."""
        _, strides, dilations, low, _ = self.params()
        return [b.add(b.sub(b.mul(i, s), lo), b.mul(o, r))
                for i, o, s, r, lo in zip(idx, offsets, strides, dilations, low)]

    def may_leave(self, d: int) -> tuple[bool, bool]:
        """Whether some window of dim `d` reaches into the low / the high padding
        (`?` sizes: whenever there is padding on that side)."""
        window, strides, dilations, low, high = (p[d] for p in self.params())
        n, out = shape_of(self.input.type)[d], shape_of(self.result_type)[d]
        # the result size keeps the last window within n + high positions
        above = high > 0 and (DYN in (n, out) or (out - 1) * strides + (window - 1) * dilations - low >= n)
        return low > 0, above


# ---------------------------------------------------------------------------
# Ragged bags: segment reductions over offsets (RECom § embedding columns)
# ---------------------------------------------------------------------------

class SegmentKind(StrEnum):
    """The reductions of `graph.segment_reduce`."""

    SUM = "sum"
    MEAN = "mean"
    MAX = "max"
    MIN = "min"


@irdl_attr_definition
class SegmentKindAttr(EnumAttribute[SegmentKind], SpacedOpaqueSyntaxAttribute):
    """`#graph<segment_kind mean>`; printed as the bare word after the op name."""

    name = "graph.segment_kind"


@irdl_op_definition
class SegmentReduceOp(GraphOp):
    """Reduce consecutive runs of rows of `data` (dim 0) given by their start
    `offsets`, as PyTorch's EmbeddingBag with offsets (include_last_offset=False) and
    TensorFlow's SparseSegmentSum/Mean over sorted segment ids: segment s holds rows
    [offsets[s], offsets[s+1]), the last one [offsets[S-1], N). Offsets are clamped into
    [0, N]; a segment whose end does not exceed its start is empty and gives 0 for every
    kind (as EmbeddingBag's empty bags). `mean` divides the sum by the row count (float
    data only); floats accumulate in f32, max/min propagate NaN.

        %bags = graph.segment_reduce sum %rows, %offsets : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>

    Code generation computes each result element on its own: a loop over its segment's
    rows, so the threads of one segment read a row's elements side by side.
    """

    name = "graph.segment_reduce"
    KEYWORD_PROP: ClassVar = "kind"
    KEYWORD_ENUM: ClassVar = SegmentKindAttr
    kind = prop_def(SegmentKindAttr)
    data = operand_def(TensorType)
    offsets = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Gather())

    def infer_type(self) -> TensorType:
        kind = self.kind.data
        data, offsets = operand_tensor_types(self)
        if not is_int(offsets.element_type) or is_bool(offsets.element_type):
            raise VerifyException(f"offsets must be i32 or i64, got {offsets.element_type}")
        if len(shape_of(offsets)) != 1:
            raise VerifyException(f"offsets must have rank 1, got {fmt_shape(shape_of(offsets))}")
        if len(shape_of(data)) < 1:
            raise VerifyException("the data must have rank >= 1")
        if is_bool(data.element_type):
            raise VerifyException("cannot reduce i1 tensors (convert them first)")
        if kind == SegmentKind.MEAN and not is_float(data.element_type):
            raise VerifyException(f"segment mean needs float data, got {data.element_type}")
        return tensor(data.element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        return [dims_of(self.offsets)[0], *dims_of(self.data)[1:]]

    # Which rows a segment reads is data (its offsets), so there is no `operand_indices`.

    def combine_kind(self) -> ReduceKind:
        """The reduction combining a segment's rows (a mean sums, then divides)."""
        kind = self.kind.data
        return ReduceKind.SUM if kind == SegmentKind.MEAN else ReduceKind(kind.value)

    def bounds(self, offsets: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """Each segment's [start, end) rows, clamped into [0, rows]."""
        starts = np.clip(offsets.astype(np.int64), 0, rows)
        ends = np.clip(np.append(offsets.astype(np.int64)[1:], rows), 0, rows)
        return starts, ends


# -- two-pass row statistics (a LayerNorm's mean and variance from per-tile partials) --


def _moments_type(elem: Attribute, shape: Sequence[int]) -> TensorType:
    """Moments are taken in f32 (f64 for f64 values): the kernels' compute type."""
    if not isinstance(elem, FLOAT_TYPES):
        raise VerifyException(f"moments are taken of float tensors, not of {elem}")
    return tensor(Float64Type() if isinstance(elem, Float64Type) else f32, shape)


@irdl_op_definition
class TileMomentsOp(GraphOp):
    """The partial moments of the last dim in tiles of `tile` consecutive elements (the
    last tile may be shorter): result element (…, t, 0) is tile t's mean, (…, t, 1)
    its M2, the sum of squared deviations from that mean (two passes over the tile).
    `graph.combine_moments` merges a row's partials (Chan's formula,
    `fsir/lowering/moments.py`). A GEMM epilogue writes them from its accumulators, a
    block tile of `tile` columns at a time, so a LayerNorm after a GEMM whose tile
    spans only part of the row needs no row kernel (`fsir/fusion/ln_stat.py`).

        %p = graph.tile_moments %z tile 32 : (tensor<256x768xf32>) -> tensor<256x24x2xf32>

    The last dim must be static (a tile's count is known where the partials are
    combined). Computed per element by a loop over its tile, as a window reduction is,
    so it is of the gather class.
    """

    name = "graph.tile_moments"
    INT_PROPS: ClassVar = (("tile", "tile", False),)
    tile = prop_def(IntegerAttr[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Gather())

    @property
    def width(self) -> int:
        return self.tile.value.data

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        if not src:
            raise VerifyException("tile moments need a tensor of rank 1 or more")
        if src[-1] == DYN:
            raise VerifyException("tile moments need a static last dim (the tiles' counts)")
        if self.width < 1:
            raise VerifyException(f"tile width {self.width} must be positive")
        return _moments_type(tensor_type(self.input).element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        dims = list(dims_of(self.input))
        return [*dims[:-1], -(-shape_of(self.input.type)[-1] // self.width), 2]


@irdl_op_definition
class CombineMomentsOp(GraphOp):
    """A row's mean and (population) variance from its tiles' partial moments
    (`graph.tile_moments` of a row of `size` elements in tiles of `tile`): result
    element (…, 0) is the mean, (…, 1) the variance, the partials combined tile 0 first
    by Chan's formula (deterministic; every term a deviation from a mean, so rows with
    a large mean do not cancel: `fsir/lowering/moments.py`).

        %s = graph.combine_moments %p tile 32 size 768 : (tensor<256x24x2xf32>) -> tensor<256x2xf32>

    Computed per element by an unrolled loop over the row's partials (a few dozen),
    so it is of the gather class; a GEMM prologue computes it once per staged row
    before its k-loop (`fsir/lowering/prologue.py`).
    """

    name = "graph.combine_moments"
    INT_PROPS: ClassVar = (("tile", "tile", False), ("size", "size", False))
    tile = prop_def(IntegerAttr[I64])
    size = prop_def(IntegerAttr[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Gather())

    @property
    def width(self) -> int:
        return self.tile.value.data

    @property
    def row(self) -> int:
        return self.size.value.data

    def counts(self) -> list[int]:
        """Each tile's count of values."""
        return [min(self.width, self.row - lo) for lo in range(0, self.row, self.width)]

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        if self.width < 1 or self.row < 1:
            raise VerifyException(f"tile {self.width} and size {self.row} must be positive")
        tiles = len(self.counts())
        if len(src) < 2 or src[-1] != 2 or src[-2] not in (tiles, DYN):
            raise VerifyException(f"expected partial moments of shape [..., {tiles}, 2] ({self.row} values in "
                                  f"tiles of {self.width}), got {fmt_shape(src)}")
        elem = tensor_type(self.input).element_type
        if not isinstance(elem, (Float32Type, Float64Type)):
            raise VerifyException(f"partial moments are f32 or f64, not {elem}")
        return tensor(elem, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        return [*list(dims_of(self.input))[:-2], 2]
