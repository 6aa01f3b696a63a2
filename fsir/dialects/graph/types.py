"""The graph dialect's types and index algebra: element types and the numpy dtypes that
hold them, shapes (`?` is DYN), the `DimBuilder` algebra that shape and index rules are
written in, and `#graph.dims` (symbolic sizes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

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
TF32_DOTS: ContextVar[bool] = ContextVar("tf32_dots", default=False)


@contextmanager
def tf32_dots():
    token = TF32_DOTS.set(True)
    try:
        yield
    finally:
        TF32_DOTS.reset(token)


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


def dims_product(b: DimBuilder, xs: Sequence) -> Any:
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
