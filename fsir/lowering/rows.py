"""The `row` mapping's lowering.

`threads_per_row` threads own a row; reductions loop over the row with that stride,
then combine across the row's threads (none / a butterfly of `gpu.shuffle xor` /
butterflies, a shared-memory exchange of warp partials and a second butterfly by warp 0
leaving the result in a shared slot); root groups loop over the row's columns. Every
thread reaches every barrier: rows beyond the end only shorten loops.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import FixedBitwidthType, IntegerType, f32, i32
from xdsl.ir import SSAValue

from fsir.dialects import gpu, graph
from fsir.dialects.schedule import WARP, GroupOp, KernelOp, RowParamsAttr, Storage, inner_value, int_values
from fsir.lowering.emit import elem_type
from fsir.lowering.kernels import KernelLowering
from fsir.lowering.scalar import Index, compute_type
from fsir.lowering.shapes import ShapeCalc


class RowLowering(KernelLowering):
    def __init__(self, k: KernelOp):
        super().__init__(k)
        self.steps = 1
        self.smem_written: list[tuple[str, int, int]] = []  # shared sub-root rows: (buffer, start, end)

    def body(self) -> None:
        ib, e = self.ib, self.emit
        params = self.k.params
        assert isinstance(params, RowParamsAttr)
        per_row, rows_per_block = params.threads_per_row, params.rows_per_block
        # `row_steps`: each block takes that many consecutive row-blocks in a loop, so the
        # row-invariant operands (γ, β) it loads are hoisted out and reused every step.
        steps = params.row_steps
        self.steps = steps
        # `elements_per_thread`: the row's columns are unrolled into that many slots per
        # thread at the top of the step; the memo keeps each slot's values in registers,
        # so a value read before a reduction and used after it is loaded once.
        self.cached = params.elements_per_thread or 0
        tid = self.thread_id()
        self.interleaved = params.interleaved
        if self.interleaved:  # consecutive threads take consecutive rows
            local_row, lane = ib.rem(tid, rows_per_block), ib.div(tid, rows_per_block)
        else:  # consecutive threads share a row
            local_row, lane = ib.div(tid, per_row), ib.rem(tid, per_row)
        self.local_row, self.rows_per_block = local_row, rows_per_block
        groups = [g for g in self.k.groups() if not g.packed]
        for g in self.k.groups():
            if g.packed:
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
            r = group_reduce(g)
            if r is None and g.storage.data != Storage.GLOBAL:
                self.subroot_rows(g, row_idx, valid, lane, per_row)
                continue
            if r is not None:
                value = self.reduce_row(g, r, row_idx, valid, lane, per_row, tid)
                self.row_values[g.results[0]] = value
                for j, (kv, _) in enumerate(self.outputs):
                    if kv is g.results[0]:
                        e.when(e.and_(valid, ib.eq(lane, 0)),
                               lambda j=j, idx=store_idx, value=value: self.store_output(j, value, idx))
                continue
            index, cols = self.row_index(g, row_idx)
            targets = [(j, gv) for res in g.results for j, (kv, gv) in enumerate(self.outputs) if kv is res]
            if self.cached:
                for columns, inside in self.slots(lane, per_row, ib.prod(cols)):
                    idxs = [index(c) for c in columns]
                    vals = [[e.at(gv, idx) for _, gv in targets] for idx in idxs]
                    e.when(e.and_(valid, inside), lambda idxs=idxs, vals=vals, targets=targets: [
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
        rd = g.row_dims()
        out_dims = self.shapes.dims(inner_value(g.results[0]))
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
        v = inner_value(g.results[0])
        index, cols = self.row_index(g, row_idx)
        length = ib.prod(cols)
        if g.storage.data != Storage.SHARED:
            for columns, _ in self.slots(lane, per_row, length):
                for c in columns:
                    e.at(v, index(c))
            e.row_elements[g.results[0]] = (v, None, 0, [])
            return
        assert isinstance(length, int), "shared sub-root rows need a static row length"
        name, start = g.shared_slot()
        buf = self.smem[name]
        span = (name, start, start + self.rows_per_block * length)
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
        e.row_elements[g.results[0]] = (v, buf, base, g.row_dims())

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
        values = [inner_value(v) for v in g.results]
        dims = self.shapes.dims(values[0])

        def body(i, iters):
            idx = ib.delinearize(i, dims)
            for res in g.results:
                for j, (kv, gv) in enumerate(self.outputs):
                    if kv is res:
                        self.store_output(j, e.at(gv, idx), idx)
            return []

        e.for_loop(first, ib.prod(dims), total, [], body)

    def reduce_row(self, g: GroupOp, r: graph.ReduceOp, row_idx, valid, lane, per_row: int, tid) -> SSAValue:
        ib, e, sb = self.ib, self.emit, self.sb
        kind = r.kind.data
        elem = elem_type(r.result)
        acc_t = compute_type(elem)
        in_dims = self.shapes.dims(r.input)
        reduced = sorted(int_values(r.dims))
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
        name, offset = g.shared_slot()
        results = self.smem[name]
        slot = ib.add(offset, local_row)
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
        """`gpu.shuffle xor` of any scalar: gpu.shuffle moves f32 and i32, so narrower
        integers travel zero-extended to i32, other 32-bit types as their i32 bits, and
        64-bit ones as two i32 halves."""
        c = self.cursor
        off = self.sb.const(offset, i32)
        width = self.sb.const(WARP, i32)
        t = v.type
        if t in (i32, f32):
            return c.insert(gpu.ShuffleOp("xor", v, off, width)).results[0]
        bits = t.bitwidth if isinstance(t, FixedBitwidthType) else 64  # (index is 64-bit)
        if bits < 32:
            assert isinstance(t, IntegerType)  # narrow floats are computed in f32
            wide = c.value(arith.ExtUIOp(v, i32))
            return c.value(arith.TruncIOp(c.insert(gpu.ShuffleOp("xor", wide, off, width)).results[0], t))
        if bits == 32:
            moved = c.insert(gpu.ShuffleOp("xor", c.value(arith.BitcastOp(v, i32)), off, width)).results[0]
            return c.value(arith.BitcastOp(moved, t))
        i64t = IntegerType(64)
        w = v if t == i64t else c.value(arith.BitcastOp(v, i64t))
        lo = c.value(arith.TruncIOp(w, i32))
        hi = c.value(arith.TruncIOp(c.value(arith.ShRUIOp(w, self.sb.const(32, i64t))), i32))
        lo2 = c.insert(gpu.ShuffleOp("xor", lo, off, width)).results[0]
        hi2 = c.insert(gpu.ShuffleOp("xor", hi, off, width)).results[0]
        wide_hi = c.value(arith.ShLIOp(c.value(arith.ExtUIOp(hi2, i64t)), self.sb.const(32, i64t)))
        joined = c.value(arith.OrIOp(wide_hi, c.value(arith.ExtUIOp(lo2, i64t))))
        return joined if t == i64t else c.value(arith.BitcastOp(joined, t))

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
        name, slot = g.shared_slot()
        results = self.smem[name]
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



def group_reduce(g: GroupOp) -> graph.ReduceOp | None:
    """The sub-root reduction leading `g` (None for a root group)."""
    if g.storage.data == Storage.GLOBAL:
        return None
    v = g.yielded()[0]
    return v.owner if isinstance(v.owner, graph.ReduceOp) else None


def group_row_dims(g: GroupOp, shapes: ShapeCalc) -> list[Index]:
    """The sizes of a row group's rows: a reduction's kept dims, an output's row dims."""
    v = inner_value(g.results[0])
    if group_reduce(g) is not None:
        return shapes.dims(v)
    dims = shapes.dims(v)
    return [dims[d] for d in g.row_dims()]


def row_count(k: KernelOp, shapes: ShapeCalc) -> Index:
    """The rows a row kernel's grid covers: the most any group has."""
    ib = shapes.ib
    n: Index | None = None
    for g in k.groups():
        if g.packed:
            continue
        rows = ib.prod(group_row_dims(g, shapes))
        n = rows if n is None else ib.max(n, rows)
    return 1 if n is None else n
