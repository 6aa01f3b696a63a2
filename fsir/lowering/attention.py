"""The `attention` kernel (`fsir/codegen/mappings/attention.py`): softmax(Q·Kᵀ·scale +
mask)·V with an online softmax over key tiles staged in shared memory; no score leaves
the registers of the thread that computes it.

Thread t of block (x, y) owns query row i = x * block_q + t of batch entry y. Rows past
Sq (the last block of a ragged Sq) compute on row Sq - 1 and store nothing; keys past
Sk (the last tile of a ragged Sk) are staged as zeros and get score -inf, so they add
nothing to the sum or the output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import Float32Type, i32
from xdsl.ir import SSAValue

from fsir.dialects import gpu, graph
from fsir.dialects.schedule import AttentionParamsAttr, inner_value
from fsir.lowering.emit import elem_type
from fsir.lowering.kernels import KernelLowering
from fsir.lowering.scalar import Index

if TYPE_CHECKING:
    from fsir.codegen.mappings.attention import AttentionMatch

WARP = AttentionParamsAttr.WARP


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
        if p.warp_rows:
            self.warp_schedule(m, transpose, p)
            return
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
            return self.score(m, bidx, i, ib.add(k0, jj), dots[jj], ragged_k)

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


    def score(self, m: AttentionMatch, bidx: list[Index], i: Index, j: Index, s: SSAValue,
              ragged_k: bool) -> SSAValue:
        """The softmax input at (i, j) whose dot product is `s`: the per-element ops
        of the score chain (scale, mask) by index propagation, with the dot's element
        (rounded to its type) injected; -inf past Sk when j may pass it (`ragged_k`)."""
        ib, sb = self.ib, self.sb
        sk = m.sizes[1]
        jc = ib.min(j, sk - 1) if ragged_k else j
        self.row_values[m.qk.result] = sb.round_to(s, elem_type(m.qk.result))
        try:
            x = self.emit.at(m.scores, [*bidx, i, jc])
        finally:
            del self.row_values[m.qk.result]
        if ragged_k:
            below = ib.lt(j, sk)
            if not isinstance(below, bool):
                x = sb.select(below, x, sb.const(float("-inf"), Float32Type()))
        return x

    def warp_schedule(self, m: AttentionMatch, transpose: graph.TransposeOp | None, p: AttentionParamsAttr) -> None:
        """A warp per `warp_rows` query rows (see the module docstring)."""
        ib, e, sb = self.ib, self.emit, self.sb
        rw, bq, bk = p.warp_rows, p.block_q, p.block_k
        sq, sk, dk, dv = m.sizes
        threads = p.threads
        f32 = Float32Type()
        zero = sb.const(0.0, f32)
        neg_inf = sb.const(float("-inf"), f32)
        exp = graph.ELEMENTWISE["exp"].lower
        tid = self.thread_id()
        warp, lane = ib.div(tid, bk), ib.rem(tid, bk)
        bidx = ib.delinearize(self.block_id("y"), list(m.batch))
        q0 = ib.mul(self.block_id("x"), bq)
        ragged_q, ragged_k = sq % bq != 0, sk % bk != 0
        q_tile, k_tile, v_tile = (self.smem[n] for n in ("q_tile", "k_tile", "v_tile"))

        def cooperative(total: int, put) -> None:
            """put(lin) for this thread's elements lin = tid + s·threads below total."""
            for s in range(-(-total // threads)):
                lin = ib.add(tid, s * threads)
                e.when(True if (s + 1) * threads <= total else ib.lt(lin, total), lambda lin=lin: put(lin))

        def put_q(lin: Index) -> None:
            r, c = ib.div(lin, dk), ib.rem(lin, dk)
            qi = ib.add(q0, r)
            qi = ib.min(qi, sq - 1) if ragged_q else qi  # rows past Sq repeat row Sq - 1
            e.store(e.at(m.qk.lhs, [*bidx, qi, c]), q_tile, lin, f32)

        cooperative(bq * dk, put_q)  # published by the first key tile's barrier
        local = [ib.add(ib.mul(warp, rw), r) for r in range(rw)]  # the warp's rows in the block
        rows = [ib.add(q0, lr) for lr in local]
        idx = [ib.min(row, sq - 1) if ragged_q else row for row in rows]
        cols = -(-dv // bk)  # output columns per lane
        vq, kpitch, vv = key_layout(dk, dv)
        # a lane's columns: `cols` consecutive ones (read as one vector) when they fill
        # the head dim, else lane + 32·c
        col = ([ib.add(ib.mul(lane, cols), c) for c in range(cols)] if vv > 1
               else [ib.add(lane, bk * c) for c in range(cols)])
        col_in = [ib.min(c, dv - 1) if dv % bk else c for c in col]
        p_tile = self.smem["p_tile"]
        p_rows = [ib.mul(lr, bk) for lr in local]

        def vload(buf: SSAValue, offset: Index, width: int) -> list[SSAValue]:
            if width == 1:
                return [e.load(buf, offset)]
            return list(self.cursor.insert(gpu.LoadVectorOp(buf, [ib.ssa(offset)], width)).values)

        def tile(k0: SSAValue, carry: list[SSAValue]) -> list[SSAValue]:
            m_run, l_run, acc = carry[:rw], carry[rw:2 * rw], carry[2 * rw:]

            def staged(buf: SSAValue, width: int, pitch: int, load) -> None:
                """The block_k x width tile at row pitch `pitch`, zero past Sk."""
                def put(lin: Index) -> None:
                    key, c = ib.div(lin, width), ib.rem(lin, width)
                    j = ib.add(k0, key)
                    inside = ib.lt(j, sk) if ragged_k else True
                    value = e.guarded(inside, lambda: load(j, c), lambda: zero)
                    e.store(value, buf, ib.add(ib.mul(key, pitch), c), f32)

                cooperative(bk * width, put)

            staged(k_tile, dk, kpitch, lambda j, c: e.at(m.qk.rhs, [*bidx, c, j]))
            staged(v_tile, dv, dv, lambda j, c: e.at(m.pv.rhs, [*bidx, j, c]))
            self.cursor.insert(gpu.BarrierOp())
            k_row = ib.mul(lane, kpitch)
            q_rows = [ib.mul(lr, dk) for lr in local]

            def d_step(d: SSAValue, dots: list[SSAValue]) -> list[SSAValue]:
                kd = vload(k_tile, ib.add(k_row, d), vq)  # the lane's key
                out = list(dots)
                for r in range(rw):  # the warp's rows: one address, a broadcast
                    for qv, kv in zip(vload(q_tile, ib.add(q_rows[r], d), vq), kd):
                        out[r] = sb.multiply_add(qv, kv, out[r])
                return out

            dots = e.for_loop(0, dk, vq, [zero] * rw, d_step)
            j = ib.add(k0, lane)
            out_m, out_l, alphas = [], [], []
            for r in range(rw):
                x = self.score(m, bidx, idx[r], j, dots[r], ragged_k)
                m_new = sb.max(m_run[r], self.warp_all("max", x))
                # while every score so far is -inf, shift by 0 (exp(-inf - -inf) would be NaN)
                shift = sb.select(sb.compare("eq", m_new, neg_inf), zero, m_new)
                alpha = exp(sb, sb.arith("sub", m_run[r], shift))
                pr = exp(sb, sb.arith("sub", x, shift))
                e.store(pr, p_tile, ib.add(p_rows[r], lane), f32)
                out_m.append(m_new)
                out_l.append(sb.multiply_add(l_run[r], alpha, pr))  # the lane's share of the row sum
                alphas.append(alpha)
            scaled = [sb.arith("mul", acc[r * cols + c], alphas[r]) for r in range(rw) for c in range(cols)]
            self.cursor.insert(gpu.BarrierOp())  # the probabilities, published

            def j_step(jj: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
                ps = [vload(p_tile, ib.add(p_rows[r], jj), 4) for r in range(rw)]  # 4 keys' probabilities
                acc = list(acc)
                for u in range(4):
                    base = ib.mul(ib.add(jj, u), dv)
                    vs = vload(v_tile, ib.add(base, col_in[0]), vv) if vv > 1 else \
                        [e.load(v_tile, ib.add(base, c)) for c in col_in]
                    for r in range(rw):
                        for c in range(cols):
                            acc[r * cols + c] = sb.multiply_add(ps[r][u], vs[c], acc[r * cols + c])
                return acc

            out = e.for_loop(0, bk, 4, scaled, j_step)
            self.cursor.insert(gpu.BarrierOp())
            return [*out_m, *out_l, *out]

        final = e.for_loop(0, sk, bk, [neg_inf] * rw + [zero] * rw + [zero] * (rw * cols), tile)
        sums = [self.warp_all("sum", v) for v in final[rw:2 * rw]]
        acc = final[2 * rw:]
        for r in range(rw):
            l_sum = sums[r]
            if m.safe_sum:  # a row whose every score is -inf has l = 0 and acc = 0: it is 0
                l_sum = sb.select(sb.compare("eq", l_sum, zero), sb.const(1.0, f32), l_sum)
            for c in range(cols):
                def store(r=r, c=c, l_sum=l_sum) -> None:
                    o = sb.arith("div", acc[r * cols + c], l_sum)
                    if m.nan_to_zero:  # select(p != p, 0, p): a row of NaN probabilities gives 0
                        o = sb.select(sb.compare("ne", o, o), zero, o)
                    at = [*bidx, rows[r], col[c]]
                    if transpose is not None:  # the output transpose: stored at the permuted index
                        at = [at[i] for i in transpose.perm.get_values()]
                    self.store_output(0, sb.round_to(o, elem_type(m.pv.result)), at)

                inside = e.and_(ib.lt(rows[r], sq) if ragged_q else True, ib.lt(col[c], dv) if dv % bk else True)
                e.when(inside, store)

    def shuffle(self, mode: str, v: SSAValue, offset: SSAValue) -> SSAValue:
        width = self.sb.const(WARP, i32)
        return self.cursor.insert(gpu.ShuffleOp(mode, v, offset, width)).results[0]

    def warp_all(self, kind: str, v: SSAValue) -> SSAValue:
        """`kind` (max or sum) of the warp's 32 f32 values, in every lane (a butterfly)."""
        offset = WARP // 2
        while offset:
            other = self.shuffle("xor", v, self.sb.const(offset, i32))
            v = self.sb.max(v, other) if kind == "max" else self.sb.arith("add", v, other)
            offset //= 2
        return v


def key_layout(dk: int, dv: int) -> tuple[int, int, int]:
    """(the width of the Q and K loads, the K tile's row pitch, the width of a lane's V
    load): 4-wide loads when Dk is a multiple of 4, K rows padded to keep them 16-byte
    aligned while a quarter warp's 16-byte reads fall into 8 different bank groups (else
    padded by one); a lane's Dv / 32 consecutive value columns in one load when that is
    2 or 4."""
    cols = -(-dv // WARP)
    vv = cols if dv % WARP == 0 and cols in (2, 4) else 1
    return (4, dk + 4, vv) if dk % 4 == 0 else (1, dk + 1, vv)


def _tree(xs: list[SSAValue], combine) -> SSAValue:
    """`xs` combined pairwise (a tree of depth log2 n, not a chain of n)."""
    while len(xs) > 1:
        xs = [combine(xs[i], xs[i + 1]) if i + 1 < len(xs) else xs[i] for i in range(0, len(xs), 2)]
    return xs[0]
