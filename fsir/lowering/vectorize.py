"""Vector memory instructions: a gpu-IR peephole in the manner of LLVM's
LoadStoreVectorizer.

Within one block, `width` scalar `memref.load`s (or `memref.store`s) of one global
buffer at offsets `x + c0, x + c0 + 1, ..., x + c0 + width - 1`, where `x + c0` is
provably a multiple of `width` (`fsir.lowering.scalar.known_multiple`), become one
`gpu.load_vector` (`gpu.store_vector`), which the PTX printer prints as
`ld.global.v4.f32` / `st.global.v2.b16`. Kernel buffers start 256-byte aligned (as
`cudaMalloc` returns them), so the access is aligned to its size.

```mlir
%a = memref.load %x[%i] : memref<?xf32>        %a, %b = gpu.load_vector %x[%i]
%j = arith.addi %i, %c1 : index           ->       : memref<?xf32> -> f32, f32
%b = memref.load %x[%j] : memref<?xf32>
```
(with `%i` a multiple of 2, e.g. `%t * 2`). Loads move up to the first of them and
stores down to the last, so nothing in between may write (for loads) or touch (for
stores) the same buffer, nor be a barrier. Elements of 8 to 32 bits (not `i1`, which
is stored as a byte and converted), at most 16 bytes per access.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from fsir.dialects import gpu
from fsir.lowering.scalar import const_addend, known_multiple

MAX_VECTOR_BYTES = gpu.MAX_VECTOR_BYTES


def vector_bits(elem) -> int | None:
    """Bits of an element a vector access may move (None: not vectorizable)."""
    bits = getattr(elem, "bitwidth", None)
    if bits is None or (isinstance(elem, IntegerType) and bits == 1) or bits > 32:
        return None
    return bits


def _global_buffer(v: SSAValue) -> bool:
    t = v.type
    if not isinstance(t, MemRefType) or t.get_num_dims() != 1 or vector_bits(t.element_type) is None:
        return False
    space = t.memory_space
    return not isinstance(space, IntegerAttr) or space.value.data == 0


def _split(index: SSAValue) -> tuple[SSAValue | None, int]:
    """An access's offset as (x, c): the index is x + c (x None: the constant c)."""
    owner = index.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return None, owner.value.value.data
    split = const_addend(index)
    return split if split is not None else (index, 0)


def _touches(op: Operation, buf: SSAValue, writes_only: bool) -> bool:
    """Whether `op` (or an op nested in it) writes `buf` (or, unless `writes_only`,
    reads it), or is a barrier (after which other threads' accesses are ordered)."""
    for inner in op.walk():
        if isinstance(inner, gpu.BarrierOp):
            return True
        if buf not in inner.operands:
            continue
        if isinstance(inner, (memref.LoadOp, gpu.LoadVectorOp)):
            if not writes_only:
                return True
        else:
            return True
    return False


_Access = TypeVar("_Access", memref.LoadOp, memref.StoreOp)


def _runs(ops: Sequence[_Access], width: int) -> Iterable[list[_Access]]:
    """Groups of `width` accesses (in offset order) to x + c0 .. x + c0 + width - 1,
    with x + c0 a multiple of `width`."""
    groups: dict[tuple, dict[int, _Access]] = {}
    for op in ops:
        x, c = _split(op.indices[0])
        by_offset = groups.setdefault((op.memref, x), {})
        by_offset.setdefault(c, op)  # a repeated offset stays scalar
    for (_, x), by_offset in groups.items():
        if x is not None and known_multiple(x) % width:
            continue
        for c0 in sorted(by_offset):
            if c0 % width or any(c0 + k not in by_offset for k in range(width)):
                continue
            yield [by_offset[c0 + k] for k in range(width)]


def _position(block: Block) -> dict[Operation, int]:
    return {op: i for i, op in enumerate(block.ops)}


def _free_runs(block: Block, kind: type[_Access], width: int) -> Iterator[tuple[list[_Access], list[Operation]]]:
    """The runs (`_runs`) of `width` global accesses of `kind` in `block` that may become
    one: nothing between the first and the last writes their buffer (loads) or touches
    it (stores), nor is a barrier. Each with the block's ops from its first access to
    its last, taken when it is yielded (the caller merges a run before asking for the
    next)."""
    accesses = [op for op in block.ops if isinstance(op, kind) and _global_buffer(op.memref)
                and _fits(op.memref, width)]
    for run in list(_runs(accesses, width)):
        pos = _position(block)
        first, last = min(pos[op] for op in run), max(pos[op] for op in run)
        ops = list(block.ops)
        window = ops[first:last + 1]
        if not any(_touches(o, run[0].memref, kind is memref.LoadOp) for o in window if o not in run):
            yield run, window


def _merge_loads(block: Block, width: int) -> int:
    merged = 0
    for run, window in _free_runs(block, memref.LoadOp, width):
        anchor = window[0]
        index = run[0].indices[0]
        if index.owner in window:  # not available at the anchor yet (defined before run[0], after the anchor)
            x, c0 = _split(index)
            cst = arith.ConstantOp(IntegerAttr(c0, IndexType()))
            block.insert_ops_before([cst], anchor)
            if x is None:
                index = cst.result
            else:
                add = arith.AddiOp(x, cst.result)
                block.insert_op_before(add, anchor)
                index = add.result
        vec = gpu.LoadVectorOp(run[0].memref, [index], width)
        block.insert_op_before(vec, anchor)
        for op, v in zip(run, vec.values):
            v.name_hint = op.res.name_hint
            op.res.replace_all_uses_with(v)
            op.detach()
            op.erase()
        merged += 1
    return merged


def _merge_stores(block: Block, width: int) -> int:
    merged = 0
    for run, window in _free_runs(block, memref.StoreOp, width):
        vec = gpu.StoreVectorOp([op.value for op in run], run[0].memref, [run[0].indices[0]])
        block.insert_op_after(vec, window[-1])
        for op in run:
            op.detach()
            op.erase()
        merged += 1
    return merged


def _fits(buf: SSAValue, width: int) -> bool:
    t = buf.type
    assert isinstance(t, MemRefType)
    bits = vector_bits(t.element_type)
    return bits is not None and width * bits <= 8 * MAX_VECTOR_BYTES


def vectorize_memory(func: gpu.FuncOp, max_width: int) -> int:
    """Merge the scalar global loads and stores of `func` into vector accesses of up
    to `max_width` elements (widest first); returns how many vector ops it formed."""
    merged = 0
    blocks = [b for op in func.walk() for r in op.regions for b in r.blocks]
    for width in (w for w in sorted(gpu.VECTOR_WIDTHS, reverse=True) if w <= max_width):
        for block in blocks:
            merged += _merge_loads(block, width) + _merge_stores(block, width)
    return merged


@dataclass(frozen=True)
class VectorizeMemoryPass(ModulePass):
    """`gpu-vectorize-memory{width=4}`: the peephole on every kernel gpu.func."""

    name = "gpu-vectorize-memory"

    width: int = 4

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from fsir.errors import UserError

        if self.width not in (1, *gpu.VECTOR_WIDTHS):
            raise UserError(f"gpu-vectorize-memory: width={self.width} (expected 1, 2 or 4)")
        for f in op.walk():
            if isinstance(f, gpu.FuncOp):
                vectorize_memory(f, self.width)
