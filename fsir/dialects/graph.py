"""The graph dialect: tensor ops with no scheduling decisions yet.

Users write this level by hand and importers produce it, so its syntax is a contract:

    %y = graph.exp %x : tensor<4x8xf32>
    %z = graph.add %x, %w : tensor<4x8xf32>
    %c = graph.compare gt %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %b = graph.broadcast %v dims [0] : (tensor<4xf32>) -> tensor<4x8xf32>
    %m = graph.reduce sum %x dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>

Every op carries an op-class trait (light elementwise, expensive elementwise, reduction,
gather, compute-intensive) that fusion and code generation key on, a shape rule
(`reify_dims`, written over a `DimBuilder` index algebra: `infer_type` runs it on static
shapes for the verifier and shape inference, code generation on runtime sizes), an index
rule (`operand_indices`: which operand elements one result element reads). What each
op computes in numpy is `fsir/interpreters/graph.py`, apart from the op. Elementwise
ops are rows of the `ELEMENTWISE` table: adding one is a one-line change there.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    AnyDenseElement,
    ArrayAttr,
    BFloat16Type,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    StructPackableType,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import HasCanonicalizationPatternsTrait, OpTrait, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

# ---------------------------------------------------------------------------
# Op classes (docs/architecture.md, "Levels and passes"): every later stage keys on these.
# ---------------------------------------------------------------------------


class OpClass(StrEnum):
    """What fusion and code generation key on (FusionStitching §3)."""

    LIGHT = "light"
    EXPENSIVE = "expensive"
    REDUCTION = "reduction"
    GATHER = "gather"
    COMPUTE = "compute"


@dataclass(frozen=True)
class OpClassTrait(OpTrait):
    """Base of the five op-class traits, one per `OpClass`."""

    kind: ClassVar[OpClass]


@dataclass(frozen=True)
class LightElementwise(OpClassTrait):
    """Cheap per-element work or pure index mapping; inlined into consumers."""

    kind = OpClass.LIGHT


@dataclass(frozen=True)
class ExpensiveElementwise(OpClassTrait):
    """Per-element work expensive enough to be worth computing once (a sub-root candidate)."""

    kind = OpClass.EXPENSIVE


@dataclass(frozen=True)
class Reduction(OpClassTrait):
    kind = OpClass.REDUCTION


@dataclass(frozen=True)
class Gather(OpClassTrait):
    kind = OpClass.GATHER


@dataclass(frozen=True)
class ComputeIntensive(OpClassTrait):
    """Left to a GEMM kernel (or a library) by fusion."""

    kind = OpClass.COMPUTE


def op_class(op: Operation) -> OpClass | None:
    """The op class of a graph op, None for other ops."""
    for trait in op.traits:
        if isinstance(trait, OpClassTrait):
            return trait.kind
    return None


class GraphCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls):
        from fsir.transforms.canonicalize import graph_patterns

        return graph_patterns()


# ---------------------------------------------------------------------------
# Element types and numpy dtypes
# ---------------------------------------------------------------------------

i1 = IntegerType(1)
i32 = IntegerType(32)
f16 = Float16Type()
bf16 = BFloat16Type()
f32 = Float32Type()

FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)
SUPPORTED_ELEMENT_TYPES = "f32, f16, bf16, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64"

# Integer element types: the signless `iN` (as in MLIR's builtin types) are signed
# two's-complement integers, the unsigned `uiN` (IntegerType with Signedness.UNSIGNED)
# are unsigned; ops whose result depends on the interpretation (div, rem, compare,
# max/min, shr, convert) follow the operand type. i1 is the boolean. The explicitly
# signed `siN` spelling is not used: one spelling per type.
INT_WIDTHS = (8, 16, 32, 64)


def unsigned(width: int) -> IntegerType:
    return IntegerType(width, Signedness.UNSIGNED)


def is_float(t: Attribute) -> bool:
    return isinstance(t, FLOAT_TYPES)


def is_int(t: Attribute) -> bool:
    return isinstance(t, IntegerType)


def is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def is_unsigned(t: Attribute) -> bool:
    """An unsigned integer type (`ui8` ... `ui64`)."""
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


# When set, float tensors of every width are held and computed in float64: the reference
# interpreter then estimates how far the f32 reference itself is from exact arithmetic,
# which `fs-run --check` uses to tell rounding from bugs on ill-conditioned models.
_FLOAT64_REFERENCE: ContextVar[bool] = ContextVar("float64_reference", default=False)


@contextmanager
def float64_reference():
    token = _FLOAT64_REFERENCE.set(True)
    try:
        yield
    finally:
        _FLOAT64_REFERENCE.reset(token)


# While set (`tf32_dots()`), the reference rounds f32 dot operands to tf32 as
# `stitch-codegen{precision=tf32}` kernels do (cvt.rna.tf32.f32: 10 mantissa bits, to
# nearest, ties away from zero), so `fs-run --check` compares like with like.
_TF32_DOTS: ContextVar[bool] = ContextVar("tf32_dots", default=False)


@contextmanager
def tf32_dots():
    token = _TF32_DOTS.set(True)
    try:
        yield
    finally:
        _TF32_DOTS.reset(token)


def round_tf32(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to tf32 (finite values; inf and NaN kept)."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32)
    rounded = ((bits.astype(np.uint64) + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(x), rounded, x)


def numpy_dtype(t: Attribute) -> np.dtype:
    """The numpy dtype holding tensors of element type `t` (bf16 via ml_dtypes)."""
    if _FLOAT64_REFERENCE.get() and isinstance(t, FLOAT_TYPES):
        return np.dtype(np.float64)
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, BFloat16Type):
        return np.dtype(ml_dtypes.bfloat16)
    if isinstance(t, Float64Type):
        return np.dtype(np.float64)
    if isinstance(t, IntegerType) and t.signedness.data != Signedness.SIGNED:
        width = t.width.data
        if width == 1 and not is_unsigned(t):
            return np.dtype(np.bool_)
        if width in INT_WIDTHS:
            return np.dtype(f"{'u' if is_unsigned(t) else ''}int{width}")
    raise VerifyException(f"unsupported element type {t}; fsir supports {SUPPORTED_ELEMENT_TYPES}")


def compute_dtype(t: Attribute) -> np.dtype:
    """Arithmetic on f16/bf16 runs in f32 (as on the GPU); other types compute in themselves."""
    if isinstance(t, (Float16Type, BFloat16Type)) and not _FLOAT64_REFERENCE.get():
        return np.dtype(np.float32)
    return numpy_dtype(t)


# ---------------------------------------------------------------------------
# Shapes: `?` is DYNAMIC_INDEX (-1).
# ---------------------------------------------------------------------------

DYN = DYNAMIC_INDEX


def tensor(element_type: Attribute, shape: Sequence[int]) -> TensorType:
    return TensorType(element_type, list(shape))


def shape_of(t: Attribute) -> tuple[int, ...]:
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def dims_compatible(a: int, b: int) -> bool:
    return a == b or a == DYN or b == DYN


def shapes_compatible(a: Sequence[int], b: Sequence[int]) -> bool:
    return len(a) == len(b) and all(dims_compatible(x, y) for x, y in zip(a, b))


def join_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """The most static shape compatible with both (shapes must be compatible)."""
    return tuple(y if x == DYN else x for x, y in zip(a, b))


def fmt_shape(shape: Sequence[int]) -> str:
    return "x".join("?" if d == DYN else str(d) for d in shape) or "scalar"


# ---------------------------------------------------------------------------
# The index algebra shape rules (`reify_dims`) and index rules (`operand_indices`) are
# written in, so that each op's rule exists once and serves every use.
# ---------------------------------------------------------------------------

D = TypeVar("D")


class DimBuilder(Protocol[D]):
    """Index arithmetic on sizes and indices. A value is a Python int (a known size or a
    constant index) or a `D`; conditions are whatever `eq` and `lt` return.

    `StaticDims` evaluates on static shapes (`?` stays `?`) for `infer_type`;
    `fsir.lowering.scalar.IndexBuilder` builds `index` code (D = SSAValue: runtime shapes
    as MLIR's `ReifyRankedShapedTypeOpInterface` reifies them); `fsir.codegen.locality`
    follows which coordinates of a group reach an operand."""

    def add(self, a: D | int, b: D | int) -> D | int: ...
    def sub(self, a: D | int, b: D | int) -> D | int: ...
    def mul(self, a: D | int, b: D | int) -> D | int: ...
    def div(self, a: D | int, b: D | int) -> D | int: ...
    def rem(self, a: D | int, b: D | int) -> D | int: ...
    def eq(self, a: D | int, b: D | int) -> Any: ...
    def lt(self, a: D | int, b: D | int) -> Any: ...
    def select(self, cond: Any, a: D | int, b: D | int) -> D | int: ...

    def linearize(self, idx: Sequence[D | int], dims: Sequence[D | int]) -> D | int:
        """The row-major offset of multi-index `idx` in shape `dims`."""
        out: D | int = 0
        for i, d in zip(idx, dims):
            out = self.add(self.mul(out, d), i)
        return out

    def delinearize(self, linear: D | int, dims: Sequence[D | int]) -> list[D | int]:
        """The row-major multi-index of offset `linear` (< prod(dims)) in shape `dims`;
        the outermost coordinate needs no remainder."""
        out: list[D | int] = []
        for d in reversed(dims[1:]):
            out.append(self.rem(linear, d))
            linear = self.div(linear, d)
        return [linear, *reversed(out)] if dims else []


DimsOf = Callable[[SSAValue], Sequence[Any]]  # a value's dims in the builder's algebra


class StaticDims(DimBuilder[int]):
    """`DimBuilder` on static shapes: ints, DYN where unknown; a condition is True, False
    or None (unknown)."""

    @staticmethod
    def _arith(a: int, b: int, f: Callable[[int, int], int]) -> int:
        return DYN if DYN in (a, b) else f(a, b)

    def add(self, a: int, b: int) -> int:
        return self._arith(a, b, lambda x, y: x + y)

    def sub(self, a: int, b: int) -> int:
        return self._arith(a, b, lambda x, y: x - y)

    def mul(self, a: int, b: int) -> int:
        return self._arith(a, b, lambda x, y: x * y)

    def div(self, a: int, b: int) -> int:
        return DYN if b == 0 else self._arith(a, b, lambda x, y: x // y)

    def rem(self, a: int, b: int) -> int:
        return DYN if b == 0 else self._arith(a, b, lambda x, y: x % y)

    def eq(self, a: int, b: int) -> bool | None:
        return None if DYN in (a, b) else a == b

    def lt(self, a: int, b: int) -> bool | None:
        return None if DYN in (a, b) else a < b

    def select(self, cond: bool | None, a: int, b: int) -> int:
        if cond is None:
            return a if a == b else DYN
        return a if cond else b


STATIC = StaticDims()


def static_dims(v: SSAValue) -> list[int]:
    """`dims_of` for `StaticDims`: the dims of the value's type."""
    return list(shape_of(v.type))


def _prod(b: DimBuilder, xs: Sequence) -> Any:
    out = 1
    for x in xs:
        out = b.mul(out, x)
    return out


@dataclass(frozen=True)
class DimAgreement:
    """Two sizes (in some `DimBuilder` algebra) that must agree at run time: equal, or
    (`FIRST_MAY_BE_1`) the first is 1 — an operand dim a broadcast stretches. `what`
    names them for the error message."""

    EQUAL: ClassVar[str] = "equal"
    FIRST_MAY_BE_1: ClassVar[str] = "first may be 1"

    what: str
    first: Any
    second: Any
    kind: str = EQUAL


# ---------------------------------------------------------------------------
# Custom syntax shared by all graph ops
# ---------------------------------------------------------------------------


def _parse_int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)


