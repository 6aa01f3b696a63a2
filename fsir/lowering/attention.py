"""The `attention` kernel (`fsir/codegen/mappings/attention.py`): softmax(Q·Kᵀ·scale +
mask)·V with an online softmax over key tiles staged in shared memory; no score leaves
the registers of the threads that compute it. Three schedules (`AttentionParamsAttr`):

- a thread per row (`thread_schedule`): thread t of block (x, y) owns query row x * block_q + t of
  batch entry y and computes its scores and output row alone (FMAs);
- a warp per `warp_rows` rows (`warp_schedule`, FMAs, exact f32): lane l computes the
  score of key k0 + l with each of the warp's rows (4-wide shared loads of its key and,
  as a broadcast, of the rows' Q), xor-shuffle butterflies give each row's running max
  (and, after the key loop, its sum of the lanes' partial sums), the probabilities go
  through shared memory, and for P·V the lanes split the value columns;
- a warp per 16 rows on the tensor cores (`mma_schedule`, FlashAttention-2), up to 4
  warps a block sharing each staged K and V tile: per key tile S = Q·Kᵀ by `mma.sync`
  (Q's A fragments read from the shared Q tile and converted once, before the key
  loop, when they fit in 32 registers, else per head-dim step; K's B fragments from
  the K tile, whose f32 elements were rounded to tf32 as they were staged), the score
  chain and online softmax on the accumulators (a row's 4 lanes combine their max and
  sum by shuffles), then the accumulators, converted to f16 / bf16 / tf32 in
  registers, are the A fragments of O += P·V (for tf32 the mma's k columns t and t + 4
  are taken as keys 2t and 2t + 1, so each lane's accumulators are its A fragment
  without shuffles).

The probabilities exp(x − m) are the unit's ex2 of (x − m)·log2e (`exp_shifted`).

Rows past Sq (the last block of a ragged Sq) compute on row Sq - 1 and store nothing;
keys past Sk (the last tile of a ragged Sk) are staged as zeros and get score -inf, so
they add nothing to the sum or the output.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, i32
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import SSAValue

from fsir.analysis.attention import AttentionMatch, attention_output, match_attention
from fsir.dialects import gpu, graph
from fsir.dialects.gpu import MMA_K, MmaTypeEnum
from fsir.dialects.schedule import AttentionParamsAttr, GemmMath, inner_value
from fsir.lowering.emit import elem_type
from fsir.lowering.invariants import invariant_inputs
from fsir.lowering.kernels import KernelLowering
from fsir.lowering.mma import operand_registers
from fsir.lowering.scalar import Index

WARP = AttentionParamsAttr.WARP
LOG2E = 1.4426950408889634
# the instructions of one `exp_shifted`: a subtraction and a multiplication, the unit's ex2
EXP_MIX = Counter({"alu": 2, "sfu": 1})
MMA_TYPE = {GemmMath.F16: MmaTypeEnum.F16, GemmMath.BF16: MmaTypeEnum.BF16, GemmMath.TF32: MmaTypeEnum.TF32}


class AttentionLowering(KernelLowering):
    def body(self) -> None:
        (g,) = self.k.groups()
        pv, transpose = attention_output(inner_value(g.results[0]))
        assert pv is not None  # the mapping's `check_kernel`
        m = match_attention(pv)
        assert m is not None
        p = self.k.params
        assert isinstance(p, AttentionParamsAttr)
        if p.mma:
            self.mma_schedule(m, transpose, p)
            return
        if p.warp_rows:
            self.warp_schedule(m, transpose, p)
            return
        self.thread_schedule(m, transpose, p)

    def thread_schedule(self, m: AttentionMatch, transpose: graph.TransposeOp | None, p: AttentionParamsAttr) -> None:
        """A thread per query row: the block's Q rows staged once (`stage_q_rows`), then
        per key tile the K and V tiles (`stage_keys_tile`), the row's scores, online
        softmax and P·V; the row stored last (`store_row`)."""
        ib, e, sb = self.ib, self.emit, self.sb
        bq, bk = p.block_q, p.block_k
        sq, sk, dk, dv = m.sizes
        f32 = Float32Type()
        zero = sb.const(0.0, f32)
        neg_inf = sb.const(float("-inf"), f32)

        tid = self.thread_id()
        bidx = ib.delinearize(self.block_id("y"), list(m.batch))
        row = ib.add(ib.mul(self.block_id("x"), bq), tid)
        ragged_q, ragged_k = sq % bq != 0, sk % bk != 0
        valid_row = ib.lt(row, sq) if ragged_q else True
        i = ib.min(row, sq - 1) if ragged_q else row
        q_tile, k_tile, v_tile, p_tile = (self.smem[n] for n in ("q_tile", "k_tile", "v_tile", "p_tile"))
        q_row, p_row = ib.mul(tid, dk + 1), ib.mul(tid, bk + 1)  # padded rows: no bank conflicts

        def stage(k0: SSAValue, buf: SSAValue, cols: int, load) -> None:
            self.stage_keys_tile(tid, k0, buf, cols, load, bq, bk, sk, zero)

        self.stage_q_rows(m, bidx, tid, bq, q_tile)

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
            alpha = self.exp_shifted(m_run, shift)
            ps = [self.exp_shifted(x, shift) for x in xs]
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

        e.when(valid_row, lambda: self.store_row(m, transpose, bidx, row, acc, l_sum, zero))

    def stage_keys_tile(self, tid: SSAValue, k0: SSAValue, buf: SSAValue, cols: int, load, bq: int, bk: int,
                        sk: int, zero: SSAValue) -> None:
        """The thread's elements of a block_k x cols tile (key-major), zero past Sk."""
        ib, e = self.ib, self.emit
        total = bk * cols
        for s in range(-(-total // bq)):
            lin = ib.add(tid, s * bq)
            key, col = ib.div(lin, cols), ib.rem(lin, cols)
            exists = True if (s + 1) * bq <= total else ib.lt(lin, total)
            j = ib.add(k0, key)
            inside = ib.lt(j, sk) if sk % bk != 0 else True

            def put(j=j, col=col, inside=inside, lin=lin) -> None:
                value = e.guarded(inside, lambda: load(j, col), lambda: zero)
                e.store(value, buf, lin, Float32Type())

            e.when(exists, put)

    def stage_q_rows(self, m: AttentionMatch, bidx: list[Index], tid: SSAValue, bq: int, q_tile: SSAValue) -> None:
        """The block's Q rows, once (rows past Sq repeat row Sq - 1); the first key
        tile's barrier publishes them."""
        ib, e = self.ib, self.emit
        sq, _, dk, _ = m.sizes
        q0 = ib.mul(self.block_id("x"), bq)
        for s in range(-(-bq * dk // bq)):
            lin = ib.add(tid, s * bq)
            r, c = ib.div(lin, dk), ib.rem(lin, dk)
            qi = ib.add(q0, r)
            qi = ib.min(qi, sq - 1) if sq % bq != 0 else qi
            e.store(e.at(m.qk.lhs, [*bidx, qi, c]), q_tile, ib.add(ib.mul(r, dk + 1), c), Float32Type())

    def store_row(self, m: AttentionMatch, transpose: graph.TransposeOp | None, bidx: list[Index], row: Index,
                  acc: list[SSAValue], l_sum: SSAValue, zero: SSAValue) -> None:
        """The thread's output row: acc / l, NaN rows as 0 where the pattern says so."""
        for d in range(m.sizes[3]):
            self.store_out(m, transpose, acc[d], l_sum, zero, lambda d=d: [*bidx, row, d])

    def store_out(self, m: AttentionMatch, transpose: graph.TransposeOp | None, acc: SSAValue, l_sum: SSAValue,
                  zero: SSAValue, at: Callable[[], list[Index]]) -> None:
        """Store acc / l at output element `at()` (an index before the output transpose,
        built after the division); NaN probabilities as 0 where the pattern says so."""
        sb = self.sb
        o = sb.arith("div", acc, l_sum)
        if m.nan_to_zero:  # select(p != p, 0, p): a row of NaN probabilities gives 0
            o = sb.select(sb.compare("ne", o, o), zero, o)
        idx = at()
        if transpose is not None:  # the output transpose: stored at the permuted index
            idx = [idx[i] for i in transpose.perm.get_values()]
        self.store_output(0, sb.round_to(o, elem_type(m.pv.result)), idx)


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
        """A warp per `warp_rows` query rows (see the module docstring): `WarpAttention`'s
        stages."""
        WarpAttention(self, m, transpose, p).run()

    def mma_schedule(self, m: AttentionMatch, transpose: graph.TransposeOp | None, p: AttentionParamsAttr) -> None:
        """A warp per 16 query rows on the tensor cores (see the module docstring):
        `MmaAttention`'s stages."""
        MmaAttention(self, m, transpose, p).run()

    def cooperative(self, tid: SSAValue, threads: int, total: int, put) -> None:
        """put(lin) for this thread's elements lin = tid + s·threads below total."""
        ib = self.ib
        for s in range(-(-total // threads)):
            lin = ib.add(tid, s * threads)
            self.emit.when(True if (s + 1) * threads <= total else ib.lt(lin, total), lambda lin=lin: put(lin))

    def vload(self, buf: SSAValue, offset: Index, width: int) -> list[SSAValue]:
        """`width` consecutive elements of `buf` (one vector load when more than one)."""
        if width == 1:
            return [self.emit.load(buf, offset)]
        op = gpu.LoadVectorOp(buf, [self.ib.ssa(offset)], width)
        self.cursor.insert(op)
        return list(op.values)

    def stage_keys(self, m: AttentionMatch, bidx: list[Index], k0: SSAValue, bk: int, pitches: tuple[int, int],
                   cooperative, tf32: bool = False) -> None:
        """The K and V tiles of keys k0 .. k0 + bk (key-major, rows at `pitches`, zero past
        Sk) staged by the block's threads (`cooperative(total, put)` spreads the elements),
        then a barrier. With `tf32` each element is stored rounded to tf32 (its f32 bit
        pattern in the i32 tiles of `tile_types`), the mma's operand form: rounded once per
        block, not per warp's fragment. Elements are placed by `tile_position`."""
        ib, e = self.ib, self.emit
        _, sk, dk, dv = m.sizes
        ragged_k = sk % bk != 0
        f32 = Float32Type()

        def staged(buf: SSAValue, width: int, pitch: int, load, v: SSAValue, row_dim: int) -> None:
            def put(lin: Index) -> None:
                key, c = self.tile_position(lin, width, v, row_dim)
                j = ib.add(k0, key)
                inside = ib.lt(j, sk) if ragged_k else True
                value = e.guarded(inside, lambda: load(j, c), lambda: self.sb.const(0.0, f32))
                if tf32:
                    value = self.cursor.value(gpu.RoundTf32Op(value))
                e.store(value, buf, ib.add(ib.mul(key, pitch), c), value.type)

            cooperative(bk * width, put)

        staged(self.smem["k_tile"], dk, pitches[0], lambda j, c: e.at(m.qk.rhs, [*bidx, c, j]), m.qk.rhs, -1)
        staged(self.smem["v_tile"], dv, pitches[1], lambda j, c: e.at(m.pv.rhs, [*bidx, j, c]), m.pv.rhs, -2)
        self.cursor.insert(gpu.BarrierOp())

    def tile_position(self, lin: Index, width: int, v: SSAValue, row_dim: int) -> tuple[Index, Index]:
        """(row, column) of element `lin` (tid + a multiple of the block's threads) of a
        tile `width` wide of `v` (its dim `row_dim` along the tile's rows). When the
        threads are a multiple of the width, every element of a thread is in its column
        tid % width; where an input of v is read at an index not depending on the row
        (`invariant_inputs`: a bias) the column is computed from the thread id alone, so
        the loads of that input are seen to be the same for all of the thread's elements
        and made once (`ElementEmitter.for_loop`'s hoisting)."""
        ib = self.ib
        rank = len(graph.shape_of(v.type))
        if self.block_size % width or not invariant_inputs(v, set(self.k.block.args), rank + row_dim):
            return ib.div(lin, width), ib.rem(lin, width)
        c = ib.rem(self.thread_id(), width)
        return ib.div(ib.sub(lin, c), width), c

    def exp_shifted(self, x: SSAValue, shift: SSAValue) -> SSAValue:
        """exp(x − shift) of a score and its row's running max (x ≤ shift, or -inf):
        2^((x − shift)·log2e) on the unit (`ex2.approx`, ≤ 2 ulp): its argument is
        never positive, so exp's range reduction is not needed, and a probability
        below 2^-126, flushed to 0, is below the row sum's rounding (the max's own is
        1). The mix of instructions is `EXP_MIX`."""
        sb = self.sb
        t = sb.arith("mul", sb.arith("sub", x, shift), sb.const(LOG2E, Float32Type()))
        return self.cursor.value(math.Exp2Op(t, arith.FastMathFlagsAttr([FastMathFlag.APPROX_FUNC])))

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


class WarpAttention:
    """The warp schedule of one block (`AttentionLowering.warp_schedule`): Q staged
    (`run`), the lanes' columns (`layout`), per key tile the warp's dot products
    (`dots`), the online softmax with the probabilities through shared memory
    (`softmax`) and P·V (`pv`), then the rows' sums and stores (`finish`). Built in the
    order the kernel computes its values."""

    def __init__(self, low: AttentionLowering, m: AttentionMatch, transpose: graph.TransposeOp | None,
                 p: AttentionParamsAttr):
        self.low, self.m, self.transpose = low, m, transpose
        self.ib, self.e, self.sb = low.ib, low.emit, low.sb
        ib, sb = self.ib, self.sb
        self.rw, self.bq, self.bk = p.warp_rows, p.block_q, p.block_k
        self.sq, self.sk, self.dk, self.dv = m.sizes
        self.threads = p.threads
        self.f32 = f32 = Float32Type()
        self.zero = sb.const(0.0, f32)
        self.neg_inf = sb.const(float("-inf"), f32)
        self.tid = tid = low.thread_id()
        self.warp, self.lane = ib.div(tid, self.bk), ib.rem(tid, self.bk)
        self.bidx = ib.delinearize(low.block_id("y"), list(m.batch))
        self.q0 = ib.mul(low.block_id("x"), self.bq)
        self.ragged_q, self.ragged_k = self.sq % self.bq != 0, self.sk % self.bk != 0
        self.q_tile, self.k_tile, self.v_tile = (low.smem[n] for n in ("q_tile", "k_tile", "v_tile"))

    def cooperative(self, total: int, put) -> None:
        self.low.cooperative(self.tid, self.threads, total, put)

    def run(self) -> None:
        ib, e, m, dk = self.ib, self.e, self.m, self.dk

        def put_q(lin: Index) -> None:
            r, c = self.low.tile_position(lin, dk, m.qk.lhs, -2)
            qi = ib.add(self.q0, r)
            qi = ib.min(qi, self.sq - 1) if self.ragged_q else qi  # rows past Sq repeat row Sq - 1
            e.store(e.at(m.qk.lhs, [*self.bidx, qi, c]), self.q_tile, lin, self.f32)

        self.cooperative(self.bq * dk, put_q)  # published by the first key tile's barrier
        self.layout()
        rw, zero = self.rw, self.zero
        # (a bias of K and V at the thread's fixed columns is loaded once, before the loop)
        final = e.for_loop(0, self.sk, self.bk, [self.neg_inf] * rw + [zero] * rw + [zero] * (rw * self.cols),
                           self.tile, hoist=True)
        self.finish(final)

    def layout(self) -> None:
        """The warp's rows in the block and the lane's output columns: `cols`
        consecutive ones (read as one vector) when they fill the head dim, else
        lane + 32·c."""
        ib, rw, bk, dv, lane = self.ib, self.rw, self.bk, self.dv, self.lane
        self.local = [ib.add(ib.mul(self.warp, rw), r) for r in range(rw)]  # the warp's rows in the block
        self.rows = [ib.add(self.q0, lr) for lr in self.local]
        self.idx = [ib.min(row, self.sq - 1) if self.ragged_q else row for row in self.rows]
        self.cols = cols = -(-dv // bk)  # output columns per lane
        self.vq, self.kpitch, self.vv = key_layout(self.dk, dv)
        self.col = ([ib.add(ib.mul(lane, cols), c) for c in range(cols)] if self.vv > 1
                    else [ib.add(lane, bk * c) for c in range(cols)])
        self.col_in = [ib.min(c, dv - 1) if dv % bk else c for c in self.col]
        self.p_tile = self.low.smem["p_tile"]
        self.p_rows = [ib.mul(lr, bk) for lr in self.local]

    def tile(self, k0: SSAValue, carry: list[SSAValue]) -> list[SSAValue]:
        """One key tile: stage K and V, the dot products, the softmax, P·V."""
        rw = self.rw
        m_run, l_run, acc = carry[:rw], carry[rw:2 * rw], carry[2 * rw:]
        dots = self.dots(k0)
        out_m, out_l, alphas = self.softmax(k0, dots, m_run, l_run)
        out = self.pv(acc, alphas)
        self.low.cursor.insert(gpu.BarrierOp())
        return [*out_m, *out_l, *out]

    def dots(self, k0: SSAValue) -> list[SSAValue]:
        """The lane's key's dot product with each of the warp's rows (4-wide loads; the
        rows' Q one address, a broadcast)."""
        ib, e, sb, low, dk, vq = self.ib, self.e, self.sb, self.low, self.dk, self.vq
        low.stage_keys(self.m, self.bidx, k0, self.bk, (self.kpitch, self.dv), self.cooperative)
        k_row = ib.mul(self.lane, self.kpitch)
        q_rows = [ib.mul(lr, dk) for lr in self.local]

        def d_step(d: SSAValue, dots: list[SSAValue]) -> list[SSAValue]:
            kd = low.vload(self.k_tile, ib.add(k_row, d), vq)  # the lane's key
            out = list(dots)
            for r in range(self.rw):  # the warp's rows: one address, a broadcast
                for qv, kv in zip(low.vload(self.q_tile, ib.add(q_rows[r], d), vq), kd):
                    out[r] = sb.multiply_add(qv, kv, out[r])
            return out

        return e.for_loop(0, dk, vq, [self.zero] * self.rw, d_step)

    def softmax(self, k0: SSAValue, dots: list[SSAValue], m_run: list[SSAValue], l_run: list[SSAValue]):
        """Each row's score at the lane's key, the warp's running max, the rescaling
        factor, the probability (stored for P·V) and the lane's share of the row sum."""
        ib, e, sb, low, zero = self.ib, self.e, self.sb, self.low, self.zero
        j = ib.add(k0, self.lane)
        out_m, out_l, alphas = [], [], []
        for r in range(self.rw):
            x = low.score(self.m, self.bidx, self.idx[r], j, dots[r], self.ragged_k)
            m_new = sb.max(m_run[r], low.warp_all("max", x))
            # while every score so far is -inf, shift by 0 (exp(-inf - -inf) would be NaN)
            shift = sb.select(sb.compare("eq", m_new, self.neg_inf), zero, m_new)
            # the rescaling, once a row and tile, keeps exp's range-reduced form:
            # with both on the unit ptxas (sm_90) fits this 512-thread block into 64
            # registers and spills
            alpha = graph.ELEMENTWISE["exp"].lower(sb, sb.arith("sub", m_run[r], shift))
            pr = low.exp_shifted(x, shift)
            e.store(pr, self.p_tile, ib.add(self.p_rows[r], self.lane), self.f32)
            out_m.append(m_new)
            out_l.append(sb.multiply_add(l_run[r], alpha, pr))  # the lane's share of the row sum
            alphas.append(alpha)
        return out_m, out_l, alphas

    def pv(self, acc: list[SSAValue], alphas: list[SSAValue]) -> list[SSAValue]:
        """The outputs rescaled, then P·V: the lanes split the value columns."""
        ib, e, sb, low, rw, cols, dv, vv = self.ib, self.e, self.sb, self.low, self.rw, self.cols, self.dv, self.vv
        scaled = [sb.arith("mul", acc[r * cols + c], alphas[r]) for r in range(rw) for c in range(cols)]
        low.cursor.insert(gpu.BarrierOp())  # the probabilities, published

        def j_step(jj: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
            ps = [low.vload(self.p_tile, ib.add(self.p_rows[r], jj), 4) for r in range(rw)]  # 4 keys' probabilities
            acc = list(acc)
            for u in range(4):
                base = ib.mul(ib.add(jj, u), dv)
                vs = low.vload(self.v_tile, ib.add(base, self.col_in[0]), vv) if vv > 1 else \
                    [e.load(self.v_tile, ib.add(base, c)) for c in self.col_in]
                for r in range(rw):
                    for c in range(cols):
                        acc[r * cols + c] = sb.multiply_add(ps[r][u], vs[c], acc[r * cols + c])
            return acc

        return e.for_loop(0, self.bk, 4, scaled, j_step)

    def finish(self, final: list[SSAValue]) -> None:
        """The rows' sums (over the warp's lanes), then each row's stored outputs."""
        ib, e, sb, low, m, rw, cols, zero = self.ib, self.e, self.sb, self.low, self.m, self.rw, self.cols, self.zero
        sums = [low.warp_all("sum", v) for v in final[rw:2 * rw]]
        acc = final[2 * rw:]
        rows, col, bidx = self.rows, self.col, self.bidx
        for r in range(rw):
            l_sum = sums[r]
            if m.safe_sum:  # a row whose every score is -inf has l = 0 and acc = 0: it is 0
                l_sum = sb.select(sb.compare("eq", l_sum, zero), sb.const(1.0, self.f32), l_sum)
            for c in range(cols):
                def store(r=r, c=c, l_sum=l_sum) -> None:
                    low.store_out(m, self.transpose, acc[r * cols + c], l_sum, zero, lambda: [*bidx, rows[r], col[c]])

                inside = e.and_(ib.lt(rows[r], self.sq) if self.ragged_q else True,
                                ib.lt(col[c], self.dv) if self.dv % self.bk else True)
                e.when(inside, store)


class MmaAttention:
    """The tensor-core schedule of one block (`AttentionLowering.mma_schedule`): Q staged
    and its fragments (`stage_q`, `q_fragment`), per key tile S = Q·Kᵀ (`scores`), the
    online softmax on the accumulators (`softmax`) and O += P·V (`pv`), then the rows'
    sums and stores (`finish`). Built in the order the kernel computes its values."""

    def __init__(self, low: AttentionLowering, m: AttentionMatch, transpose: graph.TransposeOp | None,
                 p: AttentionParamsAttr):
        self.low, self.m, self.transpose = low, m, transpose
        self.ib, self.e, self.sb = low.ib, low.emit, low.sb
        ib, sb = self.ib, self.sb
        self.bq, self.bk = p.block_q, p.block_k
        self.sq, self.sk, self.dk, self.dv = m.sizes
        self.threads = p.threads
        self.math = mma_math(elem_type(m.qk.lhs))
        self.mtype = MMA_TYPE[self.math]
        self.kq = MMA_K[self.mtype]
        self.f32 = f32 = Float32Type()
        self.zero = sb.const(0.0, f32)
        self.neg_inf = sb.const(float("-inf"), f32)
        self.tid = tid = low.thread_id()
        warp, lane = ib.div(tid, WARP), ib.rem(tid, WARP)
        self.g, self.t = ib.div(lane, 4), ib.rem(lane, 4)
        self.bidx = ib.delinearize(low.block_id("y"), list(m.batch))
        self.q0 = ib.mul(low.block_id("x"), self.bq)
        self.ragged_q, self.ragged_k = self.sq % self.bq != 0, self.sk % self.bk != 0
        self.q_tile, self.k_tile, self.v_tile = (low.smem[n] for n in ("q_tile", "k_tile", "v_tile"))
        self.qp, self.kp, self.vp = mma_pitches(self.dk, self.dv)
        # the lane's rows g and g + 8 of the warp's 16 (the mma fragments' rows)
        self.ra = ib.add(ib.mul(warp, 16), self.g)
        self.rb = ib.add(self.ra, 8)
        self.rows = [ib.add(self.q0, self.ra), ib.add(self.q0, self.rb)]
        # rows past Sq repeat row Sq - 1
        self.idx = [ib.min(r, self.sq - 1) if self.ragged_q else r for r in self.rows]
        self.nt, self.dt = self.bk // 8, self.dv // 8

    def run(self) -> None:
        e, zero, neg_inf = self.e, self.zero, self.neg_inf
        self.stage_q()
        # the key tiles' loop: what staging reads alike in every tile (a bias of K and V
        # at the thread's fixed column, `tile_position`) is loaded once, before it
        final = e.for_loop(0, self.sk, self.bk, [neg_inf, neg_inf, zero, zero, *[zero] * (self.dt * 4)], self.tile,
                           hoist=True)
        self.finish(final)

    def cooperative(self, total: int, put) -> None:
        """put(lin) for this thread's elements lin = tid + s·threads below total, in
        a loop (unrolled, ptxas would hoist every load of a tile above the mmas)."""
        ib, e, tid, threads = self.ib, self.e, self.tid, self.threads
        full = total // threads
        unroll = staging_unroll(full)  # loads in flight per step

        def step(s: SSAValue, carry: list[SSAValue]) -> list[SSAValue]:
            for u in range(unroll):
                put(ib.add(ib.add(tid, s), u * threads))
            return []

        if full:  # (an input element every step reads alike, a bias, is loaded before)
            e.for_loop(0, full * threads, unroll * threads, [], step, hoist=True)
        if total % threads:
            lin = ib.add(tid, full * threads)
            e.when(ib.lt(lin, total), lambda: put(lin))

    def stage_q(self) -> None:
        """The block's Q tile; Q's A fragments stay in registers across the key tiles
        when they are few (`q_in_registers`), else each tile reads them again."""
        ib, e, m, dk = self.ib, self.e, self.m, self.dk

        def put_q(lin: Index) -> None:
            r, c = self.low.tile_position(lin, dk, m.qk.lhs, -2)
            qi = ib.add(self.q0, r)
            qi = ib.min(qi, self.sq - 1) if self.ragged_q else qi
            e.store(e.at(m.qk.lhs, [*self.bidx, qi, c]), self.q_tile, ib.add(ib.mul(r, self.qp), c), self.f32)

        self.cooperative(self.bq * dk, put_q)
        self.held = q_in_registers(dk, self.kq)
        if self.held:
            self.low.cursor.insert(gpu.BarrierOp())  # the Q tile, published
        self.q_frags = [self.q_fragment(kk) for kk in range(0, dk, self.kq)] if self.held else []

    def q_fragment(self, kk: Index) -> list[SSAValue]:
        """The A fragment of S = Q·Kᵀ at head-dim offset kk."""
        ib, e, t, ra, rb = self.ib, self.e, self.t, self.ra, self.rb

        def q_at(r: Index, c: Index) -> SSAValue:
            return e.load(self.q_tile, ib.add(ib.mul(r, self.qp), c))

        if self.kq == 8:  # tf32 m16n8k8: (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)
            vals = [q_at(r, ib.add(ib.add(t, kk), dc)) for dc in (0, 4) for r in (ra, rb)]
        else:  # m16n8k16: rows g, g + 8 at columns 2t, 2t + 1, then 2t + 8, 2t + 9
            vals = [q_at(r, ib.add(ib.add(ib.mul(t, 2), kk), dc + h)) for dc in (0, 8) for r in (ra, rb)
                    for h in (0, 1)]
        return operand_registers(self.low.cursor, vals, self.math)

    def staged_registers(self, vals: list[SSAValue]) -> list[SSAValue]:
        """The operand registers of values read from the K or V tile: tf32 ones
        were rounded when staged (`stage_keys`), the loads are the registers."""
        return vals if self.kq == 8 else operand_registers(self.low.cursor, vals, self.math)

    def mma(self, a: list[SSAValue], b: list[SSAValue], c: list[SSAValue]) -> list[SSAValue]:
        op = gpu.MmaSyncOp(self.mtype, a, b, c)
        self.low.cursor.insert(op)
        return list(op.d)

    def tile(self, k0: SSAValue, carry: list[SSAValue]) -> list[SSAValue]:
        """One key tile: stage K and V, S = Q·Kᵀ, the online softmax, O += P·V."""
        m_run, l_run, acc = carry[:2], carry[2:4], carry[4:]
        self.low.stage_keys(self.m, self.bidx, k0, self.bk, (self.kp, self.vp), self.cooperative, tf32=self.kq == 8)
        xs = self.scores(k0)
        out_m, out_l, alphas, ps = self.softmax(xs, m_run, l_run)
        o = self.pv(ps, acc, alphas)
        self.low.cursor.insert(gpu.BarrierOp())
        return [*out_m, *out_l, *o]

    def scores(self, k0: SSAValue) -> list[list[SSAValue]]:
        """The tile's scores: S = Q·Kᵀ over the head dim, then the score chain; per
        8 keys, the lane's 4 accumulators (row g (c < 2) or g + 8, key 2t + c % 2)."""
        ib, e, g, t, kq, nt, kp = self.ib, self.e, self.g, self.t, self.kq, self.nt, self.kp

        def k_at(key: Index, d: Index) -> SSAValue:
            return e.load(self.k_tile, ib.add(ib.mul(key, kp), d))

        # B(d, key) = K[key][d], the lane's B column key g of each 8
        def kk_step(kk: Index, a: list[SSAValue], accs: list[SSAValue]) -> list[SSAValue]:
            accs = list(accs)
            for n in range(nt):
                key = ib.add(g, n * 8)
                if kq == 8:
                    vals = [k_at(key, ib.add(ib.add(t, kk), dc)) for dc in (0, 4)]
                else:
                    vals = [k_at(key, ib.add(ib.add(ib.mul(t, 2), kk), dc + h)) for dc in (0, 8) for h in (0, 1)]
                accs[n * 4:n * 4 + 4] = self.mma(a, self.staged_registers(vals), accs[n * 4:n * 4 + 4])
            return accs

        if self.held:  # the head-dim steps unrolled over the held fragments
            s_accs = [self.zero] * (nt * 4)
            for step, a in enumerate(self.q_frags):
                s_accs = kk_step(step * kq, a, s_accs)
        else:
            s_accs = e.for_loop(0, self.dk, kq, [self.zero] * (nt * 4),
                                lambda kk, accs: kk_step(kk, self.q_fragment(kk), accs))
        xs: list[list[SSAValue]] = []
        for n in range(nt):
            j0 = ib.add(k0, ib.add(ib.mul(t, 2), n * 8))
            xs.append([self.low.score(self.m, self.bidx, self.idx[c >> 1], ib.add(j0, c & 1), s_accs[n * 4 + c],
                                      self.ragged_k) for c in range(4)])
        return xs

    def softmax(self, xs: list[list[SSAValue]], m_run: list[SSAValue], l_run: list[SSAValue]):
        """The lane's two rows' running max (over the 4 lanes sharing a row), their
        rescaling factors, the probabilities and the lane's shares of the row sums."""
        sb, low, zero = self.sb, self.low, self.zero
        out_m, out_l, alphas, shifts = [], [], [], []
        for h in range(2):  # the lane's two rows
            mine = [x[c] for x in xs for c in (2 * h, 2 * h + 1)]
            row_max = _tree(mine, sb.max)
            for off in (1, 2):  # the 4 lanes sharing the row
                row_max = sb.max(row_max, low.shuffle("xor", row_max, sb.const(off, i32)))
            m_new = sb.max(m_run[h], row_max)
            # while every score so far is -inf, shift by 0 (exp(-inf - -inf) would be NaN)
            shift = sb.select(sb.compare("eq", m_new, self.neg_inf), zero, m_new)
            alphas.append(low.exp_shifted(m_run[h], shift))
            shifts.append(shift)
            out_m.append(m_new)
        ps = [[low.exp_shifted(x[c], shifts[c >> 1]) for c in range(4)] for x in xs]
        for h in range(2):
            part = _tree([pr[c] for pr in ps for c in (2 * h, 2 * h + 1)], lambda a, b: sb.arith("add", a, b))
            out_l.append(sb.multiply_add(l_run[h], alphas[h], part))  # the lane's share of the row sum
        return out_m, out_l, alphas, ps

    def pv(self, ps: list[list[SSAValue]], acc: list[SSAValue], alphas: list[SSAValue]) -> list[SSAValue]:
        """O rescaled, then O += P·V, P's accumulators reused as the A fragments
        (FlashAttention-2)."""
        ib, e, sb, g, t, kq, vp = self.ib, self.e, self.sb, self.g, self.t, self.kq, self.vp

        def v_at(key: Index, d: Index) -> SSAValue:
            return e.load(self.v_tile, ib.add(ib.mul(key, vp), d))

        o = [sb.arith("mul", acc[i], alphas[(i % 4) >> 1]) for i in range(self.dt * 4)]
        for kc in range(0, self.bk, kq):
            n0 = kc // 8
            if kq == 8:  # tf32: mma column t is key 2t, column t + 4 key 2t + 1
                a_vals = [ps[n0][0], ps[n0][2], ps[n0][1], ps[n0][3]]
            else:
                a_vals = [*ps[n0], *ps[n0 + 1]]
            a = operand_registers(self.low.cursor, a_vals, self.math)
            for d in range(self.dt):
                col = ib.add(g, d * 8)
                if kq == 8:
                    keys = [ib.add(ib.mul(t, 2), kc + h) for h in (0, 1)]
                else:
                    keys = [ib.add(ib.mul(t, 2), kc + dc + h) for dc in (0, 8) for h in (0, 1)]
                b = self.staged_registers([v_at(key, col) for key in keys])
                o[d * 4:d * 4 + 4] = self.mma(a, b, o[d * 4:d * 4 + 4])
        return o

    def finish(self, final: list[SSAValue]) -> None:
        """The rows' sums (the 4 lanes' shares), then each row's stored outputs."""
        ib, e, sb, m, zero, t = self.ib, self.e, self.sb, self.m, self.zero, self.t
        sums = []
        for h in range(2):
            v = final[2 + h]
            for off in (1, 2):
                v = sb.arith("add", v, self.low.shuffle("xor", v, sb.const(off, i32)))
            if m.safe_sum:  # a row whose every score is -inf has l = 0 and acc = 0: it is 0
                v = sb.select(sb.compare("eq", v, zero), sb.const(1.0, self.f32), v)
            sums.append(v)
        acc = final[4:]
        for h in range(2):
            def store(h=h) -> None:
                for d in range(self.dt):
                    for c in (2 * h, 2 * h + 1):
                        self.low.store_out(m, self.transpose, acc[d * 4 + c], sums[h], zero,
                                           lambda d=d, c=c: [*self.bidx, self.rows[h],
                                                             ib.add(ib.mul(t, 2), d * 8 + (c & 1))])

            e.when(ib.lt(self.rows[h], self.sq) if self.ragged_q else True, store)


def mma_math(t) -> GemmMath:
    """The tensor-core math of attention operands of element type `t` (f32: tf32)."""
    return {Float16Type: GemmMath.F16, BFloat16Type: GemmMath.BF16}.get(type(t), GemmMath.TF32)


def q_in_registers(dk: int, kq: int) -> bool:
    """Whether the mma schedule keeps Q's A fragments (4 registers per head-dim step of
    kq) in registers for the whole key loop: up to 32 registers (head dim 64 in tf32,
    128 in f16 / bf16); more would spill beside the output accumulators."""
    return 4 * (dk // kq) <= 32


def staging_unroll(steps: int) -> int:
    """Elements a thread stages per step of the mma schedule's staging loops: 4 (or 2)
    loads in flight, when they divide its `steps`."""
    return next(u for u in (16, 8, 4, 2, 1) if steps % u == 0)


def mma_pitches(dk: int, dv: int) -> tuple[int, int, int]:
    """The row pitches of the mma schedule's Q, K and V tiles (f32): padded by 4, so
    the 8 rows of a fragment's lanes start in different banks."""
    return dk + 4, dk + 4, dv + 4


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
