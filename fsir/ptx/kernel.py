"""Prints one `gpu.func ... kernel` as a PTX `.entry`.

The emitter walks the kernel body once, giving every SSA value a virtual register in
the register file of its type (see `fsir.ptx.types`), and turns structured control
flow (`scf.for` with iter_args, `scf.if` with results, `scf.while`) and `cf` branches
into labels and `bra`. Memory: `memref` kernel arguments are global pointers,
workgroup attributions are `.shared` arrays, private attributions and `memref.alloca`
are `.local` arrays, `gpu.dynamic_shared_memory` is the module's `.extern .shared`
array; addresses are 64-bit, row-major.

Kernel argument contract (what the host passes, in order, one `.param` per argument;
`kernel_signature(func)` lists it):
- `memref<...xT>` in address space 0: a `.param .u64` holding the device address of
  the buffer (element 0; a static `strided<..., offset: N>` offset is added by the
  kernel). Only the outermost dimension may be dynamic (`memref<?xT>`,
  `memref<?x768xT>`); the inner dimensions give the row-major strides. A kernel that
  needs dynamic sizes takes a flat `memref<?xT>` plus explicit `index` arguments.
  Layouts `strided<[...], offset: N>` with static strides and offset are accepted.
- `index`, `i64`: `.param .u64`/`.b64`; `i32` `.b32`; `i16`/`f16`/`bf16` `.b16`
  (f16/bf16 as their raw 16-bit patterns); `i8` `.s8`; `i1` `.u8` (0 or 1); `f32`
  `.f32`; `f64` `.f64`.
- Workgroup attributions are static `.shared` arrays of the kernel; the bytes given by
  `gpu.launch_func ... dynamic_shared_memory_size %s` back `gpu.dynamic_shared_memory`
  (the module's `.extern .shared` array `__fsir_dynamic_smem`, 16-byte aligned).
- `gpu.known_block_size` becomes `.maxntid`: launching with larger blocks fails.
- `gpu.shuffle` and `gpu.subgroup_reduce` use a full mask: all 32 lanes of a warp
  must execute them (keep them out of lane-divergent branches).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from xdsl.dialects import cf, memref, scf
from xdsl.dialects.builtin import (
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    i8,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from fsir.dialects import gpu
from fsir.errors import UserError
from fsir.ir import integer_constant, location_of
from fsir.ptx import types as T

DYNAMIC_SMEM_SYMBOL = "__fsir_dynamic_smem"
_PTX_IDENT = re.compile(r"[a-zA-Z][a-zA-Z0-9_$]*|[_$%][a-zA-Z0-9_$]+")

Lowering = Callable[["KernelEmitter", Operation], None]
_OpT = TypeVar("_OpT", bound=Operation)


def rule(op_type: type[_OpT], lower: Callable[[KernelEmitter, _OpT], None]) -> tuple[type[Operation], Lowering]:
    """One entry of a lowering table: `lower` must accept `op_type`'s ops. The emitter
    dispatches on `type(op)`, so it calls `lower` only with ops of exactly that type,
    which makes widening its parameter to Operation sound."""
    return op_type, cast(Lowering, lower)


@dataclass(frozen=True)
class Buffer:
    """A memref value: its base address register and how to index it."""

    base: str  # b64 register holding the address of element 0 (in `space`)
    space: str  # "global", "shared" or "local"
    element: Attribute
    strides: tuple[int, ...]


def unsupported(op: Operation, why: str = "") -> UserError:
    detail = f": {why}" if why else ""
    return UserError(f"PTX printer cannot lower '{op.name}'{detail}")


def _row_major_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides = []
    acc = 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


@dataclass(frozen=True)
class KernelParam:
    """One `.param` of a kernel entry, as the host must pass it."""

    index: int
    name: str  # the .param name in the PTX
    mlir_type: Attribute
    ptx_type: str  # u64 for memrefs (a device pointer), else the scalar's .param type
    is_pointer: bool


def kernel_signature(func: gpu.FuncOp) -> list[KernelParam]:
    """The parameters of the `.entry` printed for kernel `func`, in order."""
    out = []
    for i, arg in enumerate(func.arguments):
        t = arg.type
        name = f"{func.sym_name.data}_param_{i}"
        if isinstance(t, MemRefType):
            out.append(KernelParam(i, name, t, "u64", True))
        elif T.reg_file(t) is not None:
            out.append(KernelParam(i, name, t, T.param_type(t), False))
        else:
            raise UserError(f"PTX printer: kernel @{func.sym_name.data} argument {i} has unsupported type {t}")
    return out


class KernelEmitter:
    """Turns one kernel gpu.func into the text of a PTX .entry."""

    def __init__(self, func: gpu.FuncOp, lowerings: dict[type[Operation], Lowering]):
        self.func = func
        self.name = func.sym_name.data
        self.lowerings = lowerings
        self.lines: list[str] = []
        self.counts: dict[T.RegFile, int] = {rf: 0 for rf in T.REG_FILES}
        self.regs: dict[SSAValue, str] = {}
        self.buffers: dict[SSAValue, Buffer] = {}
        self.labels = 0
        self.decls: list[str] = []  # .shared/.local arrays of this kernel
        self.shared_arrays: dict[str, int] = {}  # .shared array symbol -> bytes
        self.uses_dynamic_smem = False
        self.block_labels: dict[Block, str] = {}

    # ------------------------------------------------------------- registers

    def new(self, rf: T.RegFile) -> str:
        self.counts[rf] += 1
        return f"{rf.prefix}{self.counts[rf]}"

    def regfile(self, t: Attribute, op: Operation | None = None) -> T.RegFile:
        rf = T.reg_file(t)
        if rf is None:
            raise UserError(
                f"PTX printer: unsupported type {t}"
                + (f" in '{op.name}'" if op is not None else "")
            )
        return rf

    def define(self, value: SSAValue, reg: str | None = None) -> str:
        """The register of a value being defined (a fresh one unless `reg` given)."""
        if reg is None:
            owner = value.owner if isinstance(value.owner, Operation) else None
            reg = self.new(self.regfile(value.type, owner))
        self.regs[value] = reg
        return reg

    def reg(self, value: SSAValue) -> str:
        try:
            return self.regs[value]
        except KeyError:
            owner = value.owner
            name = owner.name if isinstance(owner, Operation) else "block argument"
            raise UserError(
                f"PTX printer: value of type {value.type} (from {name}) has no register"
            ) from None

    def const_int(self, value: SSAValue) -> int | None:
        """The value of an integer/index arith.constant, if `value` is one (or the
        bitcast of one that gives an unsigned type its constants: the same bits)."""
        return integer_constant(value)

    def operand(self, value: SSAValue) -> str:
        """A register, or an immediate for small integer constants."""
        c = self.const_int(value)
        if c is not None and T.is_int(value.type) and T.int_width(value.type) > 1:
            return str(c)
        return self.reg(value)

    # ------------------------------------------------------------- emission

    def ins(self, text: str) -> None:
        self.lines.append(f"\t{text};")

    def new_label(self) -> str:
        self.labels += 1
        return f"$L__{self.name}_{self.labels}"

    def place(self, label: str) -> None:
        self.lines.append(f"{label}:")

    def mov(self, dst: str, src: str, rf: T.RegFile) -> None:
        if dst != src:
            self.ins(f"mov.{rf.mov} {dst}, {src}")

    def parallel_copy(self, dsts: Sequence[str], srcs: Sequence[SSAValue]) -> None:
        """dst_i := src_i for all i at once (moves ordered, cycles broken by a temporary)."""
        pending: dict[str, tuple[str, T.RegFile]] = {}
        for d, s in zip(dsts, srcs, strict=True):
            r = self.reg(s)
            if r != d:
                pending[d] = (r, self.regfile(s.type))
        while pending:
            sources = {r for r, _ in pending.values()}
            ready = [d for d in pending if d not in sources]
            if ready:
                for d in ready:
                    r, rf = pending.pop(d)
                    self.mov(d, r, rf)
                continue
            d = next(iter(pending))  # a cycle: save d, then read the copy instead
            rf = pending[d][1]
            tmp = self.new(rf)
            self.mov(tmp, d, rf)
            pending = {k: (tmp if r == d else r, f) for k, (r, f) in pending.items()}

    def emit_block(self, block: Block) -> None:
        for op in block.ops:
            self.emit_op(op)

    def emit_op(self, op: Operation) -> None:
        lowering = self.lowerings.get(type(op))
        if lowering is None:
            raise UserError(
                f"PTX printer cannot lower '{op.name}' (in kernel @{self.name}); "
                "supported: gpu, arith, math, scf, cf, memref load/store/view/alloca/atomic_rmw",
                location_of(op),
            )
        try:
            lowering(self, op)
        except UserError as err:
            if err.loc is None:  # point at the op in the user's source when known
                err.loc = location_of(op)
            raise

    # ------------------------------------------------------------- memory

    def address(self, mem: SSAValue, indices: Sequence[SSAValue], op: Operation) -> tuple[Buffer, str]:
        """The state space and `[addr+off]` operand of mem[indices]."""
        buf = self.buffers.get(mem)
        if buf is None:
            raise unsupported(op, f"memref {mem.type} is not a kernel argument or buffer")
        esize = T.byte_size(buf.element)
        const_off = 0
        acc: str | None = None
        for idx, stride in zip(indices, buf.strides, strict=True):
            c = self.const_int(idx)
            if c is not None:
                const_off += c * stride
                continue
            r = self.reg(idx)
            step = stride * esize
            nxt = self.new(T.B64)
            if acc is None:
                self.ins(f"mul.lo.s64 {nxt}, {r}, {step}")
            else:
                self.ins(f"mad.lo.s64 {nxt}, {r}, {step}, {acc}")
            acc = nxt
        base = buf.base
        if acc is not None:
            base = self.new(T.B64)
            self.ins(f"add.s64 {base}, {buf.base}, {acc}")
        off = const_off * esize
        return buf, f"[{base}+{off}]" if off else f"[{base}]"

    def buffer_from_type(self, base: str, space: str, t: MemRefType, op: Operation | None, what: str) -> Buffer:
        shape = t.get_shape()
        layout = t.layout
        if isinstance(layout, NoneAttr):
            if any(d < 0 for d in shape[1:]):
                raise UserError(
                    f"PTX printer: {what} {t} has a dynamic inner dimension; kernels take "
                    "memrefs whose dimensions after the first are static (pass a flat "
                    "memref<?xT> plus index sizes instead)"
                )
            strides = _row_major_strides([max(d, 1) for d in shape])
        elif isinstance(layout, StridedLayoutAttr):
            strides_opt = layout.get_strides()
            offset = layout.get_offset()
            if any(s is None for s in strides_opt) or offset is None:
                raise UserError(f"PTX printer: {what} {t} needs static strides and offset")
            strides = tuple(s for s in strides_opt if s is not None)
            if offset:
                nb = self.new(T.B64)
                self.ins(f"add.s64 {nb}, {base}, {offset * T.byte_size(t.element_type)}")
                base = nb
        else:
            raise UserError(f"PTX printer: {what} {t} has an unsupported layout")
        if T.reg_file(t.element_type) is None:
            raise UserError(f"PTX printer: {what} {t} has unsupported element type")
        return Buffer(base, space, t.element_type, strides)

    def local_array(self, space: str, t: MemRefType, what: str) -> Buffer:
        if not t.has_static_shape():
            raise UserError(f"PTX printer: {what} {t} must have a static shape")
        size = max(1, t.element_count() * T.byte_size(t.element_type))
        sym = f"{self.name}_{'smem' if space == 'shared' else 'local'}{len(self.decls)}"
        self.decls.append(f"\t.{space} .align 16 .b8 {sym}[{size}];")
        if space == "shared":
            self.shared_arrays[sym] = size
        base = self.new(T.B64)
        self.ins(f"mov.u64 {base}, {sym}")
        return self.buffer_from_type(base, space, t, None, what)

    # ------------------------------------------------------------- the entry

    def emit(self) -> str:
        func = self.func
        if not _PTX_IDENT.fullmatch(self.name):
            raise UserError(
                f"PTX printer: kernel name @{self.name} is not a PTX identifier "
                "(letters, digits, '_' and '$', not starting with a digit)"
            )
        params = []
        blocks = list(func.body.blocks)
        for b in blocks[1:]:
            self.block_labels[b] = self.new_label()
        for i, arg in enumerate(func.arguments):
            pname = f"{self.name}_param_{i}"
            t = arg.type
            if isinstance(t, MemRefType):
                space = gpu.memory_space_of(t)
                if space not in (0, 1):
                    raise UserError(
                        f"PTX printer: kernel argument {i} of @{self.name} is a memref in "
                        f"address space {space}; kernel memrefs must be global (space 0 or "
                        "#gpu.address_space<global>)"
                    )
                params.append(f".param .u64 {pname}")
                raw = self.new(T.B64)
                self.ins(f"ld.param.u64 {raw}, [{pname}]")
                base = self.new(T.B64)
                self.ins(f"cvta.to.global.u64 {base}, {raw}")
                self.buffers[arg] = self.buffer_from_type(
                    base, "global", t, None, f"kernel argument {i} of @{self.name}"
                )
                continue
            rf = T.reg_file(t)
            if rf is None:
                raise UserError(f"PTX printer: kernel @{self.name} argument {i} has unsupported type {t}")
            ptype = T.param_type(t)
            params.append(f".param .{ptype} {pname}")
            if rf is T.PRED:
                tmp = self.new(T.B16)
                self.ins(f"ld.param.u8 {tmp}, [{pname}]")
                self.ins(f"setp.ne.s16 {self.define(arg)}, {tmp}, 0")
            else:  # (an i8 .s8 load sign-extends into its 16-bit register)
                self.ins(f"ld.param.{ptype} {self.define(arg)}, [{pname}]")
        for i, arg in enumerate(func.workgroup_buffers):
            assert isinstance(arg.type, MemRefType)
            self.buffers[arg] = self.local_array("shared", arg.type, f"workgroup attribution {i}")
        for i, arg in enumerate(func.private_buffers):
            assert isinstance(arg.type, MemRefType)
            self.buffers[arg] = self.local_array("local", arg.type, f"private attribution {i}")
        for b in blocks[1:]:
            for a in b.args:
                self.define(a)
        for i, b in enumerate(blocks):
            if i:
                self.place(self.block_labels[b])
            self.emit_block(b)

        if params:
            out = [f".visible .entry {self.name}(", ",\n".join(f"\t{p}" for p in params), ")"]
        else:
            out = [f".visible .entry {self.name}()"]
        if func.known_block_size is not None:
            dims = ", ".join(str(d) for d in func.known_block_size.get_values())
            out.append(f".maxntid {dims}")
        out.append("{")
        for rf in T.REG_FILES:
            if self.counts[rf]:
                out.append(f"\t.reg .{rf.decl} {rf.prefix}<{self.counts[rf] + 1}>;")
        out.extend(self.decls)
        out.append("")
        out.extend(self.lines)
        out.append("}")
        return "\n".join(out) + "\n"


# ----------------------------------------------------------------- gpu ops


def _special(e: KernelEmitter, op: Operation, sreg: str) -> None:
    r = e.new(T.B32)
    e.ins(f"mov.u32 {r}, {sreg}")
    e.ins(f"cvt.u64.u32 {e.define(op.results[0])}, {r}")


def _dim_op(sreg: str) -> Lowering:
    def lower(e: KernelEmitter, op: Operation) -> None:
        assert isinstance(op, gpu.ThreadIdOp | gpu.BlockIdOp | gpu.BlockDimOp | gpu.GridDimOp)
        _special(e, op, f"{sreg}.{op.dimension.data.value}")

    return lower


def _global_id(e: KernelEmitter, op: gpu.GlobalIdOp) -> None:
    d = op.dimension.data.value
    a, b, c = e.new(T.B32), e.new(T.B32), e.new(T.B32)
    e.ins(f"mov.u32 {a}, %ctaid.{d}")
    e.ins(f"mov.u32 {b}, %ntid.{d}")
    e.ins(f"mov.u32 {c}, %tid.{d}")
    w, t = e.new(T.B64), e.new(T.B64)
    e.ins(f"mul.wide.u32 {w}, {a}, {b}")
    e.ins(f"cvt.u64.u32 {t}, {c}")
    e.ins(f"add.s64 {e.define(op.result)}, {w}, {t}")


def linear_tid(e: KernelEmitter) -> str:
    """tid.x + ntid.x * (tid.y + ntid.y * tid.z) as a b32 register."""
    regs = {}
    for s in ("%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y"):
        regs[s] = e.new(T.B32)
        e.ins(f"mov.u32 {regs[s]}, {s}")
    t1, t2 = e.new(T.B32), e.new(T.B32)
    e.ins(f"mad.lo.u32 {t1}, {regs['%tid.z']}, {regs['%ntid.y']}, {regs['%tid.y']}")
    e.ins(f"mad.lo.u32 {t2}, {t1}, {regs['%ntid.x']}, {regs['%tid.x']}")
    return t2


def _subgroup_id(e: KernelEmitter, op: gpu.SubgroupIdOp) -> None:
    t = linear_tid(e)
    w = e.new(T.B32)
    e.ins(f"shr.u32 {w}, {t}, 5")
    e.ins(f"cvt.u64.u32 {e.define(op.result)}, {w}")


def _num_subgroups(e: KernelEmitter, op: gpu.NumSubgroupsOp) -> None:
    x, y, z, n, m = (e.new(T.B32) for _ in range(5))
    e.ins(f"mov.u32 {x}, %ntid.x")
    e.ins(f"mov.u32 {y}, %ntid.y")
    e.ins(f"mov.u32 {z}, %ntid.z")
    e.ins(f"mul.lo.u32 {n}, {x}, {y}")
    e.ins(f"mad.lo.u32 {m}, {n}, {z}, 31")
    w = e.new(T.B32)
    e.ins(f"shr.u32 {w}, {m}, 5")
    e.ins(f"cvt.u64.u32 {e.define(op.result)}, {w}")


def _subgroup_size(e: KernelEmitter, op: gpu.SubgroupSizeOp) -> None:
    e.ins(f"mov.u64 {e.define(op.result)}, 32")


def _barrier(e: KernelEmitter, op: gpu.BarrierOp) -> None:
    e.ins("bar.sync 0")


_SHFL_MODE = {"xor": "bfly", "up": "up", "down": "down", "idx": "idx"}


def _shuffle(e: KernelEmitter, op: gpu.ShuffleOp) -> None:
    mode = op.mode.data.value
    width = e.const_int(op.width)
    if width is not None:
        if width not in (1, 2, 4, 8, 16, 32):
            raise unsupported(op, f"width must be a power of two <= 32, got {width}")
        seg = (32 - width) << 8
        clamp = str(seg if mode == "up" else seg | 0x1F)
    else:
        w = e.reg(op.width)
        t1, t2 = e.new(T.B32), e.new(T.B32)
        e.ins(f"sub.s32 {t1}, 32, {w}")
        e.ins(f"shl.b32 {t2}, {t1}, 8")
        if mode != "up":
            t3 = e.new(T.B32)
            e.ins(f"or.b32 {t3}, {t2}, 31")
            t2 = t3
        clamp = t2
    dst = e.define(op.result)
    pred = f"|{e.define(op.valid)}" if op.valid.uses else ""
    src = e.reg(op.value)
    e.ins(f"shfl.sync.{_SHFL_MODE[mode]}.b32 {dst}{pred}, {src}, {e.operand(op.offset)}, {clamp}, -1")


_REDUCE = {
    ("add", "f32"): "add.rn.f32", ("mul", "f32"): "mul.rn.f32",
    ("minnumf", "f32"): "min.f32", ("maxnumf", "f32"): "max.f32",
    ("minimumf", "f32"): "min.NaN.f32", ("maximumf", "f32"): "max.NaN.f32",
    ("add", "i32"): "add.s32", ("mul", "i32"): "mul.lo.s32",
    ("minsi", "i32"): "min.s32", ("minui", "i32"): "min.u32",
    ("maxsi", "i32"): "max.s32", ("maxui", "i32"): "max.u32",
    ("and", "i32"): "and.b32", ("or", "i32"): "or.b32", ("xor", "i32"): "xor.b32",
}  # fmt: skip


def _subgroup_reduce(e: KernelEmitter, op: gpu.SubgroupReduceOp) -> None:
    """A butterfly: log2(size) rounds of shfl.sync.bfly + op; every lane gets the result."""
    t = str(op.value.type)
    opcode = _REDUCE[(op.op.data.value, t)]
    rf = T.F32 if t == "f32" else T.B32
    acc = e.reg(op.value)
    offset = op.size // 2
    while offset >= 1:
        other, nxt = e.new(rf), e.new(rf)
        e.ins(f"shfl.sync.bfly.b32 {other}, {acc}, {offset}, 31, -1")
        e.ins(f"{opcode} {nxt}, {acc}, {other}")
        acc = nxt
        offset //= 2
    if acc == e.reg(op.value):  # cluster of one lane
        acc = e.new(rf)
        e.mov(acc, e.reg(op.value), rf)
    e.define(op.result, acc)


def _return(e: KernelEmitter, op: gpu.ReturnOp) -> None:
    if op.args:
        raise unsupported(op, "kernels return no values")
    e.ins("ret")


def _dynamic_smem(e: KernelEmitter, op: gpu.DynamicSharedMemoryOp) -> None:
    e.uses_dynamic_smem = True
    base = e.new(T.B64)
    e.ins(f"mov.u64 {base}, {DYNAMIC_SMEM_SYMBOL}")
    e.buffers[op.result_memref] = Buffer(base, "shared", i8, (1,))


def _table_buffer(e: KernelEmitter, op: gpu.TableBufferOp) -> None:
    """A buffer whose address the host put in an address table (gpu.address_table): the
    table is read-only for the kernel's lifetime, so the load may use the non-coherent path."""
    table = e.buffers[op.table]
    raw, base = e.new(T.B64), e.new(T.B64)
    where = table.base
    if op.offset is not None:  # a row picked at run time
        where = e.new(T.B64)
        e.ins(f"mad.lo.s64 {where}, {e.reg(op.offset)}, 8, {table.base}")
    e.ins(f"ld.global.nc.u64 {raw}, [{where}+{8 * op.index.value.data}]")
    e.ins(f"cvta.to.global.u64 {base}, {raw}")
    t = op.buffer.type
    assert isinstance(t, MemRefType)
    e.buffers[op.buffer] = e.buffer_from_type(base, "global", t, op, f"table buffer {op.index.value.data}")


