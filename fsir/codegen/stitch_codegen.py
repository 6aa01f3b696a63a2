"""`stitch-codegen`: decide how each fusion runs (stitch → schedule, FusionStitching §4).

Each `stitch.fusion` becomes one `schedule.kernel` with one of three mappings:

- `loop`: no reduction. One thread per output element; every other op is inlined into
  its consumers by index propagation (XLA loop fusion, thread composition). Outputs of
  different shapes share the loop (kernel packing).
- `row`: the fusion has reductions; the coordinates they keep are the kernel's rows.
  Each reduction is a sub-root leading a group; the outputs form the root group. A row
  belongs to one thread (`thread`: column reductions, whose neighbouring rows are
  neighbouring in memory; with few rows, 8 interleaved threads per row combining
  through shared memory, `block`), one warp (`warp`: a shuffle tree, rows of at most 512
  elements) or one block (`block`: shuffles, then shared memory). A group's light
  producers are recomputed per element; its result stays in registers, warp lanes or
  a shared-memory slot for later groups, which must read only the rows they own.
  Outputs that read no reduction (independent parts packed into the kernel) are
  `packed` groups: every thread of the grid takes their elements in turn.
- `gemm`: a `graph.dot` (its light producers inlined into the tile loads) as a tiled
  shared-memory GEMM, each thread computing a micro-tile of outputs in registers; the
  tile sizes are chosen by the latency-evaluator like row configurations
  (`fsir/codegen/gemm_configs.py`) unless `gemm=` forces them.

Row kernels are configured by the latency-evaluator (§4.2–4.3, `fsir/codegen/
row_configs.py`): every schedule above with 128–1024 threads per block, the row kept in
registers (`elements_per_thread` unrolled slots per thread, so values read before a
reduction and used after it are loaded once) or re-read, and `row_steps` row-blocks per
block (row-invariant operands such as γ and β loaded once for all of them) are lowered
and scored, and the fastest is kept with its estimate in `cost`. `rows=` forces a
schedule (then, and for `?` row counts, the rules above choose); `registers=off` never
keeps rows in registers. Shared result slots are placed by `fsir/codegen/smem.py`.
GEMM kernels are configured the same way (`fsir/codegen/gemm_configs.py`: block tile,
k-step, micro-tile), scored with the dependence-aware L_warp (`estimate(ilp=True)`):
a micro-tile's multiply-adds are independent, and charging each its full latency
would always favour one output per thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, StringAttr, UnitAttr, BFloat16Type, Float16Type, Float32Type, IntegerAttr, IntegerType, MemRefType, ModuleOp, TensorType, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from fsir.codegen.locality import local, row_dims_of, subroot_reads
from fsir.codegen.gemm_configs import DYNAMIC_DEFAULT, GemmConfig, gemm_candidates
from fsir.codegen.gemm_configs import shared_bytes as gemm_shared_bytes
from fsir.codegen.row_configs import RowConfig, RowLayout, choose, row_candidates
from fsir.codegen.smem import Request, allocate, chain, dominators
from fsir.dialects import graph
from fsir.dialects.graph import DYN, fmt_shape, shape_of, shapes_compatible
from fsir.dialects.schedule import DYNAMIC, GroupOp, KernelOp, SharedOp, YieldOp, element_bytes
from fsir.dialects.stitch import FusionOp
from fsir.errors import UserError
from fsir.fusion.explore import is_free, make_fusion
from fsir.gpuspec import gpu_spec
from fsir.ir import location_of

BLOCK = 256  # threads per block of loop and row kernels
WARP = 32
WARP_ROW_LIMIT = 512  # rows up to this length get one warp (BladeDISC's threshold)
COLUMN_SLICES = 8  # threads per row of a column reduction with few rows
COLUMN_SPLIT_MIN = 64  # ... when its rows are at least this long
COLUMN_THREAD_ROWS = 8192  # with this many rows a thread per row already fills the GPU

SUPPORTED = "f32, f16, bf16, i1, i32, i64"


def supported_element(t: Attribute) -> bool:
    if isinstance(t, (Float32Type, Float16Type, BFloat16Type)):
        return True
    return isinstance(t, IntegerType) and t.width.data in (1, 32, 64)


def accumulator_type(t: Attribute) -> Attribute:
    from fsir.lowering.scalar import compute_type

    return compute_type(t)


def _error(op: Operation, message: str) -> UserError:
    return UserError(f"'{op.name}' op {message}", location_of(op))


def check_supported(op: Operation) -> None:
    if not isinstance(op, graph.GraphOp):
        raise _error(op, "is not a graph op; stitch-codegen cannot generate code for it")
    for v in [*op.operands, *op.results]:
        t = v.type
        assert isinstance(t, TensorType)
        if not supported_element(t.element_type):
            raise _error(op, f"has element type {t.element_type}, which the GPU code generator does not "
                             f"support ({SUPPORTED})")
    if isinstance(op, graph.IotaOp) and DYN in shape_of(op.result.type):
        raise _error(op, "with a '?' dim cannot be generated (its size is unknown)")


def closure(values: list[SSAValue], stop) -> set[Operation]:
    """The ops computing `values`, walking operands until `stop(value)` is true."""
    ops: set[Operation] = set()
    stack = [v for v in values if not stop(v)]
    while stack:
        v = stack.pop()
        op = v.owner
        if not isinstance(op, Operation) or op in ops:
            continue
        ops.add(op)
        stack.extend(o for o in op.operands if not stop(o))
    return ops


def _numel(shape) -> int | None:
    return None if DYN in shape else math.prod(shape)


@dataclass
class GroupSpec:
    values: list[SSAValue]  # fusion-level values the group yields
    composition: str
    location: str
    buffer: str | None = None
    offset: int | None = None
    row_dims: tuple[int, ...] | None = None
    packed: bool = False  # an independent part: a grid-stride loop over its elements


class FusionCodegen:
    """Builds the schedule.kernel of one fusion."""

    def __init__(self, fusion: FusionOp, name: str, row_schedule: str = "auto", gpu: str = "H100",
                 registers: bool = True, gemm: GemmConfig | None = None, chosen: dict | None = None):
        if row_schedule not in ("auto", *ROW_SCHEDULES):
            raise UserError(f"stitch-codegen: unknown row schedule '{row_schedule}' "
                            f"(expected auto, {', '.join(ROW_SCHEDULES)})")
        self.row_schedule = row_schedule
        self.spec = gpu_spec(gpu)
        self.registers = registers
        self.gemm_config = gemm  # None: the evaluator chooses
        # GEMM signature -> the cost of the configuration chosen for it (a function's
        # identical products, e.g. BERT's Q, K and V projections, are scored once)
        self.chosen = {} if chosen is None else chosen
        self.fusion = fusion
        self.name = name
        self.block = fusion.block
        self.yields = list(self.block.last_op.operands)  # type: ignore[union-attr]
        self.order = [op for op in self.block.ops if op is not self.block.last_op]
        needed = closure(self.yields, lambda v: not isinstance(v.owner, Operation))
        self.ops = [op for op in self.order if op in needed]
        for op in self.ops:
            check_supported(op)

    # -- the three mappings ----------------------------------------------------------

    def build(self) -> KernelOp:
        dots = [op for op in self.ops if isinstance(op, graph.DotOp)]
        reduces = [op for op in self.ops if isinstance(op, graph.ReduceOp)]
        if dots:
            return self.gemm(dots, reduces)
        if reduces:
            return self.rows(reduces)
        return self.loop()

    def loop(self) -> KernelOp:
        outs = _unique(self.yields)
        sizes = [_numel(shape_of(v.type)) for v in outs]
        n = None if None in sizes else max(sizes)
        grid = DYNAMIC if n is None else max(1, -(-n // BLOCK))
        groups = [GroupSpec(outs, "thread", "global")]
        return self.kernel("loop", {"elements_per_thread": 1}, (grid, 1, 1), (BLOCK, 1, 1), groups, [])

    def gemm(self, dots: list[graph.DotOp], reduces) -> KernelOp:
        dot = dots[0]
        if len(dots) > 1 or reduces or _unique(self.yields) != [dot.result]:
            raise _error(dot, "must be the only root of its fusion: fusing a GEMM with other ops is not "
                              "implemented yet")
        a, b = shape_of(dot.lhs.type), shape_of(dot.rhs.type)
        m = a[-2] if len(a) > 1 else 1
        n = b[-1] if len(b) > 1 else 1
        sizes = (m, n, _numel(shape_of(dot.result.type)))
        if self.gemm_config is not None:
            configs = [self.gemm_config]
            need = gemm_shared_bytes(self.gemm_config, element_bytes(accumulator_type(dot.result.type.element_type)))
            if need > self.spec.smem_per_block:
                raise _error(dot, f"cannot run as gemm={self.gemm_config.text()}: its tiles need {need} bytes of "
                                  f"shared memory, more than a block has on {self.spec.name} ({self.spec.smem_per_block})")
        else:
            configs = gemm_candidates(m, n, self.spec)
        if DYN in sizes or None in sizes:
            # `?` sizes: the evaluator cannot count waves
            config = self.gemm_config or DYNAMIC_DEFAULT
            kernel = self.gemm_kernel(dot, config)
            kernel.cost = DictionaryAttr({**kernel.cost.data, "config": StringAttr(config.describe())})
            return kernel
        key = self.signature()
        if key in self.chosen:
            kernel = self.gemm_kernel(dot, GemmConfig.parse(self.chosen[key].data["config"].data))
            kernel.cost = self.chosen[key]
            return kernel
        kernel = choose(configs, lambda c: self.gemm_kernel(dot, c), self.spec, ilp=True)
        self.chosen[key] = kernel.cost
        return kernel

    def signature(self) -> tuple:
        """The fusion up to value names: its argument types and its ops (name, operands
        by position, properties, attributes, result types). Kernels of fusions with equal
        signatures differ only in names."""
        where: dict[SSAValue, tuple[int, int]] = {a: (-1, i) for i, a in enumerate(self.block.args)}
        out: list = [tuple(str(a.type) for a in self.block.args)]
        for n, op in enumerate(self.ops):
            out.append((op.name, tuple(where[o] for o in op.operands), str(op.properties), str(op.attributes),
                        tuple(str(r.type) for r in op.results)))
            where.update({r: (n, j) for j, r in enumerate(op.results)})
        out.append(tuple(where[v] for v in self.yields))
        return tuple(out)

    def gemm_kernel(self, dot: graph.DotOp, config: GemmConfig) -> KernelOp:
        """The schedule.kernel of the gemm mapping under one configuration: a block per
        bm x bn output tile (batch dims on grid z), (bm / tm) x (bn / tn) threads."""
        out = shape_of(dot.result.type)
        a, b = shape_of(dot.lhs.type), shape_of(dot.rhs.type)
        m = a[-2] if len(a) > 1 else 1
        n = b[-1] if len(b) > 1 else 1
        batch = out[: len(out) - (len(a) > 1) - (len(b) > 1)]
        nb = _numel(batch)
        grid = tuple(DYNAMIC if s == DYN else max(1, -(-s // t)) for s, t in ((n, config.bn), (m, config.bm))) + (
            DYNAMIC if nb is None else max(1, nb),)
        acc = accumulator_type(dot.result.type.element_type)
        space = IntegerAttr(3, i64)
        shared = [SharedOp("a_tile", MemRefType(acc, [config.bm * config.bk], memory_space=space)),
                  SharedOp("b_tile", MemRefType(acc, [config.bk * config.bn], memory_space=space))]
        groups = [GroupSpec([dot.result], "block", "global")]
        return self.kernel("gemm", config.params(), grid, (config.threads, 1, 1), groups, shared)

    def rows(self, reduces: list[graph.ReduceOp]) -> KernelOp:
        row_shape = shape_of(reduces[0].result.type)
        subroots = {r.result: r for r in reduces}
        for r in reduces[1:]:
            if not shapes_compatible(row_shape, shape_of(r.result.type)):
                raise _error(r, f"keeps a {fmt_shape(shape_of(r.result.type))} shape unlike the fusion's first "
                                f"reduction ({fmt_shape(row_shape)}); stitching them needs inter-block "
                                "communication")
        is_subroot = lambda v: v in subroots  # noqa: E731
        # Locality: each reduction reads earlier sub-roots only at the row it reduces.
        trailing = True
        longest = 0
        for r in reduces:
            rank = len(shape_of(r.input.type))
            dims = sorted(r.dims.get_values())
            kept = tuple(d for d in range(rank) if d not in dims)
            for _, read in subroot_reads(r.input, tuple(range(rank)), is_subroot):
                if not local(read, kept, row_shape):
                    raise _error(r, "reads a reduction result of a row it does not reduce; stitching them "
                                    "needs inter-block communication")
            src = shape_of(r.input.type)
            reduced = [src[d] for d in dims]
            longest = max(longest, 1 << 30 if DYN in reduced else math.prod(reduced))
            if dims != list(range(rank - len(dims), rank)):
                trailing = False
        # The root outputs: which of their dims are the rows.
        roots = [v for v in _unique(self.yields) if v not in subroots]
        # Outputs reading no reduction are independent parts packed into the kernel: they
        # need no row locality, so every thread of the grid takes elements in turn.
        packed = [v for v in roots if not subroot_reads(v, tuple(range(len(shape_of(v.type)))), is_subroot)]
        roots = [v for v in roots if v not in packed]
        root_dims: list[tuple[int, ...]] = []
        for v in roots:
            root_dims.append(self.root_row_dims(v, row_shape, is_subroot))
        # the grid covers the most rows any group has (packed parts may differ at run time)
        extents = [_numel(shape_of(r.result.type)) for r in reduces]
        extents += [_numel([shape_of(v.type)[d] for d in dims]) for v, dims in zip(roots, root_dims)]
        k = None if None in extents else max(extents)
        lengths = [longest] + [_numel([shape_of(v.type)[d] for d in range(len(shape_of(v.type))) if d not in dims])
                               for v, dims in zip(roots, root_dims)]
        layout = RowLayout(reduces, roots, root_dims, packed, k, lengths)
        default = default_row_schedule(trailing, longest, _numel(row_shape))
        if self.row_schedule != "auto" or k is None:
            # forced, or a `?` row count the evaluator cannot count waves for: the rules
            configs = [RowConfig.make(self.row_schedule if self.row_schedule != "auto" else default, BLOCK,
                                      longest, layout, self.spec, cached=self.registers)]
            return self.row_kernel(configs[0], layout)
        configs = [c for c in row_candidates(trailing, longest, layout, self.spec) if self.registers or not c.slots]
        return choose(configs, lambda c: self.row_kernel(c, layout), self.spec)

    def row_kernel(self, config: "RowConfig", layout: "RowLayout") -> KernelOp:
        """The schedule.kernel of the row mapping under one configuration."""
        block = config.block
        per_row, comp, where, interleaved = config.per_row, config.composition, config.storage, config.interleaved
        rows_per_block = block // per_row
        groups: list[GroupSpec] = []
        shared: list[SharedOp] = []
        # Shared memory (§4.4): a group's result is read into registers right after the
        # barrier that publishes it, and the next group writes its result only after a
        # barrier of its own, so one slot per row of the block serves every group (per
        # accumulator type); the partials buffer is likewise reused by every group.
        # The result slots are placed by the dominance-based allocator (fsir/codegen/
        # smem.py): a slot is read only by its own group (into registers, right after
        # the barrier publishing it), so it is dead at every later group, and all the
        # reductions of an accumulator type share one slot's space.
        accs: dict[Attribute, list[Request]] = {}
        for i, r in enumerate(layout.reduces):
            spec = GroupSpec([r.result], comp, where)
            if where == "shared":
                acc = accumulator_type(r.result.type.element_type)
                nbytes = element_bytes(acc)
                accs.setdefault(acc, []).append(Request(f"g{i}", rows_per_block * nbytes, i, (i,), nbytes))
                spec.buffer = f"results_{acc}"
            groups.append(spec)
        idom = dominators(chain(list(range(len(layout.reduces))), {}), 0)
        for acc, requests in accs.items():
            nbytes = element_bytes(acc)
            placement = allocate(requests, idom)
            for req in requests:
                groups[req.writer].offset = placement.offsets[req.name] // nbytes
            space = IntegerAttr(3, i64)
            partials = block if interleaved else block // WARP  # per thread / per warp
            shared.append(SharedOp(f"partials_{acc}", MemRefType(acc, [partials], memory_space=space)))
            shared.append(SharedOp(f"results_{acc}", MemRefType(acc, [placement.size // nbytes],
                                                                memory_space=space)))
        # Outputs sharing their row dims and shape are computed in one loop.
        by_space: dict[tuple, list[SSAValue]] = {}
        for v, dims in zip(layout.roots, layout.root_dims):
            by_space.setdefault((_shape_key(v), dims), []).append(v)
        for (_, dims), values in by_space.items():
            groups.append(GroupSpec(values, comp, "global", row_dims=dims))
        by_shape: dict[tuple, list[SSAValue]] = {}
        for v in layout.packed:
            by_shape.setdefault(_shape_key(v), []).append(v)
        for values in by_shape.values():
            groups.append(GroupSpec(values, "thread", "global", packed=True))
        k = layout.rows
        params = {"threads_per_row": per_row, "rows_per_block": rows_per_block}
        if interleaved:
            params["interleaved"] = 1
        steps = 1
        if config.slots:
            params["elements_per_thread"] = config.slots
            steps = config.steps
            if steps > 1:
                params["row_steps"] = steps
        grid = DYNAMIC if k is None else max(1, -(-k // (rows_per_block * steps)))
        return self.kernel("row", params, (grid, 1, 1), (block, 1, 1), groups, shared)

    def root_row_dims(self, v: SSAValue, row_shape, is_subroot) -> tuple[int, ...]:
        shape = shape_of(v.type)
        reads = subroot_reads(v, tuple(range(len(shape))), is_subroot)
        dims = row_dims_of(shape, row_shape, [s for _, s in reads])
        if dims is not None:
            return dims
        owner = v.owner if isinstance(v.owner, Operation) else self.fusion
        raise _error(owner, f"result {fmt_shape(shape)} cannot be split into the rows "
                            f"({fmt_shape(row_shape)}) of the fusion's reductions without inter-block communication")

    # -- building the kernel op --------------------------------------------------------

    def kernel(self, mapping: str, params: dict[str, int], grid, block, groups: list[GroupSpec],
               shared: list[SharedOp]) -> KernelOp:
        body = Block(arg_types=[a.type for a in self.block.args])
        env: dict[SSAValue, SSAValue] = dict(zip(self.block.args, body.args))
        for old, new in env.items():
            new.name_hint = old.name_hint
        for s in shared:
            body.add_op(s)
        produced: dict[SSAValue, SSAValue] = {}
        for spec in groups:
            stop = lambda v: v in env  # noqa: E731  (block args and earlier groups' results)
            needed = closure(spec.values, stop)
            gblock = Block()
            local_env = dict(env)
            for op in self.order:
                if op in needed:
                    copy = op.clone(value_mapper=local_env)
                    gblock.add_op(copy)
                    local_env.update(zip(op.results, copy.results))
            gblock.add_op(YieldOp([local_env[v] for v in spec.values]))
            g = GroupOp(spec.composition, spec.location, [v.type for v in spec.values], Region(gblock),
                        spec.buffer, spec.offset)
            if spec.row_dims is not None:
                g.attributes["row_dims"] = DenseArrayBase.from_list(i64, list(spec.row_dims))
            if spec.packed:
                g.attributes["packed"] = UnitAttr()
            body.add_op(g)
            for v, r in zip(spec.values, g.results):
                # later groups read sub-root results; the root groups' outputs live only
                # in global memory, so a later group recomputes what it needs of them
                if spec.location != "global":
                    env[v] = r
                produced[v] = r
                r.name_hint = v.name_hint
        body.add_op(YieldOp([produced.get(v, env.get(v)) for v in self.yields]))
        k = KernelOp(self.name, mapping, params, grid, block, list(self.fusion.operands),
                     [r.type for r in self.fusion.results], Region(body),
                     cost=self.cost(grid, block, shared))
        k.location = self.fusion.location
        return k

    def cost(self, grid, block, shared: list[SharedOp]) -> dict[str, Attribute]:
        """What the first version can say statically; the latency-evaluator issue adds
        `cycles` (L = N_wave × L_warp), `occupancy` and `instructions` (§4.3)."""
        out: dict[str, Attribute] = {}
        if DYNAMIC not in grid:
            threads = math.prod(grid) * math.prod(block)
            out["warps"] = IntegerAttr(-(-threads // WARP), i64)
        tensors = [*self.fusion.operands, *self.fusion.results]
        sizes = [_numel(shape_of(v.type)) for v in tensors]
        if None not in sizes:
            total = sum(s * element_bytes(v.type.element_type) for s, v in zip(sizes, tensors))  # type: ignore[union-attr]
            out["global_bytes"] = IntegerAttr(total, i64)
        out["smem_bytes"] = IntegerAttr(sum(s.bytes for s in shared), i64)
        return out


def _segment(longest: int) -> int:
    """Rows shorter than a warp get the smallest power-of-two segment of lanes that
    covers them, so short rows do not idle most of a warp."""
    return min(WARP, max(2, 1 << (max(longest, 2) - 1).bit_length()))


# Every row schedule is correct for any fusion the row mapping accepts (any dims); they
# differ in speed. name -> longest row -> (threads per row, composition, storage, interleaved)
ROW_SCHEDULES = {
    "thread": lambda longest: (1, "thread", "reg", False),
    "warp": lambda longest: (_segment(longest), "warp", "lanes", False),
    "block": lambda longest: (BLOCK, "block", "shared", False),
    # COLUMN_SLICES threads per row, the rows of a block interleaved (consecutive threads
    # take consecutive rows, so column loads stay coalesced); slices meet in shared memory
    "interleaved": lambda longest: (COLUMN_SLICES, "block", "shared", True),
}


def default_row_schedule(trailing: bool, longest: int, rows: int | None) -> str:
    """The first version's rules (the latency-evaluator issue will choose by cost):
    column reductions get a thread per row, or interleaved slices when their rows are
    few and long; row reductions a warp (segment) up to 512 elements, else a block."""
    if not trailing:
        if longest >= COLUMN_SPLIT_MIN and (rows is None or rows < COLUMN_THREAD_ROWS):
            return "interleaved"
        return "thread"
    if longest <= 1:
        return "thread"
    return "warp" if longest <= WARP_ROW_LIMIT else "block"


def _shape_key(v: SSAValue) -> tuple:
    """Outputs with equal keys share a loop: equal static shapes (a `?` shape may differ
    from any other at run time, so it gets a loop of its own)."""
    shape = shape_of(v.type)
    return (shape, id(v)) if DYN in shape else (shape,)


def _unique(values: list[SSAValue]) -> list[SSAValue]:
    out: list[SSAValue] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def codegen_function(f: func.FuncOp, row_schedule: str = "auto", gpu: str = "H100", registers: bool = True,
                     gemm: GemmConfig | None = None) -> None:
    # Ops left outside every fusion become kernels of their own (free reshapes excepted);
    # ops and fusions whose results nobody uses need no kernel.
    for op in reversed(list(f.body.block.ops)):
        if (op.name.startswith("graph.") or isinstance(op, FusionOp)) and all(not r.uses for r in op.results):
            op.detach()
            op.erase()
    for op in list(f.body.block.ops):
        if op.name.startswith("graph.") and not is_free(op):
            make_fusion([op])
    index = 0
    chosen: dict = {}
    for op in list(f.body.block.ops):
        if isinstance(op, FusionOp):
            kernel = FusionCodegen(op, f"{f.sym_name.data}_k{index}", row_schedule, gpu, registers, gemm,
                                   chosen).build()
            index += 1
            f.body.block.insert_op_before(kernel, op)
            for old, new in zip(op.results, kernel.results):
                new.name_hint = old.name_hint
                old.replace_all_uses_with(new)
            op.detach()
            op.erase(safe_erase=False)


@dataclass(frozen=True)
class StitchCodegenPass(ModulePass):
    """stitch.fusion → schedule.kernel (one kernel per fusion).

    rows=auto|thread|warp|block|interleaved: the schedule of every row kernel (auto:
    the latency-evaluator's choice among all configurations; the others force one,
    e.g. to compare them). gpu=H100|A100|V100|T4: the GPU the evaluator models.
    registers=auto|off: off never keeps a row in registers (every group re-reads it).
    gemm=auto|BMxBNxBK/TMxTN: the configuration of every GEMM kernel (auto: the
    evaluator's choice among `gemm_configs.CANDIDATES`; e.g. 16x16x16/1x1 forces the
    untuned one-output-per-thread kernel).
    """

    name = "stitch-codegen"

    rows: str = "auto"
    gpu: str = "H100"
    registers: str = "auto"
    gemm: str = "auto"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.registers not in ("auto", "off"):
            raise UserError(f"stitch-codegen: registers={self.registers} (expected auto or off)")
        gemm = None if self.gemm == "auto" else GemmConfig.parse(self.gemm)
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                codegen_function(f, self.rows, self.gpu, self.registers == "auto", gemm)
