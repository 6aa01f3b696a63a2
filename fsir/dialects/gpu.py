"""fsir's `gpu` dialect: upstream MLIR's gpu ops with MLIR's custom syntax.

xDSL 0.74 ships a `gpu` dialect whose ops print only in generic form and which lacks
`gpu.shuffle`, `gpu.dynamic_shared_memory` and workgroup attributions on `gpu.func`.
This module defines the ops fsir emits with MLIR's exact spelling:

```mlir
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>, %n: index) workgroup(%smem : memref<256xf32, 3>) kernel
        attributes {gpu.known_block_size = array<i32: 256, 1, 1>} {
      %tid = gpu.thread_id x
      %r, %valid = gpu.shuffle xor %v, %c16, %c32 : f32
      %x0, %x1 = gpu.load_vector %a[%i] : memref<?xf32> -> f32, f32
      gpu.barrier
      gpu.return
    }
  }
  func.func @host(%x: memref<?xf32>, %n: index) {
    gpu.launch_func @kernels::@k blocks in (%gx, %c1, %c1) threads in (%c256, %c1, %c1)
        args(%x : memref<?xf32>, %n : index)
    func.return
  }
}
```

`gpu.load_vector` / `gpu.store_vector` (fsir's own: 2 or 4 consecutive elements in one
memory instruction, PTX `ld.global.v4.f32`) are what upstream MLIR spells as
`vector.load` / `vector.store` of a `vector<4xf32>`; fsir keeps scalars in registers and
has no vector types, so they take and return the elements as separate values.

The other upstream ops (alloc, dealloc, memcpy, wait, launch, terminator, yield,
host_register, ...) are xDSL's own classes, re-exported unchanged (generic
syntax). Because xDSL's universe already registers a dialect named `gpu`, this one is
registered through `fsir.registry.OVERRIDING_DIALECTS` and replaces xDSL's inside fs-opt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects import gpu as _xgpu
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I32,
    I64,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
    f32,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.dialects.builtin import ModuleOp as BuiltinModuleOp
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    AnyAttr,
    AnyOf,
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    NoMemoryEffect,
    NoTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from fsir.dialects.common import print_result_types

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


class ShuffleModeEnum(StrEnum):
    XOR = "xor"
    UP = "up"
    DOWN = "down"
    IDX = "idx"


@irdl_attr_definition
class ShuffleModeAttr(EnumAttribute[ShuffleModeEnum], SpacedOpaqueSyntaxAttribute):
    """`#gpu<shuffle_mode xor>`; printed as the bare keyword inside gpu.shuffle."""

    name = "gpu.shuffle_mode"


# ----------------------------------------------------------------------------- ids


class _DimIdOp(IRDLOperation):
    dimension = prop_def(DimensionAttr)
    upper_bound = opt_prop_def(IntegerAttr[IndexType])
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$dimension (`upper_bound` $upper_bound^)? attr-dict"

    def __init__(self, dim: str | DimensionAttr):
        if isinstance(dim, str):
            dim = DimensionAttr(DimensionEnum(dim))
        super().__init__(result_types=[IndexType()], properties={"dimension": dim})


@irdl_op_definition
class ThreadIdOp(_DimIdOp):
    """The thread index within its block along one dimension.

    ```mlir
    %tid = gpu.thread_id x
    %tid = gpu.thread_id x upper_bound 256
    ```
    """

    name = "gpu.thread_id"


@irdl_op_definition
class BlockIdOp(_DimIdOp):
    """The block index within the grid along one dimension.

    ```mlir
    %bid = gpu.block_id y
    ```
    """

    name = "gpu.block_id"


@irdl_op_definition
class BlockDimOp(_DimIdOp):
    """The number of threads per block along one dimension.

    ```mlir
    %bdim = gpu.block_dim x
    ```
    """

    name = "gpu.block_dim"


@irdl_op_definition
class GridDimOp(_DimIdOp):
    """The number of blocks in the grid along one dimension.

    ```mlir
    %gdim = gpu.grid_dim x
    ```
    """

    name = "gpu.grid_dim"


@irdl_op_definition
class GlobalIdOp(_DimIdOp):
    """block_id * block_dim + thread_id along one dimension.

    ```mlir
    %gid = gpu.global_id x
    ```
    """

    name = "gpu.global_id"


class _NoDimIdOp(IRDLOperation):
    upper_bound = opt_prop_def(IntegerAttr[IndexType])
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "(`upper_bound` $upper_bound^)? attr-dict"

    def __init__(self):
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class LaneIdOp(_NoDimIdOp):
    """The lane of the thread within its warp (subgroup).

    ```mlir
    %lane = gpu.lane_id
    ```
    """

    name = "gpu.lane_id"


@irdl_op_definition
class SubgroupSizeOp(_NoDimIdOp):
    """The warp size (32 on NVIDIA GPUs).

    ```mlir
    %ws = gpu.subgroup_size : index
    ```
    """

    name = "gpu.subgroup_size"
    assembly_format = "(`upper_bound` $upper_bound^)? attr-dict `:` type($result)"


@irdl_op_definition
class SubgroupIdOp(_NoDimIdOp):
    """The warp index within the block.

    ```mlir
    %wid = gpu.subgroup_id : index
    ```
    """

    name = "gpu.subgroup_id"
    assembly_format = "(`upper_bound` $upper_bound^)? attr-dict `:` type($result)"


@irdl_op_definition
class NumSubgroupsOp(_NoDimIdOp):
    """The number of warps in the block.

    ```mlir
    %nw = gpu.num_subgroups : index
    ```
    """

    name = "gpu.num_subgroups"
    assembly_format = "(`upper_bound` $upper_bound^)? attr-dict `:` type($result)"


# ----------------------------------------------------------------- sync and shuffle


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """Waits until all threads of the block reach it (PTX `bar.sync 0`).

    ```mlir
    gpu.barrier
    ```
    """

    name = "gpu.barrier"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class ShuffleOp(IRDLOperation):
    """Exchanges a 32-bit value between the lanes of a warp.

    `width` splits the warp into segments of `width` lanes (a power of two, at most
    32); `valid` is false where the source lane lies outside the lane's segment, and
    then `result` is the lane's own `value`. All 32 lanes of the warp must execute
    the shuffle. Modes: `xor` (butterfly, lane ^ offset), `up` (lane - offset),
    `down` (lane + offset), `idx` (lane `offset`).

    ```mlir
    %r, %valid = gpu.shuffle xor %v, %c16, %c32 : f32
    ```
    """

    name = "gpu.shuffle"


    T: ClassVar = VarConstraint("T", AnyAttr())

    mode = prop_def(ShuffleModeAttr)
    value = operand_def(T)
    offset = operand_def(i32)
    width = operand_def(i32)
    result = result_def(T)
    valid = result_def(i1)

    traits = traits_def(NoMemoryEffect())

    assembly_format = "$mode $value `,` $offset `,` $width attr-dict `:` type($value)"

    def __init__(
        self,
        mode: str | ShuffleModeAttr,
        value: SSAValue | Operation,
        offset: SSAValue | Operation,
        width: SSAValue | Operation,
    ):
        if isinstance(mode, str):
            mode = ShuffleModeAttr(ShuffleModeEnum(mode))
        value = SSAValue.get(value)
        super().__init__(
            operands=[value, offset, width],
            result_types=[value.type, i1],
            properties={"mode": mode},
        )

    def verify_(self) -> None:
        t = self.value.type
        if t not in (f32, i32):
            raise VerifyException(
                f"gpu.shuffle value must be a 32-bit type (f32 or i32), got {t}"
            )


# ----------------------------------------------------------------- vector memory access


VECTOR_WIDTHS = (2, 4)
MAX_VECTOR_BYTES = 16


def _check_vector(op: IRDLOperation, memref_type: Attribute, values: Sequence[Attribute], n_indices: int) -> None:
    if not isinstance(memref_type, MemRefType):
        raise VerifyException(f"{op.name} needs a memref, got {memref_type}")
    elem = memref_type.element_type
    if len(values) not in VECTOR_WIDTHS:
        raise VerifyException(f"{op.name} moves 2 or 4 elements, got {len(values)}")
    if any(t != elem for t in values):
        raise VerifyException(
            f"{op.name} elements must have the memref's element type {elem}, got "
            f"{', '.join(map(str, values))}"
        )
    if n_indices != memref_type.get_num_dims():
        raise VerifyException(
            f"{op.name} needs {memref_type.get_num_dims()} indices for {memref_type}, got {n_indices}"
        )
    bits = getattr(elem, "bitwidth", None)
    if bits is None or bits == 1 or bits > 32 or len(values) * bits > 8 * MAX_VECTOR_BYTES:
        raise VerifyException(
            f"{op.name} needs elements of 8 to 32 bits and at most {MAX_VECTOR_BYTES} bytes in all, "
            f"got {len(values)} x {elem}"
        )


def _parse_access(parser: Parser) -> tuple[list[UnresolvedOperand], UnresolvedOperand, list[UnresolvedOperand]]:
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


def _parse_load(
    parser: Parser, name: str, flag: str | None = None
) -> tuple[SSAValue, Sequence[SSAValue], Sequence[Attribute], bool]:
    """`%buf[%i, ...] [flag] : memref<...> -> T, ...` of a load into several results:
    the memref, its indices, the result types, and whether the keyword `flag` stood there."""
    pos = parser.pos
    values, mem, indices = _parse_access(parser)
    if values:
        parser.raise_error(f"{name} takes one memref operand", pos, parser.pos)
    has_flag = flag is not None and parser.parse_optional_keyword(flag) is not None
    parser.parse_punctuation(":")
    memref = parser.resolve_operand(mem, parser.parse_type())
    idx = [parser.resolve_operand(i, IndexType()) for i in indices]
    parser.parse_punctuation("->")
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    return memref, idx, types, has_flag


def _print_access(printer: Printer, memref: SSAValue, indices: Sequence[SSAValue]) -> None:
    printer.print_ssa_value(memref)
    printer.print_string("[")
    printer.print_list(indices, printer.print_ssa_value)
    printer.print_string("]")


@irdl_op_definition
class LoadVectorOp(IRDLOperation):
    """Loads 2 or 4 consecutive elements `memref[i], ..., memref[i + n - 1]` in one
    memory instruction (PTX `ld.global.v4.f32`). The last index must be a multiple of
    the width (the address must be aligned to the access's size, as the hardware
    requires); fsir's vectorizer (`fsir.lowering.vectorize`) forms these from scalar
    `memref.load`s it proves consecutive and aligned.

    ```mlir
    %a, %b, %c, %d = gpu.load_vector %buf[%i] : memref<?xf32> -> f32, f32, f32, f32
    ```
    """

    name = "gpu.load_vector"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType())
    values = var_result_def()

    def __init__(self, memref: SSAValue, indices: Sequence[SSAValue], width: int):
        assert isinstance(memref.type, MemRefType)
        elem = memref.type.element_type
        super().__init__(operands=[memref, indices], result_types=[[elem] * width])

    @classmethod
    def parse(cls, parser: Parser) -> LoadVectorOp:
        memref, idx, types, _ = _parse_load(parser, cls.name)
        op = cls.create(operands=[memref, *idx], result_types=types)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_access(printer, self.memref, self.indices)
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)
        printer.print_string(" -> ")
        printer.print_list([r.type for r in self.values], printer.print_attribute)

    def verify_(self) -> None:
        _check_vector(self, self.memref.type, [r.type for r in self.values], len(self.indices))


@irdl_op_definition
class StoreVectorOp(IRDLOperation):
    """Stores 2 or 4 values to consecutive elements `memref[i], ..., memref[i + n - 1]`
    in one memory instruction (PTX `st.global.v4.f32`); the last index must be a
    multiple of the width.

    ```mlir
    gpu.store_vector %a, %b, %c, %d, %buf[%i] : memref<?xf32>
    ```
    """

    name = "gpu.store_vector"

    values = var_operand_def()
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType())

    irdl_options = (AttrSizedOperandSegments(),)

    def __init__(self, values: Sequence[SSAValue], memref: SSAValue, indices: Sequence[SSAValue]):
        super().__init__(operands=[values, memref, indices])

    @classmethod
    def parse(cls, parser: Parser) -> StoreVectorOp:
        values, mem, indices = _parse_access(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        memref = parser.resolve_operand(mem, t)
        elem = t.element_type if isinstance(t, MemRefType) else t
        vals = [parser.resolve_operand(v, elem) for v in values]
        idx = [parser.resolve_operand(i, IndexType()) for i in indices]
        return cls(vals, memref, idx)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.values, printer.print_ssa_value)
        printer.print_string(", ")
        _print_access(printer, self.memref, self.indices)
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)

    def verify_(self) -> None:
        _check_vector(self, self.memref.type, [v.type for v in self.values], len(self.indices))


class ReduceOpEnum(StrEnum):
    ADD = "add"
    MUL = "mul"
    MINUI = "minui"
    MINSI = "minsi"
    MINNUMF = "minnumf"
    MAXUI = "maxui"
    MAXSI = "maxsi"
    MAXNUMF = "maxnumf"
    AND = "and"
    OR = "or"
    XOR = "xor"
    MINIMUMF = "minimumf"
    MAXIMUMF = "maximumf"


_FLOAT_REDUCTIONS = {"add", "mul", "minnumf", "maxnumf", "minimumf", "maximumf"}
_INT_REDUCTIONS = {"add", "mul", "minui", "minsi", "maxui", "maxsi", "and", "or", "xor"}


@irdl_attr_definition
class ReduceOpAttr(EnumAttribute[ReduceOpEnum], SpacedOpaqueSyntaxAttribute):
    """`#gpu<all_reduce_op add>` with MLIR's current set of reductions."""

    name = "gpu.all_reduce_op"


