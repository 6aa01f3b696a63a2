"""Tensor cores and asynchronous copies: the ops upstream MLIR keeps in its NVGPU dialect.

fsir's own ops for warp-level matrix multiply-accumulate (PTX `mma.sync`), shared memory
matrix loads (`ldmatrix`), the rounding to tf32 their operands need, and asynchronous
global-to-shared copies (`cp.async` and its groups). They stand apart from MLIR's gpu ops
as MLIR's nvgpu ops do, but keep fsir's `gpu.` spelling and are registered in the gpu
dialect (gpu.py), so IR and PTX are unchanged.

Fragments are 32-bit registers: two 16-bit elements (even element in the low half) or one
tf32 (an f32 bit pattern) per `i32`; accumulators are `f32`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I32,
    IndexType,
    IntegerAttr,
    MemRefType,
    UnitAttr,
    f32,
    i32,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Operation,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    AnyOf,
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    NoMemoryEffect,
    Pure,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from fsir.dialects.gpu_memory import WORKGROUP_ADDRESS_SPACE, memory_space_of, parse_access, parse_load, print_access


class MmaTypeEnum(StrEnum):
    """The element type of an mma's A and B operands: f16 and bf16 use the
    m16n8k16 shape, tf32 (f32 rounded to 10 mantissa bits) m16n8k8."""

    F16 = "f16"
    BF16 = "bf16"
    TF32 = "tf32"


@irdl_attr_definition
class MmaTypeAttr(EnumAttribute[MmaTypeEnum], SpacedOpaqueSyntaxAttribute):
    """`#gpu<mma_type f16>`; printed as the bare word in `gpu.mma_sync`."""

    name = "gpu.mma_type"


MMA_K = {MmaTypeEnum.F16: 16, MmaTypeEnum.BF16: 16, MmaTypeEnum.TF32: 8}
"""The k of each operand type's mma shape (m = 16, n = 8)."""


def _parse_values(parser: Parser, t: Attribute) -> list[SSAValue]:
    parser.parse_punctuation("[")
    vals = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
    parser.parse_punctuation("]")
    return [parser.resolve_operand(v, t) for v in vals]


def _print_values(printer: Printer, vals: Sequence[SSAValue]) -> None:
    printer.print_string("[")
    printer.print_list(vals, printer.print_ssa_value)
    printer.print_string("]")


@irdl_op_definition
class MmaSyncOp(IRDLOperation):
    """A warp's 16x8 tile D = A·B + C (PTX `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`,
    `m16n8k8 ... .tf32` for tf32): A is 16 x k row-major, B k x 8 column-major, C and D
    f32. Each lane holds its fragments as the PTX ISA lays them out: 4 registers of A,
    2 of B, 4 accumulators. All 32 lanes of the warp must execute it.

    ```mlir
    %d0, %d1, %d2, %d3 = gpu.mma_sync f16 [%a0, %a1, %a2, %a3] [%b0, %b1] [%c0, %c1, %c2, %c3]
    ```
    """

    name = "gpu.mma_sync"

    operand_type = prop_def(MmaTypeAttr)
    a = var_operand_def(i32)
    b = var_operand_def(i32)
    c = var_operand_def(f32)
    d = var_result_def(f32)

    irdl_options = (AttrSizedOperandSegments(),)
    traits = traits_def(NoMemoryEffect())

    def __init__(self, operand_type: MmaTypeEnum, a: Sequence[SSAValue], b: Sequence[SSAValue],
                 c: Sequence[SSAValue]):
        super().__init__(operands=[a, b, c], result_types=[[f32] * len(c)],
                         properties={"operand_type": MmaTypeAttr(operand_type)})

    @property
    def k(self) -> int:
        return MMA_K[self.operand_type.data]

    @classmethod
    def parse(cls, parser: Parser) -> MmaSyncOp:
        kind = MmaTypeEnum(parser.parse_identifier())
        a = _parse_values(parser, i32)
        b = _parse_values(parser, i32)
        c = _parse_values(parser, f32)
        op = cls(kind, a, b, c)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.operand_type.data.value} ")
        _print_values(printer, self.a)
        printer.print_string(" ")
        _print_values(printer, self.b)
        printer.print_string(" ")
        _print_values(printer, self.c)
        printer.print_op_attributes(self.attributes, reserved_attr_names=["operandSegmentSizes"])

    def verify_(self) -> None:
        if (len(self.a), len(self.b), len(self.c), len(self.d)) != (4, 2, 4, 4):
            raise VerifyException(
                f"gpu.mma_sync {self.operand_type.data.value} takes 4 A, 2 B and 4 C registers per lane and "
                f"gives 4 D, got {len(self.a)}, {len(self.b)}, {len(self.c)} and {len(self.d)}"
            )


