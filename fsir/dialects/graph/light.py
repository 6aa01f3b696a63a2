"""The other light per-element ops: compare, select, convert, bitcast, constant.
"""

from __future__ import annotations

import math
from typing import ClassVar, cast

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    AnyDenseElement,
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    StructPackableType,
    TensorType,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from fsir.dialects.graph.base import (
    GraphCanonicalization,
    GraphOp,
    LightElementwise,
    operand_tensor_types,
    same_index_rule,
    same_shape_agreement,
    same_shape_dims,
    tensor_type,
)
from fsir.dialects.graph.types import (
    DYN,
    STATIC,
    DimBuilder,
    DimsOf,
    fmt_shape,
    i1,
    is_bool,
    join_shapes,
    numpy_dtype,
    shape_of,
    shapes_compatible,
    static_dims,
    tensor,
)

# ---------------------------------------------------------------------------
# Other light elementwise ops
# ---------------------------------------------------------------------------

class CompareDirection(StrEnum):
    """The directions of `graph.compare`."""

    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"


@irdl_attr_definition
class CompareDirectionAttr(EnumAttribute[CompareDirection], SpacedOpaqueSyntaxAttribute):
    """`#graph<compare_direction gt>`; printed as the bare word after the op name."""

    name = "graph.compare_direction"


@irdl_op_definition
class CompareOp(GraphOp):
    """Elementwise comparison giving i1 (`eq ne lt le gt ge`; float compares are ordered,
    except `ne`, which is true for NaN as in C).

        %c = graph.compare gt %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    """

    name = "graph.compare"
    KEYWORD_PROP: ClassVar = "direction"
    KEYWORD_ENUM: ClassVar = CompareDirectionAttr
    direction = prop_def(CompareDirectionAttr)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    def infer_type(self) -> TensorType:
        a, b = operand_tensor_types(self)
        if a.element_type != b.element_type:
            raise VerifyException(f"operand element types differ: {a.element_type} and {b.element_type}")
        if not shapes_compatible(shape_of(a), shape_of(b)):
            raise VerifyException(f"operand shapes differ: {fmt_shape(shape_of(a))} and {fmt_shape(shape_of(b))}")
        return tensor(i1, self.reify_dims(static_dims, STATIC))

    reify_dims = same_shape_dims
    operand_indices = same_index_rule
    agreeing_dims = same_shape_agreement