def _print_int_list(printer: Printer, values: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(str(v) for v in values) + "]")


class GraphOp(IRDLOperation):
    """Base of graph ops with the syntax
    `graph.NAME [keyword] operands (kw ints)* attr-dict : types`.

    `KEYWORD_PROP` names a property printed as a bare word right after the op name
    (compare direction, reduction kind), of the typed enum attribute `KEYWORD_ENUM`; `INT_PROPS`
    lists `(keyword, property, is_list)` printed after the operands; `SHORT_TYPE`
    selects `: T` (operands and result all of type T) where it applies; such ops also
    accept and print `: (T1, ...) -> T` when the types differ (e.g. a static operand
    and a `?` result before shape inference).
    """

    KEYWORD_PROP: ClassVar[str | None] = None
    KEYWORD_ENUM: ClassVar[type[EnumAttribute[Any]] | None] = None
    INT_PROPS: ClassVar[tuple[tuple[str, str, bool], ...]] = ()
    SHORT_TYPE: ClassVar[bool] = False

    # -- syntax ------------------------------------------------------------

    @classmethod
    def parse(cls, parser: Parser):
        props: dict[str, Attribute] = {}
        if cls.KEYWORD_PROP is not None:
            enum = cls.KEYWORD_ENUM
            assert enum is not None, f"{cls.name} names KEYWORD_PROP without KEYWORD_ENUM"
            choices = cls.keyword_choices()
            word = parser.parse_keyword_in(choices, f" ({', '.join(choices)})")
            props[cls.KEYWORD_PROP] = enum(enum.enum_type(word))
        operands: list[UnresolvedOperand] = []
        first = parser.parse_optional_unresolved_operand()
        if first is not None:
            operands.append(first)
            while parser.parse_optional_punctuation(","):
                operands.append(parser.parse_unresolved_operand())
        for keyword, prop, is_list in cls.INT_PROPS:
            parser.parse_keyword(keyword)
            if is_list:
                props[prop] = DenseArrayBase.from_list(i64, _parse_int_list(parser))
            else:
                props[prop] = _int_attr(parser.parse_integer())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        if cls.SHORT_TYPE and not parser.parse_optional_punctuation("("):
            t = parser.parse_type()
            operand_types: list[Attribute] = [t] * len(operands)
            result_type = t
        else:
            if cls.SHORT_TYPE:  # the `(` is already consumed
                operand_types = []
                if not parser.parse_optional_punctuation(")"):
                    operand_types.append(parser.parse_type())
                    while parser.parse_optional_punctuation(","):
                        operand_types.append(parser.parse_type())
                    parser.parse_punctuation(")")
            else:
                operand_types = parser.parse_comma_separated_list(
                    parser.Delimiter.PAREN, parser.parse_type
                )
            parser.parse_punctuation("->")
            result_type = parser.parse_type()
            if len(operand_types) != len(operands):
                parser.raise_error(
                    f"expected {len(operands)} operand types, got {len(operand_types)}",
                    pos,
                    parser.pos,
                )
        resolved = [parser.resolve_operand(o, t) for o, t in zip(operands, operand_types)]
        op = cls.build(operands=cls._group_operands(resolved), result_types=[result_type],
                       properties=props, attributes=attrs)
        return op

    @classmethod
    def _group_operands(cls, operands: list[SSAValue]) -> list:
        """Map the flat operand list onto the op's operand definitions."""
        return list(operands)

    @classmethod
    def keyword_choices(cls) -> tuple[str, ...]:
        """The words the `KEYWORD_PROP` keyword may be."""
        enum = cls.KEYWORD_ENUM
        return () if enum is None else tuple(e.value for e in enum.enum_type)

    def print(self, printer: Printer):
        if self.KEYWORD_PROP is not None:
            keyword = self.properties[self.KEYWORD_PROP]
            assert isinstance(keyword, EnumAttribute)
            printer.print_string(" " + str(keyword.data))
        if self.operands:
            printer.print_string(" ")
            printer.print_list(self.operands, printer.print_operand)
        for keyword, prop, is_list in self.INT_PROPS:
            printer.print_string(f" {keyword} ")
            if is_list:
                _print_int_list(printer, _dims(self, prop))
            else:
                value = self.properties[prop]
                assert isinstance(value, IntegerAttr)
                printer.print_string(str(value.value.data))
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if self.SHORT_TYPE and all(o.type == self.results[0].type for o in self.operands):
            printer.print_attribute(self.results[0].type)
        else:
            printer.print_string("(")
            printer.print_list([o.type for o in self.operands], printer.print_attribute)
            printer.print_string(") -> ")
            printer.print_attribute(self.results[0].type)

    # -- semantics ---------------------------------------------------------

    def infer_type(self) -> TensorType:
        """The result type implied by the operands and properties (`?` where unknown).

        Raises VerifyException when operands or properties are invalid."""
        raise NotImplementedError

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        """The result's dims from the operands' dims (`dims_of(v)`) in algebra `b`: the
        runtime shape with `fsir.lowering.scalar.IndexBuilder`, the static one with
        `StaticDims`. A dim the rule cannot determine is DYN. The default: the result
        type's shape (ops without operands)."""
        return list(shape_of(self.result_type))

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list] | None:
        """The index of each operand that reading the result at `idx` reads; None when
        the op has no per-element rule (a reduction, a dot, a gather: its table row is
        data)."""
        return None

    def agreeing_dims(self, dims_of: DimsOf, b: DimBuilder) -> list[DimAgreement]:
        """The run-time sizes of operand and result dims that must agree for the op to
        be defined (e.g. the `?` dims of an elementwise op's operands): the shape rule
        reads one of them, and the kernel would read the others out of bounds. The
        host checks each pair before a launch (fsir/lowering/shapes.py). Default: none."""
        return []

    def verify_(self) -> None:
        for operand in self.operands:
            if not isinstance(operand.type, TensorType):
                raise VerifyException(f"operand of {self.name} must be a tensor, got {operand.type}")
            numpy_dtype(operand.type.element_type)
        result = self.results[0].type
        if not isinstance(result, TensorType):
            raise VerifyException(f"result of {self.name} must be a tensor, got {result}")
        numpy_dtype(result.element_type)
        expected = self.infer_type()
        if expected.element_type != result.element_type:
            raise VerifyException(
                f"result element type {result.element_type} does not match the expected "
                f"{expected.element_type}"
            )
        if not shapes_compatible(shape_of(expected), shape_of(result)):
            raise VerifyException(
                f"result shape {fmt_shape(shape_of(result))} does not match the expected "
                f"{fmt_shape(shape_of(expected))}"
            )
        dims = self.attributes.get(DIMS_ATTR)
        if dims is not None:  # symbolic dims (the symbolic-dims pass) describe the result
            if not isinstance(dims, DimsAttr):
                raise VerifyException(f"{DIMS_ATTR} must be a #graph.dims, got {dims}")
            dims.check_type(result, "the result")

    @property
    def result_type(self) -> TensorType:
        return tensor_type(self.results[0])


