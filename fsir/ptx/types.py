"""How MLIR scalar types live in PTX: register files, memory types, sizes.

| MLIR type     | register file      | in memory (ld/st)  | kernel .param |
|---------------|--------------------|--------------------|---------------|
| i1            | .pred  (%p)        | 1 byte, .u8 (0/1)  | .u8           |
| i8            | .b16   (%rs) [1]   | 1 byte, .s8        | .s8           |
| ui8           | .b16   (%rs) [1]   | 1 byte, .u8        | .u8           |
| i16           | .b16   (%rs)       | .b16               | .b16          |
| i32           | .b32   (%r)        | .b32               | .b32          |
| i64, index    | .b64   (%rd)       | .b64               | .b64          |
| f16, bf16     | .b16   (%rs) [2]   | .b16               | .b16 (bits)   |
| f32           | .f32   (%f)        | .f32               | .f32          |
| f64           | .f64   (%fd)       | .f64               | .f64          |
| memref        | .b64   (%rd)       | -                  | .u64 pointer  |

[1] an i8 is kept sign-extended in its 16-bit register, a ui8 zero-extended; wrapping
    ops re-normalise them. Wider unsigned integers (ui16/32/64) are held like the
    signless ones of their width.
[2] f16/bf16 arithmetic is done in f32 and rounded back (round-to-nearest-even).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute


@dataclass(frozen=True)
class RegFile:
    decl: str  # the .reg type
    prefix: str  # register name prefix
    mov: str  # mov type suffix


PRED = RegFile("pred", "%p", "pred")
B16 = RegFile("b16", "%rs", "b16")
B32 = RegFile("b32", "%r", "b32")
B64 = RegFile("b64", "%rd", "b64")
F32 = RegFile("f32", "%f", "f32")
F64 = RegFile("f64", "%fd", "f64")
REG_FILES = (PRED, B16, B32, B64, F32, F64)


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float16Type | BFloat16Type | Float32Type | Float64Type)


def is_int(t: Attribute) -> bool:
    return isinstance(t, IntegerType | IndexType)


def is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def int_width(t: Attribute) -> int:
    """Bit width of an integer or index type (index is 64-bit)."""
    if isinstance(t, IndexType):
        return 64
    assert isinstance(t, IntegerType)
    return t.width.data


SUPPORTED_INT_WIDTHS = (1, 8, 16, 32, 64)


def reg_file(t: Attribute) -> RegFile | None:
    """The register file holding a value of type `t`, or None if unsupported."""
    if isinstance(t, IndexType):
        return B64
    if isinstance(t, IntegerType):
        return {1: PRED, 8: B16, 16: B16, 32: B32, 64: B64}.get(t.width.data)
    if isinstance(t, Float16Type | BFloat16Type):
        return B16
    if isinstance(t, Float32Type):
        return F32
    if isinstance(t, Float64Type):
        return F64
    return None


def byte_size(t: Attribute) -> int:
    if isinstance(t, IndexType):
        return 8
    if isinstance(t, IntegerType):
        return max(1, t.width.data // 8)
    if isinstance(t, Float16Type | BFloat16Type):
        return 2
    if isinstance(t, Float32Type):
        return 4
    if isinstance(t, Float64Type):
        return 8
    raise ValueError(f"no size for {t}")


def mem_type(t: Attribute) -> str:
    """The ld/st type suffix for an element of type `t` (i1 handled by the caller)."""
    if isinstance(t, IndexType):
        return "u64"
    if isinstance(t, IntegerType):
        if is_unsigned(t) and t.width.data == 8:
            return "u8"
        return {1: "u8", 8: "s8", 16: "b16", 32: "b32", 64: "b64"}[t.width.data]
    if isinstance(t, Float16Type | BFloat16Type):
        return "b16"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float64Type):
        return "f64"
    raise ValueError(f"no memory type for {t}")


def param_type(t: Attribute) -> str:
    """The .param type of a scalar kernel argument."""
    if isinstance(t, IntegerType) and t.width.data == 1:
        return "u8"
    return mem_type(t)


def int_suffix(width: int, signed: bool) -> str:
    """PTX integer type for arithmetic on a `width`-bit MLIR integer."""
    reg_bits = 16 if width <= 16 else width
    return f"{'s' if signed else 'u'}{reg_bits}"


def bit_suffix(width: int) -> str:
    return f"b{16 if width <= 16 else width}"


def reg_file_for_bits(bits: int) -> RegFile:
    """The integer register file of a 16/32/64-bit register."""
    return {16: B16, 32: B32, 64: B64}[bits]
