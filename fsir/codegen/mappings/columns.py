"""The `columns` mapping: many embedding columns and their concat in one kernel (RECom's
inter-subgraph parallelism, `fsir/analysis/columns.py` finds them).

Every operand of the concat gets its own range of warps, in proportion to its work:
grid y walks the batch in tiles of `rows_per_tile` rows, and within a tile operand i
owns a range of warps of grid x — prefix sums over the operands in `warp_order`, the
parameters' `warps` (`#schedule.columns<...>`, with each operand's `lanes` and
`vectors` and the `clusters`): the columns of a cluster (`clusters`, `shared_clusters`)
follow each other and share one code body, which reads each column's buffers, sizes
and constants from its row of a table (`fsir/lowering/columns.py`); the lowering
compiles the clusters' first warps into a balanced tree of comparisons (immediates).
A column's threads each own one (row, embedding element) of the tile and walk
the bag; `lanes` consecutive threads share one and combine their partials with
shuffles (thread composition for lanes = 1, warp composition above). An operand that
is not a column (dense features) is copied, a thread per element.

Each column's lanes are chosen by the latency-evaluator, once per cluster of columns of
one structure (for its longest bag): every lane count up to the bag's length (at most a warp) is summarised
as a kernel of that column alone (`column_summary`) and estimated (`estimate_summary`);
the fastest wins (with few rows and long bags, more lanes shorten the serial loop; with
many rows the kernel is bandwidth-bound and fewer lanes issue fewer instructions).
A ragged column's (a segment_reduce over offsets) are the segment row rules'
(`segments.segment_column_schedule`, for its cluster's longest mean bag where the shapes give
it), in the same thread layout. A configuration may instead give every cluster its
(lanes, vector) (`ColumnsConfig.schedules`, the tuner's knobs): any lanes up to a warp
(past the bag they idle) and the elements per thread an aligned vector load of the
column's table rows allows (`schedule_problem`); `check_kernel` holds a hand-written
kernel to the same rules.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from fsir.analysis.columns import Column, ColumnSet, exact_column_set
from fsir.analysis.values import DYNAMIC_DIM
from fsir.codegen.latency import estimate_summary, occupancy, waves_for
from fsir.codegen.mappings.base import FusionContext, Mapping, check_supported
from fsir.codegen.mappings.columns_cost import SECTOR, OperandWarps, Traffic, block_cycles, warp_cost
from fsir.codegen.mappings.segments import (
    SEGMENT_BAG_HINT,
    SegmentSchedule,
    global_reads,
    segment_column_schedule,
    segment_summary,
    segment_work,
    static_bag,
)
from fsir.codegen.summary import Summary, op_mix
from fsir.dialects import graph, schedule
from fsir.dialects.graph import DYN, shape_of
from fsir.dialects.schedule import (
    DYNAMIC,
    WARP,
    ColumnsParamsAttr,
    Composition,
    GroupOp,
    KernelOp,
    Storage,
    YieldOp,
    element_bytes,
    int_values,
)
from fsir.dialects.schedule.embedding import warp_order
from fsir.gpuspec import GpuSpec
from fsir.lowering.columns import ColumnsLowering, column_groups, root_group
from fsir.lowering.scalar import Index
from fsir.lowering.shapes import ShapeCalc

THREADS = 256  # a block: 8 warps, each of them any column's
ROWS_PER_TILE = 32  # batch rows per grid-y tile
LANES = (1, 2, 4, 8, 16, 32)
COLUMN_REGISTERS = 24


Schedule = tuple[int, int]  # a cluster's (lanes, vector): threads per (row, elements), elements per thread


@dataclass(frozen=True)
class ColumnsConfig:
    """The batch rows of a grid-y tile, and each cluster's (lanes, vector) in the order
    of the column set's clusters (`ColumnSet.clusters`; a dense copy takes (1, 1));
    `schedules` None: the latency-evaluator's choice for every cluster
    (`derived_schedules`)."""

    rows_per_tile: int
    schedules: tuple[Schedule, ...] | None = None

    def describe(self) -> str:
        text = f"columns/{self.rows_per_tile}"
        if self.schedules is None:
            return text
        return text + "/" + ",".join(f"l{lanes}v{vector}" for lanes, vector in self.schedules)


def _elem(v: SSAValue):
    t = v.type
    assert isinstance(t, TensorType)
    return t.element_type


def column_counts(column: Column) -> tuple[Counter[str], Counter[str], int, int]:
    """One bag element of `column` (instructions; bytes loaded per bag element, those
    of its gathered table rows apart, which scale with the embedding elements a thread
    takes) and what follows the bag's reduction once (instructions)."""
    per_elem: Counter[str] = Counter()
    after: Counter[str] = Counter()
    nbytes = table_bytes = 0
    r = column.reduce
    ops = set(column.ops)
    downstream = False
    for op in column.ops:
        if op is r:
            downstream = True
            per_elem["alu"] += 1  # the combine
            continue
        target = after if downstream else per_elem
        target.update(op_mix(op))
        for o in global_reads(op, ops):
            target["global"] += 1
            target["int"] += 1  # its address
            if downstream:
                continue
            if isinstance(op, graph.GatherOp) and o is op.table:
                table_bytes += element_bytes(_elem(o))
            else:
                nbytes += element_bytes(_elem(o))
    return per_elem, after, nbytes, table_bytes


