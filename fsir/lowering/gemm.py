"""The register-blocked tiled GEMM that the `gemm` and `conv` mappings lower to: a
bm x bn output tile per block, a tm x tn micro-tile of it per thread in registers; each
k-step stages a tile of each operand in shared memory (producers inlined, out-of-range
elements zero), then accumulates (`tile_*`, `thread_*` params). `TiledGemmLowering`
is the tiling; a subclass says what the product's operands and result are: a dot's
matrices (`GemmLowering`) or a convolution's implicit im2col view
(`fsir/lowering/conv.py`). The accumulators pass through the kernel's fused epilogue
(elementwise consumers of the product, `epilogue`) on their way to global memory."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, Region, SSAValue

from fsir.dialects import gpu, graph
from fsir.dialects.graph import D, DimBuilder, DimsOf, MatmulProblem, shape_of
from fsir.dialects.schedule import GemmParamsAttr, GroupOp, TiledParamsAttr
from fsir.lowering.emit import elem_type
from fsir.lowering.kernels import KernelLowering
from fsir.lowering.ln_partials import store_tile_moments, tile_moments_of
from fsir.lowering.prologue import hoist_row_statistics
from fsir.lowering.row_epilogue import provide_row_reductions, row_reductions
from fsir.lowering.scalar import Index, compute_type
from fsir.lowering.split_k import Partials, SplitK, buffer_types, split_of

# An operand element of the product: (whether it exists, the code loading it); a
# missing one is zero.
Element = tuple[bool | SSAValue, Callable[[], SSAValue]]


def vector_fragments(tm: int, tn: int) -> bool:
    """Whether a tm x tn micro-tile reads its fragments with 4-wide shared loads
    (`gpu.load_vector`): a thread then owns groups of 4 consecutive rows and columns,
    and the A tile is stored transposed (`a_tile_stride`), so that each k's tm values
    of A, like its tn values of B, are tm / 4 aligned vectors."""
    return tm % 4 == 0 and tn % 4 == 0


def a_tile_stride(bm: int) -> int:
    """The distance of consecutive k in a transposed A tile: bm padded by one vector,
    so a warp's staging stores (consecutive k of a row) spread over 8 banks rather
    than hitting one."""
    return bm + 4


def product_root(group: GroupOp) -> graph.GraphOp:
    """The compute-intensive op (the product) of a tiled kernel's one group; the other
    ops are its inlined producers and its fused epilogue."""
    return next(op for op in group.block.ops
                if isinstance(op, graph.GraphOp) and graph.op_class(op) == graph.OpClass.COMPUTE)


def tile_sources(b: SSAValue, bn: int) -> list[tuple[int, SSAValue]] | None:
    """The pieces of a B operand concatenated along N (merged sibling dots,
    `fsir/fusion/horizontal.py`) as (first column, piece) when each is a static
    multiple of `bn` wide: a bn-wide tile of B then lies in one piece, so its staging
    picks the piece once per tile instead of per element (`GemmLowering.b_sources`).
    None for any other operand (its tiles would straddle pieces)."""
    op = b.owner
    rank = len(graph.shape_of(b.type))
    if not isinstance(op, graph.ConcatOp) or rank < 2:
        return None
    dim = op.dim
    assert isinstance(dim, IntegerAttr)  # graph.concat's verifier
    if dim.value.data != rank - 1:
        return None
    pieces, start = [], 0
    for piece in op.operands:
        width = graph.shape_of(piece.type)[-1]
        if width == graph.DYN or width % bn:
            return None
        pieces.append((start, piece))
        start += width
    return pieces


class TiledGemmLowering(KernelLowering):
    """The tiling; a subclass sets up its problem in `prepare` and provides the
    elements of A (`a_element`, m x k) and B (`b_element`, k x n) and the result index
    of product element (m, n) (`result_index`)."""

    root: graph.GraphOp  # the product (a dot, a conv)
    # whether micro-tiles of multiples of 4 x 4 read their fragments as 4-vectors
    # (`vector_fragments`); the conv mapping keeps scalar fragments
    vectorizes = False

    def prepare(self) -> tuple[Index, Index, Index]:
        """The problem's (M, N, K) sizes (state such as the batch index of grid z may
        be set up here)."""
        raise NotImplementedError

    def a_element(self, m: Index, k: Index) -> Element:
        raise NotImplementedError

    def b_element(self, k: Index, n: Index) -> Element:
        raise NotImplementedError

    def result_index(self, m: Index, n: Index) -> list[Index]:
        raise NotImplementedError

    def hoist_a_rows(self, rows: Callable[[], list[tuple[Index, bool | SSAValue]]]) -> None:
        """Before the k-loop: load what the A elements of the thread's staged rows
        (`rows()`: m and whether the thread stages that row, built only when needed,
        as it hoists the staging's index arithmetic too) read in every k-step alike (a
        prologue's row statistics); none by default."""

    # While a B tile is staged from one source (`b_sources`): element (k, c) of the
    # source for the tile's column c, None when each element finds its own.
    b_piece: Callable[[Index, Index], Element] | None = None
    # ... and that source with the tile's first column in it (copies read it directly)
    b_source: tuple[SSAValue, Index] | None = None

    def b_sources(self, n0: Index, bn: int, stage: Callable[[], None]) -> None:
        """Stage the B tile of columns n0 .. n0 + bn (`stage()`, reading `b_piece` or
        `b_element`); by default every element finds its own source."""
        stage()

    def epilogue(self, acc: SSAValue, idx: list[Index]) -> SSAValue:
        """The kernel's output element at `idx` (an index of the output), given the
        product's accumulator there: the product itself, or the fused elementwise ops
        reading it (the product is read at that element only, which the mapping's
        capability check guarantees), computed from the accumulator in registers."""
        _, out = self.outputs[self.main_output]
        if out is self.root.results[0]:
            return acc
        e = self.emit
        e.row_values[self.root.results[0]] = self.sb.round_to(acc, elem_type(self.root.results[0]))
        try:
            return e.at(out, idx)
        finally:
            del e.row_values[self.root.results[0]]

    def store_result(self, acc: SSAValue, idx: list[Index]) -> None:
        """Store the output element of product element `idx` (its accumulator `acc`).
        An epilogue with a reshape has the product's elements in row-major order in
        another shape (`fsir/codegen/mappings/epilogue.py`)."""
        _, out = self.outputs[self.main_output]
        idx = self.index_in(idx, out)
        self.store_output(self.main_output, self.epilogue(acc, idx), idx)

    @property
    def main_output(self) -> int:
        """The output of the product's shape (besides it: its rows' partial moments)."""
        return next(i for i, (_, v) in enumerate(self.outputs) if not isinstance(v.owner, graph.TileMomentsOp))

    def index_in(self, idx: list[Index], v: SSAValue) -> list[Index]:
        """Product element `idx`'s index in the epilogue's value `v`: the same, or its
        row-major position in v's shape past a reshape."""
        product = self.root.results[0]
        if graph.shape_of(v.type) == graph.shape_of(product.type):
            return idx
        ib, shapes = self.ib, self.shapes
        return ib.delinearize(ib.linearize(idx, shapes.dims(product)), shapes.dims(v))

    split: SplitK | None = None  # a split_k > 1 kernel's slice (`fsir/lowering/split_k.py`)

    def extra_argument_types(self) -> list[MemRefType]:
        return buffer_types(self.k)

    def block_id(self, dim: str = "x") -> SSAValue:
        """A split kernel's tile ids come from its ticket."""
        if self.split is None:
            return super().block_id(dim)
        return self.ib.ssa(self.split.ids[dim])

    def start_split(self) -> None:
        """Take a split kernel's ticket (before anything reads the block ids)."""
        split = split_of(self.k)
        if split == 1:
            return
        (gx, gy, gz), _ = self.k.launch()
        sems, *workspace = self.extra_args
        sems.name_hint = "sems"
        for w in workspace:
            w.name_hint = "workspace"
        self.split = SplitK(self.ib, self.sb, sems, workspace[0] if workspace else None, split, (gx, gy, gz // split))

    def store_tile(self, tid: SSAValue, accs: list[SSAValue], elements: list[tuple[Index, Index, Index, Index]],
                   inside: Callable[[Index, Index], bool | SSAValue], bm: int, bn: int) -> None:
        """Store the thread's accumulators, at product elements (m, n) that are
        elements (r, c) of the block's bm x bn tile, through the epilogue into the
        output where `inside(m, n)`; a split kernel's slice first adds them to the
        tile's running sums (in the workspace, or at the output elements the
        epilogue writes), and only the last slice stores (`SplitK.reduce`)."""
        e = self.emit

        def store(values: list[SSAValue]) -> None:
            self.combine_row_reductions(values, elements, inside)
            store_tile_moments(self, tid, values, elements, inside)
            for acc, (m, n, _, _) in zip(values, elements):
                e.when(inside(m, n), lambda acc=acc, m=m, n=n: self.store_result(acc, self.result_index(m, n)))

        split = self.split
        if split is None:
            store(accs)
            return
        if split.workspace is not None:
            partials = split.workspace_partials([(r, c) for _, _, r, c in elements], bm, bn)
        else:
            _, out = self.outputs[0]
            dims = self.shapes.dims(out)
            partials = Partials(self.out_buffers[0],
                                [self.ib.linearize(self.index_in(self.result_index(m, n), out), dims)
                                 for m, n, _, _ in elements],
                                [inside(m, n) for m, n, _, _ in elements])
        split.reduce(e, tid, accs, partials, store)

    def combine_row_reductions(self, accs: list[SSAValue], elements: list[tuple[Index, Index, Index, Index]],
                               inside: Callable[[Index, Index], bool | SSAValue]) -> None:
        """An epilogue normalising the product's rows first combines its row
        reductions across the tile row's lanes (`fsir/lowering/row_epilogue.py`);
        accumulator i·tn + j is element (ms[i], ns[j])."""
        block = self.root.parent_block()
        reductions = row_reductions(self.root, block.ops) if block is not None else []
        if not reductions:
            return
        p = self.k.params
        assert isinstance(p, TiledParamsAttr)
        tn = p.thread_n
        ms = [m for m, _, _, _ in elements[::tn]]
        ns = [n for _, n, _, _ in elements[:tn]]
        provide_row_reductions(self.emit, self.root.results[0], reductions, accs, ms, ns,
                               lambda m, n, v: self.index_in(self.result_index(m, n), v), inside, p.tile_n // tn)

    def body(self) -> None:
        """Register-blocked tiled GEMM. Thread (ty, tx) of a block owns the outputs
        (ty + i * bm/tm, tx + j * bn/tn) of its bm x bn tile for i < tm, j < tn (so
        consecutive threads store consecutive columns); each k-step all threads stage the
        bm x bk tile of A and the bk x bn tile of B in shared memory (consecutive threads
        loading consecutive elements of a tile row, producers inlined, zero outside the
        operands), then the unrolled k-step reads tm values of A and tn of B per k and
        accumulates their tm x tn products in registers. With `vector_fragments` the
        thread owns groups of 4 consecutive rows (ty * 4 + u + g * 4bm/tm) and columns
        instead, and reads each k's values as 4-vectors from a transposed A tile and the
        B tile. The stages are `TileSteps`'."""
        ib, e = self.ib, self.emit
        (g,) = self.k.groups()
        self.root = product_root(g)
        t = TileSteps(self)
        m0, m_size, bm = t.m0, t.m_size, t.bm
        self.hoist_a_rows(lambda: [(ib.add(m0, r), e.and_(exists, t.below(ib.add(m0, r), m_size, bm)))
                                   for r, _, exists in t.positions(bm, t.bk)])
        split = self.split
        inits = [t.zero] * (t.tm * t.tn)
        k_size, bk = t.k_size, t.bk
        accs = e.for_loop(0, k_size, bk, inits, t.k_step) if split is None else \
            split.k_loop(e, k_size, bk, inits, t.k_step)
        elements = [(ib.add(t.m0, r), ib.add(t.n0, c), r, c) for r in t.rows for c in t.cols]
        self.store_tile(t.tid, accs, elements,
                        lambda m, n: e.and_(t.below(m, t.m_size, t.bm), t.below(n, t.n_size, t.bn)), t.bm, t.bn)


class TileSteps:
    """The stages of one block's register-blocked tile (`TiledGemmLowering.body`): the
    thread's positions in a tile, staging A and B tiles into shared memory, and one
    k-step of the micro-tile's products. Built after the kernel's split ticket and
    problem, in the order the body emits them."""

    def __init__(self, low: TiledGemmLowering):
        self.low = low
        ib, sb = low.ib, low.sb
        p = low.k.params
        assert isinstance(p, TiledParamsAttr)
        self.bm, self.bn, self.bk, self.tm, self.tn = p.tile_m, p.tile_n, p.tile_k, p.thread_m, p.thread_n
        bm, bn, tm, tn = self.bm, self.bn, self.tm, self.tn
        self.acc_t = compute_type(elem_type(low.root.results[0]))
        low.start_split()
        self.m_size, self.n_size, self.k_size = low.prepare()
        self.tid = tid = low.thread_id()
        tx, ty = ib.rem(tid, bn // tn), ib.div(tid, bn // tn)
        self.m0, self.n0 = ib.mul(low.block_id("y"), bm), ib.mul(low.block_id("x"), bn)
        self.a_tile, self.b_tile = low.smem["a_tile"], low.smem["b_tile"]
        self.zero = sb.const(0, self.acc_t)
        self.vector = low.vectorizes and vector_fragments(tm, tn)
        if self.vector:
            # 4 consecutive rows (columns) per group, the groups bm / (tm / 4) apart
            self.rows = [ib.add(ib.mul(ty, 4), g * (bm * 4 // tm) + u) for g in range(tm // 4) for u in range(4)]
            self.cols = [ib.add(ib.mul(tx, 4), g * (bn * 4 // tn) + u) for g in range(tn // 4) for u in range(4)]
        else:
            self.rows = [ib.add(ty, i * (bm // tm)) for i in range(tm)]  # tile rows of this thread
            self.cols = [ib.add(tx, j * (bn // tn)) for j in range(tn)]
        self.lda = a_tile_stride(bm)

    # Bounds a tile cannot cross need no guard: a dim that is a static multiple of
    # its tile (the grid covers it exactly; k steps never pass it).
    def below(self, i: Index, size: Index, tile: int) -> bool | SSAValue:
        return True if isinstance(size, int) and size % tile == 0 else self.low.ib.lt(i, size)

    def positions(self, rows: int, cols: int) -> list[tuple[Index, Index, bool | SSAValue]]:
        """A thread's elements of a rows x cols tile: element tid + s * threads for
        s = 0, 1, ... as (row, column, whether it is in the tile). Computed in each
        k-step: ptxas recomputes these shifts and masks rather than keeping them in
        registers across the loop (and the evaluator, which counts what the IR
        keeps live, then agrees with it: with them hoisted, ptxas -v reports 16
        more registers for a 4x4 micro-tile)."""
        ib, tid = self.low.ib, self.tid
        threads, total = self.low.block_size, rows * cols
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

    def stage(self, k0, buf, cols: int, elements, value) -> None:
        """Copy the thread's `elements` of a tile (row-major in `buf`, `cols` wide);
        `value(k0, r, c)` loads one."""
        ib, e, acc_t = self.low.ib, self.low.emit, self.acc_t
        for r, c, exists in elements:
            e.when(exists, lambda r=r, c=c: e.store(value(k0, r, c), buf, ib.add(ib.mul(r, cols), c), acc_t))

    def a_value(self, k0, r, c) -> SSAValue:
        ib, e = self.low.ib, self.low.emit
        m, k = ib.add(self.m0, r), ib.add(k0, c)
        exists, load = self.low.a_element(m, k)
        inside = e.and_(e.and_(self.below(m, self.m_size, self.bm), self.below(k, self.k_size, self.bk)), exists)
        return e.guarded(inside, load, lambda: self.zero)

    def b_value(self, k0, r, c) -> SSAValue:
        ib, e, low = self.low.ib, self.low.emit, self.low
        if low.b_piece is not None:  # the pieces tile N exactly: no column is outside
            k = ib.add(k0, r)
            exists, load = low.b_piece(k, c)
            return e.guarded(e.and_(self.below(k, self.k_size, self.bk), exists), load, lambda: self.zero)
        k, n = ib.add(k0, r), ib.add(self.n0, c)
        exists, load = low.b_element(k, n)
        inside = e.and_(e.and_(self.below(k, self.k_size, self.bk), self.below(n, self.n_size, self.bn)), exists)
        return e.guarded(inside, load, lambda: self.zero)

    def vectors(self, tile: SSAValue, first: Index) -> list[SSAValue]:
        op = gpu.LoadVectorOp(tile, [self.low.ib.ssa(first)], 4)
        self.low.cursor.insert(op)
        return list(op.values)

    def stage_tiles(self, k0) -> None:
        """Stage the k-step's A and B tiles (A transposed with vector fragments)."""
        ib, e, low = self.low.ib, self.low.emit, self.low
        bm, bn, bk, lda = self.bm, self.bn, self.bk, self.lda
        a_elements, b_elements = self.positions(bm, bk), self.positions(bk, bn)
        if self.vector:  # A transposed: k-major, rows `lda` apart
            for r, c, exists in a_elements:
                e.when(exists, lambda r=r, c=c: e.store(self.a_value(k0, r, c), self.a_tile,
                                                        ib.add(ib.mul(c, lda), r), self.acc_t))
        else:
            self.stage(k0, self.a_tile, bk, a_elements, self.a_value)
        low.b_sources(self.n0, bn, lambda: self.stage(k0, self.b_tile, bn, b_elements, self.b_value))

    def k_step(self, k0, accs):
        """One k-step: stage the tiles, then the bk unrolled micro-tile products."""
        ib, e, sb = self.low.ib, self.low.emit, self.low.sb
        self.stage_tiles(k0)
        self.low.cursor.insert(gpu.BarrierOp())
        accs = list(accs)
        lda, bk, bn, tn = self.lda, self.bk, self.bn, self.tn
        for kk in range(bk):
            if self.vector:
                xs = [x for r in self.rows[::4] for x in self.vectors(self.a_tile, ib.add(r, kk * lda))]
                ys = [y for c in self.cols[::4] for y in self.vectors(self.b_tile, ib.add(c, kk * bn))]
            else:
                xs = [e.load(self.a_tile, ib.add(ib.mul(r, bk), kk)) for r in self.rows]
                ys = [e.load(self.b_tile, ib.add(c, kk * bn)) for c in self.cols]
            for i, x in enumerate(xs):
                for j, y in enumerate(ys):
                    accs[i * tn + j] = sb.multiply_add(x, y, accs[i * tn + j])
        self.low.cursor.insert(gpu.BarrierOp())
        return accs


def folds_batch(dot: graph.DotOp, ops: Sequence[Operation]) -> bool:
    """Whether `dot`'s kernel (its ops `ops`) computes a batch of matrices times one
    matrix as one taller product (`product_problem`): the rhs has no batch dims, A is
    loaded as it is (not computed in the kernel) and no epilogue works per row (row
    reductions, tile moments), so only the row index of A's loads and the result's
    stores changes."""
    p = dot.problem(graph.static_dims, graph.STATIC)
    if not p.batch or p.lhs_vector or p.rhs_vector or len(shape_of(dot.rhs.type)) != 2:
        return False
    if dot.lhs.owner in ops:
        return False
    return not row_reductions(dot, ops) and tile_moments_of(dot, ops) is None


def product_problem(dot: graph.DotOp, ops: Sequence[Operation], dims_of: DimsOf = graph.static_dims,
                    b: DimBuilder[D] = graph.STATIC) -> MatmulProblem[D]:
    """The matrix product a gemm kernel (its ops `ops`) computes for `dot`: where it
    `folds_batch`, [B..., M, K] x [K, N] as one (B... x M) x K product, since the
    batch's rows are consecutive in the row-major lhs and result. A block tile then
    spans batches and the rhs is read once per row tile, not once per batch and row
    tile (M = 128, B = 2: half the B traffic for 256-row tiles)."""
    p = dot.problem(dims_of, b)
    if not folds_batch(dot, ops):
        return p
    m = p.m
    for d in p.batch:
        m = b.mul(m, d)
    return replace(p, batch=[], m=m)


class GemmLowering(TiledGemmLowering):
    """A `graph.dot` (numpy.matmul semantics): batch dims on grid z (or folded into the
    rows: `folds_batch`), vector operands as one-row or one-column matrices."""

    vectorizes = True

    def prepare(self) -> tuple[Index, Index, Index]:
        assert isinstance(self.k.params, GemmParamsAttr)
        dot, ib = self.root, self.ib
        assert isinstance(dot, graph.DotOp)
        self.dot = dot
        (g,) = self.k.groups()
        ops = list(g.block.ops)
        fold = folds_batch(dot, ops)
        unfolded = dot.problem(self.shapes.dims, ib)
        self.problem = problem = product_problem(dot, ops, self.shapes.dims, ib)
        # a folded row's (batch..., row) in the unfolded problem
        self.folded_rows: list[Index] | None = [*unfolded.batch, unfolded.m] if fold else None
        self.bidx = ib.delinearize(self.block_id("z"), problem.batch)
        # (folded: A is read as rows x K, `a_dims`)
        self.a_batch = [] if problem.lhs_vector or fold else dot.batch_index(dot.lhs, self.bidx, self.shapes.dims, ib)
        self.b_batch = [] if problem.rhs_vector else dot.batch_index(dot.rhs, self.bidx, self.shapes.dims, ib)
        return problem.m, problem.n, problem.k

    def split_row(self, m: Index) -> tuple[list[Index], Index]:
        """Row `m` of the product as (the result's batch index, its row)."""
        if self.folded_rows is None:
            return self.bidx, m
        *batch, row = self.ib.delinearize(m, self.folded_rows)
        return batch, row

    def a_dims(self) -> list[Index]:
        """The lhs's dims as the product reads it (folded: rows x K)."""
        dims = list(self.shapes.dims(self.dot.lhs))
        return dims if self.folded_rows is None else [self.problem.m, dims[-1]]

    def a_element(self, m: Index, k: Index) -> Element:
        e = self.emit
        if self.folded_rows is not None:
            # A is a kernel input: row m of the rows x K view is at m x K
            return True, lambda: e.load(e.buffers[self.dot.lhs], self.ib.linearize([m, k], self.a_dims()))
        idx = [k] if self.problem.lhs_vector else [*self.a_batch, m, k]
        return True, lambda: e.at(self.dot.lhs, idx)

    def b_element(self, k: Index, n: Index) -> Element:
        idx = [k] if self.problem.rhs_vector else [*self.b_batch, k, n]
        return True, lambda: self.emit.at(self.dot.rhs, idx)

    def b_pieces(self, bn: int) -> list[tuple[int, SSAValue]] | None:
        """The pieces of B that bn-wide tiles are staged from (`tile_sources`), if any."""
        rhs = self.dot.rhs
        return None if self.problem.rhs_vector or rhs in self.emit.buffers else tile_sources(rhs, bn)

    def b_sources(self, n0: Index, bn: int, stage: Callable[[], None]) -> None:
        """A B operand concatenated from pieces that tiles never straddle
        (`tile_sources`): the tile's piece found once, by a binary search of uniform
        branches on the tile's first column n0, and each branch stages the whole tile
        from its piece (its columns from n0 minus the piece's first), so no element
        searches the pieces itself."""
        pieces = self.b_pieces(bn)
        if pieces is None:
            stage()
            return
        ib, e = self.ib, self.emit

        def staged_from(lo: int, hi: int) -> None:
            if hi - lo == 1:
                first, piece = pieces[lo]
                base = ib.sub(n0, first)  # the tile's first column in the piece
                self.b_piece = lambda k, c: (True, lambda: e.at(piece, [*self.b_batch, k, ib.add(base, c)]))
                self.b_source = (piece, base)
                try:
                    stage()
                finally:
                    self.b_piece = self.b_source = None
                return
            mid = (lo + hi) // 2
            first_half = ib.lt(n0, pieces[mid][0])
            if isinstance(first_half, bool):
                staged_from(*((lo, mid) if first_half else (mid, hi)))
                return
            then, other = Block(), Block()
            for block, (a, b) in ((then, (lo, mid)), (other, (mid, hi))):
                with self.cursor.at(block):
                    staged_from(a, b)
                    block.add_op(scf.YieldOp())
            self.cursor.insert(scf.IfOp(first_half, [], Region(then), Region(other)))

        staged_from(0, len(pieces))

    def hoist_a_rows(self, rows: Callable[[], list[tuple[Index, bool | SSAValue]]]) -> None:
        """The A operand's row statistics (`row_statistics`: a LayerNorm prologue's mean
        and rstd) at each staged row m, loaded (or computed) once into registers and
        provided as the elements the k-steps' A loads read (the row indices are pure
        index arithmetic, so the k-step's equal ones are these):
        `fsir/lowering/prologue.py`."""
        if self.problem.lhs_vector:
            return
        p = self.k.params
        assert isinstance(p, TiledParamsAttr)
        m0 = self.ib.mul(self.block_id("y"), p.tile_m)
        hoist_row_statistics(self, rows, self.a_batch, m0, p.tile_m, self.problem.m)

    def result_index(self, m: Index, n: Index) -> list[Index]:
        p = self.problem
        batch, row = self.split_row(m)
        return [*batch, *([] if p.lhs_vector else [row]), *([] if p.rhs_vector else [n])]
