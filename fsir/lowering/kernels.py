"""One `schedule.kernel` → one `gpu.func` (explicit SIMT code): what every mapping's
lowering shares.

The kernel takes flat 1-D global buffers `memref<?xT>` (inputs, outputs, then non-splat
constants) and one `index` argument per dynamic dim of its inputs; shared buffers are
workgroup attributions, or views of dynamic shared memory when they exceed what static
arrays may hold (`shared_layout`). `KernelLowering` sets up that interface, the index and scalar
builders and the element emitter; each mapping's subclass writes the body
(`fsir/lowering/loop.py`, `rows.py`, `gemm.py`), reached from the mapping object
(`fsir.codegen.mappings`). `lower` then hoists and shares computation (§4.5) and
merges vector accesses.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field

from xdsl.dialects import memref
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from fsir.dialects import gpu, graph
from fsir.dialects.graph import DYN, shape_of, splat_value
from fsir.dialects.schedule import KernelOp, inner_value
from fsir.errors import UserError
from fsir.gpuspec import STATIC_SHARED_LIMIT
from fsir.ir import location_of
from fsir.lowering.emit import ElementEmitter, elem_type
from fsir.lowering.scalar import Cursor, Index, IndexBuilder, ScalarBuilder
from fsir.lowering.shapes import ShapeCalc, kernel_dim_classes
from fsir.lowering.vectorize import vectorize_memory


def flat_memref(elem: Attribute) -> MemRefType:
    return MemRefType(elem, [DYN])


@dataclass
class KernelInterface:
    """What the host passes to a lowered kernel, in order."""

    func: gpu.FuncOp
    constants: list[graph.ConstantOp] = field(default_factory=list)  # buffers after the outputs
    dynamic: list[tuple[int, int]] = field(default_factory=list)  # (operand, dim) index args


def extra_arguments(k: KernelOp) -> tuple[list[graph.ConstantOp], list[tuple[int, int]]]:
    """What a lowered `k` takes besides its operands and results: its non-splat
    constants' buffers and the size of each symbol class of its operands' `?` dims
    (the first (operand, dim) of each class, in order; `dim_classes`)."""
    classes = dim_classes(k)
    return non_splat_constants(k), [where for where, rep in classes.items() if where == rep]


def dim_classes(k: KernelOp) -> dict[tuple[int, int], tuple[int, int]]:
    """Each `?` operand dim (operand, dim) -> the one whose argument carries its size."""
    return kernel_dim_classes(k)


SHARED_ALIGN = 16  # a cp.async chunk, an ldmatrix row


def shared_layout(k: KernelOp) -> tuple[dict[str, int], int]:
    """Where `k`'s shared buffers lie in dynamic shared memory: each buffer's byte
    offset (16-byte aligned) and the bytes the launch provides; ({}, 0) when they fit
    the static `.shared` arrays ptxas accepts (`STATIC_SHARED_LIMIT`), which they
    then are."""
    offsets: dict[str, int] = {}
    end = 0
    for name, buf in k.shared_buffers().items():
        offsets[name] = end
        end += -(-buf.bytes // SHARED_ALIGN) * SHARED_ALIGN
    return (offsets, end) if end > STATIC_SHARED_LIMIT else ({}, 0)


def non_splat_constants(k: KernelOp) -> list[graph.ConstantOp]:
    out = []
    for g in k.groups():
        for op in g.block.ops:
            if isinstance(op, graph.ConstantOp) and splat_value(op) is None:
                out.append(op)
    return out




class KernelLowering:
    """The lowering of one kernel; a mapping's subclass writes the body (`body`)."""

    def __init__(self, k: KernelOp):
        self.k = k
        operands = list(k.block.args)
        results = list(k.results)
        self.constants, self.dynamic = extra_arguments(k)
        arg_types = ([flat_memref(elem_type(a)) for a in operands] + [flat_memref(elem_type(r)) for r in results]
                     + [flat_memref(elem_type(c.result)) for c in self.constants] + [IndexType()] * len(self.dynamic)
                     + self.extra_argument_types())
        shared = list(k.shared_buffers().values())
        offsets, dynamic_bytes = shared_layout(k)
        _, block = k.launch()
        self.block_size = block[0]
        # `vector_width` V: a thread takes V consecutive elements of the innermost
        # dimension where it took one; the vectorizer merges their loads and stores.
        self.vector = k.params.vector_width
        self.func = gpu.FuncOp(k.sym_name.data, (arg_types, []), kernel=True,
                               workgroup=[] if dynamic_bytes else [s.buffer_type for s in shared],
                               known_block_size=list(block))
        self.func.location = k.location
        body = self.func.body.blocks[0]
        n_in, n_out, n_c = len(operands), len(results), len(self.constants)
        args = list(body.args)
        for a, v in zip(args, operands):
            a.name_hint = v.name_hint
        for a, v in zip(args[n_in:], results):
            a.name_hint = (v.name_hint or "out")
        self.out_buffers = args[n_in:n_in + n_out]
        self.cursor = Cursor(body)
        self.ib = IndexBuilder(self.cursor)
        self.sb = ScalarBuilder(self.cursor)
        if dynamic_bytes:
            dyn = self.cursor.value(gpu.DynamicSharedMemoryOp())
            self.smem = {s.sym_name.data: self.cursor.value(memref.ViewOp(
                dyn, self.ib.const(offsets[s.sym_name.data]), [], s.buffer_type)) for s in shared}
        else:
            self.smem = dict(zip([s.sym_name.data for s in shared], args[len(arg_types):]))
        known: dict[SSAValue, list[Index]] = {}
        dyn_args = args[n_in + n_out + n_c:n_in + n_out + n_c + len(self.dynamic)]
        self.extra_args = args[n_in + n_out + n_c + len(self.dynamic):len(arg_types)]
        for a in operands:
            known[a] = list(shape_of(a.type))
        carried = dict(zip(self.dynamic, dyn_args))
        for (i, d), a in carried.items():
            a.name_hint = f"{operands[i].name_hint or 'arg'}_d{d}"
        for (i, d), rep in dim_classes(k).items():  # one argument per symbol class
            known[operands[i]][d] = carried[rep]
        self.shapes = ShapeCalc(self.ib, known)
        # Every size the kernel may need is computed here, in the entry block, so it
        # dominates all its uses (ShapeCalc caches sizes across nested blocks).
        for g in k.groups():
            for op in g.block.ops:
                for v in (*op.operands, *op.results):
                    self.shapes.dims(v)
        buffers: dict[SSAValue, SSAValue] = dict(zip(operands, args[:n_in]))
        self.read_only: set[SSAValue] = {*args[:n_in], *args[n_in + n_out:n_in + n_out + n_c]}
        for c, a in zip(self.constants, args[n_in + n_out:]):
            buffers[c.result] = a
            a.name_hint = "cst"
        self.row_values: dict[SSAValue, SSAValue] = {}
        self.emit = ElementEmitter(self.cursor, self.shapes, buffers, self.row_values)
        # Each kernel output: the group value computing it (kernel yield -> group yield).
        self.outputs: list[tuple[SSAValue, SSAValue]] = []  # (kernel-level value, graph value)
        for v in k.yielded():
            self.outputs.append((v, inner_value(v)))

    def extra_argument_types(self) -> list[MemRefType]:
        """Buffers the host passes after the dynamic sizes (`self.extra_args`), as a
        split-K GEMM's semaphores and workspace (`fsir/lowering/split_k.py`); none by
        default."""
        return []

    def body(self) -> None:
        raise NotImplementedError

    def lower(self) -> KernelInterface:
        self.body()
        self.cursor.insert(gpu.ReturnOp())
        return KernelInterface(self.func, self.constants, self.dynamic)

    def thread_id(self) -> SSAValue:
        return self.cursor.value(gpu.ThreadIdOp("x"))

    def block_id(self, dim: str = "x") -> SSAValue:
        return self.cursor.value(gpu.BlockIdOp(dim))

    def store_output(self, j: int, value: SSAValue, idx: list[Index]) -> None:
        _, gv = self.outputs[j]
        offset = self.ib.linearize(idx, self.shapes.dims(gv))
        self.emit.store(value, self.out_buffers[j], offset, elem_type(gv))


