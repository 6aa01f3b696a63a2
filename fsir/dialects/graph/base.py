"""The base of every graph op: the op-class traits fusion and code generation key on, and
`GraphOp`, whose custom syntax, verifier and default rules the op families share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, IntegerType, TensorType, i64
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import HasCanonicalizationPatternsTrait, OpTrait
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from fsir.dialects.graph.types import (
    DIMS_ATTR,
    DYN,
    DimAgreement,
    DimBuilder,
    DimsAttr,
    DimsOf,
    fmt_shape,
    numpy_dtype,
    shape_of,
    shapes_compatible,
)

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
# Custom syntax shared by all graph ops
# ---------------------------------------------------------------------------


def parse_int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)


def print_int_list(printer: Printer, values: Sequence[int]) -> None:
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
                props[prop] = DenseArrayBase.from_list(i64, parse_int_list(parser))
            else:
                props[prop] = i64_attr(parser.parse_integer())
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
                print_int_list(printer, dims_property(self, prop))
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


def i64_attr(value: int) -> IntegerAttr[I64]:
    return IntegerAttr(value, i64)


def operand_tensor_types(op: Operation) -> list[TensorType]:
    return [tensor_type(o) for o in op.operands]


def check_dims_in_rank(dims: Sequence[int], rank: int, what: str, unique: bool = True) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise VerifyException(f"{what} {d} is out of range for rank {rank}")
    if unique and len(set(dims)) != len(dims):
        raise VerifyException(f"{what}s {list(dims)} contain duplicates")


def same_shape_dims(self: GraphOp, dims_of: DimsOf, b: DimBuilder) -> list:
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


def same_shape_agreement(self: GraphOp, dims_of: DimsOf, b: DimBuilder, skip: int | None = None) -> list:
    """What `same_shape_dims` assumes: in each dim (but `skip`), every operand has the
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


def same_index_rule(self: GraphOp, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list] | None:
    """Index rule of elementwise ops: every operand is read at the result's index."""
    return [list(idx) for _ in self.operands]


def dims_property(op: Operation, prop: str) -> tuple[int, ...]:
    """The values of an op's `DenseArrayBase[I64]` property `prop`."""
    value = op.properties[prop]
    assert isinstance(value, DenseArrayBase) and isinstance(value.elt_type, IntegerType)
    return cast(DenseArrayBase[IntegerType], value).get_values()