# ----------------------------------------------------------------- memref ops


def _load(e: KernelEmitter, op: memref.LoadOp) -> None:
    buf, addr = e.address(op.memref, op.indices, op)
    t = buf.element
    dst = e.define(op.res)
    if T.reg_file(t) is T.PRED:
        tmp = e.new(T.B16)
        e.ins(f"ld.{buf.space}.u8 {tmp}, {addr}")
        e.ins(f"setp.ne.s16 {dst}, {tmp}, 0")
    else:
        e.ins(f"ld.{buf.space}.{T.mem_type(t)} {dst}, {addr}")


def _store(e: KernelEmitter, op: memref.StoreOp) -> None:
    buf, addr = e.address(op.memref, op.indices, op)
    t = buf.element
    src = e.reg(op.value)
    if T.reg_file(t) is T.PRED:
        tmp = e.new(T.B16)
        e.ins(f"selp.u16 {tmp}, 1, 0, {src}")
        e.ins(f"st.{buf.space}.u8 {addr}, {tmp}")
    else:
        mt = T.mem_type(t)
        e.ins(f"st.{buf.space}.{'b8' if mt == 's8' else mt} {addr}, {src}")


def _load_vector(e: KernelEmitter, op: gpu.LoadVectorOp) -> None:
    """`gpu.load_vector` → one `ld.<space>.v2/.v4` into the results' registers."""
    buf, addr = e.address(op.memref, op.indices, op)
    dsts = ", ".join(e.define(r) for r in op.values)
    e.ins(f"ld.{buf.space}.v{len(op.values)}.{T.mem_type(buf.element)} {{{dsts}}}, {addr}")


