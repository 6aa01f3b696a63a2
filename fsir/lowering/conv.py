"""The `conv` mapping's lowering: a `graph.conv` as an implicit GEMM on the tiling of
`fsir/lowering/gemm.py`, one feature group per grid z. Row m of A is (batch, output
position), column k is (input channel of the group, kernel position); the A-tile loads
compute the input coordinate of (m, k) on the fly — no im2col buffer — and read zero
where it falls into padding, between the holes of a dilated input, or off the input.
B is the weight as [O, C / groups x kernel] (its own layout, transposed); the result
element (m, n) is output channel group x N + n of (batch, position) m."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.schedule import ConvParamsAttr
from fsir.lowering.gemm import Element, TiledGemmLowering
from fsir.lowering.scalar import Index


class ConvLowering(TiledGemmLowering):
    def prepare(self) -> tuple[Index, Index, Index]:
        assert isinstance(self.k.params, ConvParamsAttr)
        conv, ib = self.root, self.ib
        assert isinstance(conv, graph.ConvOp)
        self.conv = conv
        self.problem = p = conv.problem(self.shapes.dims, ib)
        self.window = conv.window()
        self.group = self.block_id("z")
        self.rows = [p.batch, *p.out]  # what m delinearizes into
        self.cols = [p.channels, *p.kernel]  # what k delinearizes into
        return p.m(ib), p.n, p.k

    def _unsigned_below(self, a: Index, b: Index) -> bool | SSAValue:
        """0 <= a < b for a signed `a` in one compare (a negative a is a huge unsigned)."""
        if isinstance(a, int) and isinstance(b, int):
            return 0 <= a < b
        return self.cursor.value(arith.CmpiOp(self.ib.ssa(a), self.ib.ssa(b), "ult"))

    def a_element(self, m: Index, k: Index) -> Element:
        ib, e, p = self.ib, self.emit, self.problem
        strides, low, _, dilation, lhs_dilation = self.window
        batch, *pos = ib.delinearize(m, self.rows)
        ci, *kpos = ib.delinearize(k, self.cols)
        exists: bool | SSAValue = True
        src: list[Index] = []
        for i, (o, kp) in enumerate(zip(pos, kpos)):
            # the coordinate in the padded, dilated input, relative to the input's start
            q = ib.sub(ib.add(ib.mul(o, strides[i]), ib.mul(kp, dilation[i])), low[i])
            size = p.inp[i]
            dilated = ib.add(ib.mul(ib.sub(size, 1), lhs_dilation[i]), 1)
            exists = e.and_(exists, self._unsigned_below(q, dilated))
            if lhs_dilation[i] > 1:
                exists = e.and_(exists, ib.eq(ib.rem(q, lhs_dilation[i]), 0))
            src.append(ib.div(q, lhs_dilation[i]))
        channel = ib.add(ib.mul(self.group, p.channels), ci)
        return exists, lambda: e.at(self.conv.input, [batch, channel, *src])

    def b_element(self, k: Index, n: Index) -> Element:
        ib = self.ib
        o = ib.add(ib.mul(self.group, self.problem.out_channels), n)
        return True, lambda: self.emit.at(self.conv.weight, [o, *ib.delinearize(k, self.cols)])

    def result_index(self, m: Index, n: Index) -> list[Index]:
        ib = self.ib
        batch, *pos = ib.delinearize(m, self.rows)
        return [batch, ib.add(ib.mul(self.group, self.problem.out_channels), n), *pos]