@irdl_op_definition
class SubgroupReduceOp(IRDLOperation):
    """Reduces a value across the lanes of a warp (or of each cluster of `size` lanes);
    every lane gets the result. All 32 lanes must execute it.

    ```mlir
    %sum = gpu.subgroup_reduce add %v : (f32) -> f32
    %max = gpu.subgroup_reduce maxnumf %v cluster(size = 8) : (f32) -> f32
    ```
    """

    name = "gpu.subgroup_reduce"

    T: ClassVar = VarConstraint("T", AnyAttr())

    op = prop_def(ReduceOpAttr)
    value = operand_def(T)
    uniform = opt_prop_def(UnitAttr)
    cluster_size = opt_prop_def(IntegerAttr[I32])
    result = result_def(T)

    traits = traits_def(NoMemoryEffect())

    assembly_format = (
        "$op $value (`uniform` $uniform^)? (`cluster` `(` `size` `=` $cluster_size^ `)`)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self, op: str | ReduceOpAttr, value: SSAValue | Operation, cluster_size: int | None = None
    ):
        if isinstance(op, str):
            op = ReduceOpAttr(ReduceOpEnum(op))
        value = SSAValue.get(value)
        props: dict[str, Attribute | None] = {"op": op}
        if cluster_size is not None:
            props["cluster_size"] = IntegerAttr(cluster_size, i32)
        super().__init__(operands=[value], result_types=[value.type], properties=props)

    @property
    def size(self) -> int:
        return 32 if self.cluster_size is None else self.cluster_size.value.data

    def verify_(self) -> None:
        t = self.value.type
        kind = self.op.data.value
        if t == f32:
            allowed = _FLOAT_REDUCTIONS
        elif t == i32:
            allowed = _INT_REDUCTIONS
        else:
            raise VerifyException(f"gpu.subgroup_reduce value must be f32 or i32, got {t}")
        if kind not in allowed:
            raise VerifyException(f"gpu.subgroup_reduce {kind} is not defined on {t}")
        if self.size not in (1, 2, 4, 8, 16, 32):
            raise VerifyException(
                f"gpu.subgroup_reduce cluster size must be a power of two <= 32, got {self.size}"
            )


