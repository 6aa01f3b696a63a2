"""Data-dependent element rules (op class gather): gather, scatter, sort.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, TensorType, UnitAttr
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from fsir.dialects.graph.base import (
    Gather,
    GraphOp,
    check_dims_in_rank,
    dims_property,
    operand_tensor_types,
    same_shape_dims,
)
from fsir.dialects.graph.types import (
    DYN,
    STATIC,
    DimBuilder,
    DimsOf,
    fmt_shape,
    is_bool,
    is_int,
    shape_of,
    shapes_compatible,
    static_dims,
    tensor,
)


@irdl_op_definition
class GatherOp(GraphOp):
    """Embedding lookup: rows of axis 0 of the table at the ids (ids are clamped to
    [0, rows-1], as XLA clamps gather indices).

        %e = graph.gather %table, %ids : (tensor<1000x64xf32>, tensor<32xi32>) -> tensor<32x64xf32>

    `in_bounds` states that every id lies in [0, rows-1], so the clamp is the identity
    and code generation leaves it out; the `prove-gather-bounds` pass sets it where an
    interval analysis proves it (fsir/transforms/intervals.py):

        %e = graph.gather %table, %ids {in_bounds} : (tensor<1000x64xf32>, tensor<32xi32>) -> tensor<32x64xf32>
    """

    name = "graph.gather"
    table = operand_def(TensorType)
    ids = operand_def(TensorType)
    result = result_def(TensorType)
    in_bounds = opt_attr_def(UnitAttr)
    traits = traits_def(Pure(), Gather())

    def infer_type(self) -> TensorType:
        t, ids = operand_tensor_types(self)
        if not is_int(ids.element_type) or is_bool(ids.element_type):
            raise VerifyException(f"ids must be i32 or i64, got {ids.element_type}")
        if len(shape_of(t)) < 1:
            raise VerifyException("the table must have rank >= 1")
        return tensor(t.element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        return [*dims_of(self.ids), *dims_of(self.table)[1:]]

    # The table row read is data (the id at the ids index), so a gather has no
    # `operand_indices`; readers load the id and place its row with `table_index`.

    def ids_index(self, idx: Sequence) -> list:
        """The ids element holding the row of the result's `idx`."""
        return list(idx[: len(shape_of(self.ids.type))])

    def table_index(self, row: Any, idx: Sequence) -> list:
        """The table element of the result's `idx`, given its (clamped) row."""
        return [row, *idx[len(shape_of(self.ids.type)):]]


# ---------------------------------------------------------------------------
# Scatter and sort: data-dependent element rules (op class gather)
# ---------------------------------------------------------------------------

class ScatterKind(StrEnum):
    """How `graph.scatter` combines an update with the current value."""

    NONE = "none"
    ADD = "add"
    MUL = "mul"
    MAX = "max"
    MIN = "min"


@irdl_attr_definition
class ScatterKindAttr(EnumAttribute[ScatterKind], SpacedOpaqueSyntaxAttribute):
    """`#graph<scatter_kind add>`; printed as the bare word after the op name."""

    name = "graph.scatter_kind"


