"""Reading IR text: the context of every dialect fsir knows, and a parser that locates.

xDSL's parser records no source locations on ops, so `LocatingParser` stamps each op
with a `FileLineColLoc` as it parses it; `parse_module` then verifies op by op
(`fsir.ir.verify`), so the first failure points at the op's source line.

This module sits above the registry (it reads the table of dialects): passes and
dialects below it build IR with builders and never parse text.
"""

from __future__ import annotations

import bisect
import functools
import math
import re

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input

from fsir.errors import Location, UserError
from fsir.ir import MAX_DENSE_ELEMENTS, collector_paused, verify
from fsir.registry import DIALECTS, OVERRIDING_DIALECTS

# xDSL dialects fsir's levels use besides its own.
_XDSL_DIALECTS = ("builtin", "func", "arith", "cf", "math", "scf", "memref")


def make_context(allow_unregistered: bool = False) -> Context:
    """A context with xDSL's dialects used by fsir plus all of fsir's own."""
    from xdsl.dialects import get_all_dialects

    ctx = Context(allow_unregistered=allow_unregistered)
    xdsl_dialects = get_all_dialects()
    for name in _XDSL_DIALECTS:
        if name not in OVERRIDING_DIALECTS:
            ctx.register_dialect(name, xdsl_dialects[name])
    for name, factory in {**DIALECTS, **OVERRIDING_DIALECTS}.items():
        ctx.register_dialect(name, factory)
    return ctx


class _BitsElement(Parser._TensorLiteralElement):
    """A hexadecimal element of a dense literal. For a float type it gives the value's
    bits, as MLIR reads it and as xDSL prints infinities and NaNs (`dense<0xff800000>`
    is -inf); xDSL's own parser would take it for the integer 4286578688."""

    def to_type(self, parser, type):
        value = self.value
        if isinstance(type, AnyFloat) and isinstance(value, int) and not isinstance(value, bool):
            return next(type.iter_unpack(value.to_bytes(type.compile_time_size, "little")))
        return super().to_type(parser, type)


def type_is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class LocatingParser(Parser):
    """A Parser that records where each operation starts as the op's location.

    `line_offset` is added to line numbers (chunks of a `--split-input-file` input)."""

    def __init__(self, ctx: Context, text: str, name: str = "<unknown>", line_offset: int = 0):
        super().__init__(ctx, text, name)
        self.line_offset = line_offset
        self._first_uses: dict = {}
        self._newlines: list[int] | None = None  # where the input's newlines are

    def _parse_tensor_literal_element(self):
        bits = self._current_token.text[:2] in ("0x", "0X")
        element = super()._parse_tensor_literal_element()
        if bits and type_is_int(element.value):
            return _BitsElement(element.is_negative, element.value, element.span)
        return element

    def parse_dense_int_or_fp_elements_attr(self, type):
        # xDSL expands a splat (`dense<0.5> : tensor<2x128x3072xf32>`) into a list of
        # every element and packs them one by one: most of a model's parse. A splat's
        # bytes are its one element's, repeated.
        if type is not None or not self._splat_ahead():
            return super().parse_dense_int_or_fp_elements_attr(type)
        self.parse_punctuation("<", " in dense attribute")
        element = self._parse_tensor_literal_element()
        self.parse_punctuation(">", " in dense attribute")
        self.parse_punctuation(":", " in dense attribute")
        type = self._parse_dense_literal_type()
        value = element.to_type(self, type.element_type)  # a value of the element type (xDSL's parse casts it)
        one = DenseIntOrFPElementsAttr.from_list(TensorType(type.element_type, [1]), [value])  # type: ignore[call-overload]  # see above
        return DenseIntOrFPElementsAttr(type, BytesAttr(one.data.data * math.prod(type.get_shape())))

    def _splat_ahead(self) -> bool:
        """Whether the dense literal at the current `<` holds one element (not a
        nested list, a hex string or nothing)."""
        token = self._current_token
        if token.text != "<":
            return False
        rest = token.span.input.content[token.span.end:token.span.end + 64].lstrip()
        return bool(rest) and rest[0] not in '["'  and rest[0] != ">"

    def resolve_operand(self, operand, type):
        # Remember where a not-yet-defined value is first used, so that an undefined
        # value is reported at its use (as MLIR does) rather than at the end of input.
        if operand.operand_name not in self.ssa_values:
            self._first_uses.setdefault(operand.operand_name, operand.span)
        return super().resolve_operand(operand, type)

    def parse_module(self, allow_implicit_module: bool = True):
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as err:
            if not err.msg.startswith("values used but not defined") or not self.forward_ssa_references:
                raise
            name = next(iter(self.forward_ssa_references))
            span = self._first_uses.get(name, err.span)
            raise ParseError(span, f"use of undefined value '%{name}'") from None

    def _parse_dense_literal_type(self):
        # xDSL builds its irdl constraint for the literal's type anew on every dense
        # attribute (milliseconds each: most of the parse of a model with thousands of
        # constants), so the check runs against one built once.
        t = self.expect(self.parse_optional_type, "Dense attribute must be typed!")
        if not _dense_literal_constraint().verifies(t):
            self.raise_error("Expected memref, vector or tensor type of integer, index, float, or complex type")
        if any(dim == DYNAMIC_INDEX for dim in t.get_shape()):
            self.raise_error("Dense literal attribute should have a static shape.")
        # xDSL expands a splat into a Python list of every element: refuse sizes that
        # would exhaust memory before it tries
        n = math.prod(t.get_shape())
        if n > MAX_DENSE_ELEMENTS:
            self.raise_error(f"a dense constant of {n} elements is too large (at most {MAX_DENSE_ELEMENTS})")
        return t

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        op = super().parse_operation()
        line, col = self._line_col(span.input, span.start)
        op.location = FileLineColLoc(StringAttr(span.input.name), IntAttr(line + self.line_offset), IntAttr(col))
        return op

    def _line_col(self, source: Input, pos: int) -> tuple[int, int]:
        """The 1-based line and column of `pos`, by bisection over the input's newlines
        (xDSL's `Span.get_location` counts the newlines from the start of the input on
        every call: quadratic over an input's ops)."""
        if self._newlines is None:
            self._newlines = []
            at = source.content.find(source.newline)  # (str or bytes input)
            while at >= 0:
                self._newlines.append(at)
                at = source.content.find(source.newline, at + 1)
        k = bisect.bisect_left(self._newlines, pos)
        start = self._newlines[k - 1] + 1 if k else 0
        return k + 1, pos - start + 1