@irdl_op_definition
class DynamicSharedMemoryOp(IRDLOperation):
    """The block's dynamic shared memory (sized at launch) as a 1-D i8 buffer.

    Typed buffers are carved out of it with `memref.view`.

    ```mlir
    %dyn = gpu.dynamic_shared_memory : memref<?xi8, 3>
    %buf = memref.view %dyn[%c0][] : memref<?xi8, 3> to memref<256xf32, 3>
    ```
    """

    name = "gpu.dynamic_shared_memory"
    result_memref = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result_memref)"

    def __init__(self, result_type: MemRefType | None = None):
        if result_type is None:
            result_type = MemRefType(
                i8, [DYNAMIC_INDEX], memory_space=IntegerAttr(3, i64)
            )
        super().__init__(result_types=[result_type])

    def verify_(self) -> None:
        t = self.result_memref.type
        assert isinstance(t, MemRefType)
        if (
            t.element_type != i8
            or t.get_shape() != (DYNAMIC_INDEX,)
            or memory_space_of(t) != WORKGROUP_ADDRESS_SPACE
        ):
            raise VerifyException(
                "gpu.dynamic_shared_memory must return memref<?xi8, 3>, got " f"{t}"
            )


# ------------------------------------------------------------------ module and func


@irdl_op_definition
class ModuleOp(IRDLOperation):
    """A module of device code (compiled into one PTX module).

    ```mlir
    gpu.module @kernels {
      gpu.func @k() kernel {
        gpu.return
      }
    }
    ```
    """

    name = "gpu.module"

    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())

    traits = traits_def(
        IsolatedFromAbove(), NoTerminator(), SymbolOpInterface(), SymbolTable()
    )

    def __init__(self, name: str | StringAttr, body: Region | None = None):
        if isinstance(name, str):
            name = StringAttr(name)
        if body is None:
            body = Region(Block())
        super().__init__(properties={"sym_name": name}, regions=[body])

    @classmethod
    def parse(cls, parser: Parser) -> ModuleOp:
        name = parser.parse_symbol_name()
        attrs = parser.parse_optional_attr_dict_with_keyword(["sym_name"])
        body = parser.parse_region()
        if not body.blocks:
            body.add_block(Block())
        op = cls(name, body)
        if attrs is not None:
            op.attributes |= attrs.data
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, False, False)