def _store_vector(e: KernelEmitter, op: gpu.StoreVectorOp) -> None:
    buf, addr = e.address(op.memref, op.indices, op)
    srcs = ", ".join(e.reg(v) for v in op.values)
    mt = T.mem_type(buf.element)
    e.ins(f"st.{buf.space}.v{len(op.values)}.{'b8' if mt == 's8' else mt} {addr}, {{{srcs}}}")


# MLIR's arith::AtomicRMWKind numbering -> PTX atom operation, per value kind
_ATOMIC_KINDS = {
    0: ("addf", {"f32": "add.f32", "f64": "add.f64"}),
    1: ("addi", {"i32": "add.u32", "i64": "add.u64"}),
    2: ("assign", {"f32": "exch.b32", "i32": "exch.b32", "f64": "exch.b64", "i64": "exch.b64"}),
    4: ("maxs", {"i32": "max.s32", "i64": "max.s64"}),
    5: ("maxu", {"i32": "max.u32", "i64": "max.u64"}),
    7: ("mins", {"i32": "min.s32", "i64": "min.s64"}),
    8: ("minu", {"i32": "min.u32", "i64": "min.u64"}),
    11: ("ori", {"i32": "or.b32", "i64": "or.b64"}),
    12: ("andi", {"i32": "and.b32", "i64": "and.b64"}),
}