def _shared_b16(op: IRDLOperation, t: Attribute, n_indices: int, widths: tuple[int, ...] = (16,)) -> None:
    if not isinstance(t, MemRefType) or memory_space_of(t) != WORKGROUP_ADDRESS_SPACE:
        raise VerifyException(f"{op.name} accesses shared memory (address space 3), got {t}")
    if getattr(t.element_type, "bitwidth", None) not in widths:
        raise VerifyException(f"{op.name} moves {' or '.join(map(str, widths))}-bit elements, got {t.element_type}")
    if n_indices != t.get_num_dims():
        raise VerifyException(f"{op.name} needs {t.get_num_dims()} indices for {t}, got {n_indices}")


@irdl_op_definition
class LdMatrixOp(IRDLOperation):
    """Loads 1, 2 or 4 8x8 matrices of 16-bit elements from shared memory into a
    warp's fragments (PTX `ldmatrix.sync.aligned.m8n8.x4.shared.b16`): lanes 8j..8j+7
    give the addresses of the 8 rows (16 bytes each, 16-byte aligned) of matrix j, and
    lane l receives elements (l/4, 2(l%4)) and (l/4, 2(l%4)+1) of matrix j in result j
    (with `trans`, of the transposed matrix). All 32 lanes must execute it. Without
    `trans` the elements may be 32-bit (each a pair of halves: lane l receives element
    (l/4, l%4) of an 8x4 matrix).

    ```mlir
    %r0, %r1, %r2, %r3 = gpu.ldmatrix %tile[%i] : memref<2048xf16, 3> -> i32, i32, i32, i32
    %s0, %s1 = gpu.ldmatrix %tile[%j] trans : memref<2048xf16, 3> -> i32, i32
    ```
    """

    name = "gpu.ldmatrix"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType())
    trans = opt_prop_def(UnitAttr)
    values = var_result_def(i32)

    def __init__(self, memref: SSAValue, indices: Sequence[SSAValue], count: int, trans: bool = False):
        super().__init__(operands=[memref, indices], result_types=[[i32] * count],
                         properties={"trans": UnitAttr()} if trans else {})

    @classmethod
    def parse(cls, parser: Parser) -> LdMatrixOp:
        memref, idx, types, trans = parse_load(parser, cls.name, flag="trans")
        return cls(memref, idx, len(types), trans)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_access(printer, self.memref, self.indices)
        if self.trans is not None:
            printer.print_string(" trans")
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)
        printer.print_string(" -> ")
        printer.print_list([r.type for r in self.values], printer.print_attribute)

    def verify_(self) -> None:
        # 32-bit elements are pairs of halves: lane l gets element (l/4, l%4) of an 8x4
        # matrix (the tf32 m16n8k8 A fragment); a transpose would split them
        _shared_b16(self, self.memref.type, len(self.indices), (16,) if self.trans is not None else (16, 32))
        if len(self.values) not in (1, 2, 4):
            raise VerifyException(f"gpu.ldmatrix loads 1, 2 or 4 matrices, got {len(self.values)}")


CP_ASYNC_BYTES = (4, 8, 16)