@functools.cache
def _dense_literal_constraint():
    from xdsl.dialects.builtin import AnyFloat, ComplexType, IndexType, IntegerType, RankedStructure
    from xdsl.irdl import base

    return base(RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType])


def parse_error_to_user_error(err: ParseError, line_offset: int = 0) -> UserError:
    loc = err.span.get_location()
    return UserError(err.msg, Location(loc.file, loc.line + line_offset, loc.col))


def parse_module(
    text: str,
    filename: str = "<stdin>",
    ctx: Context | None = None,
    line_offset: int = 0,
    implicit_module: bool = True,
) -> ModuleOp:
    """Parse and verify; raise UserError with file:line:col on any problem. (The
    cycle collector is paused meanwhile: `fsir.ir.collector_paused`.)"""
    with collector_paused():
        return _parse_module(text, filename, ctx, line_offset, implicit_module)


def _parse_module(text: str, filename: str, ctx: Context | None, line_offset: int,
                  implicit_module: bool) -> ModuleOp:
    ctx = ctx or make_context()
    if implicit_module and not re.sub(r"//[^\n]*", "", text).strip():
        # MLIR reads an input of only comments (e.g. the last `// -----` chunk of a
        # test) as an empty module; xDSL's parser rejects it.
        module = ModuleOp([])
    else:
        parser = None
        try:
            parser = LocatingParser(ctx, text, filename, line_offset)  # lexes the first token
            module = parser.parse_module(implicit_module)
        except ParseError as err:
            raise parse_error_to_user_error(err, line_offset) from None
        except (ValueError, OverflowError) as err:  # xDSL's checks of literal values (integer ranges)
            assert parser is not None  # the lexer raises only ParseError
            loc = parser._current_token.span.get_location()
            raise UserError(str(err), Location(loc.file, loc.line + line_offset, loc.col)) from None
    if not isinstance(module.location, FileLineColLoc):  # an implicit module starts the input
        module.location = FileLineColLoc(StringAttr(filename), IntAttr(1 + line_offset), IntAttr(1))
    verify(module)
    return module