def bag_length(column: Column) -> int:
    """A fixed-length bag's length (a ragged column's is per example: `static_bag`)."""
    r = column.reduce
    assert isinstance(r, graph.ReduceOp)
    dims = shape_of(r.input.type)
    return math.prod(dims[d] for d in int_values(r.dims))


def shared_clusters(s: ColumnSet) -> list[int]:
    """Each concat operand's cluster id: the columns of one structure share one code body
    (the lowering reads a column's buffers and constants from its row of a table) when
    there are several of them and their tables' row counts are static (a table row holds
    them; a ragged bag's `?` row count is a size the host writes into the row); every
    other operand is its own."""
    ids = list(range(len(s.columns)))
    for members in s.clusters.values():
        columns = [_some(s.columns[i]) for i in members]
        if len(members) > 1 and all(shape_of(g.table.type)[0] != DYN for c in columns for g in c.gathers):
            for i in members:
                ids[i] = members[0]
    return ids


def column_summary(column: Column, lanes: int, vector: int = 1) -> Summary:
    """A thread of `column` with `lanes` lanes per (row, `vector` embedding elements):
    its share of the bag (the ids and weights loaded once for the vector, the table
    row's elements by one vector load), the shuffles combining the lanes, the tail ops
    and the stores."""
    per_elem, after, nbytes, table_bytes = column_counts(column)
    steps = -(-bag_length(column) // lanes)
    s = Summary()
    loads = per_elem["global"]
    s.add(per_elem, steps * vector)
    s.counts["global"] -= steps * (vector - 1) * loads  # one load per tensor for the vector
    s.counts["int"] += 2 * steps + 12  # loop control; warp/column/row index arithmetic
    rounds = int(math.log2(lanes))
    s.counts["shuffle"] += rounds * vector
    s.counts["alu"] += rounds * vector
    s.add(after, vector)
    s.counts["global"] += 1
    s.registers = COLUMN_REGISTERS + 2 * vector
    s.global_bytes = steps * (nbytes + vector * table_bytes) + vector * element_bytes(_elem(column.output))
    return s


def vector_widths(column: Column) -> list[int]:
    """The embedding elements a thread of `column` may take: 1, or 2 and 4 where they
    divide the dim and the tables' elements are at most 4 bytes (a vector load of a
    row stays aligned)."""
    dim = shape_of(column.output.type)[1]
    tables = [g.table for g in column.gathers]
    return [1] + [v for v in (2, 4) if dim % v == 0 and all(element_bytes(_elem(t)) <= 4 for t in tables)
                  and all(shape_of(t.type)[-1] % v == 0 for t in tables)]


def choose_schedule(column: Column, rows: int, spec: GpuSpec, columns: int = 1,
                    forced: int | None = None) -> tuple[int, int]:
    """The (lanes, vector) of `column` the latency-evaluator finds fastest for `rows`
    rows (ties: fewer threads). Each is scored as a kernel of `columns` columns like
    this one: the kernel's other columns share the GPU with it, so few rows of many
    columns fill it as many rows of one would."""
    dim = shape_of(column.output.type)[1]
    best, best_key = (1, 1), (math.inf, math.inf)
    for lanes in lane_choices([column]):
        widths = vector_widths(column)
        for vector in widths if forced is None else [forced if forced in widths else 1]:
            threads = rows * dim // vector * lanes
            grid = (max(1, -(-threads * columns // THREADS)), 1, 1)
            est = estimate_summary(column_summary(column, lanes, vector), grid, (THREADS, 1, 1), spec,
                                   bandwidth=True)
            key = (round(est.seconds, 10), threads)
            if key < best_key:
                best, best_key = (lanes, vector), key
    return best


def ragged_schedule(column: Column, rows: int, spec: GpuSpec, columns: int = 1,
                    forced: int | None = None) -> tuple[int, int]:
    """The (lanes, vector) of a ragged column (its bag a segment_reduce over offsets):
    the row rules' warp-shaped segment schedule (`segment_column_schedule`), scored as
    `rows` segments of each of `columns` such columns."""
    r = column.reduce
    assert isinstance(r, graph.SegmentReduceOp)
    widths = vector_widths(column)
    vectors = widths if forced is None else [forced if forced in widths else 1]
    return segment_column_schedule(shape_of(column.output.type)[1], vectors, segment_work(r, column.ops), rows,
                                   static_bag(r), spec, columns)


def cluster_schedule(members: Sequence[Column], rows: int, spec: GpuSpec, columns: int = 1,
                     forced: int | None = None) -> tuple[int, int]:
    """The (lanes, vector) of a cluster of columns of one structure: decided by its
    longest bag (the bag's length is per-column data)."""
    if members[0].ragged:
        return ragged_schedule(max(members, key=lambda c: static_bag(_segment(c)) or 0.0), rows, spec, columns,
                               forced)
    return choose_schedule(max(members, key=bag_length), rows, spec, columns, forced)


def cluster_columns(s: ColumnSet) -> list[list[Column]]:
    """The columns of each cluster, in the order of `s.clusters` (a configuration's
    `schedules`)."""
    return [[_some(s.columns[i]) for i in members] for members in s.clusters.values()]


def derived_schedules(s: ColumnSet, spec: GpuSpec, forced: int | None = None) -> tuple[Schedule, ...]:
    """Each cluster's (lanes, vector) as the latency-evaluator finds fastest for the
    whole batch (`?`: the explorer's guess), `forced` the vector width it must take
    where legal."""
    batch = shape_of(s.concat.result.type)[0]
    total_rows = DYNAMIC_DIM if batch == DYN else batch
    return tuple(cluster_schedule(members, total_rows, spec, s.count, forced) for members in cluster_columns(s))


def lane_choices(members: Sequence[Column]) -> tuple[int, ...]:
    """The lanes worth giving a cluster: powers of two up to a warp, fewer than twice
    its longest bag (more would leave lanes without a bag element). A ragged cluster's
    bag is its longest mean (the rules' hint where the sizes do not give it), and its
    lanes may reach twice it, as the segment rules' do."""
    if members[0].ragged:
        bag = max((static_bag(_segment(c)) or SEGMENT_BAG_HINT) for c in members)
        return tuple(n for n in LANES if n == 1 or n <= 2 * bag)
    bag = max(bag_length(c) for c in members)
    return tuple(n for n in LANES if n == 1 or n // 2 < bag)


def schedule_problem(members: Sequence[Column], schedule: Schedule) -> str | None:
    """Why a cluster of `members` cannot take `schedule` (None: it can): lanes a
    shuffle butterfly within a warp allows, elements per thread of a vector load that
    stays aligned (`vector_widths`)."""
    lanes, vector = schedule
    if lanes not in LANES:
        return f"{lanes} lanes (a power of two up to {WARP})"
    widths = vector_widths(members[0])
    if vector not in widths:
        return f"{vector} elements per thread (its dim, its tables' rows and element types allow {widths})"
    return None


class ColumnsMapping(Mapping):
    PARAMS = schedule.ColumnsParamsAttr
    lowering = ColumnsLowering

    def claims(self, ops: Sequence[Operation]) -> bool:
        return any(isinstance(op, graph.ConcatOp) for op in ops) and exact_column_set(ops) is not None

    def accepts(self, ops: Sequence[Operation]) -> str | None:
        s = exact_column_set(ops)
        if s is None:
            return "not a set of embedding columns feeding one concat"
        for i, v in enumerate(s.concat.operands):
            if shape_of(v.type)[1] == DYN:
                return f"concat operand {i} has a '?' embedding dim"
        return None

    def build(self, ctx: FusionContext) -> KernelOp:
        s = exact_column_set(ctx.ops)
        assert s is not None, "claims: the fusion is a column set"
        problem = self.accepts(ctx.ops)
        if problem is not None:
            raise self.cannot_generate(s, problem)
        batch = shape_of(s.concat.result.type)[0]
        rows = ROWS_PER_TILE if batch == DYN else max(1, min(batch, ROWS_PER_TILE))
        config = ColumnsConfig(rows)
        return self.choose([config], lambda c: self.kernel(ctx, s, c), ctx.spec)

    def schedules(self, ctx: FusionContext, s: ColumnSet, config: ColumnsConfig) -> tuple[Schedule, ...]:
        """The clusters' (lanes, vector): the configuration's, checked, or derived."""
        if config.schedules is None:
            return derived_schedules(s, ctx.spec, ctx.vector)
        clusters = cluster_columns(s)
        if len(config.schedules) != len(clusters):
            raise self.cannot_generate(s, f"the configuration gives {len(config.schedules)} clusters their lanes and "
                                          f"vectors, the columns form {len(clusters)}")
        for n, (members, chosen) in enumerate(zip(clusters, config.schedules)):
            problem = schedule_problem(members, chosen)
            if problem is not None:
                raise self.cannot_generate(s, f"cluster {n} cannot take {problem}")
        return config.schedules

    @staticmethod
    def cannot_generate(s: ColumnSet, message: str):
        from fsir.codegen.mappings.base import op_error

        return op_error(s.concat, f"cannot be generated by the columns mapping: {message}")

    def kernel(self, ctx: FusionContext, s: ColumnSet, config: ColumnsConfig) -> KernelOp:
        rows = config.rows_per_tile
        batch = shape_of(s.concat.result.type)[0]
        # one schedule per cluster of columns of one structure
        schedule_of_key = dict(zip(s.clusters, self.schedules(ctx, s, config)))
        lanes: list[int] = []
        vectors: list[int] = []
        counts: list[int] = []
        for v, c in zip(s.concat.operands, s.columns):
            n, vec = (1, 1) if c is None else schedule_of_key[c.key]
            lanes.append(n)
            vectors.append(vec)
            counts.append(-(-rows * shape_of(v.type)[1] // vec * n // WARP))
        clusters = shared_clusters(s)
        warps = [0]
        for i in warp_order(clusters):
            warps.append(warps[-1] + counts[i])
        grid = (max(1, -(-warps[-1] * WARP // THREADS)), DYNAMIC if batch == DYN else -(-batch // rows), 1)
        params = ColumnsParamsAttr(rows, warps, lanes, vectors,
                                   clusters if len(set(clusters)) < len(clusters) else None)
        return self._kernel(ctx, s, params, grid)

    @staticmethod
    def _kernel(ctx: FusionContext, s: ColumnSet, params: ColumnsParamsAttr, grid) -> KernelOp:
        """The kernel: a group per column (its ops, cloned once: linear in the columns,
        where `FusionContext.kernel` walks the whole fusion per group), then the root
        group (the concat and the columns' tail ops)."""
        body = Block(arg_types=[a.type for a in ctx.block.args])
        env: dict[SSAValue, SSAValue] = dict(zip(ctx.block.args, body.args))
        for old, new in env.items():
            new.name_hint = old.name_hint

        def clone_into(block: Block, ops: Sequence[Operation], local: dict[SSAValue, SSAValue]) -> None:
            for op in ops:
                for o in op.operands:
                    if o not in local and isinstance(o.owner, graph.ConstantOp):
                        copy = o.owner.clone()
                        block.add_op(copy)
                        local[o] = copy.result
                copy = op.clone(value_mapper=local)
                block.add_op(copy)
                local.update(zip(op.results, copy.results))

        for c, n in zip(s.columns, params.lanes):
            if c is None:
                continue
            upto = c.ops[:c.ops.index(c.reduce) + 1]  # the tail ops after the reduction go to the root
            gblock = Block()
            local = dict(env)
            clone_into(gblock, upto, local)
            gblock.add_op(YieldOp([local[c.reduce.result]]))
            g = GroupOp(Composition.WARP if n > 1 else Composition.THREAD, Storage.REG, [c.reduce.result.type],
                        Region(gblock))
            body.add_op(g)
            env[c.reduce.result] = g.results[0]
            g.results[0].name_hint = c.reduce.result.name_hint
        rblock = Block()
        local = dict(env)
        tails = [op for c in s.columns if c is not None for op in c.ops[c.ops.index(c.reduce) + 1:]]
        clone_into(rblock, [*tails, *s.copied, s.concat], local)
        rblock.add_op(YieldOp([local[s.concat.result]]))
        root = GroupOp(Composition.THREAD, Storage.GLOBAL, [s.concat.result.type], Region(rblock))
        body.add_op(root)
        root.results[0].name_hint = s.concat.result.name_hint
        assert list(ctx.yields) == [s.concat.result], "a column set's fusion yields its concat"
        body.add_op(YieldOp([root.results[0]]))
        block = (THREADS, 1, 1)
        return ctx.kernel_of(params, grid, block, body, [])

    def summarize(self, k: KernelOp, spec: GpuSpec) -> Summary:
        """The average thread: each operand's thread (`column_summary`; a copy loads and
        stores one element) weighted by the warps it owns; its `ilp_cycles` the
        kernel's cycles per wave from its blocks' warps (`columns_cost`: the heaviest
        block, or the blocks over the SMs)."""
        params = k.params
        assert isinstance(params, ColumnsParamsAttr)
        concat = root_group(k).yielded()[0].owner
        assert isinstance(concat, graph.ConcatOp)
        spans, lanes, vectors = params.spans(), params.lanes, params.vectors
        by_operand = column_groups(k)
        total = max(1, max(end for _, end in spans))
        s = Summary()
        counts: dict[str, float] = {}
        gbytes = 0.0
        warps: list[OperandWarps] = []
        for i, v in enumerate(concat.operands):
            share = (spans[i][1] - spans[i][0]) / total
            g = by_operand.get(i)
            traffic: Traffic | None = None
            if g is None:
                part = Summary(Counter({"global": 2, "int": 14}))
                part.global_bytes = 2 * element_bytes(_elem(v))
            else:
                column = _column_of_group(g, v)
                part = _group_summary(column, lanes[i], vectors[i])
                traffic = _traffic(column, v)
                part.counts["int"] += lowered_overhead(column, lanes[i], traffic)
            for cls, n in part.counts.items():
                counts[cls] = counts.get(cls, 0.0) + n * share
            gbytes += part.global_bytes * share
            dim = shape_of(v.type)[1]
            threads = params.rows_per_tile * dim // vectors[i] * lanes[i]
            tail = threads % WARP or WARP
            warps.append(OperandWarps(spans[i][0], spans[i][1] - spans[i][0], threads,
                                      warp_cost(part.counts, WARP, lanes[i], vectors[i], dim, traffic),
                                      warp_cost(part.counts, tail, lanes[i], vectors[i], dim, traffic)))
        s.counts = Counter({cls: max(1, round(n)) for cls, n in counts.items()})
        s.registers = COLUMN_REGISTERS
        s.global_bytes = round(gbytes)
        grid, block = k.launch()
        if DYNAMIC not in grid:
            occ = occupancy(math.prod(block), s.registers, 0, spec)
            cycles, sectors = block_cycles(warps, THREADS // WARP, grid[1], occ.blocks_per_sm, spec)
            s.ilp_cycles = cycles / waves_for(grid, block, occ, spec)
            # the blocks' cycles hold one access's latency: a thread's loads are taken
            # to be in flight together, and DRAM moves the sectors the warps touch
            s.bytes_in_flight = s.global_bytes
            s.distinct_bytes = round(sectors * SECTOR)
        return s

    def grid(self, k: KernelOp, axis: int, shapes: ShapeCalc) -> Index:
        ib = shapes.ib
        assert axis == 1, "only the batch tiles (grid y) depend on run-time sizes"
        params = k.params
        assert isinstance(params, ColumnsParamsAttr)
        root = root_group(k)
        batch = shapes.dims(root.yielded()[0])[0]
        return ib.max(ib.ceildiv(batch, params.rows_per_tile), 1)

    def check_kernel(self, k: KernelOp) -> None:
        groups = k.groups()
        if not groups or groups[-1].storage.data != Storage.GLOBAL:
            raise self.cannot_lower(k, "a columns kernel ends with its concat's root group")
        root = groups[-1]
        concat = root.yielded()[0].owner if len(root.yielded()) == 1 else None
        if not isinstance(concat, graph.ConcatOp) or len(shape_of(concat.result.type)) != 2 \
                or concat.dim.value.data != 1:
            raise self.cannot_lower(k, "the root group must yield one rank-2 concat along dim 1")
        params = k.params
        assert isinstance(params, ColumnsParamsAttr)
        n = len(concat.operands)
        if len(params.lanes) != n:
            raise self.cannot_lower(k, f"the parameters give {len(params.lanes)} concat operands their lanes, "
                                       f"the concat has {n}")
        spans, lanes, vectors = params.spans(), params.lanes, params.vectors
        shapes: dict[int, tuple] = {}
        for i, c in enumerate(params.clusters):
            # the columns of a shared body (their schedule and warps: the verifier) take its shape
            if shapes.setdefault(c, shape_of(concat.operands[i].type)) != shape_of(concat.operands[i].type):
                raise self.cannot_lower(k, f"concat operand {i} shares the code body of cluster {c} but not its "
                                           "shape")
        groups_of = column_groups(k)
        for i, v in enumerate(concat.operands):
            dim = shape_of(v.type)[1]
            if dim == DYN or dim % vectors[i] or (vectors[i] > 1 and i not in groups_of):
                raise self.cannot_lower(k, f"concat operand {i}: {vectors[i]} elements per thread need a column "
                                           "whose static dim they divide")
            if (spans[i][1] - spans[i][0]) * WARP < params.rows_per_tile * dim // vectors[i] * lanes[i]:
                raise self.cannot_lower(k, f"concat operand {i} needs {params.rows_per_tile} rows x its dim / "
                                           f"{vectors[i]} x {lanes[i]} lanes threads, more than its warps hold")
        for g in groups[:-1]:
            r = g.yielded()[0].owner if len(g.yielded()) == 1 else None
            if not isinstance(r, (graph.ReduceOp, graph.SegmentReduceOp)) or g.storage.data != Storage.REG:
                raise self.cannot_lower(k, "every group but the root is one column's reduction, kept in registers")
        for i, g in groups_of.items():
            widths = vector_widths(_column_of_group(g, concat.operands[i]))
            if vectors[i] not in widths:
                raise self.cannot_lower(k, f"concat operand {i}: {vectors[i]} elements per thread are no aligned "
                                           f"vector load of its tables' rows (their dims and element types allow "
                                           f"{widths})")
        for g in groups:
            for op in g.block.ops:
                if isinstance(op, graph.GraphOp):
                    check_supported(op)


    def lower(self, k: KernelOp):
        """The kernel lowered (vector accesses of the widest columns' width merged by
        `lower`), then the 2-wide accesses of columns that take 2 elements; its buffers
        go through an address table when they would overflow the parameter space."""
        from fsir.lowering.kernels import erase_unused_arith
        from fsir.lowering.param_table import table_arguments
        from fsir.lowering.vectorize import vectorize_memory

        iface = super().lower(k)
        params = k.params
        assert isinstance(params, ColumnsParamsAttr)
        vectors = set(params.vectors)
        if 2 in vectors and max(vectors) > 2 and vectorize_memory(iface.func, 2):
            erase_unused_arith(iface.func)
        # thousands of columns' tables, ids and weights overflow the parameter space
        table_arguments(iface.func)
        return iface


def _some(c: Column | None) -> Column:
    assert c is not None  # a cluster's operands are columns
    return c


def _column_of_group(g: GroupOp, output: SSAValue) -> Column:
    """A `Column` view of a column group (for its summary): the group's ops."""
    r = g.yielded()[0].owner
    assert isinstance(r, (graph.ReduceOp, graph.SegmentReduceOp))
    ops = tuple(op for op in g.block.ops if isinstance(op, graph.GraphOp))
    return Column(ops, r.result, r, ())


def _segment(c: Column) -> graph.SegmentReduceOp:
    assert isinstance(c.reduce, graph.SegmentReduceOp)
    return c.reduce


def _traffic(c: Column, output: SSAValue) -> Traffic:
    """What a thread of column `c` reads and writes (`columns_cost.Traffic`)."""
    out_bytes = element_bytes(_elem(output))
    if not c.ragged:
        _, _, step_bytes, table_bytes = column_counts(c)
        return Traffic(step_bytes, table_bytes, out_bytes, bag_length(c))
    r = _segment(c)
    bag = static_bag(r)
    work = segment_work(r, c.ops)
    return Traffic(work.row_bytes, work.element_bytes, out_bytes, SEGMENT_BAG_HINT if bag is None else bag, 8)


# The instructions of a column thread's prologue in its PTX (embedding_bag.hlo's: the
# warp's leaf found by comparisons, the thread's (row, element, lane), its guard and
# the bounds its gathers are clamped to)
PROLOGUE = 40


def lowered_overhead(c: Column, lanes: int, traffic: Traffic) -> int:
    """Integer instructions a thread of column `c` runs that its graph ops do not show
    (`column_summary` counts one per global access): per loop step, a multiply and an
    add more per access (its linear index in bytes), the gather's clamp of its index
    (sign extension, max, min) and the loop's compare and branch; and the prologue."""
    if c.ragged:
        work = segment_work(_segment(c), c.ops)
        loads = work.per_row["global"] + work.per_element["global"]
    else:
        loads = column_counts(c)[0]["global"]
    steps = math.ceil(traffic.bag / lanes) if traffic.bag else 1
    return steps * (2 * loads + 3 * len(c.gathers) + 2) + PROLOGUE


def _group_summary(c: Column, lanes: int, vector: int) -> Summary:
    """A thread of column `c` with its (lanes, vector): a ragged column's is the segment
    rules' (`segment_summary`, for its mean bag, else the rules' hint)."""
    if not c.ragged:
        return column_summary(c, lanes, vector)
    r = _segment(c)
    bag = static_bag(r)
    work = segment_work(r, c.ops)
    return segment_summary(SegmentSchedule("warp", shape_of(r.result.type)[1], vector, lanes, vector), work,
                           SEGMENT_BAG_HINT if bag is None else bag)
