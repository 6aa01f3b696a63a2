"""The schedule dialect: how each fusion runs (FusionStitching §4).

One `schedule.kernel` per fusion says how the kernel is launched and how its work is
split: a `mapping` (`loop`: one thread per output element; `row`: the fusion's rows,
i.e. the coordinates its reductions keep, are spread over threads, warps or blocks;
`gemm`: shared-memory tiles of a matrix product) with its parameters, the launch
dimensions (`?` where only known at run time), the shared-memory buffers, and the cost
estimate that chose it.

Inside, `schedule.group`s appear in execution order. A group is led by its sub-root (a
reduction, or an expensive elementwise op read by several groups) or by the fusion's
root; it holds the graph ops it computes (light producers are recomputed in each group
that needs them: index propagation), its composition scheme (`thread`, `warp`,
`block`) and where its result lives for later groups: `reg` (each thread's
registers), `lanes` (every lane of the row's warp, after a butterfly shuffle),
`shared @buf[offset]` (a shared-memory slot per row of the block, from `offset`, read
after a barrier; for an elementwise sub-root, with `row_dims`, a whole row per row of
the block) or `global` (a kernel output only). Root groups
of row kernels say which output dims are the rows (`row_dims`); `packed` groups are
independent parts that every thread of the grid takes elements of in turn.

Mapping parameters: `loop` {elements_per_thread}; `row` {threads_per_row,
rows_per_block, interleaved (consecutive threads take consecutive rows)}; `gemm`
{tile_m, tile_n, tile_k, thread_m, thread_n} (the block tile and each thread's
micro-tile). `cost` holds what is known statically (warps, global_bytes, smem_bytes);
the latency-evaluator adds its estimate (cycles, occupancy, ...).

```mlir
%y = schedule.kernel @ln row {rows_per_block = 1 : i64, threads_per_row = 256 : i64} grid [4096, 1, 1] block [256, 1, 1] cost {global_bytes = 25165824 : i64, warps = 32768 : i64} (%x) : (tensor<4096x768xf32>) -> tensor<4096x768xf32> {
^bb0(%x0: tensor<4096x768xf32>):
  schedule.shared @partials : memref<8xf32, 3>
  schedule.shared @results : memref<1xf32, 3>
  %s = schedule.group block -> shared @results[0] : tensor<4096xf32> {
    %r = graph.reduce sum %x0 dims [1] : (tensor<4096x768xf32>) -> tensor<4096xf32>
    schedule.yield %r : tensor<4096xf32>
  }
  %y = schedule.group block -> global : tensor<4096x768xf32> {
    %b = graph.broadcast %s dims [0] : (tensor<4096xf32>) -> tensor<4096x768xf32>
    %d = graph.sub %x0, %b : tensor<4096x768xf32>
    schedule.yield %d : tensor<4096x768xf32>
  }
  schedule.yield %y : tensor<4096x768xf32>
}
```
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
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
from xdsl.traits import IsTerminator, Pure, RecursiveMemoryEffect, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from fsir.dialects.stitch import check_region_signature, parse_region_op, print_region_op

MAPPINGS = ("loop", "row", "gemm")
COMPOSITIONS = ("thread", "warp", "block")
LOCATIONS = ("reg", "lanes", "shared", "global")
DYNAMIC = -1  # a launch dimension computed at run time from the sizes


def element_bytes(t: Attribute) -> int:
    """Bytes per element in memory (i1 is one byte)."""
    width = getattr(t, "bitwidth", None)
    if width is None:
        width = t.width.data if hasattr(t, "width") else 32  # type: ignore[attr-defined]
    return max(1, width // 8)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a `schedule.group` (its results) or a `schedule.kernel` (the kernel's results).

        schedule.yield %y : tensor<4x8xf32>
    """

    name = "schedule.yield"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator(), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        parent = self.parent_op()
        if parent is not None and not isinstance(parent, (KernelOp, GroupOp)):
            raise VerifyException("schedule.yield must end a schedule.kernel or a schedule.group")


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