def _atomic_rmw(e: KernelEmitter, op: memref.AtomicRMWOp) -> None:
    """`memref.atomic_rmw` → `atom.{global,shared}.<op>`; the result is the old value."""
    kind = op.kind.value.data
    t = op.value.type
    key = str(t).replace("index", "i64")
    name, by_type = _ATOMIC_KINDS.get(kind, (f"kind {kind}", {}))
    ptx_op = by_type.get(key)
    if ptx_op is None:
        raise unsupported(op, f"atomic {name} on {t} (supported: addf f32/f64, addi/maxs/maxu/mins/minu/ori/andi "
                              "on i32/i64/index, assign on 32/64-bit)")
    buf, addr = e.address(op.memref, op.indices, op)
    if buf.space == "local":
        raise unsupported(op, "atomics on private memory")
    e.ins(f"atom.{buf.space}.{ptx_op} {e.define(op.result)}, {addr}, {e.reg(op.value)}")


def _view(e: KernelEmitter, op: memref.ViewOp) -> None:
    src = e.buffers.get(op.source)
    if src is None:
        raise unsupported(op, "source is not a known buffer")
    c = e.const_int(op.byte_shift)
    if c is not None:
        base = src.base
        if c:
            base = e.new(T.B64)
            e.ins(f"add.s64 {base}, {src.base}, {c}")
    else:
        base = e.new(T.B64)
        e.ins(f"add.s64 {base}, {src.base}, {e.reg(op.byte_shift)}")
    t = op.result.type
    assert isinstance(t, MemRefType)
    e.buffers[op.result] = e.buffer_from_type(base, src.space, t, op, "memref.view result")


