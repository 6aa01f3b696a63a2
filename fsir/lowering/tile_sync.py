"""Lowering of tile-synchronised pipelines (`schedule.stage`, `schedule.tile_dep`).

A stage's kernel is lowered by its mapping as usual; then its `gpu.func` gets, in
front of the mapping's code,

- its tile: `gpu.next_tile` on the stage's counter mapped to (x, y) by the tile order
  (the mapping's `gpu.block_id x/y` are replaced by them), or the block ids;
- when a consumer of it has a wait-kernel, the tile-0 block posts the pipeline's start
  semaphore of its stream (cuSync's `stage.start()`);
- for each dependency, a `gpu.sem_wait` per producer semaphore the tile reads (the
  dependency's map over its ranges; under RowSync one wait per producer row);

and, before it returns, a `gpu.sem_post` on its own tile's semaphore when it is a
producer. Extra kernel arguments follow the mapping's: counter, start semaphores, the
producers' semaphores (one buffer per dependency), its own semaphores. The host
allocates a pipeline's semaphores and counters and zeroes them (`gpu.memset`) before
the pipeline's first launch, launches a consumer's one-thread wait-kernel
(`@<kernel>_wait`) on its stream before it, and tags every launch with its
`#gpu.stage`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, FunctionType, IndexType, IntegerAttr, MemRefType, i32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr
from xdsl.traits import is_side_effect_free

from fsir.dialects import gpu, graph
from fsir.dialects.schedule import (
    PY_INDEX,
    KernelOp,
    StageOp,
    SyncPolicy,
    TileDepOp,
)
from fsir.lowering.scalar import Cursor, Index, IndexBuilder

SEMAPHORES = MemRefType(i32, [DYNAMIC_INDEX])

Role = tuple[str, str | int]
"""What an extra kernel argument is: ("counter", kernel), ("starts", pipeline) or
("sems", producer kernel)."""


def affine_value(expr: AffineExpr, dims: list[Index], ib: IndexBuilder) -> Index:
    """`expr` over non-negative `dims` as index arithmetic."""
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return expr.value
    assert isinstance(expr, AffineBinaryOpExpr), f"unsupported affine expression {expr}"
    a, b = affine_value(expr.lhs, dims, ib), affine_value(expr.rhs, dims, ib)
    match expr.kind:
        case AffineBinaryOpKind.Add:
            return ib.add(a, b)
        case AffineBinaryOpKind.Mul:
            return ib.mul(a, b)
        case AffineBinaryOpKind.FloorDiv:
            return ib.div(a, b)
        case AffineBinaryOpKind.CeilDiv:
            return ib.ceildiv(a, b)
        case AffineBinaryOpKind.Mod:
            return ib.rem(a, b)


def _product_of_dot(k: KernelOp) -> graph.DotOp | None:
    groups = k.groups()
    return next((op for op in groups[0].block.ops if isinstance(op, graph.DotOp)), None) if len(groups) == 1 else None


def _reads(op: Operation, values: set[SSAValue]) -> bool:
    """Whether `op` or an op nested in it uses one of `values`."""
    return any(values & set(o.operands) for o in op.walk())


_STOPS = (gpu.BarrierOp, gpu.CpAsyncCommitGroupOp, gpu.CpAsyncWaitGroupOp, gpu.SemWaitOp, gpu.SemPostOp)


def _stops(op: Operation) -> bool:
    """Whether `op` ends the k-step's loads (a barrier or cp.async group, nested or not)."""
    return any(isinstance(o, _STOPS) for o in op.walk())


_ARITH = (arith.RemUIOp, arith.RemSIOp, arith.DivUIOp, arith.DivSIOp, arith.FloorDivSIOp, arith.CeilDivUIOp)


def _memrefs(op: Operation) -> set[SSAValue]:
    return {v for o in op.walk() for v in o.operands if isinstance(v.type, MemRefType)}


def _move_before(op: Operation, anchor: Operation, b: SSAValue, moved: set[Operation]) -> bool:
    """Moves `op` (a read of B, which nothing writes) with the side-effect-free ops
    between `anchor` and it that compute its operands in front of `anchor`, in order;
    not when a buffer it uses besides B (the shared buffer it stages B in) is used by an
    op staying in between."""
    block = anchor.parent_block()
    assert block is not None
    between: list[Operation] = []
    o = anchor.next_op
    while o is not None and o is not op:
        if o not in moved:
            between.append(o)
        o = o.next_op
    needed = {v for inner in op.walk() for v in inner.operands}
    slice_: list[Operation] = []
    for o in reversed(between):
        if needed & set(o.results):
            # (arith ops touch no memory; xDSL gives remui no such trait)
            if o.regions or not (isinstance(o, _ARITH) or is_side_effect_free(o)):
                return False
            slice_.append(o)
            needed |= set(o.operands)
    staying = [o for o in between if o not in slice_]
    others = _memrefs(op) - {b}
    if any(_memrefs(o) & others for o in staying):
        return False
    for o in [*reversed(slice_), op]:
        o.detach()
        block.insert_op_before(o, anchor)
        moved.add(o)
    return True


