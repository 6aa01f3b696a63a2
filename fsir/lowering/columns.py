"""The `columns` mapping's lowering (`fsir/codegen/mappings/columns.py`).

Warp w of the grid (`block_id.x * warps per block + thread_id / 32`) finds its concat
operand i by a balanced tree of comparisons with the prefix sums `warps` (log2 N
levels, immediates), then computes, for grid-y tile `block_id.y`, the elements of
operand i its threads own: thread t of the operand's warps takes element t / lanes
(row-major over rows_per_tile x dim) and lane t % lanes of it. A column reduces its bag
with that stride (RowLowering.reduce_row) and combines its lanes by a butterfly within
the lanes' aligned segment; every thread of the warp reaches the shuffles (threads
past the tile's rows run no bag elements). The operand's element — the column's tail
ops (a mean's scale) over the reduction, or a load for a copied operand — is stored at
its offset in the concat by lane 0.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Block, Region, SSAValue

from fsir.dialects import graph
from fsir.dialects.schedule import WARP, ColumnsParamsAttr, GroupOp, KernelOp, int_values
from fsir.lowering.emit import elem_type
from fsir.lowering.rows import RowLowering
from fsir.lowering.scalar import compute_type


def root_group(k: KernelOp) -> GroupOp:
    return k.groups()[-1]


def column_groups(k: KernelOp) -> dict[int, GroupOp]:
    """The column group of each concat operand that is a column (by operand index)."""
    root = root_group(k)
    concat = root.yielded()[0].owner
    assert isinstance(concat, graph.ConcatOp)
    of_result: dict[SSAValue, GroupOp] = {r: g for g in k.groups()[:-1] for r in g.results}
    out: dict[int, GroupOp] = {}
    for i, v in enumerate(concat.operands):
        stack, seen = [v], set()
        while stack:
            x = stack.pop()
            if x in of_result:
                out[i] = of_result[x]
                break
            if x in seen or not isinstance(x.owner, graph.GraphOp):
                continue
            seen.add(x)
            stack.extend(x.owner.operands)
    return out


class ColumnsLowering(RowLowering):
    def body(self) -> None:
        ib = self.ib
        params = self.k.params
        assert isinstance(params, ColumnsParamsAttr)
        self.cached, self.interleaved, self.steps = 0, False, 1
        root = root_group(self.k)
        concat = root.yielded()[0].owner
        assert isinstance(concat, graph.ConcatOp)
        warps = int_values(root.attributes["warps"])
        lanes = int_values(root.attributes["lanes"])
        vectors = int_values(root.attributes["vectors"])
        groups = column_groups(self.k)
        e = self.emit
        tid = self.thread_id()
        warp = ib.add(ib.mul(self.block_id("x"), self.block_size // WARP), ib.div(tid, WARP))
        lane32 = ib.rem(tid, WARP)
        rows = params.rows_per_tile
        first_row = ib.mul(self.block_id("y"), rows)
        batch = self.shapes.dims(concat.result)[0]
        offsets = concat.offsets(self.shapes.dims, ib)
        out_j = next(j for j, (kv, _) in enumerate(self.outputs) if kv is root.results[0])
        # the operands that own warps (an operand of dim 0 owns none)
        owners = [i for i in range(len(concat.operands)) if warps[i + 1] > warps[i]]

        def operand(i: int) -> None:
            v = concat.operands[i]
            n, vec = lanes[i], vectors[i]
            dim = self.shapes.dims(v)[1]
            t = ib.add(ib.mul(ib.sub(warp, warps[i]), WARP), lane32)
            elem, lane = ib.div(t, n), ib.rem(t, n)
            per_row = dim // vec if isinstance(dim, int) else ib.div(dim, vec)
            d0, local = ib.mul(ib.rem(elem, per_row), vec), ib.div(elem, per_row)
            b = ib.add(first_row, local)
            valid = e.and_(ib.lt(local, rows), ib.lt(b, batch))
            g = groups.get(i)
            values: list[SSAValue] = []
            if g is not None:
                r = g.yielded()[0].owner
                assert isinstance(r, graph.ReduceOp)
                values = self.reduce_vector(g, r, b, d0, vec, valid, lane, n, tid)

            def store() -> None:
                for x in range(vec):
                    d = ib.add(d0, x)
                    if g is not None:  # the tail ops read the reduction at this element
                        self.row_values[g.results[0]] = values[x]
                    self.store_output(out_j, e.at(v, [b, d]), [b, ib.add(offsets[i], d)])

            e.when(e.and_(valid, ib.eq(lane, 0)), store)

        def tree(lo: int, hi: int) -> None:
            if hi - lo == 1:
                operand(owners[lo])
                return
            mid = (lo + hi) // 2
            then_block, else_block = Block(), Block()
            with self.cursor.at(then_block):
                tree(lo, mid)
                then_block.add_op(scf.YieldOp())
            with self.cursor.at(else_block):
                tree(mid, hi)
                else_block.add_op(scf.YieldOp())
            cond = ib.lt(warp, warps[owners[mid]])
            self.cursor.insert(scf.IfOp(_ssa(cond), [], Region(then_block), Region(else_block)))

        if owners:
            tree(0, len(owners))


    def reduce_vector(self, g: GroupOp, r: graph.ReduceOp, b, d0, vec: int, valid, lane, lanes: int,
                      tid) -> list[SSAValue]:
        """The bag reductions of row `b`'s elements d0 .. d0 + vec - 1 (the reduction's
        kept dims are [row, element]): one loop over the thread's share of the bag with
        an accumulator per element (what they share, the id and its weight, is loaded
        once; the table row's elements are consecutive, a vector load), then each
        accumulator combined across the lanes."""
        ib, e, sb = self.ib, self.emit, self.sb
        kind = r.kind.data
        elem_t = elem_type(r.result)
        init = sb.reduce_init(kind, compute_type(elem_t))
        in_dims = self.shapes.dims(r.input)
        reduced = sorted(int_values(r.dims))
        kept = [d for d in range(len(in_dims)) if d not in reduced]
        red_dims = [in_dims[d] for d in reduced]
        ub = ib.select(valid, ib.prod(red_dims), 0)

        def body(j, iters):
            ridx = ib.delinearize(j, red_dims)
            out = []
            for x in range(vec):
                idx: list = [0] * len(in_dims)
                for d, y in zip(kept, [b, ib.add(d0, x)]):
                    idx[d] = y
                for d, y in zip(reduced, ridx):
                    idx[d] = y
                out.append(sb.combine(kind, iters[x], e.at(r.input, idx)))
            return out

        accs = e.for_loop(lane, ub, lanes, [init] * vec, body)
        return [self.combine_row(g, kind, acc, init, lane, lanes, tid, elem_t) for acc in accs]


def _ssa(v) -> SSAValue:
    assert isinstance(v, SSAValue)
    return v
