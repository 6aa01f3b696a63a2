"""Address spaces of gpu memrefs and the textual form of a memory access (`%buf[%i, %j]`),
shared by the gpu ops (gpu.py) and the tensor-core and async-copy ops (nvgpu.py); the
xDSL gpu types fsir reuses unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import gpu as _xgpu
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    SSAValue,
)
from xdsl.irdl import (
    irdl_attr_definition,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

# Reused unchanged from xDSL.
AsyncTokenType = _xgpu.AsyncTokenType
DimensionAttr = _xgpu.DimensionAttr
DimensionEnum = _xgpu.DimensionEnum
ProcessorAttr = _xgpu.ProcessorAttr
LoopDimMapAttr = _xgpu.LoopDimMapAttr

WORKGROUP_ADDRESS_SPACE = 3
"""Shared memory (MLIR `#gpu.address_space<workgroup>`, NVVM address space 3)."""
PRIVATE_ADDRESS_SPACE = 5


class AddressSpaceEnum(StrEnum):
    GLOBAL = "global"
    WORKGROUP = "workgroup"
    PRIVATE = "private"


@irdl_attr_definition
class AddressSpaceAttr(EnumAttribute[AddressSpaceEnum]):
    """MLIR's `#gpu.address_space<workgroup>` memref memory space (same as 3; global is
    1 and private 5, as in NVVM)."""

    name = "gpu.address_space"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> AddressSpaceEnum:
        with parser.in_angle_brackets():
            return super().parse_parameter(parser)

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            super().print_parameter(printer)


_SPACE_NUMBERS = {"global": 1, "workgroup": 3, "private": 5}


def memory_space_of(type_: MemRefType) -> int:
    """The integer address space of a memref type: 0 when none is given, 3 for
    `#gpu.address_space<workgroup>`, 5 for private, 1 for global."""
    space = type_.memory_space
    if isinstance(space, NoneAttr):
        return 0
    if isinstance(space, IntegerAttr):
        return space.value.data
    if isinstance(space, AddressSpaceAttr):
        return _SPACE_NUMBERS[space.data.value]
    raise VerifyException(f"unsupported memref memory space {space}")

def parse_access(parser: Parser) -> tuple[list[UnresolvedOperand], UnresolvedOperand, list[UnresolvedOperand]]:
    """`%v0, %v1, %buf[%i]`: the operands before the one followed by `[`, that one,
    and its indices."""
    values = []
    while True:
        operand = parser.parse_unresolved_operand()
        if parser.parse_optional_punctuation("[") is not None:
            break
        values.append(operand)
        parser.parse_punctuation(",")
    indices = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
    parser.parse_punctuation("]")
    return values, operand, indices


def parse_load(
    parser: Parser, name: str, flag: str | None = None
) -> tuple[SSAValue, Sequence[SSAValue], Sequence[Attribute], bool]:
    """`%buf[%i, ...] [flag] : memref<...> -> T, ...` of a load into several results:
    the memref, its indices, the result types, and whether the keyword `flag` stood there."""
    pos = parser.pos
    values, mem, indices = parse_access(parser)
    if values:
        parser.raise_error(f"{name} takes one memref operand", pos, parser.pos)
    has_flag = flag is not None and parser.parse_optional_keyword(flag) is not None
    parser.parse_punctuation(":")
    memref = parser.resolve_operand(mem, parser.parse_type())
    idx = [parser.resolve_operand(i, IndexType()) for i in indices]
    parser.parse_punctuation("->")
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    return memref, idx, types, has_flag


def print_access(printer: Printer, memref: SSAValue, indices: Sequence[SSAValue]) -> None:
    printer.print_ssa_value(memref)
    printer.print_string("[")
    printer.print_list(indices, printer.print_ssa_value)
    printer.print_string("]")
