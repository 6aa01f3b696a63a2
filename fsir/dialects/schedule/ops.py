"""The schedule dialect's ops: `schedule.kernel` (one per fusion: its mapping's
parameters, launch dimensions and cost), the `schedule.group`s inside it (their
composition and where their results live), `schedule.shared` buffers and `schedule.yield`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    FixedBitwidthType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import RecursiveMemoryEffect, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from fsir.dialects.common import TensorYieldOp
from fsir.dialects.schedule.params import (
    DYNAMIC,
    MAX_BLOCK_THREADS,
    Mapping,
    MappingAttr,
    MappingParamsAttr,
    RowParamsAttr,
    TiledParamsAttr,
    parse_word,
)
from fsir.dialects.schedule.registry import PARAMS_OF
from fsir.dialects.stitch import check_region_signature, parse_region_op, print_region_op


class Composition(StrEnum):
    """Who computes one row of a group: a thread, a warp (shuffles) or a block (shared
    memory and barriers)."""

    THREAD = "thread"
    WARP = "warp"
    BLOCK = "block"


class Storage(StrEnum):
    """Where a group's results live for later groups."""

    REG = "reg"
    LANES = "lanes"
    SHARED = "shared"
    GLOBAL = "global"


@irdl_attr_definition
class CompositionAttr(EnumAttribute[Composition], SpacedOpaqueSyntaxAttribute):
    """`#schedule<composition warp>`; printed as the bare word in `schedule.group`."""

    name = "schedule.composition"


@irdl_attr_definition
class StorageAttr(EnumAttribute[Storage], SpacedOpaqueSyntaxAttribute):
    """`#schedule<storage shared>`; printed as the bare word in `schedule.group`."""

    name = "schedule.storage"


def element_bytes(t: Attribute) -> int:
    """Bytes per element in memory (i1 is one byte; a type of no fixed width, 4)."""
    width = t.bitwidth if isinstance(t, FixedBitwidthType) else 32
    return max(1, width // 8)


def int_values(attr: Attribute) -> tuple[int, ...]:
    """The integers of an integer `DenseArrayBase` (launch dims, `row_dims`, a
    reduction's dims)."""
    assert isinstance(attr, DenseArrayBase) and isinstance(attr.elt_type, IntegerType)
    return cast("DenseArrayBase[IntegerType]", attr).get_values()


def inner_value(v: SSAValue) -> SSAValue:
    """The graph value a kernel-level value stands for: a group's result is the value
    the group yields; any other value is itself."""
    op = v.owner
    if isinstance(op, GroupOp):
        assert isinstance(v, OpResult)
        return op.yielded()[v.index]
    return v


def _yield_of(block: Block) -> YieldOp:
    last = block.last_op
    assert isinstance(last, YieldOp), "the verifier: a kernel or group ends with schedule.yield"
    return last


@irdl_op_definition
class YieldOp(TensorYieldOp):
    """Ends a `schedule.group` (its results) or a `schedule.kernel` (the kernel's results).

        schedule.yield %y : tensor<4x8xf32>
    """

    name = "schedule.yield"
    PARENT_ERROR: ClassVar = "schedule.yield must end a schedule.kernel or a schedule.group"

    @classmethod
    def parents(cls) -> tuple[type[Operation], ...]:
        return (KernelOp, GroupOp)


@irdl_op_definition
class SharedOp(IRDLOperation):
    """A shared-memory buffer of the kernel (one per block), addressed by its symbol.

        schedule.shared @partials : memref<8xf32, 3>
    """

    name = "schedule.shared"
    sym_name = prop_def(StringAttr)
    buffer_type = prop_def(MemRefType)
    traits = traits_def(SymbolOpInterface())

    @classmethod
    def parse(cls, parser: Parser) -> SharedOp:
        name = parser.parse_symbol_name().data
        parser.parse_punctuation(":")
        pos = parser.pos
        t = parser.parse_type()
        if not isinstance(t, MemRefType):
            parser.raise_error("expected a memref type", pos, parser.pos)
        op = cls(name, t)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer_type)
        printer.print_op_attributes(self.attributes)

    def __init__(self, name: str, buffer_type: MemRefType):
        super().__init__(properties={"sym_name": StringAttr(name), "buffer_type": buffer_type})

    @property
    def size(self) -> int:
        return math.prod(self.buffer_type.get_shape())

    @property
    def bytes(self) -> int:
        return self.size * element_bytes(self.buffer_type.element_type)

    def verify_(self) -> None:
        t = self.buffer_type
        if any(d < 0 for d in t.get_shape()) or len(t.get_shape()) != 1:
            raise VerifyException("a shared buffer must be 1-D with a static size")
        space = t.memory_space
        if not (isinstance(space, IntegerAttr) and space.value.data == 3):
            raise VerifyException("a shared buffer must be in memory space 3 (workgroup)")
        if not isinstance(self.parent_op(), KernelOp):
            raise VerifyException("schedule.shared must be directly inside a schedule.kernel")


