"""Compute-intensive ops: dot and conv, with the GEMM problems they describe.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Generic

from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, TensorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from fsir.dialects.graph.base import ComputeIntensive, GraphOp, dims_property, i64_attr, operand_tensor_types
from fsir.dialects.graph.types import (
    DYN,
    STATIC,
    D,
    DimAgreement,
    DimBuilder,
    DimsOf,
    dims_compatible,
    dims_product,
    fmt_shape,
    is_bool,
    is_float,
    shape_of,
    static_dims,
    tensor,
)


@irdl_op_definition
class DotOp(GraphOp):
    """Matrix product with numpy.matmul semantics (batch dims broadcast; rank-1 operands
    are vectors). Floats accumulate in f32.

        %d = graph.dot %a, %b : (tensor<2x32x128xf32>, tensor<128x64xf32>) -> tensor<2x32x64xf32>
    """

    name = "graph.dot"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ComputeIntensive())

    def infer_type(self) -> TensorType:
        a, b = operand_tensor_types(self)
        if a.element_type != b.element_type:
            raise VerifyException(f"operand element types differ: {a.element_type} and {b.element_type}")
        if is_bool(a.element_type):
            raise VerifyException("cannot multiply i1 tensors")
        check_matmul(shape_of(a), shape_of(b))
        return tensor(a.element_type, self.reify_dims(static_dims, STATIC))

    def problem(self, dims_of: DimsOf, b: DimBuilder) -> MatmulProblem:
        """The dot as a batched matrix product, from its operands' dims."""
        return matmul_problem(dims_of(self.lhs), dims_of(self.rhs), shape_of(self.lhs.type),
                              shape_of(self.rhs.type), b)

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        return self.problem(dims_of, b).result_dims()

    def agreeing_dims(self, dims_of: DimsOf, b: DimBuilder) -> list[DimAgreement]:
        """The contracting dims agree; a batch dim is 1 or the result's batch size."""
        a, c = dims_of(self.lhs), dims_of(self.rhs)
        sa, sc = shape_of(self.lhs.type), shape_of(self.rhs.type)
        out = [DimAgreement("the contracting dims of lhs and rhs", a[-1], c[0] if len(c) == 1 else c[-2])]
        batch = self.problem(dims_of, b).batch
        for name, dims, static in (("lhs", a, sa), ("rhs", c, sc)):
            nb = len(static) - 2
            for i in range(max(nb, 0)):
                if static[i] != 1:
                    out.append(DimAgreement(f"batch dim {i} of {name} and of the result", dims[i],
                                            batch[len(batch) - nb + i], DimAgreement.FIRST_MAY_BE_1))
        return out

    def batch_index(self, operand: SSAValue, batch_idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list:
        """The batch index of a matrix operand (rank >= 2) for the problem's batch index
        `batch_idx`: batch dims are right-aligned and size-1 dims broadcast."""
        static, dims = shape_of(operand.type), dims_of(operand)
        nb = len(static) - 2
        out: list = []
        for i in range(nb):
            o = batch_idx[len(batch_idx) - nb + i]
            if static[i] == 1:
                out.append(0)
            elif static[i] == DYN:
                out.append(b.select(b.eq(dims[i], 1), 0, o))
            else:
                out.append(o)
        return out


@dataclass(frozen=True)
class MatmulProblem(Generic[D]):
    """A dot (numpy.matmul semantics) as a batched m x k @ k x n product, dims in some
    `DimBuilder` algebra: `batch` the result's (broadcast) batch dims; a vector lhs has
    m = 1 and no m result dim, a vector rhs n = 1 and no n result dim."""

    batch: list[D | int]
    m: D | int
    n: D | int
    k: D | int
    lhs_vector: bool
    rhs_vector: bool

    def result_dims(self) -> list[D | int]:
        return [*self.batch, *([] if self.lhs_vector else [self.m]), *([] if self.rhs_vector else [self.n])]


def matmul_problem(a: Sequence[D | int], b: Sequence[D | int], static_a: Sequence[int],
                   static_b: Sequence[int], bld: DimBuilder[D]) -> MatmulProblem[D]:
    """The problem of `a @ b` from the operands' dims (`a`, `b`) and static shapes: where
    a static dim decides (a broadcast size-1 batch dim, a static size), no runtime
    choice is made. Operands must pass `check_matmul`."""
    va, vb = len(a) == 1, len(b) == 1
    a2, sa = ([1, a[0]], [1, static_a[0]]) if va else (list(a), list(static_a))
    b2, sb = ([b[0], 1], [static_b[0], 1]) if vb else (list(b), list(static_b))
    nb = max(len(a2), len(b2)) - 2
    pad = [1] * nb
    ba, bb = (pad + a2[:-2])[-nb:] if nb else [], (pad + b2[:-2])[-nb:] if nb else []
    sba, sbb = (pad + sa[:-2])[-nb:] if nb else [], (pad + sb[:-2])[-nb:] if nb else []
    batch: list[D | int] = []
    for x, y, sx, sy in zip(ba, bb, sba, sbb):
        if sx == 1:
            batch.append(y)
        elif sy == 1 or sx != DYN:
            batch.append(x)
        elif sy != DYN:
            batch.append(y)
        else:
            batch.append(bld.select(bld.eq(x, 1), y, x))
    k = a2[-1] if sa[-1] != DYN else b2[-2]
    return MatmulProblem(batch, a2[-2], b2[-1], k, va, vb)


def matmul_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """numpy.matmul's result shape, with `?` dims; raises VerifyException on mismatch."""
    check_matmul(a, b)
    return tuple(matmul_problem(a, b, a, b, STATIC).result_dims())


def check_matmul(a: Sequence[int], b: Sequence[int]) -> None:
    """Raises VerifyException unless shapes `a` and `b` (`?` allowed) can be multiplied."""
    if not a or not b:
        raise VerifyException("dot operands must have rank >= 1")
    va, vb = len(a) == 1, len(b) == 1
    a2 = (1, a[0]) if va else tuple(a)
    b2 = (b[0], 1) if vb else tuple(b)
    if not dims_compatible(a2[-1], b2[-2]):
        raise VerifyException(f"contracting dims differ: {fmt_shape(a)} @ {fmt_shape(b)}")
    ba, bb = a2[:-2], b2[:-2]
    n = max(len(ba), len(bb))
    ba, bb = (1,) * (n - len(ba)) + ba, (1,) * (n - len(bb)) + bb
    for x, y in zip(ba, bb):
        if not (1 in (x, y) or dims_compatible(x, y)):
            raise VerifyException(f"batch dims {fmt_shape(a[:-2])} and {fmt_shape(b[:-2])} do not broadcast")


# ---------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvProblem(Generic[D]):
    """A `graph.conv` as an implicit GEMM per feature group, dims in some `DimBuilder`
    algebra: result rows m = batch x output positions, columns n = output channels of
    a group, contraction k = input channels of a group x kernel positions (in that
    order: the kernel positions vary fastest)."""

    batch: D | int
    out: list[D | int]  # output spatial sizes
    inp: list[D | int]  # input spatial sizes
    kernel: list[int]  # kernel spatial sizes (static)
    channels: int  # input channels per group
    out_channels: int  # output channels per group
    groups: int

    def m(self, b: DimBuilder) -> D | int:
        return dims_product(b, [self.batch, *self.out])

    @property
    def n(self) -> int:
        return self.out_channels

    @property
    def k(self) -> int:
        return self.channels * math.prod(self.kernel)


@irdl_op_definition
class ConvOp(GraphOp):
    """N-d convolution (cross-correlation, as ONNX Conv and XLA convolution) in ONNX's
    layout: input [N, C, *spatial], weight [O, C / groups, *kernel], result
    [N, O, *out]. Per spatial dim: the input is dilated by `lhs_dilation` (holes between
    elements: transposed convolutions), padded by `pad_low`/`pad_high` (negative pads
    crop), then the kernel, dilated by `dilation`, slides with `strides`:
    out = (dilated_in + pad_low + pad_high - dilated_kernel) / stride + 1. `groups`
    splits the channels into independent convolutions (groups = C: depthwise). Floats
    accumulate in f32.

        %y = graph.conv %x, %w strides [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
    """  # noqa: E501 (an IR example)

    name = "graph.conv"
    INT_PROPS: ClassVar = (("strides", "strides", True), ("pad_low", "pad_low", True),
                           ("pad_high", "pad_high", True), ("dilation", "dilation", True),
                           ("lhs_dilation", "lhs_dilation", True), ("groups", "groups", False))
    strides = prop_def(DenseArrayBase[I64])
    pad_low = prop_def(DenseArrayBase[I64])
    pad_high = prop_def(DenseArrayBase[I64])
    dilation = prop_def(DenseArrayBase[I64])
    lhs_dilation = prop_def(DenseArrayBase[I64])
    groups = prop_def(IntegerAttr[I64])
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ComputeIntensive())

    @staticmethod
    def build_conv(x: SSAValue, w: SSAValue, result_type: Attribute, strides: Sequence[int],
                   pad_low: Sequence[int], pad_high: Sequence[int], dilation: Sequence[int],
                   lhs_dilation: Sequence[int], groups: int) -> ConvOp:
        props: dict[str, Attribute] = {
            name: DenseArrayBase.from_list(i64, [int(v) for v in values])
            for name, values in (("strides", strides), ("pad_low", pad_low), ("pad_high", pad_high),
                                 ("dilation", dilation), ("lhs_dilation", lhs_dilation))}
        props["groups"] = i64_attr(groups)
        return ConvOp.build(operands=[x, w], result_types=[result_type], properties=props)

    def window(self) -> tuple[tuple[int, ...], ...]:
        """(strides, pad_low, pad_high, dilation, lhs_dilation) per spatial dim."""
        return tuple(dims_property(self, p) for p in ("strides", "pad_low", "pad_high", "dilation", "lhs_dilation"))

    @property
    def group_count(self) -> int:
        return self.groups.value.data

    def infer_type(self) -> TensorType:
        x, w = operand_tensor_types(self)
        if x.element_type != w.element_type:
            raise VerifyException(f"operand element types differ: {x.element_type} and {w.element_type}")
        if not is_float(x.element_type):
            raise VerifyException(f"conv operands must be floats, got {x.element_type}")
        xs, ws = shape_of(x), shape_of(w)
        if len(xs) < 3:
            raise VerifyException(f"the input must have rank >= 3 ([N, C, spatial...]), got {fmt_shape(xs)}")
        if len(ws) != len(xs):
            raise VerifyException(f"the weight {fmt_shape(ws)} must have the input's rank {len(xs)} "
                                  "([O, C / groups, kernel...])")
        spatial = len(xs) - 2
        for prop, values in zip(("strides", "pad_low", "pad_high", "dilation", "lhs_dilation"), self.window()):
            if len(values) != spatial:
                raise VerifyException(f"{prop} has {len(values)} entries but the input has {spatial} spatial dims")
        strides, _, _, dilation, lhs_dilation = self.window()
        for prop, values in (("strides", strides), ("dilation", dilation), ("lhs_dilation", lhs_dilation)):
            if any(v < 1 for v in values):
                raise VerifyException(f"{prop} {list(values)} must be positive")
        groups = self.group_count
        if groups < 1:
            raise VerifyException(f"groups must be positive, got {groups}")
        if DYN in ws:
            raise VerifyException(f"the weight's shape must be static, got {fmt_shape(ws)}")
        if any(k < 1 for k in ws[2:]):
            raise VerifyException(f"kernel sizes {list(ws[2:])} must be positive")
        if ws[0] % groups:
            raise VerifyException(f"{ws[0]} output channels do not split into {groups} groups")
        if xs[1] != DYN and xs[1] != ws[1] * groups:
            raise VerifyException(f"the input has {xs[1]} channels but the weight expects {ws[1]} per group x "
                                  f"{groups} groups = {ws[1] * groups}")
        out = self.reify_dims(static_dims, STATIC)
        for i, o in enumerate(out[2:]):
            if o != DYN and o < 0:
                raise VerifyException(f"spatial dim {i}: the dilated kernel ({(ws[2 + i] - 1) * dilation[i] + 1}) "
                                      f"is larger than the padded input")
        return tensor(x.element_type, out)

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        xs, ws = dims_of(self.input), shape_of(self.weight.type)
        out: list = [xs[0], ws[0]]
        strides, low, high, dilation, lhs_dilation = self.window()
        for i, size in enumerate(xs[2:]):
            dilated_in = b.add(b.mul(b.sub(size, 1), lhs_dilation[i]), 1) if size != 0 else 0
            span = b.sub(b.add(dilated_in, low[i] + high[i]), (ws[2 + i] - 1) * dilation[i] + 1)
            out.append(b.add(b.div(span, strides[i]), 1))
        return out

    def problem(self, dims_of: DimsOf, b: DimBuilder) -> ConvProblem:
        """The conv as an implicit GEMM per group (`ConvProblem`)."""
        xs, ws = dims_of(self.input), shape_of(self.weight.type)
        res = self.reify_dims(dims_of, b)
        groups = self.group_count
        return ConvProblem(xs[0], list(res[2:]), list(xs[2:]), list(ws[2:]), ws[1], ws[0] // groups, groups)