@irdl_op_definition
class SelectOp(GraphOp):
    """Elementwise `cond ? a : b`.

        %s = graph.select %c, %x, %w : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    name = "graph.select"
    cond = operand_def(TensorType)
    on_true = operand_def(TensorType)
    on_false = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    def infer_type(self) -> TensorType:
        c, a, b = operand_tensor_types(self)
        if not is_bool(c.element_type):
            raise VerifyException(f"condition must have element type i1, got {c.element_type}")
        if a.element_type != b.element_type:
            raise VerifyException(f"branch element types differ: {a.element_type} and {b.element_type}")
        shape = shape_of(c)
        for t in (a, b):
            if not shapes_compatible(shape, shape_of(t)):
                raise VerifyException(f"operand shapes differ: {fmt_shape(shape)} and {fmt_shape(shape_of(t))}")
            shape = join_shapes(shape, shape_of(t))
        return tensor(a.element_type, self.reify_dims(static_dims, STATIC))

    reify_dims = same_shape_dims
    operand_indices = same_index_rule
    agreeing_dims = same_shape_agreement


@irdl_op_definition
class ConvertOp(GraphOp):
    """Elementwise element-type conversion: float to int truncates toward zero and
    saturates to the integer range (NaN -> 0); int to int wraps (two's complement,
    extending by the source's signedness); to float rounds to nearest even; to i1 is `!= 0`.

        %h = graph.convert %x : (tensor<4xf16>) -> tensor<4xf32>
    """

    name = "graph.convert"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    def infer_type(self) -> TensorType:
        return tensor(self.result_type.element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        return list(dims_of(self.input))

    operand_indices = same_index_rule


def bit_width(t: Attribute) -> int:
    """Bits of one element in memory (i1: a byte)."""
    if is_bool(t):
        return 8
    if isinstance(t, (Float16Type, BFloat16Type)):
        return 16
    if isinstance(t, Float32Type):
        return 32
    if isinstance(t, Float64Type):
        return 64
    assert isinstance(t, IntegerType)
    return t.width.data


@irdl_op_definition
class BitcastOp(GraphOp):
    """Elementwise reinterpretation of each element's bits as an element type of the
    same width (HLO bitcast-convert, ONNX BitCast). i1 counts as a byte holding 0 or 1;
    a byte read as i1 is true when nonzero.

        %b = graph.bitcast %x : (tensor<4xf32>) -> tensor<4xi32>
    """

    name = "graph.bitcast"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    def infer_type(self) -> TensorType:
        src, dst = tensor_type(self.input).element_type, self.result_type.element_type
        if bit_width(src) != bit_width(dst):
            raise VerifyException(f"cannot bitcast {src} ({bit_width(src)} bits) to {dst} "
                                  f"({bit_width(dst)} bits): the widths differ")
        return tensor(dst, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        return list(dims_of(self.input))

    operand_indices = same_index_rule


@irdl_op_definition
class ConstantOp(GraphOp):
    """A constant tensor: splat or full dense; rank 0 is `tensor<f32>`.

        %k = graph.constant dense<1.000000e+00> : tensor<4x8xf32>
    """

    name = "graph.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise())

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.get_type()])

    @classmethod
    def parse(cls, parser: Parser):
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error("expected a dense elements attribute, e.g. dense<1.0> : tensor<4xf32>", pos, parser.pos)
        attrs = parser.parse_optional_attr_dict()
        op = cls(value)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)

    def infer_type(self) -> TensorType:
        t = self.value.get_type()
        if any(d == DYN for d in shape_of(t)):
            raise VerifyException("a constant must have a static shape")
        assert isinstance(t, TensorType)
        return t


    @staticmethod
    def from_array(array: np.ndarray, element_type: Attribute) -> ConstantOp:
        return ConstantOp(dense_attr(array, element_type))


def constant_array(value: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The constant's values as an array of its numpy dtype, read straight from the
    attribute's bytes (a splat holds one stored element)."""
    t = value.get_type()
    dtype = numpy_dtype(value.get_element_type())
    shape = shape_of(t)
    arr = stored_values(value)
    if arr.size == 1 and math.prod(shape) != 1:
        return np.full(shape, arr.reshape(()), dtype=dtype)
    return arr.reshape(shape).astype(dtype)


def stored_values(value: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The elements the attribute stores (one for a splat), without unpacking them
    into Python objects: large weights and masks are megabytes of them."""
    elem = value.get_element_type()
    raw = value.data.data
    fmt = getattr(elem, "format", None)
    if isinstance(elem, BFloat16Type):
        return np.frombuffer(raw, dtype=ml_dtypes.bfloat16)
    if fmt is None:
        return np.array(value.get_values())
    return np.frombuffer(raw, dtype=np.dtype(fmt))


def splat_value(op: ConstantOp) -> float | int | bool | None:
    """The single value of a splat constant, else None."""
    if not is_splat(op.value):
        return None
    flat = constant_array(op.value).reshape(-1)[:1]
    if flat.size == 0:
        return 0
    return bool(flat[0]) if flat.dtype == bool else (int(flat[0]) if flat.dtype.kind in "iu" else float(flat[0]))


def is_splat(value: DenseIntOrFPElementsAttr) -> bool:
    """Whether every element of the constant is the same (checked on its bytes)."""
    flat = stored_values(value)
    return flat.size <= 1 or bool((flat == flat[0]).all())


def dense_attr(array: np.ndarray, element_type: Attribute) -> DenseIntOrFPElementsAttr:
    """A dense constant of `array`'s values, packed from its bytes (xDSL's own layout:
    little-endian elements, i1 true as -1, splats stored in full)."""
    array = np.asarray(array)
    if isinstance(element_type, BFloat16Type):
        raw = array.astype(ml_dtypes.bfloat16)
    elif isinstance(element_type, IntegerType) and element_type.width.data == 1:
        raw = -array.astype(bool).astype(np.int8)
    else:
        assert isinstance(element_type, StructPackableType), element_type  # every other fsir element type
        raw = array.astype(np.dtype(element_type.format))
    # The element types numpy_dtype accepts are all dense-element types.
    t = cast(TensorType[AnyDenseElement], tensor(element_type, array.shape))
    return DenseIntOrFPElementsAttr(t, BytesAttr(np.ascontiguousarray(raw).tobytes()))
