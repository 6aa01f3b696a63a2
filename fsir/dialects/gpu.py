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

The dialect's ops live in four modules: this one (ids, barrier, shuffle, vector memory
access, subgroup reductions, dynamic shared memory, and the dialect), gpu_kernel.py
(module, func, return, launch_func), nvgpu.py (tensor cores and async copies, as MLIR's
NVGPU dialect) and gpu_tile_sync.py (tile synchronisation, argument tables); gpu_memory.py
holds the address spaces they share. Every op and attribute is reachable as `gpu.<Name>`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import gpu as _xgpu
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I32,
    IndexType,
    IntegerAttr,
    MemRefType,
    UnitAttr,
    f32,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
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

from fsir.dialects.gpu_kernel import FuncOp, LaunchFuncOp, ModuleOp, ReturnOp
from fsir.dialects.gpu_memory import PRIVATE_ADDRESS_SPACE as PRIVATE_ADDRESS_SPACE
from fsir.dialects.gpu_memory import (
    WORKGROUP_ADDRESS_SPACE,
    AddressSpaceAttr,
    AsyncTokenType,
    DimensionAttr,
    DimensionEnum,
    LoopDimMapAttr,
    ProcessorAttr,
    memory_space_of,
    parse_access,
    parse_load,
    print_access,
)
from fsir.dialects.gpu_tile_sync import ADDRESS_TABLE_ATTR as ADDRESS_TABLE_ATTR
from fsir.dialects.gpu_tile_sync import STAGE_ATTR as STAGE_ATTR
from fsir.dialects.gpu_tile_sync import (
    AddressTableOp,
    MemsetOp,
    NextTileOp,
    SemPostOp,
    SemWaitOp,
    StageAttr,
    TableBufferOp,
)
from fsir.dialects.nvgpu import MMA_K as MMA_K
from fsir.dialects.nvgpu import (
    CpAsyncCommitGroupOp,
    CpAsyncOp,
    CpAsyncWaitGroupOp,
    LdMatrixOp,
    MmaSyncOp,
    MmaTypeAttr,
    RoundTf32Op,
)
from fsir.dialects.nvgpu import MmaTypeEnum as MmaTypeEnum


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
        memref, idx, types, _ = parse_load(parser, cls.name)
        op = cls.create(operands=[memref, *idx], result_types=types)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_access(printer, self.memref, self.indices)
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
        values, mem, indices = parse_access(parser)
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
        print_access(printer, self.memref, self.indices)
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
