"""One `schedule.kernel` → one `gpu.func` (explicit SIMT code).

The kernel takes flat 1-D global buffers `memref<?xT>` (inputs, outputs, then non-splat
constants) and one `index` argument per dynamic dim of its inputs; shared buffers are
workgroup attributions. The three mappings:

- `loop`: thread `i = block_id * block_dim + thread_id` computes element `i` of each
  output (outputs of other sizes are guarded: kernel packing).
- `row`: `threads_per_row` threads own a row; reductions loop over the row with that
  stride, then combine across the row's threads (none / a butterfly of `gpu.shuffle
  xor` / butterflies, a shared-memory exchange of warp partials and a second butterfly
  by warp 0 leaving the result in a shared slot); root groups loop over the row's
  columns. Every thread reaches every barrier: rows beyond the end only shorten loops.
- `gemm`: a bm x bn output tile per block, a tm x tn micro-tile of it per thread in
  registers; each k-step stages a tile of each operand in shared memory (producers
  inlined, out-of-range elements zero), then accumulates (`tile_*`, `thread_*` params).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, i32
from xdsl.ir import Attribute, Operation, SSAValue

from fsir.codegen.gemm_configs import GemmConfig
from fsir.dialects import gpu, graph
from fsir.dialects.graph import DYN, fmt_shape, shape_of
from fsir.dialects.gpu import VECTOR_WIDTHS
from fsir.dialects.schedule import GroupOp, KernelOp
from fsir.errors import UserError
from fsir.ir import location_of
from fsir.lowering.emit import ElementEmitter, elem_type, splat_value
from fsir.lowering.scalar import Cursor, Index, IndexBuilder, ScalarBuilder, compute_type
from fsir.lowering.shapes import ShapeCalc
from fsir.lowering.vectorize import vectorize_memory

WARP = 32


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
    constants' buffers and each `?` dim of its operands (operand, dim), in order."""
    dynamic = [(i, d) for i, a in enumerate(k.block.args) for d, s in enumerate(shape_of(a.type)) if s == DYN]
    return non_splat_constants(k), dynamic


def non_splat_constants(k: KernelOp) -> list[graph.ConstantOp]:
    out = []
    for g in k.groups():
        for op in g.block.ops:
            if isinstance(op, graph.ConstantOp) and splat_value(op) is None:
                out.append(op)
    return out