def _uniform_ancestor(op: Operation, entry: Block) -> Operation:
    """The ancestor of `op` (or itself) in the innermost block every thread of the block
    runs alike: the entry block, or the body of a loop (on a chain of such loops) that
    holds a barrier."""
    chain = [op]
    while chain[-1].parent_block() is not entry:
        parent = chain[-1].parent_op()
        assert parent is not None
        chain.append(parent)
    anchor = chain[-1]
    for inner in reversed(chain[:-1]):
        if not isinstance(anchor, scf.ForOp) or not any(isinstance(o, gpu.BarrierOp) for o in anchor.body.walk()):
            break
        anchor = inner
    return anchor


def _enclosing_loops(op: Operation, entry: Block) -> list[scf.ForOp]:
    loops = []
    while op.parent_block() is not entry:
        parent = op.parent_op()
        assert isinstance(parent, scf.ForOp)
        loops.append(parent)
        op = parent
    return loops


def _insert_before(ops: Block, anchor: Operation | None, block: Block) -> None:
    for o in list(ops.ops):
        o.detach()
        if anchor is None:
            block.add_op(o)
        else:
            block.insert_op_before(o, anchor)


def _i32(cursor: Cursor, v: int) -> SSAValue:
    return cursor.value(arith.ConstantOp(IntegerAttr(v, i32)))


def _when(cursor: Cursor, cond: bool | SSAValue, body: Callable[[], object]) -> None:
    if isinstance(cond, bool):
        if cond:
            body()
        return
    block = Block()
    with cursor.at(block):
        body()
        block.add_op(scf.YieldOp())
    cursor.insert(scf.IfOp(cond, [], Region(block), Region()))


def _range(cursor: Cursor, ib: IndexBuilder, n: int, body: Callable[[Index], object]) -> None:
    if n == 1:
        body(0)
        return
    block = Block(arg_types=[IndexType()])
    with cursor.at(block):
        body(block.args[0])
        block.add_op(scf.YieldOp())
    cursor.insert(scf.ForOp(ib.ssa(0), ib.ssa(n), ib.ssa(1), [], block))


def _and(cursor: Cursor, a: bool | SSAValue, b: bool | SSAValue) -> bool | SSAValue:
    if isinstance(a, bool):
        return b if a else False
    if isinstance(b, bool):
        return a if b else False
    return cursor.value(arith.AndIOp(a, b))


def wait_ranges(dep: TileDepOp, producer: StageOp, consumer_grid: tuple[int, int],
                producer_grid: tuple[int, int], limit: int = 1 << 14) -> tuple[int, int]:
    """The (i, j) ranges a consumer tile's waits on `dep` walk: the dependency's, but
    under a per-row policy only over the positions that change the producer row (the
    tiles of one row share a semaphore), and under StridedSync only over the shortest
    prefix of i that already names every semaphore of the whole range (the tiles a
    stride apart share one), for every tile and j (enumerated up to `limit` waits)."""
    ni, nj = dep.ranges
    policy = producer.policy.data
    if policy.per_row():
        return (ni if dep.row_varies(2) else 1), (nj if dep.row_varies(3) else 1)
    if policy is not SyncPolicy.STRIDED or math.prod(consumer_grid) * ni * nj > limit:
        return ni, nj
    gxp, gyp = producer_grid

    def semaphores(x: int, y: int, j: int, n: int) -> set[int]:
        return {producer.semaphore(px, py, gxp, PY_INDEX) for i in range(n)
                for px, py in [dep.map.data.eval([x, y, i, j], [])] if 0 <= px < gxp and 0 <= py < gyp}

    gx, gy = consumer_grid
    tiles = [(x, y, j) for x in range(gx) for y in range(gy) for j in range(nj)]
    return next(n for n in range(1, ni + 1) if all(semaphores(*t, n) == semaphores(*t, ni) for t in tiles)), nj