@irdl_op_definition
class ScatterOp(GraphOp):
    """XLA scatter restricted to point updates of full windows (what ONNX ScatterND and
    ScatterElements and JAX's `x.at[...]` produce). The last dim of `indices` holds index
    vectors of K entries, entry j addressing operand dim `dims[j]`; `updates` has the
    shape `indices.shape[:-1] ++ [operand dims not in dims]`, so each update is a whole
    window of the operand at one point of the indexed dims. Updates apply in row-major
    order of the index vectors: `none` overwrites (the last of duplicates wins), `add`,
    `mul`, `max`, `min` combine with the current value (NaN-propagating max/min); an
    update whose point lies out of bounds is skipped, as XLA skips it. The result has the
    operand's type.

        %r = graph.scatter add %x, %i, %u dims [0] : (tensor<8xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<8xf32>

    Code generation computes each result element on its own (no atomics, deterministic
    order): the element scans every update for its point, O(elements × updates) work.
    """

    name = "graph.scatter"
    KEYWORD_PROP: ClassVar = "kind"
    KEYWORD_ENUM: ClassVar = ScatterKindAttr
    INT_PROPS: ClassVar = (("dims", "dims", True),)
    kind = prop_def(ScatterKindAttr)
    dims = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Gather())

    def infer_type(self) -> TensorType:
        x, idx, upd = operand_tensor_types(self)
        src, ishape, ushape = shape_of(x), shape_of(idx), shape_of(upd)
        dims = dims_property(self, "dims")
        if not is_int(idx.element_type) or is_bool(idx.element_type):
            raise VerifyException(f"indices must be integers, got {idx.element_type}")
        if not ishape or ishape[-1] != len(dims):
            raise VerifyException(
                f"the last dim of the indices ({fmt_shape(ishape[-1:])}) must be the number of scattered dims "
                f"({len(dims)})")
        check_dims_in_rank(dims, len(src), "scatter dimension")
        if upd.element_type != x.element_type:
            raise VerifyException(f"updates element type {upd.element_type} differs from the operand's "
                                  f"{x.element_type}")
        if self.kind.data in (ScatterKind.ADD, ScatterKind.MUL) and is_bool(x.element_type):
            raise VerifyException(f"scatter {self.kind.data} does not accept i1 tensors")
        window = [s for d, s in enumerate(src) if d not in dims]
        expected = [*ishape[:-1], *window]
        if not shapes_compatible(expected, ushape):
            raise VerifyException(f"updates shape {fmt_shape(ushape)} does not match indices and operand: "
                                  f"expected {fmt_shape(expected)}")
        return tensor(x.element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        return list(dims_of(self.input))

    # The operand element a result element starts from is at its own index; which
    # updates reach it is data, so there is no `operand_indices` (as for a gather).

    def point(self, idx: Sequence) -> list:
        """The coordinates of the result's `idx` along the scattered dims."""
        return [idx[d] for d in dims_property(self, "dims")]

    def window_index(self, idx: Sequence) -> list:
        """The window coordinates of the result's `idx` (its coordinates in the other dims)."""
        dims = dims_property(self, "dims")
        return [i for d, i in enumerate(idx) if d not in dims]


class SortDirection(StrEnum):
    """The orders of `graph.sort`."""

    ASCENDING = "ascending"
    DESCENDING = "descending"


@irdl_attr_definition
class SortDirectionAttr(EnumAttribute[SortDirection], SpacedOpaqueSyntaxAttribute):
    """`#graph<sort_direction descending>`; printed as the bare word after the op name."""

    name = "graph.sort_direction"


MAX_SORT_SIZE = 64


@irdl_op_definition
class SortOp(GraphOp):
    """Stable sort along `dim`: the result is `values` permuted so that `keys` (same
    shape) are in order along `dim`; sorting a tensor itself is `graph.sort %k, %k`, and
    a multi-operand sort is one graph.sort per operand with the same keys. NaN keys
    order after every number (first when descending); equal keys keep their order.

        %s = graph.sort ascending %keys, %values dim 1 : (tensor<4x8xf32>, tensor<4x8xi32>) -> tensor<4x8xi32>

    Code generation ranks elements (the element at position p is the one with p keys
    before it): O(n²) work per element, so the sorted dim must be static and at most
    MAX_SORT_SIZE (64) long.
    """

    name = "graph.sort"
    KEYWORD_PROP: ClassVar = "direction"
    KEYWORD_ENUM: ClassVar = SortDirectionAttr
    INT_PROPS: ClassVar = (("dim", "dim", False),)
    SHORT_TYPE: ClassVar = True
    direction = prop_def(SortDirectionAttr)
    dim = prop_def(IntegerAttr[I64])
    keys = operand_def(TensorType)
    values = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Gather())

    def infer_type(self) -> TensorType:
        keys, values = operand_tensor_types(self)
        ks, vs = shape_of(keys), shape_of(values)
        d = self.dim.value.data
        check_dims_in_rank([d], len(ks), "sort dimension")
        if not shapes_compatible(ks, vs):
            raise VerifyException(f"keys and values shapes differ: {fmt_shape(ks)} and {fmt_shape(vs)}")
        if is_bool(keys.element_type):
            raise VerifyException("sort keys cannot be i1 (convert them first)")
        n = ks[d] if ks[d] != DYN else vs[d]
        if n == DYN or n > MAX_SORT_SIZE:
            raise VerifyException(f"sorts only static dims of at most {MAX_SORT_SIZE} elements, dim {d} has "
                                  f"{fmt_shape([n])}")
        return tensor(values.element_type, self.reify_dims(static_dims, STATIC))

    reify_dims = same_shape_dims

    def order(self, keys: np.ndarray) -> np.ndarray:
        """The positions along `dim` in sorted order (numpy's stable argsort puts NaN last;
        descending is the ascending order of the reversed keys, reversed)."""
        d = self.dim.value.data
        if self.direction.data == SortDirection.ASCENDING:
            return np.argsort(keys, axis=d, kind="stable")
        n = keys.shape[d]
        return n - 1 - np.flip(np.argsort(np.flip(keys, d), axis=d, kind="stable"), d)
