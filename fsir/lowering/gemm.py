"""The `gemm` mapping's lowering: a bm x bn output tile per block, a tm x tn micro-tile
of it per thread in registers; each k-step stages a tile of each operand in shared memory
(producers inlined, out-of-range elements zero), then accumulates (`tile_*`, `thread_*`
params)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from fsir.dialects import gpu, graph
from fsir.dialects.schedule import GemmParamsAttr, inner_value
from fsir.lowering.emit import elem_type
from fsir.lowering.kernels import KernelLowering
from fsir.lowering.scalar import Index, compute_type


class GemmLowering(KernelLowering):
    def body(self) -> None:
        """Register-blocked tiled GEMM. Thread (ty, tx) of a block owns the outputs
        (ty + i * bm/tm, tx + j * bn/tn) of its bm x bn tile for i < tm, j < tn (so
        consecutive threads store consecutive columns); each k-step all threads stage the
        bm x bk tile of A and the bk x bn tile of B in shared memory (consecutive threads
        loading consecutive elements of a tile row, producers inlined, zero outside the
        operands), then the unrolled k-step reads tm values of A and tn of B per k and
        accumulates their tm x tn products in registers."""
        ib, e, sb = self.ib, self.emit, self.sb
        (g,) = self.k.groups()
        dot = inner_value(g.results[0]).owner
        assert isinstance(dot, graph.DotOp)
        p = self.k.params
        assert isinstance(p, GemmParamsAttr)
        bm, bn, bk, tm, tn = p.tile_m, p.tile_n, p.tile_k, p.thread_m, p.thread_n
        acc_t = compute_type(elem_type(dot.result))
        problem = dot.problem(self.shapes.dims, ib)
        va, vb = problem.lhs_vector, problem.rhs_vector
        m_size, n_size, k_size = problem.m, problem.n, problem.k
        tid = self.thread_id()
        tx, ty = ib.rem(tid, bn // tn), ib.div(tid, bn // tn)
        m0, n0 = ib.mul(self.block_id("y"), bm), ib.mul(self.block_id("x"), bn)
        bidx = ib.delinearize(self.block_id("z"), problem.batch)
        a_tile, b_tile = self.smem["a_tile"], self.smem["b_tile"]
        zero = sb.const(0, acc_t)

        a_batch = [] if va else dot.batch_index(dot.lhs, bidx, self.shapes.dims, ib)
        b_batch = [] if vb else dot.batch_index(dot.rhs, bidx, self.shapes.dims, ib)
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