@irdl_op_definition
class CpAsyncOp(IRDLOperation):
    """Starts an asynchronous copy of `bytes` (4, 8 or 16) bytes from global memory to
    shared memory (PTX `cp.async.cg.shared.global` for 16 bytes, `.ca` otherwise),
    joining the thread's current copy group. With `src_bytes`, only that many bytes
    (0 to `bytes`) are read and the rest of the destination is zero-filled: out of range
    operand elements become zeros without a branch. The destination may be read only
    after a `gpu.cp_async_wait_group` covering the copy's group (and, by other threads,
    a barrier after it).

    ```mlir
    gpu.cp_async %tile[%i], %a[%j], 16 : memref<2048xf16, 3>, memref<?xf16>
    gpu.cp_async %tile[%i], %a[%j], 16, %n : memref<2048xf16, 3>, memref<?xf16>
    ```
    """

    name = "gpu.cp_async"

    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType())
    src = operand_def(MemRefType)
    src_indices = var_operand_def(IndexType())
    src_bytes = opt_operand_def(i32)
    bytes = prop_def(IntegerAttr[I32])

    irdl_options = (AttrSizedOperandSegments(),)

    def __init__(self, dst: SSAValue, dst_indices: Sequence[SSAValue], src: SSAValue,
                 src_indices: Sequence[SSAValue], nbytes: int, src_bytes: SSAValue | None = None):
        super().__init__(operands=[dst, dst_indices, src, src_indices, [] if src_bytes is None else [src_bytes]],
                         properties={"bytes": IntegerAttr(nbytes, i32)})

    @classmethod
    def parse(cls, parser: Parser) -> CpAsyncOp:
        dst_values, dst, dst_idx = parse_access(parser)
        parser.parse_punctuation(",")
        src_values, src, src_idx = parse_access(parser)
        if dst_values or src_values:
            parser.raise_error("gpu.cp_async takes a destination and a source access")
        parser.parse_punctuation(",")
        nbytes = parser.parse_integer(allow_boolean=False)
        src_bytes = None
        if parser.parse_optional_punctuation(",") is not None:
            src_bytes = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        dt = parser.parse_type()
        parser.parse_punctuation(",")
        st = parser.parse_type()
        index = IndexType()
        return cls(parser.resolve_operand(dst, dt), [parser.resolve_operand(i, index) for i in dst_idx],
                   parser.resolve_operand(src, st), [parser.resolve_operand(i, index) for i in src_idx], nbytes,
                   None if src_bytes is None else parser.resolve_operand(src_bytes, i32))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_access(printer, self.dst, self.dst_indices)
        printer.print_string(", ")
        print_access(printer, self.src, self.src_indices)
        printer.print_string(f", {self.bytes.value.data}")
        if self.src_bytes is not None:
            printer.print_string(", ")
            printer.print_ssa_value(self.src_bytes)
        printer.print_string(" : ")
        printer.print_attribute(self.dst.type)
        printer.print_string(", ")
        printer.print_attribute(self.src.type)

    def verify_(self) -> None:
        dt, st = self.dst.type, self.src.type
        assert isinstance(dt, MemRefType) and isinstance(st, MemRefType)
        if memory_space_of(dt) != WORKGROUP_ADDRESS_SPACE:
            raise VerifyException(f"gpu.cp_async copies into shared memory (address space 3), got {dt}")
        if memory_space_of(st) not in (0, 1):
            raise VerifyException(f"gpu.cp_async copies from global memory, got {st}")
        if dt.element_type != st.element_type:
            raise VerifyException(f"gpu.cp_async needs one element type, got {dt.element_type} and "
                                  f"{st.element_type}")
        if len(self.dst_indices) != dt.get_num_dims() or len(self.src_indices) != st.get_num_dims():
            raise VerifyException("gpu.cp_async needs an index per dimension of each memref")
        if self.bytes.value.data not in CP_ASYNC_BYTES:
            raise VerifyException(f"gpu.cp_async copies 4, 8 or 16 bytes, got {self.bytes.value.data}")


@irdl_op_definition
class CpAsyncCommitGroupOp(IRDLOperation):
    """Closes the thread's current group of `gpu.cp_async` copies (PTX
    `cp.async.commit_group`; an empty group counts too).

    ```mlir
    gpu.cp_async_commit_group
    ```
    """

    name = "gpu.cp_async_commit_group"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class CpAsyncWaitGroupOp(IRDLOperation):
    """Waits until at most `pending` of the thread's most recently committed copy
    groups are still in flight (PTX `cp.async.wait_group N`); the others' destinations
    are then written.

    ```mlir
    gpu.cp_async_wait_group 1
    ```
    """

    name = "gpu.cp_async_wait_group"

    pending = prop_def(IntegerAttr[I32])

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntegerAttr(pending, i32)})

    @classmethod
    def parse(cls, parser: Parser) -> CpAsyncWaitGroupOp:
        op = cls(parser.parse_integer(allow_boolean=False))
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.pending.value.data}")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        if self.pending.value.data < 0:
            raise VerifyException("gpu.cp_async_wait_group needs a count of at least 0")


@irdl_op_definition
class RoundTf32Op(IRDLOperation):
    """Rounds an f32 to tf32 (10 mantissa bits, to nearest, ties away from zero: PTX
    `cvt.rna.tf32.f32`), the form of an mma's tf32 operand: its f32 bit pattern in an
    `i32` with the low 13 bits clear. The f32 may also come as its bit pattern in an
    `i32` (an ldmatrix register: PTX lets a .b32 register be the f32 source, so no move
    is needed).

    ```mlir
    %t = gpu.round_tf32 %x
    %u = gpu.round_tf32 %bits : i32
    ```
    """

    name = "gpu.round_tf32"

    value = operand_def(AnyOf.get(f32, i32))
    result = result_def(i32)

    traits = traits_def(Pure())

    def __init__(self, value: SSAValue | Operation):
        super().__init__(operands=[value], result_types=[i32])

    @classmethod
    def parse(cls, parser: Parser) -> RoundTf32Op:
        value = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        t = parser.parse_type() if parser.parse_optional_punctuation(":") is not None else f32
        op = cls(parser.resolve_operand(value, t))
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_op_attributes(self.attributes)
        if self.value.type == i32:
            printer.print_string(" : i32")