def _alloca(e: KernelEmitter, op: memref.AllocaOp) -> None:
    t = op.memref.type
    assert isinstance(t, MemRefType)
    space = gpu.memory_space_of(t)
    if op.dynamic_sizes:
        raise unsupported(op, "dynamic sizes")
    if space == gpu.WORKGROUP_ADDRESS_SPACE:
        e.buffers[op.memref] = e.local_array("shared", t, "memref.alloca")
    elif space in (0, gpu.PRIVATE_ADDRESS_SPACE):
        e.buffers[op.memref] = e.local_array("local", t, "memref.alloca")
    else:
        raise unsupported(op, f"memory space {space}")


# ----------------------------------------------------------------- control flow


def _for(e: KernelEmitter, op: scf.ForOp) -> None:
    body = op.body.block
    iv_arg, *iter_args = body.args
    w = T.int_width(op.lb.type)
    sfx = T.int_suffix(w, True)
    iv = e.define(iv_arg)
    e.mov(iv, e.reg(op.lb), e.regfile(op.lb.type))
    accs = [e.define(a) for a in iter_args]
    e.parallel_copy(accs, list(op.iter_args))
    for res, acc in zip(op.results, accs, strict=True):
        e.define(res, acc)
    head, exit_ = e.new_label(), e.new_label()
    ub = e.operand(op.ub)
    step = e.operand(op.step)
    e.place(head)
    p = e.new(T.PRED)
    e.ins(f"setp.ge.{sfx} {p}, {iv}, {ub}")
    e.ins(f"@{p} bra {exit_}")
    for inner in body.ops:
        if isinstance(inner, scf.YieldOp):
            e.parallel_copy(accs, list(inner.arguments))
        else:
            e.emit_op(inner)
    e.ins(f"add.{sfx} {iv}, {iv}, {step}")
    e.ins(f"bra {head}")
    e.place(exit_)


