"""The `attention` kernel (`fsir/codegen/mappings/attention.py`): softmax(Q·Kᵀ·scale +
mask)·V with an online softmax over key tiles staged in shared memory; no score leaves
the registers of the thread that computes it.

Thread t of block (x, y) owns query row i = x * block_q + t of batch entry y. Rows past
Sq (the last block of a ragged Sq) compute on row Sq - 1 and store nothing; keys past
Sk (the last tile of a ragged Sk) are staged as zeros and get score -inf, so they add
nothing to the sum or the output.
"""

from __future__ import annotations

from xdsl.dialects.builtin import Float32Type
from xdsl.ir import SSAValue

from fsir.dialects import gpu, graph
from fsir.dialects.schedule import AttentionParamsAttr, inner_value
from fsir.lowering.emit import elem_type
from fsir.lowering.kernels import KernelLowering
from fsir.lowering.scalar import Index


class AttentionLowering(KernelLowering):
    def body(self) -> None:
        # (codegen imports the lowerings)
        from fsir.codegen.mappings.attention import attention_output, match_attention

        ib, e, sb = self.ib, self.emit, self.sb
        (g,) = self.k.groups()
        pv, transpose = attention_output(inner_value(g.results[0]))
        assert pv is not None  # the mapping's `check_kernel`
        m = match_attention(pv)
        assert m is not None
        p = self.k.params
        assert isinstance(p, AttentionParamsAttr)
        bq, bk = p.block_q, p.block_k
        sq, sk, dk, dv = m.sizes
        f32 = Float32Type()
        zero = sb.const(0.0, f32)
        neg_inf = sb.const(float("-inf"), f32)
        exp = graph.ELEMENTWISE["exp"].lower

        tid = self.thread_id()
        bidx = ib.delinearize(self.block_id("y"), list(m.batch))
        row = ib.add(ib.mul(self.block_id("x"), bq), tid)
        ragged_q, ragged_k = sq % bq != 0, sk % bk != 0
        valid_row = ib.lt(row, sq) if ragged_q else True
        i = ib.min(row, sq - 1) if ragged_q else row
        q_tile, k_tile, v_tile, p_tile = (self.smem[n] for n in ("q_tile", "k_tile", "v_tile", "p_tile"))
        q_row, p_row = ib.mul(tid, dk + 1), ib.mul(tid, bk + 1)  # padded rows: no bank conflicts

        def stage(k0: SSAValue, buf: SSAValue, cols: int, load) -> None:
            """The thread's elements of a block_k x cols tile (key-major), zero past Sk."""
            total = bk * cols
            for s in range(-(-total // bq)):
                lin = ib.add(tid, s * bq)
                key, col = ib.div(lin, cols), ib.rem(lin, cols)
                exists = True if (s + 1) * bq <= total else ib.lt(lin, total)
                j = ib.add(k0, key)
                inside = ib.lt(j, sk) if ragged_k else True

                def put(j=j, col=col, inside=inside, lin=lin) -> None:
                    value = e.guarded(inside, lambda: load(j, col), lambda: zero)
                    e.store(value, buf, lin, f32)

                e.when(exists, put)

        # The block's Q rows, once (rows past Sq repeat row Sq - 1); the first key
        # tile's barrier publishes them.
        q0 = ib.mul(self.block_id("x"), bq)
        for s in range(-(-bq * dk // bq)):
            lin = ib.add(tid, s * bq)
            r, c = ib.div(lin, dk), ib.rem(lin, dk)
            qi = ib.add(q0, r)
            qi = ib.min(qi, sq - 1) if ragged_q else qi
            e.store(e.at(m.qk.lhs, [*bidx, qi, c]), q_tile, ib.add(ib.mul(r, dk + 1), c), f32)

        def score(k0: SSAValue, dots: list[SSAValue], jj: int) -> SSAValue:
            """The softmax input at (row, k0 + jj): the dot product, then the
            per-element ops of the score chain (scale, mask) by index propagation, with
            the dot's element injected; -inf past Sk."""
            s = dots[jj]
            j: Index = ib.add(k0, jj)
            jc = ib.min(j, sk - 1) if ragged_k else j
            self.row_values[m.qk.result] = sb.round_to(s, elem_type(m.qk.result))
            try:
                x = e.at(m.scores, [*bidx, i, jc])
            finally:
                del self.row_values[m.qk.result]
            if ragged_k:
                below = ib.lt(j, sk)
                assert not isinstance(below, bool)
                x = sb.select(below, x, neg_inf)
            return x

        def tile(k0: SSAValue, carry: list[SSAValue]) -> list[SSAValue]:
            m_run, l_run, acc = carry[0], carry[1], carry[2:]
            stage(k0, k_tile, dk, lambda j, c: e.at(m.qk.rhs, [*bidx, c, j]))
            stage(k0, v_tile, dv, lambda j, c: e.at(m.pv.rhs, [*bidx, j, c]))
            self.cursor.insert(gpu.BarrierOp())
            # the tile's block_k dot products, a loop over the head dim
            def d_step(d: SSAValue, carry: list[SSAValue]) -> list[SSAValue]:
                qd = e.load(q_tile, ib.add(q_row, d))
                return [sb.multiply_add(qd, e.load(k_tile, ib.add(d, jj * dk)), carry[jj]) for jj in range(bk)]

            dots = e.for_loop(0, dk, 1, [zero] * bk, d_step)
            xs = [score(k0, dots, jj) for jj in range(bk)]
            m_new = sb.max(m_run, _tree(xs, sb.max))
            # while every score so far is -inf, shift by 0 (exp(-inf - -inf) would be NaN)
            shift = sb.select(sb.compare("eq", m_new, neg_inf), zero, m_new)
            alpha = exp(sb, sb.arith("sub", m_run, shift))
            ps = [exp(sb, sb.arith("sub", x, shift)) for x in xs]
            l_new = sb.multiply_add(l_run, alpha, _tree(ps, lambda a, b: sb.arith("add", a, b)))
            # the output row: rescaled, then p·V over the tile's keys in a loop (the
            # thread's p row goes through shared memory, which a loop can index)
            for jj, pj in enumerate(ps):
                e.store(pj, p_tile, ib.add(p_row, jj), f32)

            def j_step(jj: SSAValue, carry: list[SSAValue]) -> list[SSAValue]:
                pj = e.load(p_tile, ib.add(p_row, jj))
                base = ib.mul(jj, dv)
                return [sb.multiply_add(pj, e.load(v_tile, ib.add(base, d)), carry[d]) for d in range(dv)]

            out = e.for_loop(0, bk, 1, [sb.arith("mul", a, alpha) for a in acc], j_step)
            self.cursor.insert(gpu.BarrierOp())
            return [m_new, l_new, *out]

        final = e.for_loop(0, sk, bk, [neg_inf, zero, *[zero] * dv], tile)
        l_sum, acc = final[1], list(final[2:])

        if m.safe_sum:  # a row whose every score is -inf has l = 0 and acc = 0: it is 0
            l_sum = sb.select(sb.compare("eq", l_sum, zero), sb.const(1.0, f32), l_sum)

        def store() -> None:
            for d in range(dv):
                o = sb.arith("div", acc[d], l_sum)
                if m.nan_to_zero:  # select(p != p, 0, p): a row of NaN probabilities gives 0
                    o = sb.select(sb.compare("ne", o, o), zero, o)
                idx = [*bidx, row, d]
                if transpose is not None:  # the output transpose: stored at the permuted index
                    idx = [idx[i] for i in transpose.perm.get_values()]
                self.store_output(0, sb.round_to(o, elem_type(m.pv.result)), idx)

        e.when(valid_row, store)


def _tree(xs: list[SSAValue], combine) -> SSAValue:
    """`xs` combined pairwise (a tree of depth log2 n, not a chain of n)."""
    while len(xs) > 1:
        xs = [combine(xs[i], xs[i + 1]) if i + 1 < len(xs) else xs[i] for i in range(0, len(xs), 2)]
    return xs[0]
