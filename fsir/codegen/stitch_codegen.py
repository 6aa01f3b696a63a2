"""`stitch-codegen`: decide how each fusion runs (stitch → schedule, FusionStitching §4).

Each `stitch.fusion` becomes one `schedule.kernel` with one of three mappings:

- `loop`: no reduction. One thread per output element, or per `vector_width` V
  consecutive elements; every other op is inlined into its consumers by index
  propagation (XLA loop fusion, thread composition). Outputs of different shapes share
  the loop (kernel packing).
- `row`: the fusion has reductions; the coordinates they keep are the kernel's rows.
  Each reduction is a sub-root leading a group; the outputs form the root group. A row
  belongs to one thread (`thread`: column reductions, whose neighbouring rows are
  neighbouring in memory; with few rows, 8 interleaved threads per row combining
  through shared memory, `block`), one warp (`warp`: a shuffle tree, rows of at most 512
  elements) or one block (`block`: shuffles, then shared memory). A group's light
  producers are recomputed per element; its result stays in registers, warp lanes or
  a shared-memory slot for later groups, which must read only the rows they own.
  Outputs that read no reduction (independent parts packed into the kernel) are
  `packed` groups: every thread of the grid takes their elements in turn. An expensive
  elementwise op (exp, tanh, erf, div, ...) read by several groups may lead a group of
  its own before its first reader (§4.1: enumerated both ways), its values kept in
  each thread's registers when the row is cached, else as rows in shared memory.
- `gemm`: a `graph.dot` (its light producers inlined into the tile loads) as a tiled
  shared-memory GEMM, each thread computing a micro-tile of outputs in registers; the
  tile sizes are chosen by the latency-evaluator like row configurations
  (`fsir/codegen/gemm_configs.py`) unless `gemm=` forces them.

Row kernels are configured by the latency-evaluator (§4.2–4.3, `fsir/codegen/
row_configs.py`): every schedule above with 128–1024 threads per block, the row kept in
registers (`elements_per_thread` unrolled slots per thread, so values read before a
reduction and used after it are loaded once) or re-read, and `row_steps` row-blocks per
block (row-invariant operands such as γ and β loaded once for all of them) are lowered
and scored, and the fastest is kept with its estimate in `cost`. Loop and row kernels
also enumerate the vector width V (1, 2, 4 where static shapes allow it: a loop thread's V
elements, register slots of V elements), which the vectorizer turns into one memory
instruction per V elements (`fsir/lowering/vectorize.py`). `rows=` forces a
schedule (then, and for `?` row counts, the rules above choose); `registers=off` never
keeps rows in registers; `subroots=all|none` forces the expensive sub-roots on or off.
Shared result slots and sub-root rows are placed by `fsir/codegen/smem.py`.
GEMM kernels are configured the same way (`fsir/codegen/gemm_configs.py`: block tile,
k-step, micro-tile), scored with the dependence-aware L_warp (`estimate(ilp=True)`):
a micro-tile's multiply-adds are independent, and charging each its full latency
would always favour one output per thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, StringAttr, UnitAttr, BFloat16Type, Float16Type, Float32Type, IntegerAttr, IntegerType, MemRefType, ModuleOp, TensorType, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from fsir.codegen.locality import local, row_dims_of, subroot_reads
from fsir.codegen.gemm_configs import DYNAMIC_DEFAULT, GemmConfig, gemm_candidates
from fsir.codegen.gemm_configs import shared_bytes as gemm_shared_bytes
from fsir.codegen.row_configs import LoopConfig, RowConfig, RowLayout, choose, row_candidates
from fsir.codegen.summary import gemm_summary, loop_summary, row_summary
from fsir.codegen.smem import Request, allocate, chain, dominators
from fsir.dialects import graph
from fsir.dialects.gpu import VECTOR_WIDTHS
from fsir.dialects.graph import DYN, fmt_shape, shape_of, shapes_compatible
from fsir.dialects.schedule import DYNAMIC, GroupOp, KernelOp, SharedOp, YieldOp, element_bytes
from fsir.dialects.stitch import FusionOp
from fsir.errors import UserError
from fsir.fusion.explore import fuse_leftover_constants, is_free, make_fusion
from fsir.gpuspec import gpu_spec
from fsir.ir import location_of

BLOCK = 256  # threads per block of loop and row kernels
WARP = 32
WARP_ROW_LIMIT = 512  # rows up to this length get one warp (BladeDISC's threshold)
COLUMN_SLICES = 8  # threads per row of a column reduction with few rows
COLUMN_SPLIT_MIN = 64  # ... when its rows are at least this long
COLUMN_THREAD_ROWS = 8192  # with this many rows a thread per row already fills the GPU
STATIC_SMEM_LIMIT = 48 * 1024  # bytes of static .shared arrays ptxas accepts per kernel
SUBROOT_MODES = ("auto", "all", "none")

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


@dataclass
class SubRoot:
    """An expensive elementwise op that may lead a group of its own (§4.1): its value,
    which of its dims are the rows, its row length (None: `?`), the groups reading it
    and whether each reads it at its own columns (so registers can hold it)."""

    value: SSAValue
    row_dims: tuple[int, ...]
    length: int | None
    readers: list[tuple]
    in_registers: bool


class FusionCodegen:
    """Builds the schedule.kernel of one fusion."""

    def __init__(self, fusion: FusionOp, name: str, row_schedule: str = "auto", gpu: str = "H100",
                 registers: bool = True, subroots: str = "auto", vector: int | None = None,
                 gemm: GemmConfig | None = None, chosen: dict | None = None):
        self.subroots = subroots  # auto | all | none (checked by the pass)
        if row_schedule not in ("auto", *ROW_SCHEDULES):
            raise UserError(f"stitch-codegen: unknown row schedule '{row_schedule}' "
                            f"(expected auto, {', '.join(ROW_SCHEDULES)})")
        self.row_schedule = row_schedule
        self.vector = vector  # a forced vector width (None: the evaluator's choice)
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
        widths = self.vector_widths([*self.fusion.operands, *outs], [shape_of(v.type)[-1:] for v in outs])
        return choose([LoopConfig(BLOCK, v) for v in widths], lambda c: self.loop_kernel(c, outs), self.spec,
                      summarize=loop_summary)

    def loop_kernel(self, config: LoopConfig, outs: list[SSAValue]) -> KernelOp:
        sizes = [_numel(shape_of(v.type)) for v in outs]
        n = None if None in sizes else max(sizes)
        grid = DYNAMIC if n is None else max(1, -(-n // (config.block * config.vector)))
        groups = [GroupSpec(outs, "thread", "global")]
        params = {"elements_per_thread": config.vector}
        if config.vector > 1:
            params["vector_width"] = config.vector
        return self.kernel("loop", params, (grid, 1, 1), (config.block, 1, 1), groups, [])

    def vector_widths(self, tensors: list[SSAValue], rows: list[tuple[int, ...]]) -> list[int]:
        """The vector widths V a kernel may use (FusionStitching §4.2's enumerated
        launch dimensions): static shapes, elements of at most 4 bytes, every row a
        vector runs along (`rows`: innermost extents) a multiple of V, and every tensor
        the kernel reads or writes with an innermost extent of 1 or a multiple of V,
        so its accesses stay aligned. A forced width applies where it is legal."""
        legal = [1]
        for vec in VECTOR_WIDTHS:
            if all(r and DYN not in r and r[-1] % vec == 0 for r in rows) and all(
                    DYN not in shape_of(t.type) and element_bytes(t.type.element_type) <= 4  # type: ignore[attr-defined]
                    and (shape_of(t.type)[-1:] in ((), (1,)) or shape_of(t.type)[-1] % vec == 0)
                    for t in tensors):
                legal.append(vec)
        if self.vector is not None:
            return [self.vector] if self.vector in legal else [1]
        return legal

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
        kernel = choose(configs, lambda c: self.gemm_kernel(dot, c), self.spec, summarize=gemm_summary)
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
        layout.subroots = self.expensive_subroots(layout, row_shape)
        default = default_row_schedule(trailing, longest, _numel(row_shape))
        vectors = self.row_vector_widths(reduces, roots, root_dims, row_shape) if trailing and not packed else [1]
        if self.row_schedule != "auto" or k is None:
            # forced, or a `?` row count the evaluator cannot count waves for: the rules
            vec = self.vector if self.vector in vectors else 1
            base = RowConfig.make(self.row_schedule if self.row_schedule != "auto" else default, BLOCK,
                                  longest, layout, self.spec, cached=self.registers, vector=vec)
            configs = self.with_subroots([base], layout)
            if len(configs) == 1 or k is None:
                return self.row_kernel(configs[0], layout)
            return choose(configs, lambda c: self.row_kernel(c, layout), self.spec, summarize=row_summary)
        configs = [c for c in row_candidates(trailing, longest, layout, self.spec, tuple(v for v in vectors if v > 1))
                   if self.registers or not c.slots]
        if self.vector is not None:  # forced: the configurations of that width, if any
            configs = [c for c in configs if c.vector == self.vector] or [c for c in configs if c.vector == 1]
        return choose(self.with_subroots(configs, layout), lambda c: self.row_kernel(c, layout), self.spec,
                      summarize=row_summary)

    # -- expensive elementwise sub-roots (§4.1-4.2) ----------------------------------------

    def expensive_subroots(self, layout: RowLayout, row_shape) -> list[SubRoot]:
        """The expensive elementwise ops worth a group of their own: read by two or more
        groups (each of which would otherwise recompute them, and in a looping
        configuration re-read their inputs), every read at the reader's own row.

        Candidates whose rows cannot be named, with one element per row, that are
        outputs (their root group stores them) or that packed parts read (those run
        outside the row mapping) are left to index propagation. Making one op a
        sub-root changes who reads another (exp(tanh(x)) with both sub-roots: only
        exp's group reads tanh), so candidates are dropped until every remaining one
        has two readers, all reading it at their own rows."""
        red = {r.result for r in layout.reduces}
        packed_ops = closure(layout.packed, lambda v: v in red or not isinstance(v.owner, Operation))
        outputs = set(self.yields)
        rows: dict[SSAValue, tuple[int, ...]] = {}
        for op in self.ops:
            if graph.op_class(op) != "expensive" or op in packed_ops or op.results[0] in outputs:
                continue
            v = op.results[0]
            shape = shape_of(v.type)
            reads = subroot_reads(v, tuple(range(len(shape))), lambda u: u in red)
            dims = row_dims_of(shape, row_shape, [s for _, s in reads])
            # one value per row (LayerNorm's mean): each reader computes it once per
            # thread (hoisted out of its column loop), cheaper than publishing it
            if dims is not None and _numel([n for d, n in enumerate(shape) if d not in dims]) != 1:
                rows[v] = dims
        while True:
            readers: dict[SSAValue, list] = {v: [] for v in rows}
            local_rows = {v: True for v in rows}
            same_slot = {v: True for v in rows}
            for key, starts, dims, shape in self.consumer_spaces(layout, rows):
                cols = [d for d in range(len(shape)) if d not in dims]
                for start in starts:
                    for u, s in subroot_reads(start, tuple(range(len(shape))), lambda u: u in red or u in rows):
                        if u not in rows:
                            continue
                        if key not in readers[u]:
                            readers[u].append(key)
                        ushape = shape_of(u.type)
                        ucols = [d for d in range(len(ushape)) if d not in rows[u]]
                        local_rows[u] &= local(tuple(s[d] for d in rows[u]), dims, row_shape)
                        # in registers a thread holds the columns lane + k * threads_per_row
                        # of E's row: a reader must want exactly those (its own columns),
                        # or E has one value per row, which every thread of the row holds
                        same_slot[u] &= not ucols or (tuple(s[d] for d in ucols) == tuple(cols)
                                                      and [ushape[d] for d in ucols] == [shape[d] for d in cols])
            drop = [v for v in rows if len(readers[v]) < 2 or not local_rows[v]]
            if not drop:
                break
            for v in drop:
                del rows[v]
        out = []
        for v, dims in rows.items():
            shape = shape_of(v.type)
            out.append(SubRoot(v, dims, _numel([n for d, n in enumerate(shape) if d not in dims]), readers[v],
                               same_slot[v]))
        return out

    def consumer_spaces(self, layout: RowLayout, subroots):
        """Every row group that may read a sub-root: (key, the values it starts index
        propagation from, its row dims, its element-space shape)."""
        for i, r in enumerate(layout.reduces):
            rank = len(shape_of(r.input.type))
            reduced = r.dims.get_values()
            yield ("r", i), [r.input], tuple(d for d in range(rank) if d not in reduced), shape_of(r.input.type)
        for key, values, dims in _root_groups(layout):
            yield ("o", key), values, dims, shape_of(values[0].type)
        for v, dims in subroots.items():
            yield ("e", v), list(v.owner.operands), dims, shape_of(v.type)

    def with_subroots(self, configs: list[RowConfig], layout: RowLayout) -> list[RowConfig]:
        """Each configuration with the expensive sub-roots and without (`subroots=auto`),
        only with (`all`, where they fit) or only without (`none`). All the eligible ops
        become sub-roots or none do: the choice at most doubles the candidates the
        evaluator lowers, where a choice per op would multiply them by 2^ops, and one
        op's reads already decide which storage fits the others. Register-cached
        configurations keep E in each thread's slots (every reader must read its own
        columns); looping ones keep E's rows in shared memory (static rows that fit)."""
        subs = layout.subroots
        if self.subroots == "none" or not subs:
            return configs
        out: list[RowConfig] = []
        names = tuple(s.value.owner.name.removeprefix("graph.") for s in subs)
        for c in configs:
            fits = all(s.in_registers for s in subs) if c.slots else (
                all(s.length for s in subs) and self.row_smem(replace(c, subroots=names), layout) <= self.smem_limit)
            variant = replace(c, subroots=names) if fits else None
            if variant is None:
                out.append(c)
            elif self.subroots == "all":
                out.append(variant)
            else:
                out += [c, variant]
        return out

    @property
    def smem_limit(self) -> int:
        """Shared memory a block may declare: the GPU's, and at most the 48 KB ptxas
        allows static `.shared` arrays (the PTX printer declares no dynamic ones)."""
        return min(self.spec.smem_per_block, STATIC_SMEM_LIMIT)

    def row_smem(self, config: RowConfig, layout: RowLayout) -> int:
        return sum(s.bytes for s in self.row_shared(config, layout, self.group_order(config, layout))[0])

    def group_order(self, config: RowConfig, layout: RowLayout) -> list[tuple]:
        """The row groups in execution order: reductions, then the root groups, each
        expensive sub-root (if the configuration has them) just before its first reader
        (so its shared rows live as briefly as possible). Inserting from the last op
        back puts a sub-root read by another sub-root before its reader."""
        order: list[tuple] = [("r", i) for i in range(len(layout.reduces))]
        order += [("o", key) for key, _, _ in _root_groups(layout)]
        if config.subroots:
            for s in reversed(layout.subroots):
                order.insert(min(order.index(c) for c in s.readers), ("e", s.value))
        return order

    def row_vector_widths(self, reduces, roots, root_dims, row_shape) -> list[int]:
        """Vector widths of a row kernel: its rows (the reduced dims, the outputs'
        column dims) run along vectors; tensors of the row shape are read per row."""
        rows = []
        for r in reduces:
            src = shape_of(r.input.type)
            rows.append(tuple(src[d] for d in sorted(r.dims.get_values())))
        for v, dims in zip(roots, root_dims):
            shape = shape_of(v.type)
            rows.append(tuple(shape[d] for d in range(len(shape)) if d not in dims))
        tensors = [t for t in [*self.fusion.operands, *roots] if not shapes_compatible(shape_of(t.type), row_shape)]
        return self.vector_widths(tensors, rows)

    def row_kernel(self, config: "RowConfig", layout: "RowLayout") -> KernelOp:
        """The schedule.kernel of the row mapping under one configuration."""
        block = config.block
        per_row, comp, where, interleaved = config.per_row, config.composition, config.storage, config.interleaved
        rows_per_block = block // per_row
        order = self.group_order(config, layout)
        shared, places = self.row_shared(config, layout, order)
        # An expensive sub-root in a register-cached configuration stays in the slots of
        # the thread that computed it: every group maps column c of a row to the same
        # lane (c = lane + k * threads_per_row), so its readers find it in their own
        # registers and no shuffle or barrier is needed. Looping configurations keep its
        # rows in shared memory instead.
        e_where = "shared" if not config.slots else ("lanes" if comp == "warp" else "reg")
        roots = {key: (values, dims) for key, values, dims in _root_groups(layout)}
        groups: list[GroupSpec] = []
        for key in order:
            kind, item = key
            if kind == "r":
                spec = GroupSpec([layout.reduces[item].result], comp, where)
            elif kind == "e":
                sub = next(s for s in layout.subroots if s.value is item)
                spec = GroupSpec([item], comp, e_where, row_dims=sub.row_dims)
            else:
                spec = GroupSpec(roots[item][0], comp, "global", row_dims=roots[item][1])
            if key in places:
                spec.buffer, spec.offset = places[key]
            groups.append(spec)
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
            params["elements_per_thread"] = config.slots * config.vector
            steps = config.steps
            if steps > 1:
                params["row_steps"] = steps
            if config.vector > 1:
                params["vector_width"] = config.vector
        grid = DYNAMIC if k is None else max(1, -(-k // (rows_per_block * steps)))
        return self.kernel("row", params, (grid, 1, 1), (block, 1, 1), groups, shared)

    def row_shared(self, config: RowConfig, layout: RowLayout, order: list[tuple]):
        """The kernel's shared buffers and each group's (buffer, offset), placed by the
        dominance-based allocator (§4.4, fsir/codegen/smem.py) over the groups in
        `order`.

        A reduction's result slot is read into registers right after the barrier that
        publishes it, so it is dead at every later group and the reductions of one
        accumulator type share one slot per row of the block; the partials buffer is
        likewise reused by every group. An expensive sub-root's rows (rows_per_block x
        its row length) stay live until its last reader group, after which a later
        sub-root's rows may take their space."""
        block, per_row = config.block, config.per_row
        rows_per_block = block // per_row
        index = {key: i for i, key in enumerate(order)}
        subs = [s for s in layout.subroots if ("e", s.value) in index]
        # Every group runs, in order: the group graph is the program-order chain. (A
        # sub-root -> reader edge would add a path skipping the groups in between, which
        # no execution takes, and hide that they are done.)
        idom = dominators(chain(list(range(len(order))), {}), 0)
        arenas: dict[tuple[str, Attribute], list[Request]] = {}
        if config.storage == "shared":
            for i, r in enumerate(layout.reduces):
                acc = accumulator_type(r.result.type.element_type)
                nbytes = element_bytes(acc)
                node = index[("r", i)]
                arenas.setdefault(("results", acc), []).append(Request(f"r{i}", rows_per_block * nbytes, node,
                                                                       (node,), nbytes))
        if not config.slots:
            for s in subs:
                elem = s.value.type.element_type
                nbytes = element_bytes(elem)
                arenas.setdefault(("rows", elem), []).append(Request(
                    f"e{index[('e', s.value)]}", rows_per_block * s.length * nbytes, index[("e", s.value)],
                    tuple(index[c] for c in s.readers)))
        shared: list[SharedOp] = []
        places: dict[tuple, tuple[str, int]] = {}
        space = IntegerAttr(3, i64)
        for (kind, elem), requests in arenas.items():
            nbytes = element_bytes(elem)
            placement = allocate(requests, idom)
            for req in requests:
                places[order[req.writer]] = (f"{kind}_{elem}", placement.offsets[req.name] // nbytes)
            if kind == "results":
                partials = block if config.interleaved else block // WARP  # per thread / per warp
                shared.append(SharedOp(f"partials_{elem}", MemRefType(elem, [partials], memory_space=space)))
            shared.append(SharedOp(f"{kind}_{elem}", MemRefType(elem, [-(-placement.size // nbytes)],
                                                                memory_space=space)))
        return shared, places

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


def _root_groups(layout: RowLayout) -> list[tuple[tuple, list[SSAValue], tuple[int, ...]]]:
    """The root groups: outputs sharing their row dims and shape are computed in one
    loop. (key, outputs, row dims) in order."""
    by_space: dict[tuple, list[SSAValue]] = {}
    for v, dims in zip(layout.roots, layout.root_dims):
        by_space.setdefault((_shape_key(v), dims), []).append(v)
    return [(key, values, key[1]) for key, values in by_space.items()]


def _unique(values: list[SSAValue]) -> list[SSAValue]:
    out: list[SSAValue] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def codegen_function(f: func.FuncOp, row_schedule: str = "auto", gpu: str = "H100", registers: bool = True,
                     subroots: str = "auto", vector: int | None = None, gemm: GemmConfig | None = None) -> None:
    # Ops left outside every fusion become kernels of their own (free reshapes excepted);
    # ops and fusions whose results nobody uses need no kernel.
    for op in reversed(list(f.body.block.ops)):
        if (op.name.startswith("graph.") or isinstance(op, FusionOp)) and all(not r.uses for r in op.results):
            op.detach()
            op.erase()
    # Constants are cloned into the kernels that use them (as immediates or constant
    # buffers), not made into copy kernels first.
    for op in list(f.body.block.ops):
        if op.name.startswith("graph.") and not is_free(op) and not isinstance(op, graph.ConstantOp):
            make_fusion([op])
    fuse_leftover_constants(f)
    index = 0
    chosen: dict = {}
    for op in list(f.body.block.ops):
        if isinstance(op, FusionOp):
            kernel = FusionCodegen(op, f"{f.sym_name.data}_k{index}", row_schedule, gpu, registers,
                                   subroots, vector, gemm, chosen).build()
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
    subroots=auto|all|none: expensive elementwise ops read by several groups lead
    groups of their own (registers or shared rows) in the evaluator's choice (auto),
    wherever they can (all) or never (none: every reader recomputes them).
    vector=auto|1|2|4: the elements a thread moves per memory instruction (auto: the
    evaluator's choice among the legal widths; a forced width applies to the kernels
    where it is legal, the others get 1).
    gemm=auto|BMxBNxBK/TMxTN: the configuration of every GEMM kernel (auto: the
    evaluator's choice among `gemm_configs.CANDIDATES`; e.g. 16x16x16/1x1 forces the
    untuned one-output-per-thread kernel).
    """

    name = "stitch-codegen"

    rows: str = "auto"
    gpu: str = "H100"
    registers: str = "auto"
    subroots: str = "auto"
    vector: str | int = "auto"
    gemm: str = "auto"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.registers not in ("auto", "off"):
            raise UserError(f"stitch-codegen: registers={self.registers} (expected auto or off)")
        if self.subroots not in SUBROOT_MODES:
            raise UserError(f"stitch-codegen: subroots={self.subroots} (expected {', '.join(SUBROOT_MODES)})")
        if str(self.vector) not in ("auto", "1", "2", "4"):
            raise UserError(f"stitch-codegen: vector={self.vector} (expected auto, 1, 2 or 4)")
        vector = None if str(self.vector) == "auto" else int(self.vector)
        gemm = None if self.gemm == "auto" else GemmConfig.parse(self.gemm)
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                codegen_function(f, self.rows, self.gpu, self.registers == "auto", self.subroots, vector, gemm)