def parse_int_list(parser: Parser) -> list[int]:
    def item() -> int:
        if parser.parse_optional_punctuation("?") is not None:
            return DYNAMIC
        return parser.parse_integer()

    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, item)


def format_int_list(values: Sequence[int]) -> str:
    return "[" + ", ".join("?" if v == DYNAMIC else str(v) for v in values) + "]"


@irdl_op_definition
class GroupOp(IRDLOperation):
    """A group: a sub-root (or the root) and the ops computed with it, its composition
    scheme and where its results live. Its region uses kernel arguments and earlier
    groups' results directly.

        %m = schedule.group warp -> lanes : tensor<4xf32> {
          %r = graph.reduce max %x0 dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
          schedule.yield %r : tensor<4xf32>
        }
    """

    name = "schedule.group"
    composition = prop_def(CompositionAttr)
    storage = prop_def(StorageAttr)
    buffer = opt_prop_def(SymbolRefAttr)
    offset = opt_prop_def(IntegerAttr)
    # which result dims are the rows (a row kernel's root or elementwise sub-root group)
    row_dims_attr = opt_prop_def(DenseArrayBase, prop_name="row_dims")
    # an independent part: every thread of the grid takes its elements in turn
    packed_attr = opt_prop_def(UnitAttr, prop_name="packed")
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, composition: Composition, storage: Storage, result_types: Sequence[Attribute],
                 body: Region, buffer: str | None = None, offset: int | None = None,
                 row_dims: Sequence[int] | None = None, packed: bool = False):
        props = GroupOp.properties_of(composition, storage, buffer, offset, row_dims, packed)
        super().__init__(result_types=[list(result_types)], regions=[body], properties=props)

    @staticmethod
    def properties_of(composition: Composition, storage: Storage, buffer: str | None = None,
                      offset: int | None = None, row_dims: Sequence[int] | None = None,
                      packed: bool = False) -> dict[str, Attribute]:
        """A group's properties (a kernel re-targeted to another configuration sets
        them on its groups in place)."""
        props: dict[str, Attribute] = {"composition": CompositionAttr(composition), "storage": StorageAttr(storage)}
        if buffer is not None:
            props["buffer"] = SymbolRefAttr(buffer)
            props["offset"] = IntegerAttr(offset or 0, i64)
        if row_dims is not None:
            props["row_dims"] = DenseArrayBase.from_list(i64, list(row_dims))
        if packed:
            props["packed"] = UnitAttr()
        return props

    @property
    def block(self) -> Block:
        return self.body.blocks[0]

    def yielded(self) -> list[SSAValue]:
        """The graph values the group yields (its results, inside the group)."""
        return list(_yield_of(self.block).operands)

    def shared_slot(self) -> tuple[str, int]:
        """(buffer, offset) of a `shared` group's results."""
        assert self.buffer is not None and self.offset is not None, "the verifier: a shared group has a buffer"
        return self.buffer.root_reference.data, self.offset.value.data

    def row_dims(self) -> list[int]:
        """The dims of a root or elementwise sub-root group's results that are the rows
        (the `row_dims` property; none given: [])."""
        attr = self.row_dims_attr
        return [] if attr is None else list(int_values(attr))

    @property
    def has_row_dims(self) -> bool:
        """Whether the group says which dims are its rows (`row_dims`, maybe none)."""
        return self.row_dims_attr is not None

    @property
    def packed(self) -> bool:
        """An independent part: every thread of the grid takes its elements in turn."""
        return self.packed_attr is not None

    @classmethod
    def parse(cls, parser: Parser) -> GroupOp:
        comp = Composition(parse_word(parser, Composition, "composition"))
        parser.parse_punctuation("->")
        storage = Storage(parse_word(parser, Storage, "result storage"))
        props: dict[str, Attribute] = {"composition": CompositionAttr(comp), "storage": StorageAttr(storage)}
        if storage == Storage.SHARED:
            props["buffer"] = SymbolRefAttr(parser.parse_symbol_name())
            parser.parse_punctuation("[")
            props["offset"] = IntegerAttr(parser.parse_integer(), i64)
            parser.parse_punctuation("]")
        if parser.parse_optional_keyword("row_dims") is not None:
            dims = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
            props["row_dims"] = DenseArrayBase.from_list(i64, dims)
        if parser.parse_optional_keyword("packed") is not None:
            props["packed"] = UnitAttr()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = [parser.parse_type()]
        while parser.parse_optional_punctuation(","):
            types.append(parser.parse_type())
        region = parser.parse_region()
        return cls.build(result_types=[types], regions=[region], properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.composition.data} -> {self.storage.data}")
        if self.buffer is not None:
            printer.print_string(" ")
            printer.print_attribute(self.buffer)
            printer.print_string(f"[{self.offset.value.data if self.offset else 0}]")
        if self.row_dims_attr is not None:
            printer.print_string(f" row_dims [{', '.join(map(str, self.row_dims()))}]")
        if self.packed:
            printer.print_string(" packed")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([r.type for r in self.results], printer.print_attribute)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=True)

    def verify_(self) -> None:
        if (self.storage.data == Storage.SHARED) != (self.buffer is not None):
            raise VerifyException("a group's result lives in a shared buffer exactly when its storage is 'shared'")
        if self.body.blocks[0].args:
            raise VerifyException("a schedule.group region takes no block arguments")
        self._verify_rows()
        last = self.block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("a schedule.group must end with schedule.yield")
        yt = [v.type for v in last.operands]
        rt = [r.type for r in self.results]
        if yt != rt:
            raise VerifyException("schedule.yield types must be the group's result types")
        for op in self.block.ops:
            if op is not last and not op.name.startswith("graph."):
                raise VerifyException(f"a schedule.group may hold only graph ops, found '{op.name}'")
        kernel = self.parent_op()
        if not isinstance(kernel, KernelOp):
            raise VerifyException("schedule.group must be directly inside a schedule.kernel")
        if self.buffer is not None:
            name = self.buffer.root_reference.data
            buf = kernel.shared_buffers().get(name)
            if buf is None:
                raise VerifyException(f"unknown shared buffer @{name}")
            off = self.offset.value.data if self.offset else 0
            if not 0 <= off or off + len(self.results) > buf.size:
                raise VerifyException(f"offset {off} is out of bounds of @{name} ({buf.size} elements)")


    def _verify_rows(self) -> None:
        """`row_dims`: increasing dims of every result; `packed` (no rows) excludes them."""
        if self.row_dims_attr is None:
            return
        if self.packed:
            raise VerifyException("a packed group has no row_dims (every thread takes its elements in turn)")
        dims = self.row_dims()
        rank = min((len(t.get_shape()) for t in self.result_types if isinstance(t, TensorType)), default=0)
        if any(not 0 <= d < rank for d in dims) or any(b <= a for a, b in zip(dims, dims[1:])):
            raise VerifyException(f"row_dims {dims} must be increasing dims of the group's results (rank {rank})")


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One kernel: its mapping parameters (whose kind is the mapping), launch dims,
    shared buffers, cost, and the groups in execution order. Entry block arguments
    mirror the operands.

        %y = schedule.kernel @k loop<vector_width = 4> grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
        ^bb0(%x0: tensor<4x8xf32>):
          %g = schedule.group thread -> global : tensor<4x8xf32> {
            %e = graph.exp %x0 : tensor<4x8xf32>
            schedule.yield %e : tensor<4x8xf32>
          }
          schedule.yield %g : tensor<4x8xf32>
        }
    """  # noqa: E501 (an IR example)

    name = "schedule.kernel"
    sym_name = prop_def(StringAttr)
    params = prop_def(MappingParamsAttr)
    grid = prop_def(DenseArrayBase)
    block_dims = prop_def(DenseArrayBase, prop_name="block")
    cost = opt_prop_def(DictionaryAttr)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, name: str, params: MappingParamsAttr, grid: Sequence[int], block: Sequence[int],
                 inputs: Sequence[SSAValue], result_types: Sequence[Attribute], body: Region,
                 cost: dict[str, Attribute] | None = None):
        """`params` is the mapping's parameter attribute; its kind is the kernel's mapping."""
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "params": params,
            "grid": DenseArrayBase.from_list(i64, list(grid)),
            "block": DenseArrayBase.from_list(i64, list(block)),
        }
        if cost is not None:
            props["cost"] = DictionaryAttr(cost)
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)], regions=[body],
                         properties=props)

    @property
    def mapping(self) -> MappingAttr:
        """The mapping, the kind of `params`."""
        return MappingAttr(self.params.MAPPING)

    @property
    def block(self) -> Block:
        return self.body.blocks[0]

    def launch(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return int_values(self.grid), int_values(self.block_dims)

    def yielded(self) -> list[SSAValue]:
        """The values the kernel yields (its results, inside the kernel)."""
        return list(_yield_of(self.block).operands)

    def shared_buffers(self) -> dict[str, SharedOp]:
        return {op.sym_name.data: op for op in self.block.ops if isinstance(op, SharedOp)}

    def groups(self) -> list[GroupOp]:
        return [op for op in self.block.ops if isinstance(op, GroupOp)]

    def shared_bytes(self) -> int:
        return sum(b.bytes for b in self.shared_buffers().values())

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_symbol_name()
        mapping = Mapping(parse_word(parser, Mapping, "mapping"))
        params_type = PARAMS_OF[mapping]
        params = params_type.new(params_type.parse_parameters(parser))
        parser.parse_keyword("grid")
        grid = parse_int_list(parser)
        parser.parse_keyword("block")
        block = parse_int_list(parser)
        props: dict[str, Attribute] = {
            "sym_name": name, "params": params,
            "grid": DenseArrayBase.from_list(i64, grid), "block": DenseArrayBase.from_list(i64, block),
        }
        if parser.parse_optional_keyword("cost") is not None:
            cost = parser.parse_attribute()
            if not isinstance(cost, DictionaryAttr):
                parser.raise_error("expected the cost estimate as a dictionary {key = value, ...}")
            props["cost"] = cost
        return parse_region_op(parser, cls, props)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(f" {self.params.MAPPING}")
        self.params.print_parameters(printer)
        grid, block = self.launch()
        printer.print_string(f" grid {format_int_list(grid)} block {format_int_list(block)}")
        if self.cost is not None:
            printer.print_string(" cost ")
            printer.print_attribute(self.cost)
        print_region_op(printer, self)

    def verify_(self) -> None:
        check_region_signature(self, self.body, YieldOp.name)
        grid, block = self.launch()
        if len(grid) != 3 or len(block) != 3:
            raise VerifyException("grid and block need 3 entries each (x, y, z)")
        if any(b < 1 for b in block):
            raise VerifyException(f"block dims {list(block)} must be positive")
        if math.prod(block) > MAX_BLOCK_THREADS:
            raise VerifyException(f"a block has at most {MAX_BLOCK_THREADS} threads, got {math.prod(block)}")
        if any(g < 1 and g != DYNAMIC for g in grid):
            raise VerifyException(f"grid dims {list(grid)} must be positive or '?'")
        p = self.params
        if p.threads is not None and block != (p.threads, 1, 1):
            if isinstance(p, RowParamsAttr):
                what = f"threads_per_row x rows_per_block ({p.threads_per_row} x {p.rows_per_block})"
            elif isinstance(p, TiledParamsAttr):
                what = f"a {p.tile_m}x{p.tile_n} tile of {p.thread_m}x{p.thread_n} micro-tiles"
            else:
                what = f"the {p.MAPPING} mapping"
            raise VerifyException(f"{what} needs block [{p.threads}, 1, 1], got {list(block)}")
        p.verify_launch(grid, block)
        for op in self.block.ops:
            if not isinstance(op, (SharedOp, GroupOp, YieldOp)):
                raise VerifyException(
                    f"a schedule.kernel holds only schedule.shared and schedule.group ops, found '{op.name}'"
                )
        names = [op.sym_name.data for op in self.block.ops if isinstance(op, SharedOp)]
        if len(set(names)) != len(names):
            raise VerifyException("shared buffer names must be unique")
