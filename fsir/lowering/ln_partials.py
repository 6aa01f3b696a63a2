"""A GEMM epilogue writing the partial moments of its output's rows
(`graph.tile_moments`, the first pass of a two-pass LayerNorm,
`fsir/lowering/moments.py`) besides the output itself, from the accumulators.

The statistic's tile of `w` columns (a power of two) is held, in each block tile row,
by an aligned group of lanes of one warp, each holding a few of its columns:

- the FMA tiles: thread tx of a row's L = bn / tn lanes holds the columns
  tx·c + u + g·c·L (u < c: chunks of c = 1, or 4 with vector fragments). With
  w ≤ c·L a tile is chunk g of w / c consecutive lanes; with w > c·L it is w / (c·L)
  consecutive chunks of all L lanes.
- the tensor-core tiles: lane l of a warp holds columns 2 (l mod 4) + {0, 1} of each
  n8 fragment of its warp tile's rows; a tile of w columns (8 ≤ w, w dividing the
  warp tile's width) is w / 8 fragments of the row's quad of lanes.

Per tile and row, each lane adds its values, a butterfly of `gpu.shuffle xor` over the
group's lanes gives every lane the tile's sum, so the mean; then the same for the
squared deviations from that mean (M2). The group's first lane stores (mean, M2).
Columns outside the output add nothing (N is a multiple of w, so a tile is inside or
outside as a whole) and rows outside are not stored.

    %z = graph.add %d, %bias_b ...                         output 0, from the accumulators
    %p = graph.tile_moments %z tile 16 ...                 output 1: per row, one pair per 16 columns
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import i32
from xdsl.ir import Operation, SSAValue

from fsir.dialects import gpu, graph
from fsir.dialects.graph import shape_of
from fsir.lowering.emit import ElementEmitter, elem_type
from fsir.lowering.scalar import Index, IndexBuilder, compute_type


def tile_moments_of(product: Operation, ops: Sequence[Operation]) -> graph.TileMomentsOp | None:
    """The `graph.tile_moments` among a GEMM kernel's `ops` (of its output's rows)."""
    found = [op for op in ops if isinstance(op, graph.TileMomentsOp)]
    return found[0] if found else None


def tile_moments_problem(product: graph.GraphOp, moments: graph.TileMomentsOp, outputs: Sequence[SSAValue],
                         noun: str) -> str | None:
    """Why a GEMM kernel cannot write `moments` of its output besides it; None: it can
    (the tile config is checked by `tile_fits`)."""
    others = [v for v in outputs if v is not moments.result]
    shape = shape_of(product.results[0].type)
    w, n = moments.width, shape_of(moments.input.type)[-1]
    if len(others) != 1 or len(outputs) != 2 or moments.input is not others[0] or \
            shape_of(others[0].type) != shape:
        return (f"a {noun} kernel writes the partial moments only of its output's rows (its "
                f"product's shape), besides that output")
    if w & (w - 1) or n == graph.DYN or n % w:
        return (f"a {noun} kernel writes partial moments of tiles of a power of two columns dividing "
                f"the row, not {w} of {graph.fmt_shape((n,))}")
    return None


def tile_fits(w: int, tiled: bool, bn: int, tn: int, wn: int, chunk: int) -> bool:
    """Whether a GEMM config's lanes hold each w-column tile of a row in one group
    (FMA: `tiled`, bn-wide block tiles, tn columns per thread in chunks of `chunk`
    consecutive ones; tensor cores: warp tiles wn wide)."""
    if tiled:
        lanes = bn // tn
        span = chunk * lanes  # the columns one pass of the row's lanes holds
        return bn % w == 0 and lanes <= 32 and (w % span == 0 or (span % w == 0 and w % chunk == 0))
    return w >= 8 and wn % w == 0


@dataclass(frozen=True)
class Groups:
    """A thread's tiles: per tile its (row m, accumulator indices, first column n),
    the butterfly's lane offsets, and whether the thread stores the tile."""

    tiles: list[tuple[Index, list[int], Index]]
    offsets: list[int]
    leader: bool | SSAValue