class KernelLowering:
    def __init__(self, k: KernelOp):
        self.k = k
        operands = list(k.block.args)
        results = list(k.results)
        self.constants, self.dynamic = extra_arguments(k)
        arg_types = ([flat_memref(elem_type(a)) for a in operands] + [flat_memref(elem_type(r)) for r in results]
                     + [flat_memref(elem_type(c.result)) for c in self.constants] + [IndexType()] * len(self.dynamic))
        shared = list(k.shared_buffers().values())
        grid, block = k.launch()
        self.block_size = block[0]
        # `vector_width` V: a thread takes V consecutive elements of the innermost
        # dimension where it took one; the vectorizer merges their loads and stores.
        self.vector = vector_width(k)
        self.func = gpu.FuncOp(k.sym_name.data, (arg_types, []), kernel=True,
                               workgroup=[s.buffer_type for s in shared], known_block_size=list(block))
        self.func.location = k.location
        body = self.func.body.blocks[0]
        n_in, n_out, n_c = len(operands), len(results), len(self.constants)
        args = list(body.args)
        for a, v in zip(args, operands):
            a.name_hint = v.name_hint
        for a, v in zip(args[n_in:], results):
            a.name_hint = (v.name_hint or "out")
        self.out_buffers = args[n_in:n_in + n_out]
        self.smem = dict(zip([s.sym_name.data for s in shared], args[len(arg_types):]))
        self.cursor = Cursor(body)
        self.ib = IndexBuilder(self.cursor)
        self.sb = ScalarBuilder(self.cursor)
        known: dict[SSAValue, list[Index]] = {}
        dyn_args = args[n_in + n_out + n_c:len(arg_types)]
        for a in operands:
            known[a] = list(shape_of(a.type))
        for (i, d), a in zip(self.dynamic, dyn_args):
            a.name_hint = f"{operands[i].name_hint or 'arg'}_d{d}"
            known[operands[i]][d] = a
        self.shapes = ShapeCalc(self.ib, known)
        # Every size the kernel may need is computed here, in the entry block, so it
        # dominates all its uses (ShapeCalc caches sizes across nested blocks).
        for g in k.groups():
            for op in g.block.ops:
                for v in (*op.operands, *op.results):
                    self.shapes.dims(v)
        buffers = dict(zip(operands, args[:n_in]))
        self.read_only = set(args[:n_in]) | set(args[n_in + n_out:n_in + n_out + n_c])
        for c, a in zip(self.constants, args[n_in + n_out:]):
            buffers[c.result] = a
            a.name_hint = "cst"
        self.row_values: dict[SSAValue, SSAValue] = {}
        self.emit = ElementEmitter(self.cursor, self.shapes, buffers, self.row_values)
        self.steps = 1
        self.smem_written: list[tuple[str, int, int]] = []  # shared sub-root rows: (buffer, start, end)
        # Each kernel output: the group value computing it (kernel yield -> group yield).
        self.outputs: list[tuple[SSAValue, SSAValue]] = []  # (kernel-level value, graph value)
        for v in k.block.last_op.operands:  # type: ignore[union-attr]
            self.outputs.append((v, self.inner(v)))

    @staticmethod
    def inner(v: SSAValue) -> SSAValue:
        """The graph value a kernel-level value stands for (group results → yielded)."""
        op = v.owner
        if isinstance(op, GroupOp):
            return op.block.last_op.operands[list(op.results).index(v)]  # type: ignore[union-attr]
        return v

    def lower(self) -> KernelInterface:
        mapping = self.k.mapping.data
        {"loop": self.loop, "row": self.rows, "gemm": self.gemm}[mapping]()
        self.cursor.insert(gpu.ReturnOp())
        return KernelInterface(self.func, self.constants, self.dynamic)

    def thread_id(self) -> SSAValue:
        return self.cursor.value(gpu.ThreadIdOp("x"))

    def block_id(self, dim: str = "x") -> SSAValue:
        return self.cursor.value(gpu.BlockIdOp(dim))

    def store_output(self, j: int, value: SSAValue, idx: list[Index]) -> None:
        kv, gv = self.outputs[j]
        offset = self.ib.linearize(idx, self.shapes.dims(gv))
        self.emit.store(value, self.out_buffers[j], offset, elem_type(gv))

    # -- loop --------------------------------------------------------------------------

    def loop(self) -> None:
        ib, e = self.ib, self.emit
        # thread t computes elements t*V .. t*V + V - 1 (innermost extents are multiples of V)
        i = ib.mul(ib.add(ib.mul(self.block_id(), self.block_size), self.thread_id()), self.vector)
        by_shape: dict[tuple, list[int]] = {}
        for j, (_, gv) in enumerate(self.outputs):
            dims = self.shapes.dims(gv)
            by_shape.setdefault(tuple(("c", d) if isinstance(d, int) else ("v", id(d)) for d in dims), []).append(j)
        for js in by_shape.values():
            dims = self.shapes.dims(self.outputs[js[0]][1])

            def body(js=js, dims=dims):
                first = ib.delinearize(i, dims)
                for v in range(self.vector):
                    idx = [*first[:-1], ib.add(first[-1], v)] if dims else first
                    for j in js:
                        self.store_output(j, e.at(self.outputs[j][1], idx), idx)

            e.when(ib.lt(i, ib.prod(dims)), body)

    # -- row ---------------------------------------------------------------------------

    def rows(self) -> None:
        ib, e = self.ib, self.emit
        per_row = self.k.param("threads_per_row")
        rows_per_block = self.k.param("rows_per_block")
        params = self.k.params.data
        # `row_steps`: each block takes that many consecutive row-blocks in a loop, so the
        # row-invariant operands (γ, β) it loads are hoisted out and reused every step.
        steps = self.k.param("row_steps") if "row_steps" in params else 1
        self.steps = steps
        # `elements_per_thread`: the row's columns are unrolled into that many slots per
        # thread at the top of the step; the memo keeps each slot's values in registers,
        # so a value read before a reduction and used after it is loaded once.
        self.cached = self.k.param("elements_per_thread") if "elements_per_thread" in params else 0
        tid = self.thread_id()
        self.interleaved = "interleaved" in params
        if self.interleaved:  # consecutive threads take consecutive rows
            local_row, lane = ib.rem(tid, rows_per_block), ib.div(tid, rows_per_block)
        else:  # consecutive threads share a row
            local_row, lane = ib.div(tid, per_row), ib.rem(tid, per_row)
        self.local_row, self.rows_per_block = local_row, rows_per_block
        groups = [g for g in self.k.groups() if "packed" not in g.attributes]
        for g in self.k.groups():
            if "packed" in g.attributes:
                self.grid_stride(g)
        first = ib.add(ib.mul(self.block_id(), rows_per_block * steps), local_row)
        if steps == 1:
            self.row_step(groups, first, lane, per_row, tid)
            return

        def step(s, iters):
            self.row_step(groups, ib.add(first, s), lane, per_row, tid)
            return []

        e.for_loop(0, rows_per_block * steps, rows_per_block, [], step)

    def row_step(self, groups: list[GroupOp], row, lane, per_row: int, tid) -> None:
        """Every group of the kernel for the thread's row `row`."""
        ib, e = self.ib, self.emit
        for g in groups:
            # Each group checks its own row count: parts packed together may have
            # different `?` row counts at run time (the grid covers the largest).
            row_dims = group_row_dims(g, self.shapes)
            n_rows = ib.prod(row_dims)
            valid = ib.lt(row, n_rows)
            store_idx = ib.delinearize(row, row_dims)
            # unrolled slots compute without guards: rows past the end read the last row
            # (their results are never stored)
            row_idx = ib.delinearize(ib.min(row, ib.sub(n_rows, 1)), row_dims) if self.cached else store_idx
            r = self.group_reduce(g)
            if r is None and g.storage.data != "global":
                self.subroot_rows(g, row_idx, valid, lane, per_row)
                continue
            if r is not None:
                value = self.reduce_row(g, r, row_idx, valid, lane, per_row, tid)
                self.row_values[g.results[0]] = value
                for j, (kv, _) in enumerate(self.outputs):
                    if kv is g.results[0]:
                        e.when(e.and_(valid, ib.eq(lane, 0)),
                               lambda j=j, idx=store_idx: self.store_output(j, value, idx))
                continue
            index, cols = self.row_index(g, row_idx)
            targets = [(j, gv) for res in g.results for j, (kv, gv) in enumerate(self.outputs) if kv is res]
            if self.cached:
                for columns, inside in self.slots(lane, per_row, ib.prod(cols)):
                    idxs = [index(c) for c in columns]
                    vals = [[e.at(gv, idx) for _, gv in targets] for idx in idxs]
                    e.when(e.and_(valid, inside), lambda idxs=idxs, vals=vals: [
                        self.store_output(j, v, idx)
                        for idx, vs in zip(idxs, vals) for (j, _), v in zip(targets, vs)])
                continue

            def body(c, iters, index=index, targets=targets):
                idx = index(c)
                for j, gv in targets:
                    self.store_output(j, e.at(gv, idx), idx)
                return []

            e.for_loop(lane, ib.select(valid, ib.prod(cols), 0), per_row, [], body)

    def row_index(self, g: GroupOp, row_idx: list[Index]):
        """A row group's element index for column `c` of the thread's row (a function),
        and the sizes of its column dims."""
        ib = self.ib
        rd = row_dims_attr(g)
        out_dims = self.shapes.dims(self.inner(g.results[0]))
        cd = [d for d in range(len(out_dims)) if d not in rd]
        cols = [out_dims[d] for d in cd]

        def index(c) -> list[Index]:
            idx: list[Index] = [0] * len(out_dims)
            for d, x in zip(rd, row_idx):
                idx[d] = x
            for d, x in zip(cd, ib.delinearize(c, cols)):
                idx[d] = x
            return idx

        return index, cols

    def subroot_rows(self, g: GroupOp, row_idx, valid, lane, per_row: int) -> None:
        """An expensive elementwise sub-root E (§4.1): computed once per element of the
        thread's row, and read by later groups instead of recomputed.

        `reg` / `lanes` (register-cached configurations): each thread computes E at its
        own slots, which stay in registers through the memo; every group maps column c
        to the same lane, so its readers find E there (no exchange). `shared`: the
        row's threads store E at [local_row * row length + column] of the group's
        buffer, and a barrier publishes it to every thread of the row; readers load it
        (ElementEmitter.row_elements). When the allocator gave the buffer space an
        earlier sub-root used, a barrier first lets that one's readers finish."""
        ib, e = self.ib, self.emit
        v = self.inner(g.results[0])
        index, cols = self.row_index(g, row_idx)
        length = ib.prod(cols)
        if g.storage.data != "shared":
            for columns, _ in self.slots(lane, per_row, length):
                for c in columns:
                    e.at(v, index(c))
            e.row_elements[g.results[0]] = (v, None, 0, [])
            return
        assert isinstance(length, int), "shared sub-root rows need a static row length"
        buf = self.smem[g.buffer.root_reference.data]  # type: ignore[union-attr]
        start = g.offset.value.data  # type: ignore[union-attr]
        span = (g.buffer.root_reference.data, start, start + self.rows_per_block * length)  # type: ignore[union-attr]
        if self.steps > 1 or any(b == span[0] and lo < span[2] and span[1] < hi for b, lo, hi in self.smem_written):
            self.cursor.insert(gpu.BarrierOp())
        self.smem_written.append(span)
        base = ib.add(start, ib.mul(self.local_row, length))
        elem = elem_type(v)
        if self.cached:
            # a slot inside the row is never clamped (rows are multiples of the width)
            for columns, inside in self.slots(lane, per_row, length):
                xs = [e.at(v, index(c)) for c in columns]
                e.when(e.and_(valid, inside), lambda columns=columns, xs=xs: [
                    e.store(x, buf, ib.add(base, c), elem) for c, x in zip(columns, xs)])
        else:
            def body(c, iters):
                e.store(e.at(v, index(c)), buf, ib.add(base, c), elem)
                return []

            e.for_loop(lane, ib.select(valid, length, 0), per_row, [], body)
        self.cursor.insert(gpu.BarrierOp())
        e.row_elements[g.results[0]] = (v, buf, base, row_dims_attr(g))

    def slots(self, lane, per_row: int, total: Index):
        """The unrolled column slots of a thread: (the V in-bounds columns to compute
        at, whether the slot exists). Slot k of lane l covers columns (l + k*per_row)*V
        + v, v < V, so consecutive lanes read consecutive vectors. The last slot may run
        past the row's end; its columns are clamped so the loads stay in bounds (and
        aligned), and the caller discards them."""
        assert isinstance(total, int), "elements_per_thread needs static row lengths"
        ib, vec = self.ib, self.vector
        base = ib.mul(lane, vec)
        for k in range(-(-total // (per_row * vec))):
            c = ib.add(base, k * per_row * vec)
            inside: bool | SSAValue = True
            if (k + 1) * per_row * vec > total:
                c, inside = ib.min(c, total - vec), ib.lt(c, total)
            yield [ib.add(c, v) for v in range(vec)], inside

    def grid_stride(self, g: GroupOp) -> None:
        """An independent packed part: every thread of the grid takes its elements in
        turn (thread i computes elements i, i + grid threads, ...)."""
        ib, e = self.ib, self.emit
        first = ib.add(ib.mul(self.block_id(), self.block_size), self.thread_id())
        total = ib.mul(self.cursor.value(gpu.GridDimOp("x")), self.block_size)
        values = [self.inner(v) for v in g.results]
        dims = self.shapes.dims(values[0])

        def body(i, iters):
            idx = ib.delinearize(i, dims)
            for res in g.results:
                for j, (kv, gv) in enumerate(self.outputs):
                    if kv is res:
                        self.store_output(j, e.at(gv, idx), idx)
            return []

        e.for_loop(first, ib.prod(dims), total, [], body)

    @staticmethod
    def group_reduce(g: GroupOp) -> graph.ReduceOp | None:
        """The sub-root reduction leading `g` (None for a root group)."""
        if g.storage.data == "global":
            return None
        v = g.block.last_op.operands[0]  # type: ignore[union-attr]
        return v.owner if isinstance(v.owner, graph.ReduceOp) else None

    def reduce_row(self, g: GroupOp, r: graph.ReduceOp, row_idx, valid, lane, per_row: int, tid) -> SSAValue:
        ib, e, sb = self.ib, self.emit, self.sb
        kind = r.kind.data
        elem = elem_type(r.result)
        acc_t = compute_type(elem)
        in_dims = self.shapes.dims(r.input)
        reduced = sorted(r.dims.get_values())
        kept = [d for d in range(len(in_dims)) if d not in reduced]
        red_dims = [in_dims[d] for d in reduced]
        ub = ib.select(valid, ib.prod(red_dims), 0)
        init = sb.reduce_init(kind, acc_t)

        def element(c) -> SSAValue:
            ridx = ib.delinearize(c, red_dims)
            idx: list[Index] = [0] * len(in_dims)
            for d, x in zip(kept, row_idx):
                idx[d] = x
            for d, x in zip(reduced, ridx):
                idx[d] = x
            return e.at(r.input, idx)

        if self.cached:
            acc = init
            for columns, inside in self.slots(lane, per_row, ib.prod(red_dims)):
                for cc in columns:
                    x = element(cc)
                    if not isinstance(inside, bool):
                        x = sb.select(inside, x, init)
                    acc = sb.combine(kind, acc, x)
            return self.combine_row(g, kind, acc, init, lane, per_row, tid, elem)

        def body(j, iters):
            return [sb.combine(kind, iters[0], element(j))]

        (acc,) = e.for_loop(lane, ub, per_row, [init], body)
        return self.combine_row(g, kind, acc, init, lane, per_row, tid, elem)

    def combine_row(self, g: GroupOp, kind: str, acc: SSAValue, init: SSAValue, lane, per_row: int, tid,
                    elem) -> SSAValue:
        """Combine the partials of a row's threads: none, shuffles, or shared memory."""
        if self.interleaved:
            acc = self.slice_reduce(g, kind, acc, init, lane, per_row)
        elif 1 < per_row <= WARP:
            acc = self.butterfly(kind, acc, per_row)
        elif per_row > WARP:
            acc = self.block_reduce(g, kind, acc, init, tid)
        return self.sb.round_to(acc, elem)

    def slice_reduce(self, g: GroupOp, kind: str, acc: SSAValue, init: SSAValue, lane, slices: int) -> SSAValue:
        """Interleaved rows: each of a row's `slices` threads leaves its partial in shared
        memory; after a barrier the row's first thread combines them into the group's
        slot for the row; after another barrier every thread of the row reads it."""
        ib, e, c = self.ib, self.emit, self.cursor
        acc_t = acc.type
        rpb, local_row = self.rows_per_block, self.local_row
        partials = self.smem[f"partials_{acc_t}"]
        results = self.smem[g.buffer.root_reference.data]  # type: ignore[union-attr]
        slot = ib.add(g.offset.value.data, local_row)  # type: ignore[union-attr]
        e.store(acc, partials, ib.add(ib.mul(lane, rpb), local_row), acc_t)
        c.insert(gpu.BarrierOp())

        def first_slice():
            v = init
            for s in range(slices):
                v = self.sb.combine(kind, v, e.load(partials, ib.add(s * rpb, local_row)))
            e.store(v, results, slot, acc_t)

        e.when(ib.eq(lane, 0), first_slice)
        c.insert(gpu.BarrierOp())
        return e.load(results, slot)

    def shuffle_xor(self, v: SSAValue, offset: int) -> SSAValue:
        """`gpu.shuffle xor` of any 32- or 64-bit scalar (64-bit ones as two halves)."""
        c = self.cursor
        off = self.sb.const(offset, i32)
        width = self.sb.const(WARP, i32)
        if isinstance(v.type, IntegerType) and v.type.width.data == 64:
            i64t = v.type
            lo = c.value(arith.TruncIOp(v, i32))
            hi = c.value(arith.TruncIOp(c.value(arith.ShRUIOp(v, self.sb.const(32, i64t))), i32))
            lo2 = c.insert(gpu.ShuffleOp("xor", lo, off, width)).results[0]
            hi2 = c.insert(gpu.ShuffleOp("xor", hi, off, width)).results[0]
            wide_hi = c.value(arith.ShLIOp(c.value(arith.ExtUIOp(hi2, i64t)), self.sb.const(32, i64t)))
            return c.value(arith.OrIOp(wide_hi, c.value(arith.ExtUIOp(lo2, i64t))))
        return c.insert(gpu.ShuffleOp("xor", v, off, width)).results[0]

    def butterfly(self, kind: str, acc: SSAValue, lanes: int = WARP) -> SSAValue:
        """Every lane of each aligned segment of `lanes` lanes ends with the combination
        of the segment's values (xor offsets below `lanes` stay inside the segment)."""
        offset = lanes // 2
        while offset:
            acc = self.sb.combine(kind, acc, self.shuffle_xor(acc, offset))
            offset //= 2
        return acc

    def block_reduce(self, g: GroupOp, kind: str, acc: SSAValue, init: SSAValue, tid) -> SSAValue:
        """Warp butterflies, warp partials through shared memory, a second butterfly by
        warp 0, the result in the group's shared slot (read by every thread)."""
        ib, e, c = self.ib, self.emit, self.cursor
        acc_t = acc.type
        partials = self.smem[f"partials_{acc_t}"]
        results = self.smem[g.buffer.root_reference.data]  # type: ignore[union-attr]
        slot = g.offset.value.data  # type: ignore[union-attr]
        n_warps = self.block_size // WARP
        warp, wlane = ib.div(tid, WARP), ib.rem(tid, WARP)
        acc = self.butterfly(kind, acc)
        e.when(ib.eq(wlane, 0), lambda: e.store(acc, partials, warp, acc_t))
        c.insert(gpu.BarrierOp())

        def first_warp():
            part = e.load(partials, ib.min(wlane, n_warps - 1))
            v = self.sb.select(self.cursor.value(arith.CmpiOp(ib.ssa(wlane), ib.ssa(n_warps), "ult")), part, init)
            v = self.butterfly(kind, v)
            e.when(ib.eq(wlane, 0), lambda: e.store(v, results, slot, acc_t))

        e.when(ib.eq(warp, 0), first_warp)
        c.insert(gpu.BarrierOp())
        return e.load(results, slot)

    # -- gemm --------------------------------------------------------------------------

    def gemm(self) -> None:
        """Register-blocked tiled GEMM. Thread (ty, tx) of a block owns the outputs
        (ty + i * bm/tm, tx + j * bn/tn) of its bm x bn tile for i < tm, j < tn (so
        consecutive threads store consecutive columns); each k-step all threads stage the
        bm x bk tile of A and the bk x bn tile of B in shared memory (consecutive threads
        loading consecutive elements of a tile row, producers inlined, zero outside the
        operands), then the unrolled k-step reads tm values of A and tn of B per k and
        accumulates their tm x tn products in registers."""
        ib, e, sb = self.ib, self.emit, self.sb
        (g,) = self.k.groups()
        dot = self.inner(g.results[0]).owner
        assert isinstance(dot, graph.DotOp)
        bm, bn, bk, tm, tn = gemm_params(self.k)
        acc_t = compute_type(elem_type(dot.result))
        a_dims, b_dims = self.shapes.dims(dot.lhs), self.shapes.dims(dot.rhs)
        out_dims = self.shapes.dims(dot.result)
        va, vb = len(a_dims) == 1, len(b_dims) == 1
        m_size = 1 if va else a_dims[-2]
        n_size = 1 if vb else b_dims[-1]
        k_size = a_dims[-1]
        batch_dims = out_dims[: len(out_dims) - (not va) - (not vb)]
        tid = self.thread_id()
        tx, ty = ib.rem(tid, bn // tn), ib.div(tid, bn // tn)
        m0, n0 = ib.mul(self.block_id("y"), bm), ib.mul(self.block_id("x"), bn)
        bidx = ib.delinearize(self.block_id("z"), batch_dims)
        a_tile, b_tile = self.smem["a_tile"], self.smem["b_tile"]
        zero = sb.const(0, acc_t)

        def batch_of(dims: list[Index], static: tuple[int, ...]) -> list[Index]:
            """An operand's batch index: right-aligned, size-1 dims broadcast."""
            nb = len(dims) - 2
            out: list[Index] = []
            for i in range(nb):
                o = bidx[len(bidx) - nb + i]
                if static[i] == 1:
                    out.append(0)
                elif static[i] == DYN:
                    out.append(ib.select(ib.eq(dims[i], 1), 0, o))
                else:
                    out.append(o)
            return out

        a_batch = [] if va else batch_of(a_dims, shape_of(dot.lhs.type))
        b_batch = [] if vb else batch_of(b_dims, shape_of(dot.rhs.type))
        # Bounds a tile cannot cross need no guard: a dim that is a static multiple of
        # its tile (the grid covers it exactly; k steps never pass it).
        def below(i: Index, size: Index, tile: int) -> bool | SSAValue:
            return True if isinstance(size, int) and size % tile == 0 else ib.lt(i, size)

        def positions(rows: int, cols: int) -> list[tuple[Index, Index, bool | SSAValue]]:
            """A thread's elements of a rows x cols tile: element tid + s * threads for
            s = 0, 1, ... as (row, column, whether it is in the tile). Computed in each
            k-step: ptxas recomputes these shifts and masks rather than keeping them in
            registers across the loop (and the evaluator, which counts what the IR
            keeps live, then agrees with it: with them hoisted, ptxas -v reports 16
            more registers for a 4x4 micro-tile)."""
            threads, total = self.block_size, rows * cols
            out = []
            first = (ib.div(tid, cols), ib.rem(tid, cols)) if threads % cols == 0 else None
            for s in range(-(-total // threads)):
                if first is not None:
                    r, c = ib.add(first[0], s * threads // cols), first[1]
                else:
                    lin = ib.add(tid, s * threads)
                    r, c = ib.div(lin, cols), ib.rem(lin, cols)
                out.append((r, c, True if (s + 1) * threads <= total else ib.lt(ib.add(tid, s * threads), total)))
            return out

        def stage(k0, buf, cols: int, elements, value) -> None:
            """Copy the thread's `elements` of a tile (row-major in `buf`, `cols` wide);
            `value(k0, r, c)` loads one."""
            for r, c, exists in elements:
                e.when(exists, lambda r=r, c=c: e.store(value(k0, r, c), buf, ib.add(ib.mul(r, cols), c), acc_t))

        def a_value(k0, r, c) -> SSAValue:
            m, k = ib.add(m0, r), ib.add(k0, c)
            inside = e.and_(below(m, m_size, bm), below(k, k_size, bk))
            return e.guarded(inside, lambda: e.at(dot.lhs, [k] if va else [*a_batch, m, k]), lambda: zero)

        def b_value(k0, r, c) -> SSAValue:
            k, n = ib.add(k0, r), ib.add(n0, c)
            inside = e.and_(below(k, k_size, bk), below(n, n_size, bn))
            return e.guarded(inside, lambda: e.at(dot.rhs, [k] if vb else [*b_batch, k, n]), lambda: zero)

        rows = [ib.add(ty, i * (bm // tm)) for i in range(tm)]  # tile rows of this thread
        cols = [ib.add(tx, j * (bn // tn)) for j in range(tn)]

        def k_step(k0, accs):
            a_elements, b_elements = positions(bm, bk), positions(bk, bn)
            stage(k0, a_tile, bk, a_elements, a_value)
            stage(k0, b_tile, bn, b_elements, b_value)
            self.cursor.insert(gpu.BarrierOp())
            accs = list(accs)
            for kk in range(bk):
                xs = [e.load(a_tile, ib.add(ib.mul(r, bk), kk)) for r in rows]
                ys = [e.load(b_tile, ib.add(c, kk * bn)) for c in cols]
                for i, x in enumerate(xs):
                    for j, y in enumerate(ys):
                        accs[i * tn + j] = sb.multiply_add(x, y, accs[i * tn + j])
            self.cursor.insert(gpu.BarrierOp())
            return accs

        accs = e.for_loop(0, k_size, bk, [zero] * (tm * tn), k_step)
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                m, n = ib.add(m0, r), ib.add(n0, c)
                out_idx = [*bidx, *([] if va else [m]), *([] if vb else [n])]
                e.when(e.and_(below(m, m_size, bm), below(n, n_size, bn)),
                       lambda acc=accs[i * tn + j], idx=out_idx: self.store_output(0, acc, idx))


def gemm_params(k: KernelOp) -> tuple[int, int, int, int, int]:
    """(bm, bn, bk, tm, tn) of a gemm kernel; a missing micro-tile is 1x1."""
    p = k.params.data
    return (k.param("tile_m"), k.param("tile_n"), k.param("tile_k"),
            k.param("thread_m") if "thread_m" in p else 1, k.param("thread_n") if "thread_n" in p else 1)


def row_dims_attr(g: GroupOp) -> list[int]:
    attr = g.attributes.get("row_dims")
    return list(attr.get_values()) if attr is not None else []  # type: ignore[attr-defined]


def group_row_dims(g: GroupOp, shapes: ShapeCalc) -> list[Index]:
    """The sizes of a row group's rows: a reduction's kept dims, an output's row dims."""
    v = KernelLowering.inner(g.results[0])
    if KernelLowering.group_reduce(g) is not None:
        return shapes.dims(v)
    dims = shapes.dims(v)
    return [dims[d] for d in row_dims_attr(g)]


def row_count(k: KernelOp, shapes: ShapeCalc) -> Index:
    """The rows a row kernel's grid covers: the most any group has."""
    ib = shapes.ib
    n: Index | None = None
    for g in k.groups():
        if "packed" in g.attributes:
            continue
        rows = ib.prod(group_row_dims(g, shapes))
        n = rows if n is None else ib.max(n, rows)
    return 1 if n is None else n


def reuse_computation(f: gpu.FuncOp, read_only: set[SSAValue] = frozenset()) -> None:  # type: ignore[assignment]
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
    of the body move (a guarded load may be out of bounds when its guard is false);
    hoisting is safe even for a loop that runs zero times, as the address was computed
    to be in bounds."""
    from xdsl.dialects import memref

    body = loop.body.block
    moved = False
    for op in list(body.ops):
        if not isinstance(op, memref.LoadOp) or op.memref not in read_only:
            continue
        if any(_defined_in(o, loop) for o in op.indices):
            continue
        op.detach()
        loop.parent_block().insert_op_before(op, loop)
        moved = True
    return moved


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


REQUIRED_PARAMS = {"loop": (), "row": ("threads_per_row", "rows_per_block"), "gemm": ("tile_m", "tile_n", "tile_k")}


def check_lowerable(k: KernelOp) -> None:
    """What schedule-to-gpu needs of a (possibly hand-written) schedule beyond the
    verifier: mapping parameters, group shapes, shared buffers."""
    def fail(message: str) -> UserError:
        return UserError(f"'schedule.kernel' op @{k.sym_name.data} cannot be lowered: {message}", location_of(k))

    mapping = k.mapping.data
    for key in REQUIRED_PARAMS[mapping]:
        if key not in k.params.data:
            raise fail(f"the {mapping} mapping needs the parameter '{key}'")
    problem = vector_problem(k)
    if problem:
        raise fail(problem)
    grid, block = k.launch()
    groups = k.groups()
    if mapping == "loop" and len(groups) != 1:
        raise fail(f"a loop kernel has exactly one group, found {len(groups)}")
    if mapping == "gemm":
        dots = [KernelLowering.inner(g.results[0]).owner for g in groups]
        if len(groups) != 1 or not isinstance(dots[0], graph.DotOp):
            raise fail("a gemm kernel has one group yielding a graph.dot")
        bm, bn, bk, tm, tn = gemm_params(k)
        why = GemmConfig(bm, bn, bk, tm, tn).problem()
        if why is not None:
            raise fail(why)
        threads = (bm // tm) * (bn // tn)
        if block != (threads, 1, 1):
            raise fail(f"a {bm}x{bn} tile of {tm}x{tn} micro-tiles needs block [{threads}, 1, 1]")
        for name, size in (("a_tile", bm * bk), ("b_tile", bk * bn)):
            buf = k.shared_buffers().get(name)
            if buf is None:
                raise fail(f"a gemm kernel needs the shared buffer @{name}")
            if buf.buffer_type.element_count() < size:
                raise fail(f"@{name} has {buf.buffer_type.element_count()} elements; the tiles need {size}")
    if mapping == "row":
        per_row, rows = k.param("threads_per_row"), k.param("rows_per_block")
        if per_row * rows != block[0] or block[1:] != (1, 1):
            raise fail(f"threads_per_row x rows_per_block ({per_row} x {rows}) must be the block size {block[0]}")
        if per_row > WARP and (per_row % WARP or per_row // WARP > WARP):
            raise fail(f"a block-composed row needs a multiple of {WARP} threads (at most {WARP * WARP})")
        if 1 < per_row <= WARP and per_row & (per_row - 1) and "interleaved" not in k.params.data:
            raise fail(f"threads_per_row {per_row} must be a power of two up to {WARP}")
        if not any(KernelLowering.group_reduce(g) is not None for g in groups):
            raise fail("a row kernel needs a group led by a graph.reduce")
        for g in groups:
            if g.storage.data == "global" or KernelLowering.group_reduce(g) is not None:
                continue
            # an elementwise sub-root group: a row of results per row of the block
            if not isinstance(KernelLowering.inner(g.results[0]).owner, graph.ElementwiseOp) or len(g.results) != 1:
                raise fail("a sub-root group that is not a reduction must yield one elementwise op")
            if "row_dims" not in g.attributes or "packed" in g.attributes:
                raise fail("an elementwise sub-root group needs row_dims")
            shape = shape_of(g.results[0].type)
            cols = [n for d, n in enumerate(shape) if d not in row_dims_attr(g)]
            length = -1 if DYN in cols else math.prod(cols)
            if g.storage.data in ("reg", "lanes") and "elements_per_thread" not in k.params.data:
                raise fail("an elementwise sub-root kept in registers needs elements_per_thread (each thread "
                           "keeps its slots of the row)")
            if g.storage.data == "shared":
                size = k.shared_buffers()[g.buffer.root_reference.data].size  # type: ignore[union-attr]
                if length < 0 or g.offset.value.data + rows * length > size:  # type: ignore[union-attr]
                    raise fail(f"shared buffer @{g.buffer.root_reference.data} cannot hold {rows} rows of "  # type: ignore[union-attr]
                               f"{'?' if length < 0 else length} elements from offset {g.offset.value.data}")  # type: ignore[union-attr]


def lower_kernel(k: KernelOp) -> KernelInterface:
    check_lowerable(k)
    try:
        lowering = KernelLowering(k)
        iface = lowering.lower()
        reuse_computation(iface.func, lowering.read_only)
        if lowering.vector > 1 and vectorize_memory(iface.func, lowering.vector):
            erase_unused_arith(iface.func)
        return iface
    except KeyError as err:  # a missing buffer or symbol: the schedule is inconsistent
        raise UserError(f"'schedule.kernel' op @{k.sym_name.data} cannot be lowered: missing {err}",
                        location_of(k)) from None


def vector_width(k: KernelOp) -> int:
    return k.param("vector_width") if "vector_width" in k.params.data else 1


def vector_problem(k: KernelOp) -> str | None:
    """Why `k`'s vector width cannot be lowered (None: it can). Each vector must lie
    in one row of every output: a loop kernel's outputs have static innermost extents
    that are multiples of V; a row kernel keeps its rows in registers and every
    group's row length is a multiple of V."""
    vec = vector_width(k)
    if vec == 1:
        return None
    if vec not in VECTOR_WIDTHS:
        return f"vector_width must be 1, 2 or 4, got {vec}"
    mapping = k.mapping.data
    if mapping == "gemm":
        return "a gemm kernel has no vector_width"
    for g in k.groups():
        for v in g.results:
            gv = KernelLowering.inner(v)
            if mapping == "loop":
                lengths = [shape_of(gv.type)[-1:]]
            elif "packed" in g.attributes:
                return "a row kernel with packed groups has no vector_width"
            else:
                r = KernelLowering.group_reduce(g)
                shape = shape_of((r.input if r is not None else gv).type)
                rows = set(row_dims_attr(g)) if r is None else set()
                reduced = set(r.dims.get_values()) if r is not None else set(range(len(shape))) - rows
                lengths = [[shape[d] for d in sorted(reduced)]]
                if "elements_per_thread" not in k.params.data:
                    return "vector_width needs elements_per_thread (the row kept in registers)"
            for dims in lengths:
                if not dims or DYN in dims or dims[-1] % vec:
                    return (f"vector_width {vec} needs static innermost extents that are multiples of it "
                            f"(a {'row' if mapping == 'row' else 'result'} of {fmt_shape(tuple(dims))})")
    return None