def _emit_region_yielding(e: KernelEmitter, block: Block, dsts: Sequence[str]) -> None:
    for inner in block.ops:
        if isinstance(inner, scf.YieldOp):
            e.parallel_copy(dsts, list(inner.arguments))
        else:
            e.emit_op(inner)


def _if(e: KernelEmitter, op: scf.IfOp) -> None:
    dsts = [e.define(r) for r in op.results]
    cond = e.reg(op.cond)
    end = e.new_label()
    has_else = bool(op.false_region.blocks) and (
        bool(dsts) or any(not isinstance(o, scf.YieldOp) for o in op.false_region.block.ops)
    )
    els = e.new_label() if has_else else end
    e.ins(f"@!{cond} bra {els}")
    _emit_region_yielding(e, op.true_region.block, dsts)
    if has_else:
        e.ins(f"bra {end}")
        e.place(els)
        _emit_region_yielding(e, op.false_region.block, dsts)
    e.place(end)


def _while(e: KernelEmitter, op: scf.WhileOp) -> None:
    before, after = op.before_region.block, op.after_region.block
    bregs = [e.define(a) for a in before.args]
    e.parallel_copy(bregs, list(op.arguments))
    aregs = [e.define(a) for a in after.args]
    for r, a in zip(op.results, aregs, strict=True):
        e.define(r, a)
    head, exit_ = e.new_label(), e.new_label()
    e.place(head)
    for inner in before.ops:
        if isinstance(inner, scf.ConditionOp):
            e.parallel_copy(aregs, list(inner.args))
            e.ins(f"@!{e.reg(inner.condition)} bra {exit_}")
        else:
            e.emit_op(inner)
    _emit_region_yielding(e, after, bregs)
    e.ins(f"bra {head}")
    e.place(exit_)