def tensor_type(value: SSAValue) -> TensorType:
    """The type of a graph value, a tensor (the op definitions constrain it)."""
    t = value.type
    assert isinstance(t, TensorType), t
    return t


def _int_attr(value: int) -> IntegerAttr[I64]:
    return IntegerAttr(value, i64)


def _operand_types(op: Operation) -> list[TensorType]:
    return [tensor_type(o) for o in op.operands]


def _check_dims(dims: Sequence[int], rank: int, what: str, unique: bool = True) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise VerifyException(f"{what} {d} is out of range for rank {rank}")
    if unique and len(set(dims)) != len(dims):
        raise VerifyException(f"{what}s {list(dims)} contain duplicates")


def _same_shape_dims(self: GraphOp, dims_of: DimsOf, b: DimBuilder) -> list:
    """Shape rule of ops whose operands all have the result's shape: a dim is static
    when any operand's is, else the first operand's."""
    shapes = [shape_of(o.type) for o in self.operands]
    first: Sequence | None = None
    out: list = []
    for i in range(len(shapes[0])):
        static = next((s[i] for s in shapes if s[i] != DYN), DYN)
        if static == DYN:
            first = dims_of(self.operands[0]) if first is None else first
            out.append(first[i])
        else:
            out.append(static)
    return out


def _same_shape_agreement(self: GraphOp, dims_of: DimsOf, b: DimBuilder, skip: int | None = None) -> list:
    """What `_same_shape_dims` assumes: in each dim (but `skip`), every operand has the
    size of the operand the rule takes it from."""
    shapes = [shape_of(o.type) for o in self.operands]
    out: list[DimAgreement] = []
    for i in range(len(shapes[0]) if shapes else 0):
        if i == skip:
            continue
        ref = next((j for j, s in enumerate(shapes) if s[i] != DYN), 0)
        for j, s in enumerate(shapes):
            if j != ref and s[i] == DYN:
                out.append(DimAgreement(f"dim {i} of operands {ref} and {j}", dims_of(self.operands[ref])[i],
                                        dims_of(self.operands[j])[i]))
    return out


def _same_index(self: GraphOp, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list] | None:
    """Index rule of elementwise ops: every operand is read at the result's index."""
    return [list(idx) for _ in self.operands]


# ---------------------------------------------------------------------------
# Elementwise ops: one table
# ---------------------------------------------------------------------------

# Which element types an elementwise op accepts (INTEGER includes i1, INT does not).
FLOAT, NUMERIC, INTEGER, INT, ANY = "float", "numeric", "integer", "int", "any"


def _accepts(kind: str, t: Attribute) -> bool:
    if kind == FLOAT:
        return is_float(t)
    if kind == NUMERIC:
        return is_float(t) or (is_int(t) and not is_bool(t))
    if kind == INTEGER:
        return is_int(t)
    if kind == INT:
        return is_int(t) and not is_bool(t)
    return True


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C/PTX integer division: truncates toward zero; x / 0 is defined as 0 here."""
    safe = np.where(b == 0, 1, b).astype(a.dtype)
    with np.errstate(over="ignore"):  # (INT_MIN / -1 wraps, as in PTX)
        q = a // safe  # numpy floors; |a| would overflow at INT_MIN
        inexact = a - q * safe != 0
    q = np.where(inexact & ((a < 0) != (safe < 0)), q + 1, q).astype(a.dtype)
    return np.where(b == 0, 0, q).astype(a.dtype)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        return _int_div(a, b)
    return a / b


def _rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        return (a - _int_div(a, b) * np.where(b == 0, 0, b)).astype(a.dtype)
    return np.fmod(a, b)


def _shift_amount(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(whether the amount is at least the width, the amount clamped below it): amounts
    are read as unsigned, so a negative one is a huge shift (as PTX clamps them)."""
    bits = a.dtype.itemsize * 8
    amount = b.astype(a.dtype).view(f"u{a.dtype.itemsize}")
    return amount >= bits, np.minimum(amount, bits - 1).astype(a.dtype)