def fma_groups(ib: IndexBuilder, elements: Sequence[tuple[Index, Index, Index, Index]], tm: int, tn: int,
               lanes: int, tx: Index, w: int, chunk: int) -> Groups:
    """The tiles of an FMA thread's tm x tn elements (row-major; its columns
    tx·chunk + u + g·chunk·lanes for u < chunk: element g·chunk + u of a row)."""
    per = max(1, w // (chunk * lanes)) * chunk  # consecutive elements of a row in one tile
    span = min(w // chunk, lanes)  # lanes of one tile
    tiles = []
    for i in range(tm):
        for j0 in range(0, tn, per):
            idx = [i * tn + j for j in range(j0, j0 + per)]
            m, n = elements[idx[0]][0], elements[idx[0]][1]
            tiles.append((m, idx, n))
    offsets = [span >> s for s in range(1, span.bit_length())]
    leader = ib.eq(ib.rem(tx, span), 0) if span > 1 else True
    return Groups(tiles, offsets, leader)


def mma_groups(ib: IndexBuilder, elements: Sequence[tuple[Index, Index, Index, Index]], wm: int, wn: int,
               lane: Index, w: int) -> Groups:
    """The tiles of a tensor-core lane's accumulators: element (i, j, el) at index
    (i·wn/8 + j)·4 + el, row half el >> 1, column el & 1 of n8 fragment j."""
    frags = wn // 8
    per = w // 8
    tiles = []
    for i in range(wm // 16):
        for half in range(2):
            for j0 in range(0, frags, per):
                idx = [(i * frags + j) * 4 + 2 * half + c for j in range(j0, j0 + per) for c in range(2)]
                m, n = elements[idx[0]][0], elements[idx[0]][1]
                tiles.append((m, idx, n))
    return Groups(tiles, [2, 1], ib.eq(ib.rem(lane, 4), 0))


def write_tile_moments(e: ElementEmitter, moments: graph.TileMomentsOp, groups: Groups,
                       value: Callable[[int], SSAValue], inside: Callable[[Index, Index], bool | SSAValue],
                       index: Callable[[Index, Index], list[Index]],
                       store: Callable[[SSAValue, list[Index]], None]) -> None:
    """Store the thread's tiles' (mean, M2): `value(i)` is output element of
    accumulator i, `index(m, n)` the output index of product element (m, n) and
    `store(v, idx)` stores element idx of the moments."""
    sb, c, ib = e.sb, e.c, e.ib
    w = moments.width
    ct = compute_type(elem_type(moments.result))

    def butterfly(x: SSAValue) -> SSAValue:
        for off in groups.offsets:
            other = c.insert(gpu.ShuffleOp("xor", x, sb.const(off, i32), sb.const(32, i32))).results[0]
            x = sb.arith("add", x, other)
        return x

    for m, accs, n in groups.tiles:
        cond = inside(m, n)
        zero = sb.const(0.0, ct)

        def widened(i: int) -> SSAValue:
            v = value(i)
            return v if v.type == ct else sb.convert(v, ct)

        values = [e.guarded(cond, lambda i=i: widened(i), lambda zero=zero: zero) for i in accs]
        total = values[0]
        for v in values[1:]:
            total = sb.arith("add", total, v)
        mean = sb.arith("div", butterfly(total), sb.const(float(w), ct))
        m2 = zero
        for v in values:
            d = sb.arith("sub", v, mean)
            m2 = sb.multiply_add(d, d, m2)
        m2 = butterfly(m2)
        # outside the output the values were zeros: the leader of such a tile stores nothing
        *row, col = index(m, n)
        tile = ib.div(col, w)
        e.when(e.and_(groups.leader, cond), lambda row=row, tile=tile, mean=mean, m2=m2: (
            store(mean, [*row, tile, 0]), store(m2, [*row, tile, 1])))


def store_tile_moments(low, tid: SSAValue, accs: list[SSAValue], elements: Sequence[tuple[Index, Index, Index, Index]],
                       inside: Callable[[Index, Index], bool | SSAValue]) -> None:
    """A tiled GEMM kernel's (`TiledGemmLowering`) output of `graph.tile_moments`, if it
    has one: the partial moments of its accumulators' output values (`elements`:
    product element (m, n) of each accumulator)."""
    from fsir.dialects.schedule import GemmParamsAttr
    from fsir.lowering.gemm import vector_fragments

    outs = [j for j, (_, v) in enumerate(low.outputs) if isinstance(v.owner, graph.TileMomentsOp)]
    if not outs:
        return
    (j,) = outs
    moments = low.outputs[j][1].owner
    assert isinstance(moments, graph.TileMomentsOp)
    e, ib = low.emit, low.ib
    p = low.k.params
    _, out = low.outputs[low.main_output]
    if isinstance(p, GemmParamsAttr) and p.tensor_cores:
        groups = mma_groups(ib, elements, p.thread_m, p.thread_n, ib.rem(tid, 32), moments.width)
    else:
        lanes = p.tile_n // p.thread_n
        chunk = 4 if low.vectorizes and vector_fragments(p.thread_m, p.thread_n) else 1
        groups = fma_groups(ib, elements, p.thread_m, p.thread_n, lanes, ib.rem(tid, lanes), moments.width, chunk)

    def index(m: Index, n: Index) -> list[Index]:
        return low.index_in(low.result_index(m, n), out)

    def value(i: int) -> SSAValue:
        m, n, _, _ = elements[i]
        return low.epilogue(accs[i], index(m, n))

    def store(v: SSAValue, idx: list[Index]) -> None:
        low.store_output(j, v, idx)

    write_tile_moments(e, moments, groups, value, inside, index, store)



def moment_counts(moments: graph.TileMomentsOp, tiled: bool, tm: int, tn: int, lanes: int, chunk: int,
                  wm: int, wn: int) -> tuple[dict[str, int], int]:
    """A thread's instructions writing the partial moments (`write_tile_moments`) and
    the bytes its stores write (a tile's leader stores 8): per tile, its values added,
    a butterfly, the mean, the squared deviations, a butterfly, the stores."""
    w = moments.width
    if tiled:
        per = max(1, w // (chunk * lanes)) * chunk
        span = min(w // chunk, lanes)
        tiles, values = tm * (tn // per), per
    else:
        span, values = 4, 2 * (w // 8)
        tiles = (wm // 16) * 2 * ((wn // 8) // (w // 8))
    steps = max(0, span.bit_length() - 1)
    per_tile = {"alu": 3 * values + 2 * steps + 6, "shuffle": 2 * steps, "global": 2}
    return {k: v * tiles for k, v in per_tile.items()}, -(-8 * tiles // span)