def _parse_int_list(parser: Parser) -> list[int]:
    def item() -> int:
        if parser.parse_optional_punctuation("?") is not None:
            return DYNAMIC
        return parser.parse_integer()

    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, item)


def _fmt_int_list(values: Sequence[int]) -> str:
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
    composition = prop_def(StringAttr)
    storage = prop_def(StringAttr)
    buffer = opt_prop_def(SymbolRefAttr)
    offset = opt_prop_def(IntegerAttr)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, composition: str, location: str, result_types: Sequence[Attribute], body: Region,
                 buffer: str | None = None, offset: int | None = None):
        props: dict[str, Attribute] = {"composition": StringAttr(composition), "storage": StringAttr(location)}
        if buffer is not None:
            props["buffer"] = SymbolRefAttr(buffer)
            props["offset"] = IntegerAttr(offset or 0, i64)
        super().__init__(result_types=[list(result_types)], regions=[body], properties=props)

    @property
    def block(self) -> Block:
        return self.body.blocks[0]

    @classmethod
    def parse(cls, parser: Parser) -> GroupOp:
        comp = parser.parse_identifier()
        parser.parse_punctuation("->")
        loc = parser.parse_identifier()
        props: dict[str, Attribute] = {"composition": StringAttr(comp), "storage": StringAttr(loc)}
        if loc == "shared":
            props["buffer"] = SymbolRefAttr(parser.parse_symbol_name())
            parser.parse_punctuation("[")
            props["offset"] = IntegerAttr(parser.parse_integer(), i64)
            parser.parse_punctuation("]")
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
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([r.type for r in self.results], printer.print_attribute)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=True)

    def verify_(self) -> None:
        if self.composition.data not in COMPOSITIONS:
            raise VerifyException(f"unknown composition '{self.composition.data}' (expected {', '.join(COMPOSITIONS)})")
        if self.storage.data not in LOCATIONS:
            raise VerifyException(f"unknown result storage '{self.storage.data}' (expected {', '.join(LOCATIONS)})")
        if (self.storage.data == "shared") != (self.buffer is not None):
            raise VerifyException("a group's result lives in a shared buffer exactly when its storage is 'shared'")
        if self.body.blocks[0].args:
            raise VerifyException("a schedule.group region takes no block arguments")
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


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One kernel: mapping and its parameters, launch dims, shared buffers, cost, and the
    groups in execution order. Entry block arguments mirror the operands.

        %y = schedule.kernel @k loop {} grid [1, 1, 1] block [256, 1, 1] (%x) : (tensor<4xf32>) -> tensor<4xf32> {
        ^bb0(%x0: tensor<4xf32>):
          %g = schedule.group thread -> global : tensor<4xf32> {
            %e = graph.exp %x0 : tensor<4xf32>
            schedule.yield %e : tensor<4xf32>
          }
          schedule.yield %g : tensor<4xf32>
        }
    """

    name = "schedule.kernel"
    sym_name = prop_def(StringAttr)
    mapping = prop_def(StringAttr)
    params = prop_def(DictionaryAttr)
    grid = prop_def(DenseArrayBase)
    block_dims = prop_def(DenseArrayBase, prop_name="block")
    cost = opt_prop_def(DictionaryAttr)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, name: str, mapping: str, params: dict[str, int], grid: Sequence[int], block: Sequence[int],
                 inputs: Sequence[SSAValue], result_types: Sequence[Attribute], body: Region,
                 cost: dict[str, Attribute] | None = None):
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "mapping": StringAttr(mapping),
            "params": DictionaryAttr({k: IntegerAttr(v, i64) for k, v in params.items()}),
            "grid": DenseArrayBase.from_list(i64, list(grid)),
            "block": DenseArrayBase.from_list(i64, list(block)),
        }
        if cost is not None:
            props["cost"] = DictionaryAttr(cost)
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)], regions=[body],
                         properties=props)

    @property
    def block(self) -> Block:
        return self.body.blocks[0]

    def param(self, key: str) -> int:
        return self.params.data[key].value.data  # type: ignore[attr-defined]

    def launch(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return tuple(self.grid.get_values()), tuple(self.block_dims.get_values())  # type: ignore[return-value]

    def shared_buffers(self) -> dict[str, SharedOp]:
        return {op.sym_name.data: op for op in self.block.ops if isinstance(op, SharedOp)}

    def groups(self) -> list[GroupOp]:
        return [op for op in self.block.ops if isinstance(op, GroupOp)]

    def shared_bytes(self) -> int:
        return sum(b.bytes for b in self.shared_buffers().values())

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_symbol_name()
        mapping = parser.parse_identifier()
        params = parser.parse_attribute()
        if not isinstance(params, DictionaryAttr):
            parser.raise_error("expected the mapping parameters as a dictionary {key = value, ...}")
        parser.parse_keyword("grid")
        grid = _parse_int_list(parser)
        parser.parse_keyword("block")
        block = _parse_int_list(parser)
        props: dict[str, Attribute] = {
            "sym_name": name, "mapping": StringAttr(mapping), "params": params,
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
        printer.print_string(f" {self.mapping.data} ")
        printer.print_attribute(self.params)
        grid, block = self.launch()
        printer.print_string(f" grid {_fmt_int_list(grid)} block {_fmt_int_list(block)}")
        if self.cost is not None:
            printer.print_string(" cost ")
            printer.print_attribute(self.cost)
        print_region_op(printer, self)

    def verify_(self) -> None:
        check_region_signature(self, self.body, YieldOp.name)
        if self.mapping.data not in MAPPINGS:
            raise VerifyException(f"unknown mapping '{self.mapping.data}' (expected {', '.join(MAPPINGS)})")
        for key, value in self.params.data.items():
            if not isinstance(value, IntegerAttr):
                raise VerifyException(f"mapping parameter '{key}' must be an integer")
        grid, block = self.launch()
        if len(grid) != 3 or len(block) != 3:
            raise VerifyException("grid and block need 3 entries each (x, y, z)")
        if any(b < 1 for b in block):
            raise VerifyException(f"block dims {list(block)} must be positive")
        if math.prod(block) > 1024:
            raise VerifyException(f"a block has at most 1024 threads, got {math.prod(block)}")
        if any(g < 1 and g != DYNAMIC for g in grid):
            raise VerifyException(f"grid dims {list(grid)} must be positive or '?'")
        for op in self.block.ops:
            if not isinstance(op, (SharedOp, GroupOp, YieldOp)):
                raise VerifyException(
                    f"a schedule.kernel holds only schedule.shared and schedule.group ops, found '{op.name}'"
                )
        names = [op.sym_name.data for op in self.block.ops if isinstance(op, SharedOp)]
        if len(set(names)) != len(names):
            raise VerifyException("shared buffer names must be unique")

    def reference_region(self, run_block, args):
        """Evaluate the groups in order on the numpy reference interpreter (group
        regions see the kernel's values, so one environment serves them all)."""
        from fsir.runtime.reference import evaluate_op

        env = dict(zip(self.block.args, args))
        for op in self.block.ops:
            if isinstance(op, YieldOp):
                return [env[v] for v in op.operands]
            if not isinstance(op, GroupOp):
                continue
            for inner in op.block.ops:
                if isinstance(inner, YieldOp):
                    env.update(zip(op.results, (env[v] for v in inner.operands)))
                else:
                    env.update(zip(inner.results, evaluate_op(inner, [env[v] for v in inner.operands])))
        return []


Schedule = Dialect("schedule", [KernelOp, GroupOp, SharedOp, YieldOp], [])