def reuse_computation(f: gpu.FuncOp, read_only: Set[SSAValue] = frozenset()) -> None:
    """FusionStitching §4.5: values that do not depend on a loop's iteration (a row's
    mean, its 1/sqrt(var + eps), index bases) are computed once before the loop, and
    equal values computed by different groups once per thread."""
    from xdsl.dialects import scf
    from xdsl.transforms.common_subexpression_elimination import cse
    from xdsl.transforms.dead_code_elimination import region_dce
    from xdsl.transforms.loop_invariant_code_motion import move_loop_invariant_code

    loops = [op for op in f.walk() if isinstance(op, scf.ForOp)]
    for loop in reversed(loops):  # inner loops first, so invariants bubble outwards
        move_loop_invariant_code(loop)
        if hoist_invariant_loads(loop, read_only):
            move_loop_invariant_code(loop)  # the loads' conversions follow them out
    cse(f)
    region_dce(f.body)
    erase_unused_arith(f)


def hoist_invariant_loads(loop, read_only) -> bool:
    """Move loads from buffers the kernel never writes (its inputs and constants) whose
    address does not depend on the loop out of it: a block taking several rows loads
    γ and β once and keeps them in registers for every row. Only loads at the top level
    of the body move (a guarded load may be out of bounds when its guard is false).
    A load in the body runs only when the loop runs, and a loop's bounds are often the
    guard itself (a thread past the last row runs its row loop zero times, and its row's
    address — an id it would gather by — lies past the end of the buffer): unless the
    bounds are constants that run the loop, the hoisted loads stay under `lb < ub`."""
    from xdsl.dialects import arith, memref, scf

    body = loop.body.block
    loads = [op for op in body.ops if isinstance(op, memref.LoadOp) and op.memref in read_only
             and not any(_defined_in(o, loop) for o in op.indices)]
    if not loads:
        return False
    block = loop.parent_block()
    lb, ub = _constant_index(loop.lb), _constant_index(loop.ub)
    if lb is not None and ub is not None and lb < ub:
        for op in loads:
            op.detach()
            block.insert_op_before(op, loop)
        return True
    runs = arith.CmpiOp(loop.lb, loop.ub, "slt")
    then_block, else_block = Block(), Block()
    zeros = [_zero(op.res.type) for op in loads]
    guard = scf.IfOp(runs, [op.res.type for op in loads], Region(then_block), Region(else_block))
    for op, result in zip(loads, guard.results):
        op.detach()
        then_block.add_op(op)
        op.res.replace_all_uses_with(result)  # before the yield below uses it
    then_block.add_op(scf.YieldOp(*[op.res for op in loads]))
    else_block.add_ops([*zeros, scf.YieldOp(*[z.result for z in zeros])])
    block.insert_ops_before([runs, guard], loop)
    return True