_FUNC_RESERVED = (
    "sym_name",
    "function_type",
    "gpu.kernel",
    "workgroup_attributions",
    "arg_attrs",
    "res_attrs",
)


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A device function; with `kernel`, an entry point launched by gpu.launch_func.

    The entry block takes the function arguments, then one argument per workgroup
    attribution (a statically shaped memref in address space 3: a shared-memory buffer
    of the block), then one per private attribution (address space 5).

    ```mlir
    gpu.func @k(%a: memref<?xf32>, %n: index) workgroup(%smem : memref<256xf32, 3>) kernel
        attributes {gpu.known_block_size = array<i32: 256, 1, 1>} {
      gpu.return
    }
    ```
    """

    name = "gpu.func"

    body = region_def()
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    workgroup_attributions = opt_prop_def(IntegerAttr)
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    kernel = opt_attr_def(UnitAttr, attr_name="gpu.kernel")
    known_block_size = opt_attr_def(
        DenseArrayBase.constr(i32), attr_name="gpu.known_block_size"
    )
    known_grid_size = opt_attr_def(
        DenseArrayBase.constr(i32), attr_name="gpu.known_grid_size"
    )

    traits = traits_def(IsolatedFromAbove(), HasParent(ModuleOp), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        function_type: FunctionType | tuple[Sequence[Attribute], Sequence[Attribute]],
        region: Region | None = None,
        kernel: bool = False,
        workgroup: Sequence[Attribute] = (),
        private: Sequence[Attribute] = (),
        known_block_size: Sequence[int] | None = None,
        known_grid_size: Sequence[int] | None = None,
    ):
        if isinstance(function_type, tuple):
            inputs, outputs = function_type
            function_type = FunctionType.from_lists(inputs, outputs)
        if region is None:
            region = Region(
                Block(
                    arg_types=[*function_type.inputs.data, *workgroup, *private]
                )
            )
        properties: dict[str, Attribute | None] = {
            "sym_name": StringAttr(name),
            "function_type": function_type,
        }
        if workgroup:
            properties["workgroup_attributions"] = IntegerAttr(len(workgroup), i64)
        attributes: dict[str, Attribute | None] = {}
        if kernel:
            attributes["gpu.kernel"] = UnitAttr()
        if known_block_size is not None:
            attributes["gpu.known_block_size"] = DenseArrayBase.from_list(
                i32, known_block_size
            )
        if known_grid_size is not None:
            attributes["gpu.known_grid_size"] = DenseArrayBase.from_list(
                i32, known_grid_size
            )
        super().__init__(properties=properties, attributes=attributes, regions=[region])

    @property
    def is_kernel(self) -> bool:
        return self.kernel is not None

    @property
    def num_workgroup_attributions(self) -> int:
        n = self.workgroup_attributions
        return 0 if n is None else n.value.data

    @property
    def arguments(self) -> tuple[SSAValue, ...]:
        """The entry-block arguments that are function arguments."""
        n = len(self.function_type.inputs)
        return tuple(self.body.blocks[0].args[:n])

    @property
    def workgroup_buffers(self) -> tuple[SSAValue, ...]:
        n = len(self.function_type.inputs)
        return tuple(
            self.body.blocks[0].args[n : n + self.num_workgroup_attributions]
        )

    @property
    def private_buffers(self) -> tuple[SSAValue, ...]:
        n = len(self.function_type.inputs) + self.num_workgroup_attributions
        return tuple(self.body.blocks[0].args[n:])

    def verify_(self) -> None:
        if not self.body.blocks:
            raise VerifyException("gpu.func must have a body")
        inputs = self.function_type.inputs.data
        args = self.body.blocks[0].args
        nwg = self.num_workgroup_attributions
        if len(args) < len(inputs) + nwg or tuple(
            a.type for a in args[: len(inputs)]
        ) != tuple(inputs):
            raise VerifyException(
                "gpu.func entry block arguments must be the function inputs followed "
                "by the workgroup and private attributions"
            )
        for a in self.workgroup_buffers:
            t = a.type
            if (
                not isinstance(t, MemRefType)
                or memory_space_of(t) != WORKGROUP_ADDRESS_SPACE
                or not t.has_static_shape()
            ):
                raise VerifyException(
                    "gpu.func workgroup attribution must be a statically shaped "
                    f"memref in address space 3, got {t}"
                )
        for a in self.private_buffers:
            t = a.type
            if (
                not isinstance(t, MemRefType)
                or memory_space_of(t) != PRIVATE_ADDRESS_SPACE
                or not t.has_static_shape()
            ):
                raise VerifyException(
                    "gpu.func private attribution must be a statically shaped "
                    f"memref in address space 5, got {t}"
                )
        if self.is_kernel and self.function_type.outputs.data:
            raise VerifyException("gpu.func kernel must not return values")

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name = parser.parse_symbol_name()

        def parse_arg() -> tuple[Parser.Argument, dict[str, Attribute]]:
            arg = parser.parse_argument()
            return arg, parser.parse_optional_dictionary_attr_dict()

        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_arg)
        outputs: list[Attribute] = []
        if parser.parse_optional_punctuation("->"):
            types = parser.parse_optional_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_type
            )
            outputs = list(types) if types is not None else [parser.parse_type()]

        workgroup: list[Parser.Argument] = []
        private: list[Parser.Argument] = []
        if parser.parse_optional_keyword("workgroup"):
            workgroup = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_argument
            )
        if parser.parse_optional_keyword("private"):
            private = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_argument
            )
        kernel = parser.parse_optional_keyword("kernel") is not None
        attrs = parser.parse_optional_attr_dict_with_keyword(_FUNC_RESERVED)
        entry = [a for a, _ in args] + workgroup + private
        body = parser.parse_region(entry)
        op = cls(
            name.data,
            ([a.type for a, _ in args], outputs),
            body,
            kernel=kernel,
            workgroup=[a.type for a in workgroup],
        )
        if any(d for _, d in args):
            op.arg_attrs = ArrayAttr(DictionaryAttr(d) for _, d in args)
        if attrs is not None:
            op.attributes |= attrs.data
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string("(")
        arg_attrs = self.arg_attrs.data if self.arg_attrs is not None else None

        def print_arg(i_arg: tuple[int, SSAValue]) -> None:
            i, arg = i_arg
            printer.print_ssa_value(arg)
            printer.print_string(": ")
            printer.print_attribute(arg.type)
            if arg_attrs is not None and arg_attrs[i].data:
                printer.print_string(" ")
                printer.print_attr_dict(arg_attrs[i].data)

        printer.print_list(enumerate(self.arguments), print_arg)
        printer.print_string(")")
        outputs = self.function_type.outputs.data
        if outputs:
            printer.print_string(" -> ")
            print_result_types(printer, outputs)

        def print_attribution(keyword: str, values: Sequence[SSAValue]) -> None:
            if not values:
                return
            printer.print_string(f" {keyword}(")

            def print_one(v: SSAValue) -> None:
                printer.print_ssa_value(v)
                printer.print_string(" : ")
                printer.print_attribute(v.type)

            printer.print_list(values, print_one)
            printer.print_string(")")

        print_attribution("workgroup", self.workgroup_buffers)
        print_attribution("private", self.private_buffers)
        if self.is_kernel:
            printer.print_string(" kernel")
        printer.print_op_attributes(
            self.attributes, reserved_attr_names=_FUNC_RESERVED, print_keyword=True
        )
        printer.print_string(" ")
        printer.print_region(self.body, False, True)


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Terminates a gpu.func.

    ```mlir
    gpu.return
    gpu.return %x : f32
    ```
    """

    name = "gpu.return"
    args = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(FuncOp), Pure())
    assembly_format = "attr-dict ($args^ `:` type($args))?"

    def __init__(self, operands: Sequence[SSAValue | Operation] = ()):
        super().__init__(operands=[operands])

    def verify_(self) -> None:
        func = self.parent_op()
        if isinstance(func, FuncOp):
            expected = func.function_type.outputs.data
            if tuple(self.args.types) != tuple(expected):
                raise VerifyException(
                    "gpu.return operand types "
                    f"({', '.join(map(str, self.args.types))}) do not match the "
                    f"gpu.func result types ({', '.join(map(str, expected))})"
                )


