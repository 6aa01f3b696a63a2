"""fsir's own gpu ops for synchronisation between blocks and for kernel arguments, registered
in the gpu dialect (gpu.py).

Tile synchronisation is the lowered form of cuSync's stages (fsir/dialects/schedule/sync.py,
`schedule.stage`): blocks take tiles from a global counter, wait on and post to semaphores
in global memory; the host zeroes the semaphores and tags each launch with its stream
(`gpu.stage`). Argument tables: a kernel whose buffer arguments would overflow the
parameter space takes them through one table in global memory
(fsir/lowering/param_table.py): the host builds it at the launch, the kernel loads each
buffer's address where it first needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    DenseArrayBase,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    i32,
    i64,
)
from xdsl.ir import (
    Attribute,
    ParametrizedAttribute,
    SSAValue,
)
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from fsir.dialects.gpu_memory import memory_space_of

_SEMAPHORES = MemRefType(i32, [DYNAMIC_INDEX])


@irdl_op_definition
class NextTileOp(IRDLOperation):
    """The tile this block computes: thread 0 takes the next value of a global atomic
    counter (`atom.global.add.u32`) and passes it to the block through shared memory, so
    tiles are computed in the order blocks start, whatever order the hardware
    dispatches them in (cuSync §III-C).

    ```mlir
    %t = gpu.next_tile %counter : memref<?xi32>
    ```
    """

    name = "gpu.next_tile"
    counter = operand_def(MemRefType)
    result = result_def(IndexType)
    assembly_format = "$counter attr-dict `:` type($counter)"

    def __init__(self, counter: SSAValue):
        super().__init__(operands=[counter], result_types=[IndexType()])

    def verify_(self) -> None:
        _check_semaphores(self.counter.type, "gpu.next_tile")


def _check_semaphores(t: Attribute, what: str) -> None:
    if not (isinstance(t, MemRefType) and t.element_type == i32 and len(t.get_shape()) == 1):
        raise VerifyException(f"{what} needs a 1-D memref of i32 semaphores, got {t}")


class _SemaphoreOp(IRDLOperation):
    """What `gpu.sem_wait` and `gpu.sem_post` share: semaphore `sems[index]` and a value."""

    sems = operand_def(MemRefType)
    index = operand_def(IndexType)
    value = operand_def(i32)
    assembly_format = "$sems `[` $index `]` `,` $value attr-dict `:` type($sems)"

    def __init__(self, sems: SSAValue, index: SSAValue, value: SSAValue):
        super().__init__(operands=[sems, index, value])

    def verify_(self) -> None:
        _check_semaphores(self.sems.type, self.name)


@irdl_op_definition
class SemWaitOp(_SemaphoreOp):
    """Every thread of the block waits until semaphore `sems[index]` holds at least
    `value`: thread 0 spins on an acquire load (`ld.acquire.gpu.global.u32`), the others
    wait at a barrier (cuSync's `wait`).

    ```mlir
    gpu.sem_wait %sems[%i], %c2 : memref<?xi32>
    ```
    """

    name = "gpu.sem_wait"


@irdl_op_definition
class SemPostOp(_SemaphoreOp):
    """The block's stores are done: a barrier, a release fence at GPU scope
    (`fence.acq_rel.gpu`), then thread 0 adds `value` to `sems[index]` with a release
    reduction (`red.release.gpu.global.add.u32`) (cuSync's `post`).

    ```mlir
    gpu.sem_post %sems[%i], %c1 : memref<?xi32>
    ```
    """

    name = "gpu.sem_post"


@irdl_op_definition
class MemsetOp(IRDLOperation):
    """Host side: sets every element of a device buffer to `value` (as MLIR's
    `gpu.memset`); zeroes a pipeline's semaphores and tile counters before its launches.

    ```mlir
    gpu.memset %sems, %c0 : memref<?xi32>, i32
    ```
    """

    name = "gpu.memset"
    dst = operand_def(MemRefType)
    value = operand_def(AnyAttr())
    assembly_format = "$dst `,` $value attr-dict `:` type($dst) `,` type($value)"

    def __init__(self, dst: SSAValue, value: SSAValue):
        super().__init__(operands=[dst, value])

    def verify_(self) -> None:
        t = self.dst.type
        assert isinstance(t, MemRefType)
        if t.element_type != self.value.type:
            raise VerifyException(f"gpu.memset of a {t} needs a {t.element_type} value, got {self.value.type}")


ADDRESS_TABLE_ATTR = "gpu.address_table"  # (unit) on a gpu.func that takes an address table


@irdl_op_definition
class AddressTableOp(IRDLOperation):
    """Host side: a device buffer holding `values` (64-bit words, the per-column rows of a
    `columns` kernel; a word may be a run-time size, an `index` operand) then the device
    addresses of `buffers`, in order (one 64-bit word each), valid for the launches that
    take it.

    ```mlir
    %t = gpu.address_table %a, %b : memref<?xf32>, memref<?xi32> -> memref<2xi64>
    %u = gpu.address_table values [16, 100] %a : memref<?xf32> -> memref<3xi64>
    %v = gpu.address_table values [16, %n, 3] %a : memref<?xf32> -> memref<4xi64>
    ```
    """

    name = "gpu.address_table"
    buffers = var_operand_def(MemRefType)
    sizes = var_operand_def(IndexType())
    values = opt_prop_def(DenseArrayBase)
    dynamic = opt_prop_def(DenseArrayBase)  # the words `sizes` give, in order
    table = result_def(MemRefType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, buffers: Sequence[SSAValue], values: Sequence[int | SSAValue] = (),
                 table_type: MemRefType | None = None):
        words = list(values)
        dynamic = [q for q, w in enumerate(words) if isinstance(w, SSAValue)]
        props = {"values": DenseArrayBase.from_list(i64, [0 if isinstance(w, SSAValue) else int(w)
                                                          for w in words])} if words else {}
        if dynamic:
            props["dynamic"] = DenseArrayBase.from_list(i64, dynamic)
        super().__init__(operands=[list(buffers), [cast(SSAValue, words[q]) for q in dynamic]], properties=props,
                         result_types=[table_type or MemRefType(i64, [len(words) + len(buffers)])])

    @classmethod
    def parse(cls, parser: Parser) -> AddressTableOp:
        words: list[int | UnresolvedOperand] = []
        if parser.parse_optional_keyword("values") is not None:
            def word() -> int | UnresolvedOperand:
                size = parser.parse_optional_unresolved_operand()
                return size if size is not None else parser.parse_integer(allow_boolean=False)

            words = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, word)
        buffers = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand) or []
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_type, parser.parse_type) or []
        parser.parse_punctuation("->")
        t = parser.parse_type()
        if not isinstance(t, MemRefType):
            parser.raise_error(f"gpu.address_table returns a memref, got {t}")
        if len(types) != len(buffers):
            parser.raise_error(f"gpu.address_table has {len(buffers)} buffers and {len(types)} types")
        values: list[int | SSAValue] = [w if isinstance(w, int) else parser.resolve_operand(w, IndexType())
                                        for w in words]
        op = cls(parser.resolve_operands(buffers, types, parser.pos), values, t)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        words = self.words()
        if words:
            printer.print_string(" values [")
            printer.print_list(words, lambda w: printer.print_operand(w) if isinstance(w, SSAValue)
                               else printer.print_string(str(w)))
            printer.print_string("]")
        if self.buffers:
            printer.print_string(" ")
            printer.print_list(self.buffers, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list((b.type for b in self.buffers), printer.print_attribute)
        printer.print_string(f" -> {self.table.type}")

    def value_list(self) -> list[int]:
        """The words, 0 for those the `sizes` give at run time."""
        return _ints(self.values)

    def words(self) -> list[int | SSAValue]:
        """The words: an int, or the `index` operand that gives it at run time."""
        words: list[int | SSAValue] = list(self.value_list())
        for q, size in zip(_ints(self.dynamic), self.sizes):
            words[q] = size
        return words

    def verify_(self) -> None:
        t = self.table.type
        assert isinstance(t, MemRefType)
        for prop in (self.values, self.dynamic):
            if prop is not None and prop.elt_type != i64:
                raise VerifyException("gpu.address_table values and dynamic words are i64")
        nv, nb = len(self.value_list()), len(self.buffers)
        dynamic = _ints(self.dynamic)
        if len(dynamic) != len(self.sizes) or any(not 0 <= q < nv for q in dynamic):
            raise VerifyException(f"gpu.address_table: {len(self.sizes)} sizes for the words {dynamic} of {nv}")
        if t.element_type != i64 or t.get_shape() != (nv + nb,):
            what = f"{nv} values and {nb} buffers" if nv else f"{nb} buffers"
            raise VerifyException(f"gpu.address_table of {what} returns memref<{nv + nb}xi64>, got {t}")


def _ints(a: DenseArrayBase | None) -> list[int]:
    return [] if a is None else [int(x) for x in cast("DenseArrayBase[IntegerType]", a).get_values()]


@irdl_op_definition
class TableBufferOp(IRDLOperation):
    """Device side: buffer `index` (plus the run-time `offset`, when given) of an address
    table (a kernel argument): its address loaded from global memory, viewed as a
    global buffer of the result's type. The offset picks a row of a table of rows (one
    column's buffers, in a code body shared by the columns of a cluster).

    ```mlir
    %ids = gpu.table_buffer %t 3 : memref<?xi64> -> memref<?xi32>
    %tab = gpu.table_buffer %t 3 [%row] : memref<?xi64> -> memref<?xf32>
    ```
    """

    name = "gpu.table_buffer"
    table = operand_def(MemRefType)
    offset = opt_operand_def(IndexType)
    index = prop_def(IntegerAttr[I64])
    buffer = result_def(MemRefType)

    def __init__(self, table: SSAValue, index: int, buffer_type: MemRefType, offset: SSAValue | None = None):
        super().__init__(operands=[table, [] if offset is None else [offset]],
                         properties={"index": IntegerAttr(index, i64)}, result_types=[buffer_type])

    @classmethod
    def parse(cls, parser: Parser) -> TableBufferOp:
        table = parser.parse_operand()
        index = parser.parse_integer(allow_boolean=False)
        offset = None
        if parser.parse_optional_punctuation("[") is not None:
            offset = parser.parse_operand()
            parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        parser.parse_type()
        parser.parse_punctuation("->")
        t = parser.parse_type()
        if not isinstance(t, MemRefType):
            parser.raise_error(f"gpu.table_buffer returns a memref, got {t}")
        op = cls(table, index, t, offset)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.table)
        printer.print_string(f" {self.index.value.data}")
        if self.offset is not None:
            printer.print_string(" [")
            printer.print_operand(self.offset)
            printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.table.type} -> {self.buffer.type}")

    def verify_(self) -> None:
        t = self.table.type
        assert isinstance(t, MemRefType)
        if t.element_type != i64 or len(t.get_shape()) != 1:
            raise VerifyException(f"gpu.table_buffer reads a 1-D i64 address table, got {t}")
        n = t.get_shape()[0]
        if self.index.value.data < 0 or (n != DYNAMIC_INDEX and self.index.value.data >= n):
            raise VerifyException(f"gpu.table_buffer index {self.index.value.data} is outside the table {t}")
        buffer_type = self.buffer.type
        assert isinstance(buffer_type, MemRefType)
        if memory_space_of(buffer_type) not in (0, 1):
            raise VerifyException("gpu.table_buffer returns a global buffer")


@irdl_attr_definition
class StageAttr(ParametrizedAttribute):
    """The stage a `gpu.launch_func` belongs to (attribute `gpu.stage`): its pipeline,
    stream and the stream's priority. The executor issues a pipeline's launches together
    (`Device.launch_pipeline`), each on its stream.

    ```mlir
    gpu.launch_func @kernels::@k ... {gpu.stage = #gpu.stage<pipeline 0, stream 1, priority 1>}
    ```
    """

    name = "gpu.stage"
    _pipeline: IntAttr
    _stream: IntAttr
    _priority: IntAttr

    def __init__(self, pipeline: int, stream: int, priority: int):
        super().__init__(IntAttr(pipeline), IntAttr(stream), IntAttr(priority))

    @property
    def pipeline(self) -> int:
        return self._pipeline.data

    @property
    def stream(self) -> int:
        return self._stream.data

    @property
    def priority(self) -> int:
        return self._priority.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        values = []
        with parser.in_angle_brackets():
            for n, word in enumerate(("pipeline", "stream", "priority")):
                if n:
                    parser.parse_punctuation(",")
                parser.parse_keyword(word)
                values.append(IntAttr(parser.parse_integer(allow_boolean=False, allow_negative=False)))
        return values

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<pipeline {self.pipeline}, stream {self.stream}, priority {self.priority}>")


STAGE_ATTR = "gpu.stage"