def wait_semaphores(dep: TileDepOp, producer: StageOp, x: int, y: int, consumer_grid: tuple[int, int],
                    producer_grid: tuple[int, int]) -> list[int]:
    """The semaphores consumer tile (x, y) waits on for `dep`, in order (what the
    kernel's loops execute)."""
    gxp, gyp = producer_grid
    ni, nj = wait_ranges(dep, producer, consumer_grid, producer_grid)
    out = []
    for j in range(nj):
        for i in range(ni):
            px, py = dep.map.data.eval([x, y, i, j], [])
            if 0 <= px < gxp and 0 <= py < gyp:
                out.append(producer.semaphore(px, py, gxp, PY_INDEX))
    return out


def wait_count(f: func.FuncOp) -> dict[str, int]:
    """The waits each consumer kernel of a scheduled function executes, over all its tiles."""
    plan = TileSyncPlan(f)
    counts: dict[str, int] = {}
    for name, deps in plan.deps.items():
        gx, gy = plan.grid(name)
        for dep in deps:
            producer = plan.stages[dep.producer_name]
            pg = plan.grid(dep.producer_name)
            counts[name] = counts.get(name, 0) + sum(len(wait_semaphores(dep, producer, x, y, (gx, gy), pg))
                                                     for x in range(gx) for y in range(gy))
    return counts