# ---------------------------------------------------------------------- launch_func

_LaunchDim = AnyOf.get(IndexType, i32, i64)


@irdl_op_definition
class LaunchFuncOp(IRDLOperation):
    """Launches a kernel on a grid of blocks (host side).

    ```mlir
    gpu.launch_func @kernels::@k blocks in (%gx, %c1, %c1) threads in (%c256, %c1, %c1)
        dynamic_shared_memory_size %smem args(%x : memref<?xf32>, %n : index)
    ```
    """

    name = "gpu.launch_func"
    asyncDependencies = var_operand_def(AsyncTokenType)
    gridSizeX = operand_def(_LaunchDim)
    gridSizeY = operand_def(_LaunchDim)
    gridSizeZ = operand_def(_LaunchDim)
    blockSizeX = operand_def(_LaunchDim)
    blockSizeY = operand_def(_LaunchDim)
    blockSizeZ = operand_def(_LaunchDim)
    clusterSizeX = opt_operand_def(_LaunchDim)
    clusterSizeY = opt_operand_def(_LaunchDim)
    clusterSizeZ = opt_operand_def(_LaunchDim)
    dynamicSharedMemorySize = opt_operand_def(i32)
    kernelOperands = var_operand_def()
    asyncObject = opt_operand_def()

    asyncToken = opt_result_def(AsyncTokenType)

    kernel = prop_def(SymbolRefAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        kernel: SymbolRefAttr,
        grid: Sequence[SSAValue | Operation],
        block: Sequence[SSAValue | Operation],
        args: Sequence[SSAValue | Operation] = (),
        dynamic_shared_memory_size: SSAValue | Operation | None = None,
        cluster: Sequence[SSAValue | Operation] | None = None,
        async_dependencies: Sequence[SSAValue | Operation] = (),
        async_launch: bool = False,
    ):
        if len(grid) != 3 or len(block) != 3:
            raise ValueError("gpu.launch_func needs 3 grid and 3 block sizes")
        cl: Sequence[Sequence[SSAValue | Operation]] = (
            [[], [], []] if cluster is None else [[c] for c in cluster]
        )
        super().__init__(
            operands=[
                async_dependencies,
                *grid,
                *block,
                *cl,
                [] if dynamic_shared_memory_size is None else [dynamic_shared_memory_size],
                args,
                [],
            ],
            result_types=[[AsyncTokenType()] if async_launch else []],
            properties={"kernel": kernel},
        )

    @classmethod
    def parse(cls, parser: Parser) -> LaunchFuncOp:
        async_launch = parser.parse_optional_keyword("async") is not None
        deps: list[SSAValue] = []
        if async_launch or parser._current_token.text == "[":
            dep_list = parser.parse_optional_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_unresolved_operand
            )
            if dep_list is not None:
                deps = [parser.resolve_operand(d, AsyncTokenType()) for d in dep_list]
        kernel = parser.parse_attribute()
        if not isinstance(kernel, SymbolRefAttr):
            parser.raise_error("gpu.launch_func expects a kernel symbol @module::@kernel")

        def parse_triple(keyword: str) -> list[UnresolvedOperand]:
            parser.parse_keyword(keyword)
            parser.parse_keyword("in")
            ops = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_unresolved_operand
            )
            if len(ops) != 3:
                parser.raise_error(f"expected 3 {keyword} sizes")
            return ops

        cluster = None
        if parser._current_token.text == "clusters":
            cluster = parse_triple("clusters")
        grid = parse_triple("blocks")
        block = parse_triple("threads")
        dim_type: Attribute = IndexType()
        if parser.parse_optional_punctuation(":"):
            dim_type = parser.parse_type()
        smem = None
        if parser.parse_optional_keyword("dynamic_shared_memory_size"):
            smem = parser.resolve_operand(parser.parse_unresolved_operand(), i32)
        args: list[SSAValue] = []
        if parser.parse_optional_keyword("args"):

            def parse_arg() -> SSAValue:
                u = parser.parse_unresolved_operand()
                parser.parse_punctuation(":")
                return parser.resolve_operand(u, parser.parse_type())

            args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_arg)
        attrs = parser.parse_optional_attr_dict()
        op = cls(
            kernel,
            [parser.resolve_operand(u, dim_type) for u in grid],
            [parser.resolve_operand(u, dim_type) for u in block],
            args,
            smem,
            None if cluster is None else [parser.resolve_operand(u, dim_type) for u in cluster],
            deps,
            async_launch,
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        if self.asyncToken is not None:
            printer.print_string(" async")
        if self.asyncDependencies:
            printer.print_string(" [")
            printer.print_list(self.asyncDependencies, printer.print_operand)
            printer.print_string("]")
        printer.print_string(" ")
        printer.print_attribute(self.kernel)

        def print_triple(keyword: str, ops: Sequence[SSAValue]) -> None:
            printer.print_string(f" {keyword} in (")
            printer.print_list(ops, printer.print_operand)
            printer.print_string(")")

        if self.clusterSizeX is not None:
            assert self.clusterSizeY is not None and self.clusterSizeZ is not None
            print_triple(
                "clusters", [self.clusterSizeX, self.clusterSizeY, self.clusterSizeZ]
            )
        print_triple("blocks", [self.gridSizeX, self.gridSizeY, self.gridSizeZ])
        print_triple("threads", [self.blockSizeX, self.blockSizeY, self.blockSizeZ])
        if not isinstance(self.gridSizeX.type, IndexType):
            printer.print_string(" : ")
            printer.print_attribute(self.gridSizeX.type)
        if self.dynamicSharedMemorySize is not None:
            printer.print_string(" dynamic_shared_memory_size ")
            printer.print_operand(self.dynamicSharedMemorySize)
        if self.kernelOperands:
            printer.print_string(" args(")

            def print_arg(v: SSAValue) -> None:
                printer.print_operand(v)
                printer.print_string(" : ")
                printer.print_attribute(v.type)

            printer.print_list(self.kernelOperands, print_arg)
            printer.print_string(")")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        dims = [
            self.gridSizeX, self.gridSizeY, self.gridSizeZ,
            self.blockSizeX, self.blockSizeY, self.blockSizeZ,
        ]  # fmt: skip
        if len({d.type for d in dims}) != 1:
            raise VerifyException("gpu.launch_func grid and block sizes must share one type")
        module = self.parent_op()
        while module is not None and not isinstance(module, BuiltinModuleOp):
            module = module.parent_op()
        if module is None:
            return
        if "gpu.container_module" not in module.attributes:
            raise VerifyException(
                "gpu.launch_func expects the closest surrounding module to have the "
                "'gpu.container_module' attribute"
            )
        kernel = SymbolTable.lookup_symbol(module, self.kernel)
        if kernel is None:
            return
        if not isinstance(kernel, FuncOp):
            raise VerifyException(
                f"gpu.launch_func: symbol {self.kernel} is not a gpu.func"
            )
        if not kernel.is_kernel:
            raise VerifyException(
                f"gpu.launch_func: {self.kernel} is not a kernel (missing 'kernel')"
            )
        expected = tuple(kernel.function_type.inputs.data)
        got = tuple(self.kernelOperands.types)
        if expected != got:
            raise VerifyException(
                f"gpu.launch_func arguments ({', '.join(map(str, got))}) do not match "
                f"the signature of {self.kernel} ({', '.join(map(str, expected))})"
            )


# ----------------------------------------------------------------- tensor cores and async copies
#
# fsir's own ops for warp-level matrix multiply-accumulate (PTX `mma.sync`), shared
# memory matrix loads (`ldmatrix`) and asynchronous global-to-shared copies
# (`cp.async` and its groups); upstream MLIR spells these in its nvgpu/nvvm dialects.
# Fragments are 32-bit registers: two 16-bit elements (even element in the low half)
# or one tf32 (an f32 bit pattern) per `i32`; accumulators are `f32`.


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
        memref, idx, types, trans = _parse_load(parser, cls.name, flag="trans")
        return cls(memref, idx, len(types), trans)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_access(printer, self.memref, self.indices)
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
        dst_values, dst, dst_idx = _parse_access(parser)
        parser.parse_punctuation(",")
        src_values, src, src_idx = _parse_access(parser)
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
        _print_access(printer, self.dst, self.dst_indices)
        printer.print_string(", ")
        _print_access(printer, self.src, self.src_indices)
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


# ----------------------------------------------------------------- tile synchronisation
# The lowered form of cuSync's stages (fsir/dialects/schedule.py, `schedule.stage`):
# blocks take tiles from a global counter, wait on and post to semaphores in global
# memory; the host zeroes the semaphores and tags each launch with its stream.


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


# ------------------------------------------------------------------ argument tables
# A kernel whose buffer arguments would overflow the parameter space takes them through
# one table in global memory (fsir/lowering/param_table.py): the host builds it at the
# launch, the kernel loads each buffer's address where it first needs it.

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


GPU = Dialect(
    "gpu",
    [
        # fsir's definitions with MLIR syntax
        BarrierOp,
        BlockDimOp,
        BlockIdOp,
        DynamicSharedMemoryOp,
        FuncOp,
        GlobalIdOp,
        GridDimOp,
        LaneIdOp,
        LaunchFuncOp,
        LoadVectorOp,
        ModuleOp,
        NumSubgroupsOp,
        ReturnOp,
        ShuffleOp,
        StoreVectorOp,
        SubgroupIdOp,
        SubgroupReduceOp,
        SubgroupSizeOp,
        ThreadIdOp,
        # tensor cores and async copies
        CpAsyncCommitGroupOp,
        CpAsyncOp,
        CpAsyncWaitGroupOp,
        LdMatrixOp,
        MmaSyncOp,
        RoundTf32Op,
        # tile synchronisation
        MemsetOp,
        NextTileOp,
        AddressTableOp,
        TableBufferOp,
        SemPostOp,
        SemWaitOp,
        # xDSL's, unchanged (generic syntax)
        _xgpu.AllocOp,
        _xgpu.DeallocOp,
        _xgpu.HostRegisterOp,
        _xgpu.HostUnregisterOp,
        _xgpu.LaunchOp,
        _xgpu.MemcpyOp,
        _xgpu.SetDefaultDeviceOp,
        _xgpu.TerminatorOp,
        _xgpu.WaitOp,
        _xgpu.YieldOp,
    ],
    [
        AsyncTokenType,
        ReduceOpAttr,
        AddressSpaceAttr,
        DimensionAttr,
        ProcessorAttr,
        LoopDimMapAttr,
        ShuffleModeAttr,
        MmaTypeAttr,
        StageAttr,  # tile synchronisation
    ],
)