def _br(e: KernelEmitter, op: cf.BranchOp) -> None:
    dest = op.successor
    e.parallel_copy([e.reg(a) for a in dest.args], list(op.arguments))
    e.ins(f"bra {e.block_labels[dest]}")


def _cond_br(e: KernelEmitter, op: cf.ConditionalBranchOp) -> None:
    other = e.new_label()
    e.ins(f"@!{e.reg(op.cond)} bra {other}")
    e.parallel_copy([e.reg(a) for a in op.then_block.args], list(op.then_arguments))
    e.ins(f"bra {e.block_labels[op.then_block]}")
    e.place(other)
    e.parallel_copy([e.reg(a) for a in op.else_block.args], list(op.else_arguments))
    e.ins(f"bra {e.block_labels[op.else_block]}")


CORE_LOWERINGS: dict[type[Operation], Lowering] = dict([
    rule(gpu.ThreadIdOp, _dim_op("%tid")),
    rule(gpu.BlockIdOp, _dim_op("%ctaid")),
    rule(gpu.BlockDimOp, _dim_op("%ntid")),
    rule(gpu.GridDimOp, _dim_op("%nctaid")),
    rule(gpu.GlobalIdOp, _global_id),
    rule(gpu.LaneIdOp, lambda e, op: _special(e, op, "%laneid")),
    rule(gpu.SubgroupIdOp, _subgroup_id),
    rule(gpu.SubgroupSizeOp, _subgroup_size),
    rule(gpu.NumSubgroupsOp, _num_subgroups),
    rule(gpu.BarrierOp, _barrier),
    rule(gpu.ShuffleOp, _shuffle),
    rule(gpu.SubgroupReduceOp, _subgroup_reduce),
    rule(gpu.ReturnOp, _return),
    rule(gpu.DynamicSharedMemoryOp, _dynamic_smem),
    rule(gpu.TableBufferOp, _table_buffer),
    rule(memref.LoadOp, _load),
    rule(memref.StoreOp, _store),
    rule(gpu.LoadVectorOp, _load_vector),
    rule(gpu.StoreVectorOp, _store_vector),
    rule(memref.ViewOp, _view),
    rule(memref.AtomicRMWOp, _atomic_rmw),
    rule(memref.AllocaOp, _alloca),
    rule(scf.ForOp, _for),
    rule(scf.IfOp, _if),
    rule(scf.WhileOp, _while),
    rule(cf.BranchOp, _br),
    rule(cf.ConditionalBranchOp, _cond_br),
])