def _shl(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a << b; amounts of at least the width give 0."""
    wide, amount = _shift_amount(a, b)
    return np.where(wide, a.dtype.type(0), np.left_shift(a, amount)).astype(a.dtype)


def _shr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a >> b: arithmetic for signed types (amounts of at least the width fill with the
    sign), logical for unsigned ones (they give 0)."""
    wide, amount = _shift_amount(a, b)
    shifted = np.right_shift(a, amount)
    if a.dtype.kind == "u":
        return np.where(wide, a.dtype.type(0), shifted).astype(a.dtype)
    return shifted.astype(a.dtype)  # a >> (width - 1) already is the sign fill


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.power(a, b)
    # square and multiply over the exponent's bits, wrapping like the integer type
    acc = np.ones_like(a)
    base = a.copy()
    bits = np.where(b < 0, 0, b).astype(f"u{a.dtype.itemsize}")
    with np.errstate(over="ignore"):
        for _ in range(a.dtype.itemsize * 8):
            acc = np.where(bits & 1, acc * base, acc)
            base = base * base
            bits = bits >> 1
    if a.dtype.kind == "u":
        return acc
    # 1 / x^n truncated: +-1 for x = +-1, else 0 (x = 0 included: x / 0 is 0 here)
    odd = (b & 1).astype(bool)
    inverse = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(a.dtype)
    return np.where(b < 0, inverse, acc).astype(a.dtype)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    one = x.dtype.type(1)
    return one / (one + np.exp(-x))


def _erf(x: np.ndarray) -> np.ndarray:
    # scipy is imported on first use: it is most of `import fsir.dialects.graph`'s time
    from scipy import special

    return special.erf(x)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return x.dtype.type(1) / np.sqrt(x)


@dataclass(frozen=True)
class Elementwise:
    """One elementwise op: arity, op class, accepted element types, numpy reference.

    `lower` builds the scalar code of one element at the gpu level: it gets a
    `fsir.lowering.scalar.ScalarBuilder` and the operand scalars (f16/bf16 already
    widened to f32) and returns the result scalar.
    """

    arity: int
    op_class: type[OpClassTrait]
    types: str
    ref: Callable[..., np.ndarray]
    lower: Callable[..., SSAValue]
    doc: str = ""


L, E = LightElementwise, ExpensiveElementwise

# fmt: off
ELEMENTWISE: dict[str, Elementwise] = {
    # unary
    "neg":     Elementwise(1, L, NUMERIC, np.negative,  lambda b, x: b.neg(x)),
    "abs":     Elementwise(1, L, NUMERIC, np.abs,       lambda b, x: b.abs(x)),
    "not":     Elementwise(1, L, INTEGER, np.invert,    lambda b, x: b.not_(x), "bitwise not (logical on i1)"),
    "floor":   Elementwise(1, L, FLOAT,   np.floor,     lambda b, x: b.math("floor", x)),
    "ceil":    Elementwise(1, L, FLOAT,   np.ceil,      lambda b, x: b.math("ceil", x)),
    "exp":     Elementwise(1, E, FLOAT,   np.exp,       lambda b, x: b.math("exp", x)),
    "log":     Elementwise(1, E, FLOAT,   np.log,       lambda b, x: b.math("log", x)),
    "tanh":    Elementwise(1, E, FLOAT,   np.tanh,      lambda b, x: b.math("tanh", x)),
    "erf":     Elementwise(1, E, FLOAT,   _erf,         lambda b, x: b.math("erf", x)),
    "sqrt":    Elementwise(1, E, FLOAT,   np.sqrt,      lambda b, x: b.math("sqrt", x)),
    "rsqrt":   Elementwise(1, E, FLOAT,   _rsqrt,       lambda b, x: b.math("rsqrt", x)),
    "sigmoid": Elementwise(1, E, FLOAT,   _sigmoid,     lambda b, x: b.sigmoid(x), "1 / (1 + exp(-x))"),
    "round":   Elementwise(1, L, FLOAT,   np.rint,      lambda b, x: b.round_even(x), "half to even"),
    "sin":     Elementwise(1, E, FLOAT,   np.sin,       lambda b, x: b.trig("sin", x)),
    "cos":     Elementwise(1, E, FLOAT,   np.cos,       lambda b, x: b.trig("cos", x)),
    "tan":     Elementwise(1, E, FLOAT,   np.tan,       lambda b, x: b.trig("tan", x)),
    "asin":    Elementwise(1, E, FLOAT,   np.arcsin,    lambda b, x: b.trig("asin", x)),
    "acos":    Elementwise(1, E, FLOAT,   np.arccos,    lambda b, x: b.trig("acos", x)),
    "atan":    Elementwise(1, E, FLOAT,   np.arctan,    lambda b, x: b.trig("atan", x)),
    "sinh":    Elementwise(1, E, FLOAT,   np.sinh,      lambda b, x: b.trig("sinh", x)),
    "cosh":    Elementwise(1, E, FLOAT,   np.cosh,      lambda b, x: b.trig("cosh", x)),
    "asinh":   Elementwise(1, E, FLOAT,   np.arcsinh,   lambda b, x: b.trig("asinh", x)),
    "acosh":   Elementwise(1, E, FLOAT,   np.arccosh,   lambda b, x: b.trig("acosh", x)),
    "atanh":   Elementwise(1, E, FLOAT,   np.arctanh,   lambda b, x: b.trig("atanh", x)),
    # binary
    "add":     Elementwise(2, L, NUMERIC, np.add,       lambda b, x, y: b.arith("add", x, y)),
    "sub":     Elementwise(2, L, NUMERIC, np.subtract,  lambda b, x, y: b.arith("sub", x, y)),
    "mul":     Elementwise(2, L, NUMERIC, np.multiply,  lambda b, x, y: b.arith("mul", x, y)),
    "max":     Elementwise(2, L, NUMERIC, np.maximum,   lambda b, x, y: b.max(x, y), "NaN-propagating"),
    "min":     Elementwise(2, L, NUMERIC, np.minimum,   lambda b, x, y: b.min(x, y), "NaN-propagating"),
    "and":     Elementwise(2, L, INTEGER, np.bitwise_and, lambda b, x, y: b.arith("and", x, y)),
    "or":      Elementwise(2, L, INTEGER, np.bitwise_or,  lambda b, x, y: b.arith("or", x, y)),
    "xor":     Elementwise(2, L, INTEGER, np.bitwise_xor, lambda b, x, y: b.arith("xor", x, y)),
    "shl":     Elementwise(2, L, INT,     _shl,         lambda b, x, y: b.shift("shl", x, y),
                           "amounts read as unsigned; at least the width gives 0"),
    "shr":     Elementwise(2, L, INT,     _shr,         lambda b, x, y: b.shift("shr", x, y),
                           "arithmetic on signed, logical on unsigned types"),
    "div":     Elementwise(2, E, NUMERIC, _div,         lambda b, x, y: b.arith("div", x, y),
                           "integers truncate toward zero"),
    "rem":     Elementwise(2, E, NUMERIC, _rem,         lambda b, x, y: b.arith("rem", x, y), "sign of the dividend"),
    "pow":     Elementwise(2, E, NUMERIC, _pow,         lambda b, x, y: b.pow(x, y),
                           "integers: exact and wrapping, x^-n is 1 / x^n truncated toward zero"),
}
# fmt: on


class ElementwiseOp(GraphOp):
    """Base of the ops generated from `ELEMENTWISE`."""

    SPEC: ClassVar[Elementwise]
    SHORT_TYPE: ClassVar = True
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), GraphCanonicalization())

    @classmethod
    def _group_operands(cls, operands):
        return [operands]

    def infer_type(self) -> TensorType:
        spec = self.SPEC
        types = _operand_types(self)
        if len(types) != spec.arity:
            raise VerifyException(f"expected {spec.arity} operands, got {len(types)}")
        elem = types[0].element_type
        if not _accepts(spec.types, elem):
            raise VerifyException(f"does not accept element type {elem} ({spec.types} types only)")
        shape = shape_of(types[0])
        for t in types[1:]:
            if t.element_type != elem:
                raise VerifyException(f"operand element types differ: {elem} and {t.element_type}")
            if not shapes_compatible(shape, shape_of(t)):
                raise VerifyException(
                    f"operand shapes differ: {fmt_shape(shape)} and {fmt_shape(shape_of(t))} "
                    "(broadcast explicitly with graph.broadcast)"
                )
            shape = join_shapes(shape, shape_of(t))
        return tensor(elem, self.reify_dims(static_dims, STATIC))

    reify_dims = _same_shape_dims
    operand_indices = _same_index
    agreeing_dims = _same_shape_agreement


def _make_elementwise(name: str, spec: Elementwise) -> type[ElementwiseOp]:
    operands = ", ".join(["%x", "%w"][: spec.arity])
    note = f" ({spec.doc})" if spec.doc else ""
    doc = (
        f"Elementwise {name}{note}; {spec.op_class.kind} op on {spec.types} tensors.\n\n"
        f"    %y = graph.{name} {operands} : tensor<4x8xf32>\n"
    )
    cls_name = "".join(p.capitalize() for p in name.split("_")) + "Op"
    cls = type(cls_name, (ElementwiseOp,), {
        "__doc__": doc, "__module__": __name__, "__qualname__": cls_name,
        "name": f"graph.{name}", "SPEC": spec, "__annotations__": {"SPEC": "ClassVar[Elementwise]"},
        "traits": traits_def(Pure(), GraphCanonicalization(), spec.op_class()),
    })
    return irdl_op_definition(cls)


ELEMENTWISE_OPS: dict[str, type[ElementwiseOp]] = {
    name: _make_elementwise(name, spec) for name, spec in ELEMENTWISE.items()
}
globals().update({cls.__name__: cls for cls in ELEMENTWISE_OPS.values()})


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
        a, b = _operand_types(self)
        if a.element_type != b.element_type:
            raise VerifyException(f"operand element types differ: {a.element_type} and {b.element_type}")
        if not shapes_compatible(shape_of(a), shape_of(b)):
            raise VerifyException(f"operand shapes differ: {fmt_shape(shape_of(a))} and {fmt_shape(shape_of(b))}")
        return tensor(i1, self.reify_dims(static_dims, STATIC))

    reify_dims = _same_shape_dims
    operand_indices = _same_index
    agreeing_dims = _same_shape_agreement


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
        c, a, b = _operand_types(self)
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

    reify_dims = _same_shape_dims
    operand_indices = _same_index
    agreeing_dims = _same_shape_agreement


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

    operand_indices = _same_index


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

    operand_indices = _same_index


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


