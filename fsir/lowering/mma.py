"""The tensor-core GEMM that the `gemm` mapping lowers to with `math = f16 | bf16 |
tf32` (`#schedule.gemm<tile = 64x64x32, thread = 32x32, math = f16>`).

A block computes a bm x bn tile of the product; its warps tile it in wm x wn warp
tiles (`thread`), each a grid of 16 x 8 `mma.sync` tiles whose f32 accumulators stay in
registers. Each k-step the bm x bk tile of A and the bk x bn tile of B are staged in
shared memory, row-major, in 16-byte chunks permuted by an XOR swizzle (`swizzle`): a
chunk's index within its 128-byte line is XORed with its row's (rows of whole lines) or
its line's index, mod 8, so the eight row addresses of an `ldmatrix` matrix (eight rows
at one logical chunk) fall into eight different 16-byte bank groups: no bank conflicts.

Fragments: f16/bf16 operands are read with `ldmatrix.x4` (A: a 16x16 piece, the
m16n8k16 A fragment) and `ldmatrix.x4.trans` (B: a 16x16 piece, the B fragments of two
16x8 tiles). tf32 operands are f32 in shared memory. A is read by `ldmatrix.x4` of
32-bit elements (8x4 matrices: lane l receives element (l/4, l%4) of each). B cannot
be: a transposing ldmatrix would split 32-bit elements, and the m16n8k8 B fragment
wants b0 = (k = l%4, n = l/4), b1 four k further, a column of the row-major tile. Each
lane reads them with scalar shared loads; B's swizzle XORs twice the row index (`spread`
2), so the four k rows x two chunks a warp's loads touch are eight different bank
groups. (Staging B transposed for ldmatrix would cost a 4-byte `cp.async` per element
instead of one per 16 bytes; packing the four loads into vectors needs moves, ptxas
pairing each mma's b0 and b1 registers.) Each fragment register is rounded once with
`cvt.rna.tf32.f32`: cp.async stages the raw f32 values, so rounding while staging would
cost a shared load, a conversion and a store per element and an extra barrier, more
than the per-register conversions of the warps reading it.

Staging: an operand that is a kernel input whose rows are whole 16-byte chunks (K, resp.
N, a static multiple of 8 halves or 4 floats) is copied with `cp.async.cg` 16 bytes at
a time, zero-filled (src-size 0) where a chunk lies outside the operand, in a ring of
2-4 stages (as many as fit 48 KB, and at least two, `pipeline_stages`; tiles beyond
the 48 KB of static arrays are dynamic shared memory, `shared_layout`): the
copies of the first stages - 1 steps are committed before the k-loop; step s waits
until at most stages - 2 groups are pending (`cp.async.wait_group stages-2`: its
own group has landed), and one barrier both publishes its tiles and ends every
warp's reads of step s - 1's stage, into which it then issues step s + stages - 1's
copies before computing: one barrier per k-step. Otherwise (inlined
producers, rows not 16-byte aligned) each thread loads its elements (zero outside),
stores them to the swizzled tile, and a barrier publishes them.

The epilogue passes each accumulator through the kernel's fused elementwise consumers
(`TiledGemmLowering.store_result`) to global memory, guarded at ragged M / N edges.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import gcd

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, IntegerType, MemRefType, bf16, f16, f32, i32
from xdsl.ir import Attribute, SSAValue

from fsir.dialects import gpu
from fsir.dialects.gpu import MmaTypeEnum
from fsir.dialects.schedule import GemmMath, GemmParamsAttr
from fsir.lowering.gemm import GemmLowering, product_root
from fsir.lowering.scalar import Index

CHUNK_BYTES = 16  # one cp.async, one ldmatrix row
STAGES = 2  # the fewest cp.async buffers per operand tile (double buffering)
MAX_STAGES = 4

_MMA_TYPE = {GemmMath.F16: MmaTypeEnum.F16, GemmMath.BF16: MmaTypeEnum.BF16, GemmMath.TF32: MmaTypeEnum.TF32}


def tile_element_type(math: GemmMath) -> Attribute:
    """The element type of the shared operand tiles: the operands' 16-bit type, or f32
    for tf32 (rounded when the fragments are read)."""
    return {GemmMath.F16: f16, GemmMath.BF16: bf16, GemmMath.TF32: f32}[math]


def swizzle(chunk: int, row_chunks: int, spread: int = 1) -> int:
    """The position of 16-byte chunk `chunk` of a tile whose rows are `row_chunks`
    chunks wide: its index within its 128-byte line XORed with `spread` times the row's
    index (mod 8) when rows are whole lines, else times the line's index, so eight
    consecutive rows at one logical chunk use eight bank groups (`spread` 1, ldmatrix's
    rows), or four consecutive rows at two consecutive chunks do (`spread` 2, tf32's B
    fragment columns). The lowering emits the same arithmetic on index values
    (`MmaGemmLowering.swizzled`)."""
    return chunk ^ ((spread * (chunk // (row_chunks if row_chunks % 8 == 0 else 8))) % 8)


def swizzle_period(row_chunks: int, spread: int) -> int:
    """Rows after which `swizzle`'s permutation repeats (a fragment that many rows
    further is at the same offset plus the rows' elements)."""
    lines = 8 // gcd(spread, 8)
    return lines if row_chunks % 8 == 0 else max(1, lines * 8 // row_chunks)


def chunk_elements(math: GemmMath) -> int:
    return CHUNK_BYTES // (4 if math == GemmMath.TF32 else 2)


def async_operand(math: GemmMath, row_length: int | None) -> bool:
    """Whether an input operand whose rows are `row_length` elements long (None: not
    static) can be staged by 16-byte `cp.async`s (each chunk inside a row)."""
    return row_length is not None and row_length > 0 and row_length % chunk_elements(math) == 0


@dataclass(frozen=True)
class MmaTile:
    """What the stages of one block's tensor-core tile share (`MmaGemmLowering.tile_frame`):
    the tile (bm x bn x bk) and warp tile (wm x wn), the problem's sizes and the
    block's k range, the thread's lane and warp tile origin, the block's origin, the
    shared tiles, and the lanes' fragment offsets."""

    bm: int
    bn: int
    bk: int
    wm: int
    wn: int
    m_size: Index
    n_size: Index
    k_size: Index
    k_lo: Index
    k_hi: Index
    tid: SSAValue
    lane: Index
    wrow: Index
    wcol: Index
    m0: Index
    n0: Index
    a_tile: SSAValue
    b_tile: SSAValue
    zero: SSAValue
    pipelined: bool
    a_lanes: dict
    b_lanes: dict


class MmaGemmLowering(GemmLowering):
    """`GemmLowering`'s problem (a dot's matrices, batch on grid z) on the tensor cores."""

    def body(self) -> None:
        """The block's tile: its frame (`tile_frame`), the k-loop of staged steps
        (`pipelined_k_step` or `sync_k_step`, each ending in `mma_step`), then the
        accumulators through the epilogue (`fragment_elements`)."""
        e = self.emit
        (g,) = self.k.groups()
        self.root = product_root(g)
        t = self.tile_frame()
        k_step = self.pipelined_k_step(t) if t.pipelined else self.sync_k_step(t)
        split = self.split
        inits = [t.zero] * ((t.wm // 16) * (t.wn // 8) * 4)
        accs = e.for_loop(0, t.k_size, t.bk, inits, k_step) if split is None else \
            split.k_loop(e, t.k_size, t.bk, inits, k_step)
        if t.pipelined:
            self.cursor.insert(gpu.CpAsyncWaitGroupOp(0))  # no copy outlives the kernel
        m_size, n_size, bm, bn = t.m_size, t.n_size, t.bm, t.bn
        self.store_tile(t.tid, accs, self.fragment_elements(t),
                        lambda r, c: e.and_(self.below(r, m_size, bm), self.below(c, n_size, bn)), bm, bn)

    def tile_frame(self) -> MmaTile:
        """The block's tile and the thread's place in it (split ticket, problem sizes,
        warp tile, lane fragment offsets), in the order the kernel computes them."""
        ib, sb = self.ib, self.sb
        p = self.k.params
        assert isinstance(p, GemmParamsAttr) and p.tensor_cores
        self.math = p.math
        self.k_tile = p.tile_k
        bm, bn, bk, wm, wn = p.tile_m, p.tile_n, p.tile_k, p.thread_m, p.thread_n
        self.start_split()
        m_size, n_size, k_size = self.prepare()
        split = self.split
        k_lo, k_hi = (0, k_size) if split is None else split.k_range(k_size, bk)
        self.epc = chunk_elements(self.math)
        self.tile_t = tile_element_type(self.math)
        tid = self.thread_id()
        warp, lane = ib.div(tid, 32), ib.rem(tid, 32)
        warps_n = bn // wn
        wrow, wcol = ib.mul(ib.div(warp, warps_n), wm), ib.mul(ib.rem(warp, warps_n), wn)
        m0, n0 = ib.mul(self.block_id("y"), bm), ib.mul(self.block_id("x"), bn)
        a_tile, b_tile = self.smem["a_tile"], self.smem["b_tile"]
        zero = sb.const(0, f32)
        pipelined = self.pipelined(k_size)
        # a tile's chunks in the first k-step, when none can leave the operand (`copy_tile`)
        self._first_chunks: dict[SSAValue, list[tuple[Index, Index]]] = {}
        # each lane's fragment offsets, computed once before the k-loop: within a step a
        # fragment lies a constant number of rows from one of them (`lane_offsets`)
        a_lanes, b_lanes = self.lane_offsets(bk, bn, wrow, wcol, lane, wn)
        return MmaTile(bm, bn, bk, wm, wn, m_size, n_size, k_size, k_lo, k_hi, tid, lane, wrow, wcol, m0, n0,
                       a_tile, b_tile, zero, pipelined, a_lanes, b_lanes)

    def mma_step(self, t: MmaTile, stage: Index, accs: list[SSAValue]) -> list[SSAValue]:
        """The warp tile's `mma.sync`s over the k-step held in `stage` of the tiles."""
        ib, bm, bn, bk, wm, wn = self.ib, t.bm, t.bn, t.bk, t.wm, t.wn
        a_base, b_base = ib.mul(stage, bm * bk), ib.mul(stage, bk * bn)
        # this step's bases: a stage's offset added once per lane offset
        a_at = {key: ib.add(a_base, off) for key, off in t.a_lanes.items()}
        b_at = {key: ib.add(b_base, off) for key, off in t.b_lanes.items()}
        accs = list(accs)
        for kk in range(0, bk, 16):
            a_frags = [self.a_fragment(t.a_tile, a_at, bk, i * 16, kk) for i in range(wm // 16)]
            b_frags = [f for j in range(wn // 16) for f in self.b_fragments(t.b_tile, b_at, bn, kk, j)]
            for i, a in enumerate(a_frags):
                for j, b in enumerate(b_frags):
                    for a_part, b_part in self.k_parts(a, b):
                        at = (i * (wn // 8) + j) * 4
                        op = gpu.MmaSyncOp(_MMA_TYPE[self.math], a_part, b_part, accs[at:at + 4])
                        self.cursor.insert(op)
                        accs[at:at + 4] = list(op.d)
        return accs

    def pipelined_k_step(self, t: MmaTile) -> Callable[[SSAValue, list[SSAValue]], list[SSAValue]]:
        """Issue the copies of the first `stages - 1` k-steps; the k-step then waits
        for its stage, issues the copies `stages - 1` steps ahead and computes."""
        ib, e, split = self.ib, self.emit, self.split
        a_tile, b_tile, bm, bn, bk = t.a_tile, t.b_tile, t.bm, t.bn, t.bk
        m0, n0, m_size, n_size, k_size = t.m0, t.n0, t.m_size, t.n_size, t.k_size
        # the tiles hold `stages` k-steps: stages - 1 are in flight while one computes
        a_type = a_tile.type
        assert isinstance(a_type, MemRefType)
        stages = max(STAGES, a_type.element_count() // (bm * bk))
        # k-steps first_step .. steps - 1 (a split kernel's slice); step s in stage s mod stages
        first_step, steps = ib.div(t.k_lo, bk), ib.ceildiv(t.k_hi, bk)
        if split is not None:
            # a slice starts at a k-step known only at run time: its chunks' offsets
            # at k-step 0, computed here, serve every step (`copy_tile`)
            self.issue(a_tile, b_tile, 0, 0, m0, n0, m_size, n_size, k_size, bm, bn, bk, plan=True)
        for first in range(stages - 1):
            def prologue(first=first) -> None:
                step = ib.add(first_step, first)
                self.issue(a_tile, b_tile, ib.rem(step, stages), ib.mul(step, bk), m0, n0, m_size, n_size,
                           k_size, bm, bn, bk)

            e.when(True if first == 0 and split is None else ib.lt(ib.add(first_step, first), steps), prologue)
            self.cursor.insert(gpu.CpAsyncCommitGroupOp())

        def k_step(k0: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
            step = ib.div(k0, bk)
            stage = ib.rem(step, stages)
            # groups of steps up to this one are done (the stages - 2 newest may be
            # in flight); the barrier makes them visible and ends every warp's
            # reads of the previous step's stage, which the next copies refill
            self.cursor.insert(gpu.CpAsyncWaitGroupOp(stages - 2))
            self.cursor.insert(gpu.BarrierOp())
            nxt = ib.add(step, stages - 1)
            e.when(ib.lt(nxt, steps), lambda: self.issue(a_tile, b_tile, ib.rem(nxt, stages), ib.mul(nxt, bk),
                                                         m0, n0, m_size, n_size, k_size, bm, bn, bk))
            self.cursor.insert(gpu.CpAsyncCommitGroupOp())  # (empty past the last step: counts stay aligned)
            return self.mma_step(t, stage, accs)

        return k_step

    def sync_k_step(self, t: MmaTile) -> Callable[[SSAValue, list[SSAValue]], list[SSAValue]]:
        """Without cp.async: the k-step stages its tiles, synchronises, computes."""
        ib, e = self.ib, self.emit
        m0, bm, bk, m_size = t.m0, t.bm, t.bk, t.m_size
        self.hoist_a_rows(lambda: [(ib.add(m0, r), e.and_(exists, self.below(ib.add(m0, r), m_size, bm)))
                                   for r, _, exists in self.sync_positions(bm, bk)])

        def k_step(k0: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
            self.stage_sync(t.a_tile, t.b_tile, k0, m0, t.n0, m_size, t.n_size, t.k_size, bm, t.bn, bk)
            self.cursor.insert(gpu.BarrierOp())
            out = self.mma_step(t, 0, accs)
            self.cursor.insert(gpu.BarrierOp())
            return out

        return k_step

    def fragment_elements(self, t: MmaTile) -> list[tuple[Index, Index, Index, Index]]:
        """The product element (and place in the block's tile) of each accumulator:
        accumulator el of mma tile (i, j) is row g + 8 (el >> 1), column 2t + (el & 1)
        of its 16 x 8 tile, for lane 4g + t."""
        ib, m0, n0, lane = self.ib, t.m0, t.n0, t.lane
        g_row, t_col = ib.div(lane, 4), ib.mul(ib.rem(lane, 4), 2)
        elements: list[tuple[Index, Index, Index, Index]] = []
        for i in range(t.wm // 16):
            for j in range(t.wn // 8):
                for el in range(4):
                    r = ib.add(ib.add(m0, ib.add(t.wrow, i * 16 + 8 * (el >> 1))), g_row)
                    c = ib.add(ib.add(n0, ib.add(t.wcol, j * 8 + (el & 1))), t_col)
                    # a split kernel's slices also need the place in the block's tile
                    tr, tc = (0, 0) if self.split is None else (ib.sub(r, m0), ib.sub(c, n0))
                    elements.append((r, c, tr, tc))
        return elements

    # -- shared tiles ----------------------------------------------------------------

    def below(self, i: Index, size: Index, tile: int) -> bool | SSAValue:
        """Whether `i` < `size`; a static multiple of the tile needs no check (the grid
        covers it exactly; k-steps never pass it)."""
        if isinstance(size, int) and size % tile == 0:
            return True
        return self.ib.lt(i, size)

    def swizzled(self, base: Index, cols: int, r: Index, c: Index, spread: int = 1) -> Index:
        """The element offset of (r, c) of a row-major tile `cols` wide whose 16-byte
        chunks are XOR-swizzled (`swizzle`; `c` a multiple of the chunk, or any column:
        the offset within the chunk is kept)."""
        ib, epc = self.ib, self.epc
        row_chunks = cols // epc
        chunk = ib.add(ib.mul(r, row_chunks), ib.div(c, epc))
        if isinstance(chunk, int):
            swz: Index = swizzle(chunk, row_chunks, spread)
        else:
            line = r if row_chunks % 8 == 0 else ib.div(chunk, 8)
            factor = ib.rem(line, 8) if spread == 1 else ib.rem(ib.mul(line, spread), 8)
            swz = self.cursor.value(arith.XOrIOp(ib.ssa(chunk), ib.ssa(factor)))
        return ib.add(base, ib.add(ib.mul(swz, epc), ib.rem(c, epc)))

    def pipelined(self, k_size: Index) -> bool:
        """Both operands are kernel inputs with 16-byte rows: staged by cp.async."""
        if self.problem.lhs_vector or self.problem.rhs_vector:
            return False
        dims_a, dims_b = self.shapes.dims(self.dot.lhs), self.shapes.dims(self.dot.rhs)
        # a B concatenated from kernel inputs is copied from the tile's piece (`b_sources`)
        assert isinstance(self.k.params, GemmParamsAttr)
        pieces = self.b_pieces(self.k.params.tile_n)
        b_rows = [dims_b[-1]] if pieces is None else [self.shapes.dims(piece)[-1] for _, piece in pieces]
        return (self.dot.lhs in self.emit.buffers
                and all(v in self.emit.buffers for v in ([self.dot.rhs] if pieces is None else [v for _, v in pieces]))
                and async_operand(self.math, dims_a[-1] if isinstance(dims_a[-1], int) else None)
                and all(async_operand(self.math, n if isinstance(n, int) else None) for n in b_rows))

    def issue(self, a_tile: SSAValue, b_tile: SSAValue, stage: Index, k0: Index, m0: Index, n0: Index,
              m_size: Index, n_size: Index, k_size: Index, bm: int, bn: int, bk: int, plan: bool = False) -> None:
        """This thread's cp.asyncs of the A and B tiles of k-step `k0` into `stage`
        (`plan`: only their offsets, `copy_tile`)."""
        ib = self.ib
        self.copy_tile(a_tile, ib.mul(stage, bm * bk), bm, bk, self.dot.lhs, self.a_batch,
                       lambda r, c: (ib.add(m0, r), ib.add(k0, c)), (m_size, k_size), (bm, bk), k0, 1, plan=plan)

        def copy_b() -> None:
            operand, first = self.b_source or (self.dot.rhs, n0)  # B, or the tile's piece of it
            n_row = self.shapes.dims(operand)[-1]
            assert isinstance(n_row, int)  # (`pipelined`)
            self.copy_tile(b_tile, ib.mul(stage, bk * bn), bk, bn, operand, self.b_batch,
                           lambda r, c: (ib.add(k0, r), ib.add(first, c)), (k_size, n_size), (bk, bn), k0, n_row,
                           spread=self.b_spread, plan=plan)

        if plan and self.b_pieces(bn) is not None:
            return  # chunks staged inside a piece's branch compute their offsets there
        self.b_sources(n0, bn, copy_b)

    def copy_tile(self, tile: SSAValue, base: Index, rows: int, cols: int, operand: SSAValue, batch: list[Index],
                  at: Callable[[Index, Index], tuple[Index, Index]], sizes: tuple[Index, Index],
                  tiles: tuple[int, int], k0: Index, k_stride: int, spread: int = 1,
                  plan: bool = False) -> None:
        """This thread's 16-byte chunks of a rows x cols tile (chunk tid + s x threads),
        copied from `operand` at the global position `at(row, column)` of k-step `k0`
        (`k_stride` elements further per k) into the tile, swizzled with `spread`. Where
        no chunk can leave the operand, a chunk's shared and global offsets are those of
        the first k-step (computed once, before the k-loop) plus the stage's base and
        k0 x `k_stride`; `plan` (k0 = 0) only computes those offsets, copying nothing."""
        ib, e, epc = self.ib, self.emit, self.epc
        chunks_per_row = cols // epc
        total = rows * chunks_per_row
        threads = self.block_size
        tid = self.thread_id()
        src_buf = e.buffers[operand]
        dims = self.a_dims() if operand is self.dot.lhs else self.shapes.dims(operand)
        # chunks staged inside a piece's branch (`b_sources`) keep their offsets there
        reuse = self.b_source is None
        first: list[tuple[Index, Index]] | None = self._first_chunks.get(tile) if reuse else None
        if plan and (first is not None or not reuse):
            return
        for s in range(-(-total // threads)):
            q = ib.add(tid, s * threads)
            if first is not None and s < len(first):
                dst_off, src_off = first[s]
                dst, src = ib.add(base, dst_off), ib.add(src_off, ib.mul(k0, k_stride))
                nbytes: SSAValue | None = None
                inside: bool | SSAValue = True
            else:
                r, c = ib.div(q, chunks_per_row), ib.mul(ib.rem(q, chunks_per_row), epc)
                gr, gc = at(r, c)
                inside = e.and_(self.below(gr, sizes[0], tiles[0]), self.below(gc, sizes[1], tiles[1]))
                # outside chunks read nothing (src-size 0); their address is kept in bounds
                src = ib.linearize([*batch, ib.select(inside, gr, 0), ib.select(inside, gc, 0)], dims)
                if isinstance(inside, bool):
                    nbytes = None if inside else self.sb.const(0, i32)
                else:
                    nbytes = self.cursor.value(arith.SelectOp(inside, self.sb.const(CHUNK_BYTES, i32),
                                                              self.sb.const(0, i32)))
                dst_off = self.swizzled(0, cols, r, c, spread)
                dst = ib.add(base, dst_off)
                if k0 == 0 and inside is True and reuse:
                    self._first_chunks.setdefault(tile, []).append((dst_off, src))

            def copy(dst=dst, src=src, nbytes=nbytes) -> None:
                self.cursor.insert(gpu.CpAsyncOp(tile, [ib.ssa(dst)], src_buf, [ib.ssa(src)], CHUNK_BYTES, nbytes))

            if not plan:
                e.when(True if (s + 1) * threads <= total else ib.lt(q, total), copy)

    def sync_positions(self, rows: int, cols: int) -> list[tuple[Index, Index, bool | SSAValue]]:
        """A thread's elements of a rows x cols tile staged synchronously: element
        tid + s * threads for s = 0, 1, ... as (row, column, whether it is in the tile)."""
        ib, threads, tid = self.ib, self.block_size, self.thread_id()
        out: list[tuple[Index, Index, bool | SSAValue]] = []
        for s in range(-(-rows * cols // threads)):
            q = ib.add(tid, s * threads)
            exists = True if (s + 1) * threads <= rows * cols else ib.lt(q, rows * cols)
            if threads % cols == 0:  # one column per thread: its column vectors load once
                out.append((ib.add(ib.div(tid, cols), s * threads // cols), ib.rem(tid, cols), exists))
            else:
                out.append((ib.div(q, cols), ib.rem(q, cols), exists))
        return out

    def stage_sync(self, a_tile: SSAValue, b_tile: SSAValue, k0: Index, m0: Index, n0: Index, m_size: Index,
                   n_size: Index, k_size: Index, bm: int, bn: int, bk: int) -> None:
        """Each thread loads its elements of both tiles (producers inlined, zero
        outside the operands) and stores them to the swizzled tiles."""
        ib, e, sb = self.ib, self.emit, self.sb
        zero = sb.const(0, f32)

        def fill(tile: SSAValue, rows: int, cols: int, value: Callable[[Index, Index], SSAValue],
                 spread: int = 1) -> None:
            for r, c, exists in self.sync_positions(rows, cols):

                def put(r=r, c=c) -> None:
                    at = self.swizzled(0, cols, r, c, spread)
                    e.store(value(r, c), tile, at, self.tile_t)

                e.when(exists, put)

        def a_value(r: Index, c: Index) -> SSAValue:
            m, k = ib.add(m0, r), ib.add(k0, c)
            exists, load = self.a_element(m, k)
            inside = e.and_(e.and_(self.below(m, m_size, bm), self.below(k, k_size, bk)), exists)
            return e.guarded(inside, load, lambda: zero)

        def b_value(r: Index, c: Index) -> SSAValue:
            if self.b_piece is not None:  # one source for the tile (`b_sources`)
                k = ib.add(k0, r)
                exists, load = self.b_piece(k, c)
                return e.guarded(e.and_(self.below(k, k_size, bk), exists), load, lambda: zero)
            k, n = ib.add(k0, r), ib.add(n0, c)
            exists, load = self.b_element(k, n)
            inside = e.and_(e.and_(self.below(k, k_size, bk), self.below(n, n_size, bn)), exists)
            return e.guarded(inside, load, lambda: zero)

        fill(a_tile, bm, bk, a_value)
        self.b_sources(n0, bn, lambda: fill(b_tile, bk, bn, b_value, self.b_spread))

    # -- fragments -------------------------------------------------------------------

    @property
    def b_spread(self) -> int:
        """The B tile's `swizzle` spread: 2 for tf32, whose fragments are read as
        columns of four rows by scalar loads; 1 (ldmatrix's) otherwise."""
        return 2 if self.math == GemmMath.TF32 else 1

    def keeps_swizzle(self, rows: int, cols: int, spread: int = 1) -> bool:
        """Whether rows `rows` further down a tile `cols` wide every chunk keeps its
        swizzle (`swizzle`'s XOR factor and position within the line), so that the
        offset there is the offset here plus rows x cols."""
        return rows % swizzle_period(cols // self.epc, spread) == 0

    def lane_offsets(self, bk: int, bn: int, wrow: Index, wcol: Index, lane: Index,
                     wn: int) -> tuple[dict[tuple[int, ...], Index], dict[tuple[int, ...], Index]]:
        """This lane's offsets in the A and B tiles (stage 0) from which every fragment
        address of a k-step is a constant number of rows away (`keeps_swizzle`): for A
        one per 16-deep piece (and for tf32 per 8-deep half and column group), at the
        warp's first row; for B one per 16-column group of the warp tile, at k row 0,
        or for tf32 one per 8-column tile and row phase (`b_row_phases`), at the lane's
        fragment element (k = l%4 + phase, n = l/4)."""
        ib = self.ib
        a: dict[tuple[int, ...], Index] = {}
        b: dict[tuple[int, ...], Index] = {}
        mat, i = ib.div(lane, 8), ib.rem(lane, 8)
        if self.math == GemmMath.TF32:
            for kk in range(0, bk, 16):
                for half in (0, 8):
                    a[kk, half] = self.swizzled(0, bk, ib.add(ib.add(wrow, ib.mul(ib.rem(mat, 2), 8)), i),
                                                ib.add(ib.mul(ib.div(mat, 2), 4), kk + half))
            t, g = ib.rem(lane, 4), ib.div(lane, 4)
            for j in range(wn // 16):
                for nt in (0, 8):
                    for r0 in self.b_row_phases(bk, bn):
                        b[j, nt, r0] = self.swizzled(0, bn, ib.add(t, r0), ib.add(ib.add(wcol, j * 16 + nt), g),
                                                     self.b_spread)
            return a, b
        for kk in range(0, bk, 16):
            a[(kk,)] = self.swizzled(0, bk, ib.add(ib.add(wrow, ib.mul(ib.rem(mat, 2), 8)), i),
                                     ib.add(ib.mul(ib.div(mat, 2), 8), kk))
        for j in range(wn // 16):
            b[(j,)] = self.swizzled(0, bn, ib.add(ib.mul(ib.rem(mat, 2), 8), i),
                                    ib.add(ib.add(wcol, j * 16), ib.mul(ib.div(mat, 2), 8)))
        return a, b

    def b_row_phases(self, bk: int, bn: int) -> range:
        """tf32's B fragment rows (a lane's k = l%4 plus a multiple of 4) within one
        swizzle period: those at which `lane_offsets` keeps an offset (one for tiles of
        whole-line rows, more for narrower ones)."""
        return range(0, min(bk, swizzle_period(bn // self.epc, self.b_spread)), 4)

    def below_offset(self, at: dict[tuple[int, ...], Index], key: tuple[int, ...], rows: int, cols: int,
                     spread: int = 1) -> Index:
        assert self.keeps_swizzle(rows, cols, spread), (rows, cols, spread)
        return self.ib.add(at[key], rows * cols)

    def a_fragment(self, tile: SSAValue, at: dict[tuple[int, ...], Index], bk: int, row: int,
                   kk: int) -> list[SSAValue]:
        """The A fragment of the 16 x 16 piece at (warp row + `row`, kk): one
        ldmatrix.x4 (matrix j: rows +8(j%2), columns +8(j/2); lane l gives row l%8 of
        matrix l/8), or for tf32 per 8-deep half one ldmatrix.x4 of 32-bit elements
        (matrix j: rows +8(j%2), columns +4(j/2): lane l receives (g + 8(j%2),
        t + 4(j/2)), the m16n8k8 fragment's element j), each rounded; `at` holds the
        step's lane offsets (`lane_offsets`)."""
        if self.math == GemmMath.TF32:
            return [v for half in (0, 8) for v in self.tf32_matrices(tile, self.below_offset(at, (kk, half), row, bk))]
        op = gpu.LdMatrixOp(tile, [self.ib.ssa(self.below_offset(at, (kk,), row, bk))], 4)
        self.cursor.insert(op)
        return list(op.values)

    def b_fragments(self, tile: SSAValue, at: dict[tuple[int, ...], Index], bn: int, kk: int,
                    j: int) -> list[list[SSAValue]]:
        """The B fragments of the two 16 x 8 tiles of the 16 x 16 piece at (kk, warp
        column + 16j): one ldmatrix.x4.trans (matrix m: k rows +8(m%2), columns
        +8(m/2)), or for tf32 per 8-column tile four scalar loads (the two m16n8k8
        fragments' b0 and b1, of k 0-7 then of k 8-15), rounded."""
        if self.math == GemmMath.TF32:
            ib, period = self.ib, swizzle_period(bn // self.epc, self.b_spread)

            def load(nt: int, row: int) -> SSAValue:
                at_row = self.below_offset(at, (j, nt, row % period), row - row % period, bn, self.b_spread)
                value = self.cursor.value(memref.LoadOp.get(tile, [ib.ssa(at_row)]))
                return self.cursor.value(gpu.RoundTf32Op(value))

            return [[load(nt, kk + half + d) for half in (0, 8) for d in (0, 4)] for nt in (0, 8)]
        op = gpu.LdMatrixOp(tile, [self.ib.ssa(self.below_offset(at, (j,), kk, bn))], 4, trans=True)
        self.cursor.insert(op)
        v = list(op.values)
        return [[v[0], v[1]], [v[2], v[3]]]

    def k_parts(self, a: list[SSAValue], b: list[SSAValue]) -> list[tuple[list[SSAValue], list[SSAValue]]]:
        """The mma's operands of a 16-deep k piece: one m16n8k16, or two tf32 m16n8k8
        (k 0-7, then 8-15)."""
        if self.math == GemmMath.TF32:
            return [(a[0:4], b[0:2]), (a[4:8], b[2:4])]
        return [(a, b)]

    def tf32_matrices(self, tile: SSAValue, offset: Index) -> list[SSAValue]:
        """One ldmatrix.x4 of 32-bit elements at this lane's row address `offset`, each
        register rounded to tf32 (`cvt.rna.tf32.f32` straight from the loaded bits)."""
        op = gpu.LdMatrixOp(tile, [self.ib.ssa(offset)], 4)
        self.cursor.insert(op)
        return [self.cursor.value(gpu.RoundTf32Op(v)) for v in op.values]


# ---------------------------------------------------------------------------------------
# Fragments built in registers (the attention kernel's, `fsir/lowering/attention.py`):
# operand registers of an mma from f32 values a lane holds, rather than from ldmatrix.


def operand_registers(cursor, values: list[SSAValue], math: GemmMath) -> list[SSAValue]:
    """The mma operand registers (i32) holding `values` (f32) in `math`: for tf32 each
    value rounded (`cvt.rna.tf32.f32`), for f16 / bf16 each pair (lower element in the
    lower half, as the PTX ISA's fragments pack two consecutive columns) rounded to the
    16-bit type and packed into one register."""
    if math == GemmMath.TF32:
        return [cursor.value(gpu.RoundTf32Op(v)) for v in values]
    half = tile_element_type(math)
    i16 = IntegerType(16)
    out = []
    for lo, hi in zip(values[0::2], values[1::2]):
        lo_bits, hi_bits = (cursor.value(arith.ExtUIOp(cursor.value(arith.BitcastOp(
            cursor.value(arith.TruncFOp(v, half)), i16)), i32)) for v in (lo, hi))
        shifted = cursor.value(arith.ShLIOp(hi_bits, cursor.value(arith.ConstantOp(IntegerAttr(16, i32)))))
        out.append(cursor.value(arith.OrIOp(lo_bits, shifted)))
    return out