class TileSyncPlan:
    """The stages and dependencies of one schedule function, and what lowering them
    has made so far (each stage kernel's extra arguments, the host's buffers)."""

    def __init__(self, f: func.FuncOp):
        ops = list(f.body.blocks[0].ops)
        self.kernels = {k.sym_name.data: k for k in ops if isinstance(k, KernelOp)}
        self.stages = {s.kernel_name: s for s in ops if isinstance(s, StageOp)}
        self.deps: dict[str, list[TileDepOp]] = {}
        for d in ops:
            if isinstance(d, TileDepOp):
                self.deps.setdefault(d.consumer_name, []).append(d)
        self.producers = {d.producer_name for ds in self.deps.values() for d in ds}
        self.started = {d.producer_name for c, ds in self.deps.items() if self.stages[c].wait_kernel is not None
                        for d in ds}
        self.roles: dict[str, list[Role]] = {}  # a lowered kernel's extra arguments
        self.pipeline_of: dict[str, int] = {}  # the pipeline of a lowered kernel
        self.buffers: dict[Role, SSAValue] = {}

    def __bool__(self) -> bool:
        return bool(self.stages)

    def grid(self, name: str) -> tuple[int, int]:
        """A stage's tiles as (columns, rows): grid z folds into the rows."""
        grid, _ = self.kernels[name].launch()
        return grid[0], grid[1] * grid[2]

    def semaphores(self, name: str) -> int:
        stage = self.stages[name]
        return stage.policy.data.semaphores(*self.grid(name), stage.sync_stride)

    # -- the kernel ---------------------------------------------------------------------

    def rewrite(self, k: KernelOp, fn: gpu.FuncOp) -> None:
        """Adds the stage's tile choice, waits and posts to its lowered kernel."""
        name = k.sym_name.data
        stage = self.stages[name]
        gx, gy = self.grid(name)
        entry = fn.body.blocks[0]
        roles: list[Role] = []
        self.roles[name] = roles
        self.pipeline_of[name] = stage.pipeline.data

        def argument(role: Role) -> SSAValue:
            inputs = list(fn.function_type.inputs.data)
            arg = entry.insert_arg(SEMAPHORES, len(inputs))
            arg.name_hint = role[0] if role[0] != "sems" else f"sems_{role[1]}"
            fn.function_type = FunctionType.from_lists([*inputs, SEMAPHORES], [])
            roles.append(role)
            return arg

        old_ids = {d: [op for op in fn.walk() if isinstance(op, gpu.BlockIdOp) and op.dimension.data.value == d]
                   for d in ("x", "y", "z")}
        (_, rows, batches), _ = k.launch()  # tile row Y: row Y mod rows of batch Y div rows
        prologue = Block()
        cursor = Cursor(prologue)
        ib = IndexBuilder(cursor)
        if stage.order is not None:
            linear: Index = cursor.value(gpu.NextTileOp(argument(("counter", name))))
            x, y = stage.tile(linear, gx, gy, ib)
        else:
            x, y = cursor.value(gpu.BlockIdOp("x")), cursor.value(gpu.BlockIdOp("y"))
            if batches > 1:
                y = ib.add(ib.mul(cursor.value(gpu.BlockIdOp("z")), rows), y)
            linear = ib.add(ib.mul(y, gx), x)
        x, y = ib.ssa(x), ib.ssa(y)
        ids = {"x": x, "y": y} if batches == 1 else {"x": x, "y": ib.ssa(ib.rem(y, rows)), "z": ib.ssa(ib.div(y, rows))}
        if name in self.started:
            starts = argument(("starts", stage.pipeline.data))
            _when(cursor, ib.eq(linear, 0),
                  lambda: cursor.insert(gpu.SemPostOp(starts, ib.ssa(stage.stream.data), _i32(cursor, 1))))
        waits = Block() if stage.reorder is not None else prologue  # (R: placed by `reorder_loads`)
        wait_cursor = Cursor(waits) if stage.reorder is not None else cursor
        for dep in self.deps.get(name, []):
            self.waits(dep, argument(("sems", dep.producer_name)), x, y, wait_cursor,
                       IndexBuilder(wait_cursor) if stage.reorder is not None else ib)
        post: gpu.SemPostOp | None = None  # (a template, cloned before each return)
        if name in self.producers:
            own = argument(("sems", name))
            post = gpu.SemPostOp(own, ib.ssa(stage.semaphore(x, y, gx, ib)), _i32(cursor, 1))
        first = entry.first_op
        start = list(prologue.ops)[-1]  # (the prologue's last op: the waits' default place follows it)
        for op in list(prologue.ops):
            op.detach()
            if first is None:
                entry.add_op(op)
            else:
                entry.insert_op_before(op, first)
        for d, value in ids.items():
            for op in old_ids[d]:
                op.result.replace_all_uses_with(value)
                op.detach()
                op.erase()
        if stage.reorder is not None:
            self.reorder_loads(k, fn, waits, start)
        if post is not None:
            for ret in [op for op in fn.walk() if isinstance(op, gpu.ReturnOp)]:
                block = ret.parent_block()
                assert block is not None
                block.insert_op_before(gpu.SemPostOp(*post.operands), ret)
            post.erase()

    def reorder_loads(self, k: KernelOp, fn: gpu.FuncOp, waits: Block, start: Operation) -> None:
        """cuSync's R: the consumer GEMM's first k-step issues its B tile loads (B has no
        producer), then waits (`waits`), then loads A. The waits go right before the
        kernel's first read of a producer's result, at the level of the mapping's code
        where every thread of the block runs alike (the entry block, or a loop body
        holding a barrier: the k-loop, where they run in the first iteration only); the
        global reads of B that follow them before the next barrier, with the index
        arithmetic they need, move in front of them. Without such a read (a mapping of
        another shape), the waits stay at the kernel's start, after `start`."""
        entry = fn.body.blocks[0]
        name = k.sym_name.data
        dot = _product_of_dot(k)
        produced: set[SSAValue] = {entry.args[d.operand.data] for d in self.deps.get(name, [])}
        b = entry.args[k.block.args.index(dot.rhs)] if dot is not None and dot.rhs in k.block.args else None
        first = next((op for op in fn.walk() if produced & set(op.operands)), None)
        if first is None or b is None or b in produced:
            _insert_before(waits, start.next_op, entry)
            return
        anchor = _uniform_ancestor(first, entry)
        block = anchor.parent_block()
        assert block is not None
        moved: set[Operation] = set()
        op = anchor.next_op
        while op is not None and not _stops(op):
            following = op.next_op
            if _reads(op, {b}) and not _reads(op, produced):
                _move_before(op, anchor, b, moved)
            op = following
        guard = [(loop.body.block.args[0], loop.lb) for loop in _enclosing_loops(anchor, entry)]
        if not guard:
            _insert_before(waits, anchor, block)
            return
        first_step: Operation | None = None  # every enclosing loop in its first iteration
        for iv, lb in guard:
            cond = arith.CmpiOp(iv, lb, "eq")
            block.insert_op_before(cond, anchor)
            if first_step is not None:
                cond = arith.AndIOp(first_step, cond)
                block.insert_op_before(cond, anchor)
            first_step = cond
        assert first_step is not None
        waits.add_op(scf.YieldOp())
        block.insert_op_before(scf.IfOp(first_step, [], Region(waits), Region()), anchor)

    def waits(self, dep: TileDepOp, sems: SSAValue, x: SSAValue, y: SSAValue, cursor: Cursor,
              ib: IndexBuilder) -> None:
        """Waits on every semaphore of `dep`'s producer tiles that tile (x, y) reads."""
        stage = self.stages[dep.producer_name]
        gxp, gyp = self.grid(dep.producer_name)
        ready = _i32(cursor, stage.policy.data.ready(gxp, stage.sync_stride))
        ni, nj = wait_ranges(dep, stage, self.grid(dep.consumer_name), (gxp, gyp))
        px_expr, py_expr = dep.map.data.results
        inside_always = self.inside(dep, ni, nj)

        def wait(i: Index, j: Index) -> None:
            px = affine_value(px_expr, [x, y, i, j], ib)
            py = affine_value(py_expr, [x, y, i, j], ib)
            inside = True if inside_always else \
                _and(cursor, _and(cursor, ib.lt(-1, px), ib.lt(px, gxp)), _and(cursor, ib.lt(-1, py), ib.lt(py, gyp)))
            _when(cursor, inside, lambda: cursor.insert(
                gpu.SemWaitOp(sems, ib.ssa(stage.semaphore(px, py, gxp, ib)), ready)))

        _range(cursor, ib, nj, lambda j: _range(cursor, ib, ni, lambda i: wait(i, j)))

    def inside(self, dep: TileDepOp, ni: int, nj: int, limit: int = 1 << 14) -> bool:
        """Whether every producer tile `dep` names lies in the producer's grid (then the
        waits need no bounds check); False when too many to enumerate."""
        gx, gy = self.grid(dep.consumer_name)
        gxp, gyp = self.grid(dep.producer_name)
        if gx * gy * ni * nj > limit:
            return False
        m = dep.map.data
        return all(0 <= px < gxp and 0 <= py < gyp
                   for x in range(gx) for y in range(gy) for i in range(ni) for j in range(nj)
                   for px, py in [m.eval([x, y, i, j], [])])

    def wait_kernel(self, name: str) -> gpu.FuncOp:
        """The one-thread kernel that holds back consumer `name`'s stream until each of
        its producers has started (cuSync §III-B)."""
        stage = self.stages[name]
        fn = gpu.FuncOp(f"{name}_wait", ([SEMAPHORES], []), kernel=True, known_block_size=[1, 1, 1])
        fn.location = self.kernels[name].location
        starts = fn.body.blocks[0].args[0]
        starts.name_hint = "starts"
        cursor = Cursor(fn.body.blocks[0])
        ib = IndexBuilder(cursor)
        for d in self.deps[name]:
            stream = self.stages[d.producer_name].stream.data
            cursor.insert(gpu.SemWaitOp(starts, ib.ssa(stream), _i32(cursor, 1)))
        cursor.insert(gpu.ReturnOp())
        self.roles[fn.sym_name.data] = [("starts", stage.pipeline.data)]
        self.pipeline_of[fn.sym_name.data] = stage.pipeline.data
        return fn

    # -- the host -------------------------------------------------------------------------

    def host_arguments(self, name: str, cursor: Cursor, ib: IndexBuilder,
                       flat: Callable[[SSAValue, list[Index]], SSAValue]) -> list[SSAValue]:
        """The buffers for kernel `name`'s extra arguments; the first launch of a
        pipeline allocates and zeroes all of its buffers."""
        if any(role not in self.buffers for role in self.roles[name]):
            self.allocate(self.pipeline_of[name], cursor, ib, flat)
        return [self.buffers[role] for role in self.roles[name]]

    def allocate(self, pipeline: int, cursor: Cursor, ib: IndexBuilder,
                 flat: Callable[[SSAValue, list[Index]], SSAValue]) -> None:
        stages = [s for s in self.stages.values() if s.pipeline.data == pipeline]
        sizes: dict[Role, int] = {}
        for s in stages:
            if s.order is not None:
                sizes[("counter", s.kernel_name)] = 1
            if s.kernel_name in self.producers:
                sizes[("sems", s.kernel_name)] = self.semaphores(s.kernel_name)
        if self.started & {s.kernel_name for s in stages}:
            sizes[("starts", pipeline)] = len(stages)
        zero = cursor.value(arith.ConstantOp(IntegerAttr(0, i32)))
        for role, n in sizes.items():
            buf = cursor.value(memref.AllocOp([], [], MemRefType(i32, [n])))
            buf.name_hint = f"{role[0]}_{role[1]}"
            view = flat(buf, [n])
            cursor.insert(gpu.MemsetOp(view, zero))
            self.buffers[role] = view

    def stage_attr(self, name: str) -> gpu.StageAttr:
        s = self.stages[name]
        return gpu.StageAttr(s.pipeline.data, s.stream.data, s.priority.data)