def _constant_index(v: SSAValue) -> int | None:
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerAttr

    if isinstance(v.owner, arith.ConstantOp) and isinstance(v.owner.value, IntegerAttr):
        return v.owner.value.value.data
    return None


def _zero(t: Attribute):
    """A constant 0 of scalar type `t` (what a hoisted load yields when the loop does not run)."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, IntegerType

    if isinstance(t, IntegerType):
        return arith.ConstantOp(IntegerAttr(0, t))
    assert isinstance(t, AnyFloat)  # loads are of the element types fsir supports
    return arith.ConstantOp(FloatAttr(0.0, t))


def _defined_in(v: SSAValue, loop: Operation) -> bool:
    owner = v.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    return op is not None and loop.is_ancestor(op)


def erase_unused_arith(op) -> None:
    """Drop arith/math ops whose results nobody uses (index arithmetic that folding or
    reuse made unnecessary; xDSL's DCE keeps divisions, which may trap in general)."""
    changed = True
    while changed:
        changed = False
        for inner in reversed(list(op.walk())):
            if (inner.name.startswith(("arith.", "math.")) and inner.results
                    and all(not r.uses for r in inner.results)):
                inner.detach()
                inner.erase()
                changed = True


def lower(k: KernelOp, lowering: type[KernelLowering]) -> KernelInterface:
    """`k` lowered by its mapping's `lowering` (checked lowerable by the mapping), with
    computation reuse and vector accesses."""
    try:
        kl = lowering(k)
        iface = kl.lower()
        reuse_computation(iface.func, kl.read_only)
        if kl.vector > 1 and vectorize_memory(iface.func, kl.vector):
            erase_unused_arith(iface.func)
        return iface
    except KeyError as err:  # a missing buffer or symbol: the schedule is inconsistent
        raise UserError(f"'schedule.kernel' op @{k.sym_name.data} cannot be lowered: missing {err}",
                        location_of(k)) from None