@irdl_op_definition
class IotaOp(GraphOp):
    """Indices along one dimension.

        %i = graph.iota dim 1 : tensor<4x8xi32>

    A `?` result dim takes its size from the optional `like` operand, as a broadcast's
    does (only its sizes are read, never its elements). Without `dims`, `like` has the
    result's rank and shape; with `dims`, result dim i has the size of `like`'s dim
    dims[i], or is static where dims[i] is -1, so a rank-1 iota can count along one dim
    of a larger value (ONNX's `Range(0, Shape(x)[1], 1)`):

        %p = graph.iota dim 0 like %ids dims [1] : (tensor<?x?xi64>) -> tensor<?xi64>
    """

    name = "graph.iota"
    dim = prop_def(IntegerAttr[I64])
    like_dims = opt_prop_def(DenseArrayBase[I64])
    like = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise())

    @classmethod
    def parse(cls, parser: Parser):
        parser.parse_keyword("dim")
        props: dict[str, Attribute] = {"dim": _int_attr(parser.parse_integer())}
        like: UnresolvedOperand | None = None
        if parser.parse_optional_keyword("like") is not None:
            like = parser.parse_unresolved_operand()
            if parser.parse_optional_keyword("dims") is not None:
                props["like_dims"] = DenseArrayBase.from_list(i64, _parse_int_list(parser))
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        operands: list[SSAValue] = []
        if like is not None:  # `: (like type) -> result type`
            pos = parser.pos
            types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
            if len(types) != 1:
                parser.raise_error(f"expected 1 operand type, got {len(types)}", pos, parser.pos)
            parser.parse_punctuation("->")
            operands.append(parser.resolve_operand(like, types[0]))
        result_type = parser.parse_type()
        return cls.build(operands=cls._group_operands(operands), result_types=[result_type], properties=props,
                         attributes=attrs)

    @classmethod
    def _group_operands(cls, operands):
        return [list(operands)]  # the one optional `like`

    def print(self, printer: Printer):
        printer.print_string(f" dim {self.dim.value.data}")
        if self.like is not None:
            printer.print_string(" like ")
            printer.print_operand(self.like)
        if self.like_dims is not None:
            printer.print_string(" dims ")
            _print_int_list(printer, _dims(self, "like_dims"))
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if self.like is not None:
            printer.print_string("(")
            printer.print_attribute(self.like.type)
            printer.print_string(") -> ")
        printer.print_attribute(self.result_type)

    def _like_shape(self) -> list[int] | None:
        """`like`'s sizes as the result's dims see them (through `dims`), or None
        without `like`; a -1 entry of `dims` stands for the result's own size."""
        if self.like is None:
            return None
        like, out = shape_of(self.like.type), shape_of(self.result_type)
        if self.like_dims is None:
            return list(like)
        return [like[k] if k >= 0 else out[i] for i, k in enumerate(_dims(self, "like_dims"))]

    def _check_like(self, out: Sequence[int]) -> None:
        if self.like is None:
            if self.like_dims is not None:
                raise VerifyException("'dims' needs a 'like' operand")
            return
        like = shape_of(self.like.type)
        if self.like_dims is not None:
            dims = _dims(self, "like_dims")
            if len(dims) != len(out):
                raise VerifyException(f"dims has {len(dims)} entries but the result has rank {len(out)}")
            for i, k in enumerate(dims):
                if not -1 <= k < len(like):
                    raise VerifyException(f"dims entry {k} is out of range for the 'like' operand's rank {len(like)}")
                if k == -1 and out[i] == DYN:
                    raise VerifyException(f"result dim {i} is '?' but takes no dim of the 'like' operand "
                                          "(dims entry -1)")
        mapped = self._like_shape()
        assert mapped is not None
        if not shapes_compatible(mapped, out):
            raise VerifyException(f"the 'like' operand's shape {fmt_shape(like)} is not compatible with the result "
                                  f"shape {fmt_shape(out)}")

    def infer_type(self) -> TensorType:
        t = self.result_type
        out = shape_of(t)
        _check_dims([self.dim.value.data], len(out), "iota dimension")
        if not (is_int(t.element_type) or is_float(t.element_type)) or is_bool(t.element_type):
            raise VerifyException(f"iota needs an integer or float element type, got {t.element_type}")
        self._check_like(out)
        mapped = self._like_shape()
        return t if mapped is None else tensor(t.element_type, join_shapes(out, mapped))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        """A `?` result dim is the size of the `like` dim it maps to."""
        out: list = list(shape_of(self.result_type))
        if self.like is None:
            return out
        like = dims_of(self.like)
        dims = _dims(self, "like_dims") if self.like_dims is not None else range(len(out))
        return [like[k] if s == DYN else s for s, k in zip(out, dims)]

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        """`like` gives sizes, not elements: no coordinate of it is read (0 stands for
        that, so index analyses see an invariant, never a data-dependent, read)."""
        return [[0] * len(shape_of(o.type)) for o in self.operands]


# ---------------------------------------------------------------------------
# Index-only (light) ops
# ---------------------------------------------------------------------------


def _dims(op: Operation, prop: str) -> tuple[int, ...]:
    """The values of an op's `DenseArrayBase[I64]` property `prop`."""
    value = op.properties[prop]
    assert isinstance(value, DenseArrayBase) and isinstance(value.elt_type, IntegerType)
    return cast(DenseArrayBase[IntegerType], value).get_values()


@irdl_op_definition
class BroadcastOp(GraphOp):
    """StableHLO broadcast_in_dim: operand dim i goes to result dim dims[i]; an operand
    dim must equal its result dim or be 1.

        %b = graph.broadcast %v dims [0] : (tensor<4xf32>) -> tensor<4x8xf32>

    A `?` result dim that no operand dim gives takes its size from the optional `like`
    operand, a tensor of the result's rank whose shape is the result's (only its sizes
    are read, never its elements; like `stablehlo.dynamic_broadcast_in_dim`'s output
    dimensions, or `tensor.empty(%d)`'s sizes):

        %b = graph.broadcast %m dims [0] like %x : (tensor<6xf32>, tensor<6x?xf32>) -> tensor<6x?xf32>

    With `like`, every `?` result dim is `like`'s size, and an operand dim mapped to
    it must have that size at run time (the host checks it before the launch): only a
    static 1 expands, as stablehlo's `known_nonexpanding_dimensions` would state it,
    so a row kernel knows that row r of the result reads row r of the operand.
    """

    name = "graph.broadcast"
    INT_PROPS: ClassVar = (("dims", "dims", True),)
    dims = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    like = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    @classmethod
    def parse(cls, parser: Parser):
        pos = parser.pos
        operands = [parser.parse_unresolved_operand()]
        parser.parse_keyword("dims")
        dims = _parse_int_list(parser)
        if parser.parse_optional_keyword("like") is not None:
            operands.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        if len(types) != len(operands):
            parser.raise_error(f"expected {len(operands)} operand types, got {len(types)}", pos, parser.pos)
        resolved: list[SSAValue] = [parser.resolve_operand(o, t) for o, t in zip(operands, types)]
        return cls.build(operands=cls._group_operands(resolved), result_types=[result_type],
                         properties={"dims": DenseArrayBase.from_list(i64, dims)}, attributes=attrs)

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(" dims ")
        _print_int_list(printer, _dims(self, "dims"))
        if self.like is not None:
            printer.print_string(" like ")
            printer.print_operand(self.like)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_list([o.type for o in self.operands], printer.print_attribute)
        printer.print_string(") -> ")
        printer.print_attribute(self.result_type)

    @classmethod
    def _group_operands(cls, operands):
        return [operands[0], list(operands[1:])]

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        out = list(shape_of(self.result_type))
        dims = _dims(self, "dims")
        if len(dims) != len(src):
            raise VerifyException(f"dims has {len(dims)} entries but the operand has rank {len(src)}")
        _check_dims(dims, len(out), "broadcast dimension")
        if list(dims) != sorted(dims):
            raise VerifyException(f"dims {list(dims)} must be increasing (use graph.transpose to permute)")
        if self.like is not None:
            like = shape_of(self.like.type)
            if not shapes_compatible(like, out):
                raise VerifyException(f"the 'like' operand's shape {fmt_shape(like)} is not compatible with "
                                      f"the result shape {fmt_shape(out)}")
            out = list(join_shapes(out, like))
        for i, d in enumerate(dims):
            if src[i] not in (1, DYN) and out[d] != DYN and src[i] != out[d]:
                raise VerifyException(
                    f"operand dim {i} of size {src[i]} cannot broadcast to result dim {d} of size {out[d]}"
                )
        inferred = self.reify_dims(static_dims, STATIC)
        for i, d in enumerate(dims):
            if src[i] == 1:  # the type keeps a `?` that a size-1 dim would stretch to
                inferred[d] = out[d]
        return tensor(tensor_type(self.input).element_type, inferred)

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        """A `?` result dim is `like`'s size when `like` is given, else its operand
        dim's size (1 for a size-1 operand dim, as the reference computes); a `?`
        result dim nothing gives is undetermined."""
        out: list = list(shape_of(self.result_type))
        if self.like is not None:
            like = dims_of(self.like)
            return [like[d] if s == DYN else s for d, s in enumerate(out)]
        src = dims_of(self.input)
        for i, d in enumerate(_dims(self, "dims")):
            if out[d] == DYN:
                out[d] = src[i]
        return out

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        """Only the operand is read (`like` gives sizes, not elements)."""
        src, out = shape_of(self.input.type), shape_of(self.result_type)
        sidx: list = []
        for i, d in enumerate(_dims(self, "dims")):
            if src[i] == 1:
                sidx.append(0)
            elif src[i] == DYN and out[d] != DYN:  # a `?` dim is stretched when it is 1 at run time
                sidx.append(b.select(b.eq(dims_of(self.input)[i], 1), 0, idx[d]))
            else:
                sidx.append(idx[d])
        return [sidx]

    def agreeing_dims(self, dims_of: DimsOf, b: DimBuilder) -> list[DimAgreement]:
        """An operand dim has its result dim's size (trivially so when it gives it), or
        is a `?` that is 1 when the result dim is static."""
        src, sizes, out = shape_of(self.input.type), dims_of(self.input), self.reify_dims(dims_of, b)
        static_out = shape_of(self.result_type)
        return [DimAgreement(f"operand dim {i} and result dim {d}", sizes[i], out[d],
                             DimAgreement.FIRST_MAY_BE_1 if static_out[d] != DYN else DimAgreement.EQUAL)
                for i, d in enumerate(_dims(self, "dims")) if src[i] != 1]


