"""`tile-sync`: dependent kernels as a cuSync pipeline (Jangda et al., CGO'24).

After `stitch-codegen`, a GEMM (or implicit-GEMM convolution) kernel that reads another
kernel's result no longer waits for the whole producer: both run concurrently on their
own streams and each consumer tile waits only for the producer tiles it reads. For every such pair the pass
adds, beside the kernels,

    schedule.stage @k0 pipeline 0 stream 0 priority 0 policy row order row_major
    schedule.stage @k2 pipeline 0 stream 1 priority 1 policy row order row_major wait_kernel
    schedule.tile_dep @k2 on @k0 operand 0 map affine_map<(x, y, i, j) -> (i, y + j)> extents [2, 1]

A pipeline is a connected set of such pairs; its kernels get streams in program order
(a producer always precedes its consumers, so an earlier stream has the higher
priority). The dependency (cuSyncGen's `Dep`) is exact when the consumer GEMM reads
the producer's result directly as its A (the consumer's row of tiles reads producer
rows) or B matrix (a column of tiles reads producer columns); any other use waits on
every producer tile, which is always correct. Producers of any mapping with a static
grid take part: a GEMM's tiles are its blocks' output tiles, a loop kernel's are its
blocks' ranges of elements; a batched GEMM's grid z (its batch) folds into its tile
rows (`tile_grid`), a batched consumer reading its own batch's producer rows.

Attention's kernel reading the fused QKV GEMM's result through column slices (its Q,
K and V, a stride of H columns apart) depends on those columns' tiles of every row
(`_sliced_dependency`): under StridedSync the producer tiles whose columns are congruent
modulo the stride share a semaphore, ready once all of them (Q's, K's and V's) are
stored, so the consumer waits once per group and row instead of once per tile.

A convolution consumer (Conv2DTileSync) of a same-size, stride-1 convolution waits for
the producer tiles holding the input rows its windows read (`_conv_dependency`).

`policy`: tile (TileSync), row (RowSync), conv (Conv2DTileSync: a semaphore per
tile, as tile) or strided (StridedSync for the producers all of whose consumers read
them at a stride, TileSync for the others: the paper's Strided+TileSync); `auto`:
StridedSync where the dependency is strided, else the wave model's choice.
`wait-kernel` and `tile-order`: cuSync's W and T optimisations (§IV-C): with `auto`, a
pipeline whose kernels all fit in fewer than two waves (`waves` below) has neither the
wait-kernel nor the custom tile order, since every block is resident at once and no
dispatch order can starve a producer. `reorder` (cuSync's R): a GEMM consumer issues its
first k-step's B tile loads (weights: nothing to wait for) before it waits on A, then
loads A (fsir/lowering/tile_sync.py, `TileSyncPlan.reorder_loads`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass

from fsir.dialects import graph
from fsir.dialects.schedule import (
    DYNAMIC,
    AttentionParamsAttr,
    ConvParamsAttr,
    GemmParamsAttr,
    KernelOp,
    LoopParamsAttr,
    RowParamsAttr,
    StageOp,
    SyncPolicy,
    TileDepOp,
    TiledParamsAttr,
    TileOrder,
    int_values,
)
from fsir.errors import UserError
from fsir.gpuspec import GpuSpec, gpu_spec
from fsir.lowering.gemm import folds_batch

POLICIES = ("auto", *SyncPolicy)
TileSyncChoice = SyncPolicy | Literal["auto"] | None
"""The pipeline's tile_sync option: a policy, the wave model's choice, or None (off)."""


def parse_tile_sync(value: str | SyncPolicy | None, option: str = "tile_sync") -> TileSyncChoice:
    """The tile_sync option from its text (off, auto or a SyncPolicy's name), once at
    the CLI/API boundary (`option`: its name there, for the error)."""
    if value is None or isinstance(value, SyncPolicy):
        return value
    text = str(value).lower()
    if text == "off":
        return None
    if text == "auto":
        return "auto"
    if text in tuple(SyncPolicy):
        return SyncPolicy(text)
    raise UserError(f"{option} {value!r}: expected one of off, {', '.join(POLICIES)}")


SWITCHES = ("auto", "true", "false")
ORDERS = {"auto": None, "row-major": TileOrder.ROW_MAJOR, "column-major": TileOrder.COLUMN_MAJOR,
          "strided": TileOrder.STRIDED, "none": None}


def waves(k: KernelOp, spec: GpuSpec) -> int:
    """The kernel's waves: its blocks over the SMs' resident block slots (SMs x blocks
    per SM, the occupancy of its threads, registers and shared memory)."""
    from fsir.codegen.latency import occupancy

    grid, block = k.launch()
    cost = k.cost.data if k.cost is not None else {}
    reg_attr = cost.get("registers")
    registers = reg_attr.value.data if isinstance(reg_attr, IntegerAttr) else 32
    occ = occupancy(math.prod(block), registers, k.shared_bytes(), spec)
    slots = max(1, spec.sms * occ.blocks_per_sm)
    return -(-math.prod(grid) // slots)


def tile_grid(k: KernelOp) -> tuple[int, int] | None:
    """The tiles of a kernel that can be a stage (a static grid) as (columns, rows): grid
    z (a batched GEMM's batch, unless the GEMM folds it into its rows: `folds_batch`)
    folds into the rows, tile row Y = z * grid y + y."""
    grid, _ = k.launch()
    if DYNAMIC in grid:
        return None
    return grid[0], grid[1] * grid[2]


def _product_of(k: KernelOp) -> graph.DotOp | graph.ConvOp | None:
    """The dot of a gemm kernel or the conv of a conv kernel: a tile-sync consumer."""
    kind = graph.DotOp if isinstance(k.params, GemmParamsAttr) else \
        graph.ConvOp if isinstance(k.params, ConvParamsAttr) else None
    groups = k.groups()
    if kind is None or len(groups) != 1:
        return None
    return next((op for op in groups[0].block.ops if isinstance(op, kind)), None)


def _same_size_conv(conv: graph.ConvOp) -> tuple[int, int, int, int] | None:
    """(pad_top, pad_left, kernel_h, kernel_w) of a 2-D, stride-1, undilated, ungrouped
    convolution whose output has its input's spatial size, else None."""
    strides, pad_low, _, dilation, lhs_dilation = conv.window()
    x, y = graph.shape_of(conv.input.type), graph.shape_of(conv.result.type)
    kernel = graph.shape_of(conv.weight.type)[2:]
    if len(kernel) != 2 or conv.group_count != 1 or set((*strides, *dilation, *lhs_dilation)) != {1} \
            or tuple(x[2:]) != tuple(y[2:]):
        return None
    return pad_low[0], pad_low[1], kernel[0], kernel[1]


def _conv_dependency(consumer: KernelOp, conv: graph.ConvOp, producer: KernelOp):
    """Conv2DTileSync's dependency: consumer tile row y computes output positions
    [y*TMc, (y+1)*TMc) (batch x rows x columns, row-major); their 3x3 (KHxKW) windows
    read the input positions from `lo` before the first to `hi` after the last, all
    channels: the producer convolution's tiles of those positions, every channel tile."""
    c, p = consumer.params, producer.params
    window = _same_size_conv(conv)
    made = _product_of(producer)
    if window is None or not isinstance(made, graph.ConvOp) or _same_size_conv(made) is None \
            or not isinstance(c, TiledParamsAttr) or not isinstance(p, TiledParamsAttr):
        return None
    top, left, kh, kw = window
    n, _, h, w = graph.shape_of(conv.input.type)
    lo, hi = top * w + left, (kh - 1 - top) * w + (kw - 1 - left)
    tm, ptm = c.tile_m, p.tile_m
    shift = -(-lo // ptm) * ptm  # keeps the floor division's operand non-negative
    (_, gyc), (gxp, _) = tile_grid(consumer) or (1, 1), tile_grid(producer) or (1, 1)
    span = max(((y + 1) * tm - 1 + hi) // ptm - (y * tm - lo) // ptm + 1 for y in range(gyc))
    del n, h
    return (AffineMap.from_callable(lambda x, y, i, j: (i, (y * tm + shift - lo) // ptm + j - shift // ptm)),
            (gxp, span))


def _first(tile: int, producer_tile: int):
    """The first producer tile of consumer tile `c` (of `tile` elements) as an affine
    function, `c * tile floordiv producer_tile` without a division when it is exact."""
    if tile % producer_tile == 0:
        return lambda c: c * (tile // producer_tile)
    return lambda c: (c * tile) // producer_tile


def _linear_tile(producer: KernelOp, cols: int) -> int | None:
    """Elements of a row-major result each block of a loop or row kernel computes (a
    contiguous range per block), or None when its blocks do not split it so."""
    p = producer.params
    grid, block = producer.launch()
    if isinstance(p, LoopParamsAttr):
        return block[0] * p.vector_width  # block b computes elements [b*E, (b+1)*E)
    if isinstance(p, RowParamsAttr):
        (out,) = producer.results
        shape = graph.shape_of(out.type)
        rows = p.rows_per_block * p.row_steps
        if len(shape) >= 2 and shape[-1] == cols and grid[0] * rows == math.prod(shape[:-1]) and grid[1:] == (1, 1):
            return rows * cols  # block b computes rows [b*R, (b+1)*R), no grid-stride loop
    return None


def _sliced_columns(consumer: KernelOp, operand: int) -> list[tuple[int, int]] | None:
    """The column ranges [start, limit) an attention kernel reads of its 2-D operand,
    when it reads it only through slices of whole rows (Q, K and V of a fused QKV
    projection), else None."""
    if not isinstance(consumer.params, AttentionParamsAttr):
        return None
    arg = consumer.block.args[operand]
    shape = graph.shape_of(arg.type)
    ranges = []
    for use in arg.uses:
        op = use.operation
        if len(shape) != 2 or not isinstance(op, graph.SliceOp) or op.input is not arg:
            return None
        start, limit, strides = (int_values(v) for v in (op.start, op.limit, op.strides))
        if (start[0], limit[0], *strides) != (0, shape[0], 1, 1):
            return None
        ranges.append((start[1], limit[1]))
    return sorted(ranges) or None


def _sliced_dependency(consumer: KernelOp, operand: int, producer: KernelOp):
    """(map, extents, stride) of an attention kernel reading column slices of a GEMM's
    result: every consumer tile (a block of queries reads all keys and values) depends
    on the slices' column tiles of every producer row. When the slices cover `n` runs
    of `w` column tiles each, `stride` tiles apart (Q, K, V of H columns each, H a
    multiple of the tile width), the map walks them as i = run * w + tile and `stride`
    is StridedSync's (None otherwise: the span from the first to the last column tile)."""
    columns = _sliced_columns(consumer, operand)
    p = producer.params
    if columns is None or not isinstance(p, GemmParamsAttr) or producer.launch()[0][2] != 1:
        return None
    gxp, gyp = tile_grid(producer) or (1, 1)
    tn = p.tile_n
    runs = sorted({(lo // tn, (hi - 1) // tn) for lo, hi in columns})
    first, width = runs[0][0], runs[0][1] - runs[0][0] + 1
    stride = runs[1][0] - first if len(runs) > 1 else 0
    regular = len(runs) > 1 and all(lo % tn == 0 and hi % tn == 0 for lo, hi in columns) and \
        all(b - a + 1 == width and a == first + n * stride for n, (a, b) in enumerate(runs)) and \
        width <= stride and gxp % stride == 0
    if not regular:
        return (AffineMap.from_callable(lambda x, y, i, j: (first + i, j)), (runs[-1][1] - first + 1, gyp), None)
    if width == stride:  # the runs are adjacent: one span of column tiles
        return AffineMap.from_callable(lambda x, y, i, j: (first + i, j)), (len(runs) * width, gyp), stride
    return (AffineMap.from_callable(lambda x, y, i, j: (first + i % width + (i // width) * stride, j)),
            (len(runs) * width, gyp), stride)


def strided(consumer: KernelOp, operand: int, producer: KernelOp) -> int | None:
    """StridedSync's stride (in producer tile columns) of the dependency, or None when
    it is not strided."""
    found = _sliced_dependency(consumer, operand, producer)
    return found[2] if found is not None else None


def reorderable(k: KernelOp, waited: set[int]) -> bool:
    """Whether a consumer can issue its B tile before waiting (R): a GEMM whose B is a
    2-D kernel operand read directly and no producer's result (`waited`: the operands
    it waits on)."""
    dot = _product_of(k)
    return isinstance(dot, graph.DotOp) and dot.rhs in k.block.args and dot.rhs is not dot.lhs \
        and len(graph.shape_of(dot.rhs.type)) == 2 and len(graph.shape_of(dot.lhs.type)) == 2 \
        and k.block.args.index(dot.rhs) not in waited


def _span(count: int, consumer_tile: int, producer_tile: int) -> int:
    """The most producer tiles (of `producer_tile` elements) that one of `count`
    consumer tiles (of `consumer_tile` elements) overlaps."""
    return max(((c + 1) * consumer_tile - 1) // producer_tile - (c * consumer_tile) // producer_tile + 1
               for c in range(count))


def dependency(consumer: KernelOp, operand: int, producer: KernelOp) -> tuple[AffineMap, tuple[int, int]]:
    """The producer tiles each consumer tile reads: (map, extents) of a schedule.tile_dep."""
    gxp, gyp = tile_grid(producer) or (1, 1)
    gxc, gyc = tile_grid(consumer) or (1, 1)
    everything = _everything(producer)
    dot = _product_of(consumer)
    arg = consumer.block.args[operand]
    sliced = _sliced_dependency(consumer, operand, producer)
    if sliced is not None:
        return sliced[0], sliced[1]
    if isinstance(dot, graph.ConvOp):
        return (_conv_dependency(consumer, dot, producer) if dot.input is arg else None) or everything
    p, c = producer.params, consumer.params
    if not isinstance(c, TiledParamsAttr):
        return everything
    shape = graph.shape_of(arg.type)
    if dot is None or len(producer.results) != 1:
        return everything
    if len(shape) != 2 and not (dot.lhs is arg and folds_batch(dot, list(consumer.groups()[0].block.ops))):
        return _batched(consumer, dot, arg, producer) or everything
    as_lhs, as_rhs = dot.lhs is arg, dot.rhs is arg
    if as_lhs == as_rhs:  # read otherwise (through other ops), or as both operands
        return everything
    # (a batch folded into the consumer's rows: its tile rows are rows of [B... x M, K])
    rows, cols = math.prod(shape[:-1]), shape[-1]
    if consumer.launch()[0][2] != 1 or producer.launch()[0][2] != 1:
        return _batched(consumer, dot, arg, producer) or everything
    if isinstance(p, TiledParamsAttr) and isinstance(p, GemmParamsAttr):
        if as_lhs:  # consumer row y of tiles reads producer rows [y*TMc, (y+1)*TMc), all columns
            row = _first(c.tile_m, p.tile_m)
            return AffineMap.from_callable(lambda x, y, i, j: (i, row(y) + j)), (gxp, _span(gyc, c.tile_m, p.tile_m))
        col = _first(c.tile_n, p.tile_n)  # consumer column x reads producer columns, all rows
        return AffineMap.from_callable(lambda x, y, i, j: (col(x) + j, i)), (_span(gxc, c.tile_n, p.tile_n), gyp)
    per_block = _linear_tile(producer, cols)
    if per_block is not None and as_lhs:  # consumer row y of tiles: elements [y*TMc*K, (y+1)*TMc*K)
        first = _first(c.tile_m * cols, per_block)
        return (AffineMap.from_callable(lambda x, y, i, j: (first(y) + j, i)),
                (1, _span(gyc, c.tile_m * cols, per_block)))
    del rows
    return everything


def _batched(consumer: KernelOp, dot: graph.DotOp, arg: SSAValue, producer: KernelOp):
    """The dependency of a batched GEMM (batch on grid z) reading the producer's result
    as its A, [batch..., M, K] with the result's batch: consumer tile row Y is row
    y = Y mod gy of batch z = Y floordiv gy, reading rows [y*TMc, (y+1)*TMc) of batch z
    (a batched GEMM producer's tile rows of that batch, or a loop/row kernel's blocks of
    those elements)."""
    shape, result = graph.shape_of(arg.type), graph.shape_of(dot.result.type)
    c, p = consumer.params, producer.params
    (_, gy, gz), _ = consumer.launch()
    if dot.lhs is not arg or dot.rhs is arg or len(shape) < 3 or tuple(shape[:-2]) != tuple(result[:-2]) \
            or gz != math.prod(shape[:-2]) or not isinstance(c, TiledParamsAttr):
        return None
    m, k = shape[-2:]
    tm = c.tile_m
    (_, pgy, pgz), _ = producer.launch()
    if isinstance(p, GemmParamsAttr) and pgz == gz and tuple(graph.shape_of(producer.results[0].type)[:-1]) == \
            tuple(shape[:-1]):
        gxp = (tile_grid(producer) or (1, 1))[0]
        starts = [(t // gy) * pgy + (t % gy) * tm // p.tile_m for t in range(gy * gz)]
        ends = [(t // gy) * pgy + (min((t % gy + 1) * tm, m) - 1) // p.tile_m for t in range(gy * gz)]
        return (AffineMap.from_callable(lambda x, y, i, j: (i, (y // gy) * pgy + ((y % gy) * tm) // p.tile_m + j)),
                (gxp, max(e - s + 1 for s, e in zip(starts, ends))))
    per_block = _linear_tile(producer, k) if pgz == 1 else None
    if per_block is None:
        return None
    # tile row Y reads elements [(z*M + y*TMc)*K, (z*M + min((y+1)*TMc, M))*K)
    starts = [((t // gy) * m + (t % gy) * tm) * k // per_block for t in range(gy * gz)]
    ends = [(((t // gy) * m + min((t % gy + 1) * tm, m)) * k - 1) // per_block for t in range(gy * gz)]
    return (AffineMap.from_callable(lambda x, y, i, j: ((((y // gy) * m + (y % gy) * tm) * k) // per_block + j, i)),
            (1, max(e - s + 1 for s, e in zip(starts, ends))))


def _everything(producer: KernelOp) -> tuple[AffineMap, tuple[int, int]]:
    """Every producer tile (the dependency of a read fsir cannot map tile by tile)."""
    return AffineMap.from_callable(lambda x, y, i, j: (i, j)), tile_grid(producer) or (1, 1)


def _switch(value: str | bool) -> str:
    return str(value).lower()


@dataclass(frozen=True)
class TileSyncPass(ModulePass):
    """Dependent kernels as tile-synchronised pipelines (cuSync); see the module doc.

    policy=auto|tile|row|strided|conv: how producer tiles map to semaphores (auto:
    strided for a producer all of whose consumers read it at a stride, else row when
    the pipeline needs two waves or more, else tile — the paper's finding that RowSync
    wins at large batch, TileSync at small; strided: strided where the dependency is,
    tile elsewhere). wait-kernel=auto|true|false
    and tile-order=auto|row-major|column-major|strided|none: cuSync's wait-kernel and
    the order blocks take tiles in from a global counter (auto: on when some kernel of
    the pipeline needs two waves or more, strided for a StridedSync producer, else
    row-major; strided: a StridedSync producer's groups tile after tile, the other
    stages row-major). reorder=auto|true|false: cuSync's R, a GEMM
    consumer loading its first B tile before it waits on A (auto: wherever B is a
    kernel operand). gpu=H100|A100|V100|T4: the wave model's GPU.
    """

    name = "tile-sync"

    policy: str = "auto"
    wait_kernel: str | bool = "auto"
    tile_order: str = "auto"
    reorder: str | bool = "auto"
    gpu: str = "H100"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.policy not in POLICIES:
            raise UserError(f"tile-sync: policy={self.policy} (expected {', '.join(POLICIES)})")
        if _switch(self.wait_kernel) not in SWITCHES:
            raise UserError(f"tile-sync: wait-kernel={self.wait_kernel} (expected {', '.join(SWITCHES)})")
        if _switch(self.reorder) not in SWITCHES:
            raise UserError(f"tile-sync: reorder={self.reorder} (expected {', '.join(SWITCHES)})")
        if self.tile_order not in ORDERS:
            raise UserError(f"tile-sync: tile-order={self.tile_order} (expected {', '.join(ORDERS)})")
        spec = gpu_spec(self.gpu)
        pipeline = 0
        for f in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            pipeline = self.pipelines(f, spec, pipeline)

    def pipelines(self, f: func.FuncOp, spec: GpuSpec, first: int) -> int:
        """Adds the stages and dependencies of `f`'s pipelines, numbered from `first`;
        returns the next free number."""
        kernels = [k for k in f.body.walk() if isinstance(k, KernelOp)]
        if any(isinstance(o, (StageOp, TileDepOp)) for o in f.body.walk()):
            return first  # already synchronised
        made_by: dict[SSAValue, KernelOp] = {r: k for k in kernels for r in k.results}
        viewed_from: dict[SSAValue, KernelOp] = {}  # a kernel's result seen through free reshapes
        for op in f.body.walk():
            if isinstance(op, graph.ReshapeOp):
                src = made_by.get(op.input) or viewed_from.get(op.input)
                if src is not None:
                    viewed_from[op.result] = src
        edges: list[tuple[KernelOp, int, KernelOp]] = []
        for k in kernels:
            if tile_grid(k) is None:
                continue
            for n, v in enumerate(k.operands):
                p = made_by.get(v)
                if p is not None and tile_grid(p) is not None and \
                        (_product_of(k) is not None or _sliced_dependency(k, n, p) is not None):
                    edges.append((k, n, p))
        # connected components, kernels in program order
        parent = {k: k for k in kernels}

        def root(k: KernelOp) -> KernelOp:
            while parent[k] is not k:
                parent[k] = parent[parent[k]]
                k = parent[k]
            return k

        for c, _, p in edges:
            parent[root(c)] = root(p)
        members: dict[KernelOp, list[KernelOp]] = {}
        involved = {k for c, _, p in edges for k in (c, p)}
        for k in kernels:
            if k in involved:
                members.setdefault(root(k), []).append(k)
        # A member reading another member's result otherwise (a non-GEMM kernel, a read
        # through a reshape) runs concurrently with it too: it waits on all of its tiles.
        linked = {(c, n) for c, n, _ in edges}
        whole: list[tuple[KernelOp, int, KernelOp]] = []
        for k in involved:
            for n, v in enumerate(k.operands):
                p = made_by.get(v) or viewed_from.get(v)
                if p is not None and p in involved and root(p) is root(k) and (k, n) not in linked:
                    whole.append((k, n, p))
        number = first
        for stages in members.values():
            self.pipeline(number, stages, [e for e in edges if root(e[0]) is root(stages[0])],
                          [e for e in whole if root(e[0]) is root(stages[0])], spec)
            number += 1
        return number

    def pipeline(self, number: int, stages: list[KernelOp], edges: list[tuple[KernelOp, int, KernelOp]],
                 whole: list[tuple[KernelOp, int, KernelOp]], spec: GpuSpec) -> None:
        many_waves = max(waves(k, spec) for k in stages) >= 2
        chosen = parse_tile_sync(self.policy)
        policy = chosen if isinstance(chosen, SyncPolicy) and chosen is not SyncPolicy.STRIDED else \
            SyncPolicy.ROW if chosen == "auto" and many_waves else SyncPolicy.TILE
        strides: dict[KernelOp, set[int | None]] = {}
        for c, n, p in edges:
            strides.setdefault(p, set()).add(strided(c, n, p))
        stride_of = {p: s.pop() for p, s in strides.items()
                     if chosen in ("auto", SyncPolicy.STRIDED) and len(s) == 1 and None not in s}
        switch = _switch(self.wait_kernel)
        wait = many_waves if switch == "auto" else switch == "true"
        order = ORDERS[self.tile_order] if self.tile_order != "auto" else \
            (TileOrder.ROW_MAJOR if many_waves else None)
        consumers = {c for c, _, _ in edges}
        reorder = _switch(self.reorder) != "false"  # (auto: always, as the paper's WRT configurations)
        for stream, k in enumerate(stages):
            stride = stride_of.get(k)
            # a strided producer takes each group's tiles one after another (cuSyncGen's order;
            # tile-order=strided or auto), the other stages row by row
            mine = order
            if order is TileOrder.STRIDED or (order is TileOrder.ROW_MAJOR and self.tile_order == "auto"):
                mine = TileOrder.STRIDED if stride is not None else TileOrder.ROW_MAJOR
            waited = {n for c, n, _ in [*edges, *whole] if c is k}
            stage = StageOp(k.sym_name.data, number, stream, stream, policy if stride is None else SyncPolicy.STRIDED,
                            mine, wait and k in consumers, reorder and k in consumers and reorderable(k, waited),
                            stride)
            stage.location = k.location
            block = k.parent_block()
            assert block is not None
            block.insert_op_after(stage, k)
            last = stage
            for c, n, p in [*edges, *whole]:
                if c is k:
                    m, extents = dependency(c, n, p) if (c, n, p) not in whole else _everything(p)
                    dep = TileDepOp(c.sym_name.data, p.sym_name.data, n, m, extents)
                    dep.location = k.location
                    block.insert_op_after(dep, last)
                    last = dep