def _kept_dynamic_dims(src: Sequence[int], out: Sequence[int]) -> dict[int, int]:
    """The `?` dims a reshape of the same dynamic structure keeps, as {result dim:
    operand dim}: when the shapes are equal but for static size-1 dims (an unsqueeze
    or squeeze, as [B, S] -> [B, 1, 1, S]), every `?` dim in order; else the leading
    dims `?` in both when every later dim of both is static and the two hold equally
    many elements (a reshape of the trailing dims, as [B, S, 768] -> [B, S, 12, 64]).
    Empty when neither holds."""
    src_kept = [i for i, d in enumerate(src) if d != 1]
    out_kept = [i for i, d in enumerate(out) if d != 1]
    if [src[i] for i in src_kept] == [out[i] for i in out_kept]:
        return {j: i for i, j in zip(src_kept, out_kept) if src[i] == DYN}
    kept = 0
    while kept < min(len(src), len(out)) and src[kept] == DYN and out[kept] == DYN:
        kept += 1
    rest_src, rest_out = src[kept:], out[kept:]
    if DYN in rest_src or DYN in rest_out or math.prod(rest_src) != math.prod(rest_out):
        return {}
    return {i: i for i in range(kept)}


@irdl_op_definition
class ReshapeOp(GraphOp):
    """Same elements, new shape (row-major). At most one result dim may be `?` unless
    the operand has the same dynamic structure (`_kept_dynamic_dims`: equal up to
    size-1 dims, or leading `?` dims then static dims holding as many elements in
    both); then the `?` dims keep the operand's sizes.

        %r = graph.reshape %x : (tensor<4x8xf32>) -> tensor<32xf32>
        %h = graph.reshape %y : (tensor<?x?x768xf32>) -> tensor<?x?x12x64xf32>
    """

    name = "graph.reshape"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        out = list(shape_of(self.result_type))
        if tensor_type(self.input).element_type != self.result_type.element_type:
            raise VerifyException("reshape cannot change the element type (use graph.convert)")
        if DYN not in src:
            n = math.prod(src)
            unknown = [i for i, d in enumerate(out) if d == DYN]
            known = math.prod(d for d in out if d != DYN)
            if not unknown and known != n:
                raise VerifyException(
                    f"cannot reshape {fmt_shape(src)} ({n} elements) to {fmt_shape(out)} ({known} elements)"
                )
            if unknown and (known == 0 or n % known):
                raise VerifyException(f"cannot reshape {fmt_shape(src)} ({n} elements) to {fmt_shape(out)}")
        return tensor(self.result_type.element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        """With the same dynamic structure (`_kept_dynamic_dims`), the `?` dims are the
        operand's; else one `?` result dim holds the elements the static dims
        leave; with more, the result is undetermined."""
        out: list = list(shape_of(self.result_type))
        kept = _kept_dynamic_dims(shape_of(self.input.type), out)
        if kept:
            src = dims_of(self.input)
            return [src[kept[j]] if j in kept else d for j, d in enumerate(out)]
        unknown = [i for i, d in enumerate(out) if d == DYN]
        known = math.prod(d for d in out if d != DYN)
        if len(unknown) == 1 and known:
            out[unknown[0]] = b.div(_prod(b, dims_of(self.input)), known)
        return out

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        return [b.delinearize(b.linearize(idx, dims_of(self.result)), dims_of(self.input))]


@irdl_op_definition
class TransposeOp(GraphOp):
    """Permute dimensions: result dim i is operand dim perm[i].

        %t = graph.transpose %x perm [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
    """

    name = "graph.transpose"
    INT_PROPS: ClassVar = (("perm", "perm", True),)
    perm = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        perm = _dims(self, "perm")
        if sorted(perm) != list(range(len(src))):
            raise VerifyException(f"perm {list(perm)} is not a permutation of {len(src)} dimensions")
        return tensor(tensor_type(self.input).element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        src = dims_of(self.input)
        return [src[p] for p in _dims(self, "perm")]

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        perm = _dims(self, "perm")
        sidx: list = [0] * len(perm)
        for i, p in enumerate(perm):
            sidx[p] = idx[i]
        return [sidx]


@irdl_op_definition
class SliceOp(GraphOp):
    """Strided static slice: result dim i has ceil((limit-start)/stride) elements.

        %l = graph.slice %x start [0, 2] limit [4, 8] strides [1, 2] : (tensor<4x8xf32>) -> tensor<4x3xf32>
    """

    name = "graph.slice"
    INT_PROPS: ClassVar = (("start", "start", True), ("limit", "limit", True), ("strides", "strides", True))
    start = prop_def(DenseArrayBase[I64])
    limit = prop_def(DenseArrayBase[I64])
    strides = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        start, limit, strides = (_dims(self, p) for p in ("start", "limit", "strides"))
        if not len(start) == len(limit) == len(strides) == len(src):
            raise VerifyException(f"start, limit and strides need {len(src)} entries each (the operand rank)")
        for i, (s, l, k) in enumerate(zip(start, limit, strides)):
            if k < 1:
                raise VerifyException(f"stride {k} of dim {i} must be positive")
            if s < 0 or l < s or (src[i] != DYN and l > src[i]):
                raise VerifyException(f"slice [{s}, {l}) of dim {i} is out of bounds for size {fmt_shape([src[i]])}")
        return tensor(tensor_type(self.input).element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        start, limit, strides = (_dims(self, p) for p in ("start", "limit", "strides"))
        return [-(-(l - s) // k) for s, l, k in zip(start, limit, strides)]

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        """A dim the slice keeps whole reads the result's coordinate itself (an index
        algebra that tracks coordinates sees it pass through); others scale and shift."""
        start, limit, strides = (_dims(self, p) for p in ("start", "limit", "strides"))
        src = shape_of(self.input.type)
        return [[i if (s, k, l) == (0, 1, n) else b.add(s, b.mul(i, k))
                 for i, s, l, k, n in zip(idx, start, limit, strides, src)]]


@irdl_op_definition
class ConcatOp(GraphOp):
    """Concatenate along one dimension.

        %n = graph.concat %a, %b dim 0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
    """

    name = "graph.concat"
    INT_PROPS: ClassVar = (("dim", "dim", False),)
    dim = prop_def(IntegerAttr[I64])
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    @classmethod
    def _group_operands(cls, operands):
        return [operands]

    def infer_type(self) -> TensorType:
        types = _operand_types(self)
        if not types:
            raise VerifyException("concat needs at least one operand")
        rank = len(shape_of(types[0]))
        d = self.dim.value.data
        _check_dims([d], rank, "concat dimension")
        out = list(shape_of(types[0]))
        for t in types[1:]:
            s = shape_of(t)
            if t.element_type != types[0].element_type:
                raise VerifyException(f"operand element types differ: {types[0].element_type} and {t.element_type}")
            if len(s) != rank:
                raise VerifyException(f"operand ranks differ: {rank} and {len(s)}")
            for i in range(rank):
                if i == d:
                    continue
                if not dims_compatible(out[i], s[i]):
                    raise VerifyException(f"operand dim {i} sizes differ: {out[i]} and {s[i]}")
                out[i] = join_shapes([out[i]], [s[i]])[0]
        return tensor(types[0].element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        """The concat dim is the operands' sum; the others are shared (see `_same_shape_dims`)."""
        d = self.dim.value.data
        out = _same_shape_dims(self, dims_of, b)
        out[d] = b.add(self.offsets(dims_of, b)[-1], dims_of(self.operands[-1])[d])
        return out

    def agreeing_dims(self, dims_of: DimsOf, b: DimBuilder) -> list[DimAgreement]:
        return _same_shape_agreement(self, dims_of, b, skip=self.dim.value.data)

    def offsets(self, dims_of: DimsOf, b: DimBuilder) -> list:
        """Where each operand starts along the concat dim."""
        d = self.dim.value.data
        out: list = [0]
        for o in self.operands[:-1]:
            out.append(b.add(out[-1], dims_of(o)[d]))
        return out

    def operand_index(self, i: int, idx: Sequence, offsets: Sequence, b: DimBuilder) -> list:
        """The index of operand i holding the result's `idx` (when it lies in its piece)."""
        d = self.dim.value.data
        shifted = list(idx)
        shifted[d] = b.sub(idx[d], offsets[i])
        return shifted

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        """Every operand's index, each valid for the result indices in its piece: a
        reader chooses the operand by `idx[d] < offsets[i + 1]`."""
        offsets = self.offsets(dims_of, b)
        return [self.operand_index(i, idx, offsets, b) for i in range(len(self.operands))]


# ---------------------------------------------------------------------------
# Reduction, gather, dot
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
        dims = _dims(self, "dims")
        _check_dims(dims, len(src), "reduction dimension")
        elem = tensor_type(self.input).element_type
        if is_bool(elem):
            raise VerifyException("cannot reduce i1 tensors (convert them first)")
        return tensor(elem, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        reduced = _dims(self, "dims")
        return [s for i, s in enumerate(dims_of(self.input)) if i not in reduced]


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
        t, ids = _operand_types(self)
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
        a, b = _operand_types(self)
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
# Windows and padding: reduce_window (pooling, LRN, HLO reduce-window), pad
# ---------------------------------------------------------------------------


class PadMode(StrEnum):
    """What `graph.pad` puts in padded positions: a value (`constant`), the nearest
    edge element (`edge`), the mirror image without repeating the edge (`reflect`), or
    the other end of the dim (`wrap`, periodic)."""

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    WRAP = "wrap"


@irdl_attr_definition
class PadModeAttr(EnumAttribute[PadMode], SpacedOpaqueSyntaxAttribute):
    """`#graph<pad_mode reflect>`; printed as the bare word after the op name."""

    name = "graph.pad_mode"


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
        return tuple(_dims(self, p) for p in ("window", "strides", "dilations", "low", "high"))

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


@irdl_op_definition
class PadOp(GraphOp):
    """Pad each dim by `low`/`high` positions (negative: remove them) and `interior`
    positions between neighbours (constant mode only). `constant` pads with the rank-0
    operand `%v`; `edge`, `reflect` and `wrap` with the operand's own elements (see
    `PadMode`), as numpy.pad does. Result dim d has `low + high + n + (n - 1) * interior`
    elements.

        %p = graph.pad constant %x, %v low [0, 1] high [2, -1] interior [0, 0]
               : (tensor<4x8xf32>, tensor<f32>) -> tensor<6x8xf32>
        %r = graph.pad reflect %x low [1, 2] high [1, 2] interior [0, 0] : (tensor<4x8xf32>) -> tensor<6x12xf32>

    A result element reads one operand element (`operand_indices`; in constant mode,
    the clamped position, which the element rule replaces by `%v` outside), so pads
    are light ops that stitch into their consumers.
    """

    name = "graph.pad"
    KEYWORD_PROP: ClassVar = "mode"
    KEYWORD_ENUM: ClassVar = PadModeAttr
    INT_PROPS: ClassVar = (("low", "low", True), ("high", "high", True), ("interior", "interior", True))
    mode = prop_def(PadModeAttr)
    low = prop_def(DenseArrayBase[I64])
    high = prop_def(DenseArrayBase[I64])
    interior = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    value = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    @classmethod
    def _group_operands(cls, operands):
        return [operands[0], operands[1:]]

    @property
    def mode_name(self) -> PadMode:
        return self.mode.data

    def params(self) -> tuple[tuple[int, ...], ...]:
        """(low, high, interior), one entry per dim each."""
        return tuple(_dims(self, p) for p in ("low", "high", "interior"))

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        elem = tensor_type(self.input).element_type
        mode = self.mode_name
        for name, values in zip(("low", "high", "interior"), self.params()):
            if len(values) != len(src):
                raise VerifyException(f"{name} has {len(values)} entries but the operand has rank {len(src)}")
        if (self.value is not None) != (mode == PadMode.CONSTANT):
            raise VerifyException("the padding value operand is required in constant mode and only there")
        if self.value is not None:
            v = tensor_type(self.value)
            if shape_of(v) != () or v.element_type != elem:
                raise VerifyException(f"the padding value must be a tensor<{elem}>, got {v}")
        for d, (n, lo, hi, r) in enumerate(zip(src, *self.params())):
            if r < 0:
                raise VerifyException(f"interior padding {r} of dim {d} must not be negative")
            if (r or lo < 0 or hi < 0) and mode != PadMode.CONSTANT:
                raise VerifyException(f"interior and negative padding need constant mode, not {mode}")
            if n == 0 and mode != PadMode.CONSTANT and (lo > 0 or hi > 0):
                raise VerifyException(f"{mode} padding of the empty dim {d} has no element to repeat")
            if n != DYN and lo + hi + n + max(n - 1, 0) * r < 0:
                raise VerifyException(f"padding {lo}, {hi} of dim {d} removes more than its {n} elements")
        return tensor(elem, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        return [b.add(self._core(n, r, b), lo + hi) for n, lo, hi, r in zip(dims_of(self.input), *self.params())]

    @staticmethod
    def _core(n, r: int, b: DimBuilder):
        """The extent of a dim of size n with r interior positions between neighbours."""
        if not r:
            return n
        return b.select(b.lt(n, 1), 0, b.add(b.mul(b.sub(n, 1), r + 1), 1))

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        """The operand element a result element reads (constant mode: clamped into the
        operand, so it is always a valid position; `inside` tells whether it is used).
        A dim without padding reads the result's coordinate itself."""
        mode = self.mode_name
        out = []
        for i, n, lo, hi, r in zip(idx, dims_of(self.input), *self.params()):
            if (lo, hi, r) == (0, 0, 0):
                out.append(i)
                continue
            t = b.sub(i, lo)
            if mode == PadMode.CONSTANT:
                t = _clamp(t, b.mul(b.sub(n, 1), r + 1), b, lo > 0, hi > 0)
                out.append(b.div(t, r + 1))
            elif mode == PadMode.EDGE:
                out.append(_clamp(t, b.sub(n, 1), b, lo > 0, hi > 0))
            elif mode == PadMode.WRAP:
                # shifted by a multiple of n to be non-negative (index division is unsigned)
                shift = b.mul(n, -(-lo // n)) if isinstance(n, int) else b.mul(n, max(lo, 0))
                out.append(_index_rem(b, b.add(t, shift), n))
            else:  # reflect: period 2(n-1), the second half mirrored
                p = 2 * n - 2 if isinstance(n, int) else b.mul(b.sub(n, 1), 2)
                p = b.select(b.lt(p, 1), 1, p)
                shift = b.mul(p, -(-lo // p)) if isinstance(p, int) else b.mul(p, max(lo, 0))
                m = _index_rem(b, b.add(t, shift), p)
                out.append(b.select(b.lt(m, n), m, b.sub(p, m)))
        return [out, []] if self.value is not None else [out]

    def inside(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list:
        """Constant mode: the conditions (all must hold) under which the result's `idx`
        is an operand element rather than padding; static ones are left out."""
        conds = []
        for i, n, lo, hi, r in zip(idx, dims_of(self.input), *self.params()):
            t = b.sub(i, lo)
            if lo > 0:
                conds.append(b.lt(-1, t))
            if hi > 0 or r:
                conds.append(b.lt(t, b.add(b.mul(b.sub(n, 1), r + 1), 1)))
            if r:
                t0 = b.select(b.lt(t, 0), 0, t)
                conds.append(b.eq(_index_rem(b, t0, r + 1), 0))
        return [c for c in conds if c is not True]


def _clamp(t, top, b: DimBuilder, low: bool, high: bool):
    """t clamped to [0, top] (only the sides that can be left)."""
    if low:
        t = b.select(b.lt(t, 0), 0, t)
    if high:
        t = b.select(b.lt(top, t), top, t)
    return t


def _index_rem(b: DimBuilder, a, n):
    """a mod n for a >= 0, n > 0 in the builder's algebra."""
    return b.sub(a, b.mul(b.div(a, n), n))


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
        return _prod(b, [self.batch, *self.out])

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
        props["groups"] = _int_attr(groups)
        return ConvOp.build(operands=[x, w], result_types=[result_type], properties=props)

    def window(self) -> tuple[tuple[int, ...], ...]:
        """(strides, pad_low, pad_high, dilation, lhs_dilation) per spatial dim."""
        return tuple(_dims(self, p) for p in ("strides", "pad_low", "pad_high", "dilation", "lhs_dilation"))

    @property
    def group_count(self) -> int:
        return self.groups.value.data

    def infer_type(self) -> TensorType:
        x, w = _operand_types(self)
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
        x, idx, upd = _operand_types(self)
        src, ishape, ushape = shape_of(x), shape_of(idx), shape_of(upd)
        dims = _dims(self, "dims")
        if not is_int(idx.element_type) or is_bool(idx.element_type):
            raise VerifyException(f"indices must be integers, got {idx.element_type}")
        if not ishape or ishape[-1] != len(dims):
            raise VerifyException(
                f"the last dim of the indices ({fmt_shape(ishape[-1:])}) must be the number of scattered dims "
                f"({len(dims)})")
        _check_dims(dims, len(src), "scatter dimension")
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
        return [idx[d] for d in _dims(self, "dims")]

    def window_index(self, idx: Sequence) -> list:
        """The window coordinates of the result's `idx` (its coordinates in the other dims)."""
        dims = _dims(self, "dims")
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
        keys, values = _operand_types(self)
        ks, vs = shape_of(keys), shape_of(values)
        d = self.dim.value.data
        _check_dims([d], len(ks), "sort dimension")
        if not shapes_compatible(ks, vs):
            raise VerifyException(f"keys and values shapes differ: {fmt_shape(ks)} and {fmt_shape(vs)}")
        if is_bool(keys.element_type):
            raise VerifyException("sort keys cannot be i1 (convert them first)")
        n = ks[d] if ks[d] != DYN else vs[d]
        if n == DYN or n > MAX_SORT_SIZE:
            raise VerifyException(f"sorts only static dims of at most {MAX_SORT_SIZE} elements, dim {d} has "
                                  f"{fmt_shape([n])}")
        return tensor(values.element_type, self.reify_dims(static_dims, STATIC))

    reify_dims = _same_shape_dims

    def order(self, keys: np.ndarray) -> np.ndarray:
        """The positions along `dim` in sorted order (numpy's stable argsort puts NaN last;
        descending is the ascending order of the reversed keys, reversed)."""
        d = self.dim.value.data
        if self.direction.data == SortDirection.ASCENDING:
            return np.argsort(keys, axis=d, kind="stable")
        n = keys.shape[d]
        return n - 1 - np.flip(np.argsort(np.flip(keys, d), axis=d, kind="stable"), d)


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
        data, offsets = _operand_types(self)
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


# ---------------------------------------------------------------------------
# Symbolic dims: names for run-time sizes shared across tensors (docs/symbolic-shapes.md)
# ---------------------------------------------------------------------------

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PRODUCT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|[0-9]+)(\*([A-Za-z_][A-Za-z0-9_]*|[0-9]+))*")


@irdl_attr_definition
class DimsAttr(ParametrizedAttribute):
    """The sizes of a tensor's dims as symbols: an int for a static dim, a symbol name
    (`B`) or a product of symbols and ints (`"B*4"`) for a `?` dim. Dims with the same
    symbol have the same size at run time. On function arguments it names their `?`
    dims (the ONNX importer's `dim_param`s); the `symbolic-dims` pass puts it on every
    argument and graph op result with `?` dims.

        func.func @f(%ids: tensor<?x4xi32> {graph.dims = #graph.dims<[B, 4]>}) -> ...
        %r = graph.reshape %ids {graph.dims = #graph.dims<["B*4"]>} : (tensor<?x4xi32>) -> tensor<?xi32>
    """

    name = "graph.dims"
    dims: ArrayAttr[IntAttr | StringAttr]

    def __init__(self, dims: Sequence[int | str]):
        super().__init__(ArrayAttr([IntAttr(d) if isinstance(d, int) else StringAttr(d) for d in dims]))

    @property
    def sizes(self) -> list[int | str]:
        return [d.data for d in self.dims.data]

    def verify(self) -> None:
        for d in self.sizes:
            if isinstance(d, int) and d < 0:
                raise VerifyException(f"a static dim must be >= 0, got {d}")
            if isinstance(d, str) and not _PRODUCT.fullmatch(d):
                raise VerifyException(f"'{d}' is not a symbol or a product of symbols and ints (e.g. B*4)")

    def check_type(self, t: Attribute, what: str) -> None:
        """That the dims describe tensor type `t`: its rank, its static sizes, symbols
        on `?` dims only."""
        shape = shape_of(t)
        sizes = self.sizes
        if len(sizes) != len(shape):
            raise VerifyException(f"{what}: #graph.dims has {len(sizes)} entries for a tensor of rank {len(shape)}")
        for i, (d, s) in enumerate(zip(sizes, shape)):
            if isinstance(d, int) and s not in (d, DYN):
                raise VerifyException(f"{what}: dim {i} is {s}, #graph.dims says {d}")
            if isinstance(d, str) and s != DYN:
                raise VerifyException(f"{what}: dim {i} is static ({s}), a symbol names only a '?' dim")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def entry() -> Attribute:
            value = parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
            if value is not None:
                return IntAttr(value)
            word = parser.parse_optional_identifier()
            if word is not None:
                return StringAttr(word)
            pos = parser.pos
            text = parser.parse_optional_str_literal()
            if text is None or not _PRODUCT.fullmatch(text):
                parser.raise_error("expected a dim: an int, a symbol or a quoted product (\"B*4\")", pos, parser.pos)
            return StringAttr(text)

        parser.parse_punctuation("<")
        dims = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, entry)
        parser.parse_punctuation(">")
        return (ArrayAttr(dims),)

    def print_parameters(self, printer: Printer) -> None:
        parts = [str(d) if isinstance(d, int) or _SYMBOL.fullmatch(d) else f'"{d}"' for d in self.sizes]
        printer.print_string("<[" + ", ".join(parts) + "]>")


DIMS_ATTR = "graph.dims"  # the attribute's name on function arguments, results and ops


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


Graph = Dialect(
    "graph",
    [
        *ELEMENTWISE_OPS.values(),
        CompareOp,
        SelectOp,
        ConvertOp,
        BitcastOp,
        ConstantOp,
        IotaOp,
        BroadcastOp,
        ReshapeOp,
        TransposeOp,
        SliceOp,
        ConcatOp,
        ReduceOp,
        GatherOp,
        DotOp,
        ConvOp,
        ReduceWindowOp,
        PadOp,
        ScatterOp,
        SortOp,
        SegmentReduceOp,
        TileMomentsOp,
        CombineMomentsOp,
    ],
    [ReduceKindAttr, SegmentKindAttr, PadModeAttr, CompareDirectionAttr, ScatterKindAttr, SortDirectionAttr,
     DimsAttr],
)
