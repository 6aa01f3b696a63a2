"""The `row` mapping: a fusion with reductions (FusionStitching §4.1-4.4); the coordinates
the reductions keep are the kernel's rows.

Each reduction is a sub-root leading a group; the outputs form the root group. A row
belongs to one thread (`thread`: column reductions, whose neighbouring rows are
neighbouring in memory; with few rows, 8 interleaved threads per row combining through
shared memory, `interleaved`), one warp (`warp`: a shuffle tree, rows of at most 512
elements) or one block (`block`: shuffles, then shared memory). A group's light
producers are recomputed per element; its result stays in registers, warp lanes or a
shared-memory slot for later groups, which must read only the rows they own. Outputs
that read no reduction (independent parts packed into the kernel) are `packed` groups:
every thread of the grid takes their elements in turn. An expensive elementwise op
(exp, tanh, erf, div, ...) read by several groups may lead a group of its own before its
first reader (§4.1: enumerated both ways), its values kept in each thread's registers
when the row is cached, else as rows in shared memory placed by the dominance-based
allocator (`fsir/codegen/smem.py`).

The configurations (§4.2-4.3, `RowConfig`, `row_configs.py`): every schedule above with 128-1024 threads
per block, the row kept in registers (`elements_per_thread` unrolled slots per thread,
so values read before a reduction and used after it are loaded once) or re-read,
`row_steps` row-blocks per block (row-invariant operands such as γ and β loaded once for
all of them), vector widths (register slots of V elements) and the expensive sub-roots
on or off; each is lowered and scored, and the fastest is kept. `rows=` forces a
schedule (then, and for `?` row counts, the rules choose: `default_row_schedule`),
`registers=off` never keeps rows in registers, `subroots=all|none` forces the expensive
sub-roots on or off.

Legality (`row_problem`, asked by the explorer through `accepts` and enforced by
`build`): every reduction keeps the same row shape, each reduction reads earlier
reductions' results only at the row it reduces, and every output that reads a reduction
can be split into those rows (outputs reading none are packed parts); anything else
needs inter-block communication.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from xdsl.dialects.builtin import IntegerAttr, MemRefType, i64
from xdsl.ir import Attribute, Operation, SSAValue

from fsir.codegen.latency import UNKNOWN_TRIP_COUNT
from fsir.codegen.locality import local, operand_syms, row_dims_of, subroot_reads
from fsir.codegen.mappings.base import (
    BLOCK,
    FusionContext,
    GroupSpec,
    Mapping,
    accumulator_type,
    closure,
    max_known,
    numel,
    op_error,
    scoring_memo,
    unique,
)
from fsir.codegen.mappings.row_configs import RowConfig, RowLayout, SubRoot, default_row_schedule, row_candidates
from fsir.codegen.smem import Request, allocate, chain, dominators
from fsir.codegen.summary import Summary, element_bytes_of, split_costs
from fsir.dialects import graph, schedule
from fsir.dialects.graph import DYN, fmt_shape, shape_of, shapes_compatible
from fsir.dialects.schedule import (
    DYNAMIC,
    WARP,
    Composition,
    KernelOp,
    RowParamsAttr,
    SharedOp,
    Storage,
    element_bytes,
    inner_value,
    int_values,
)
from fsir.errors import UserError
from fsir.gpuspec import STATIC_SHARED_LIMIT, GpuSpec
from fsir.lowering.emit import elem_type
from fsir.lowering.rows import RowLowering, group_reduce, row_count
from fsir.lowering.scalar import Index
from fsir.lowering.shapes import ShapeCalc


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



# -- legality ----------------------------------------------------------------------------

# operand_syms is pure in (op, syms) and the explorer asks about the same ops many
# times; a bounded memo keeps can_generate cheap.
_SYMS_MEMO: dict[tuple[Operation, tuple], list] = {}


def memo_operand_syms(op: Operation, syms: tuple) -> list:
    key = (op, syms)
    out = _SYMS_MEMO.get(key)
    if out is None:
        if len(_SYMS_MEMO) > 1_000_000:
            _SYMS_MEMO.clear()
        out = _SYMS_MEMO[key] = operand_syms(op, syms)
    return out


EMPTY: frozenset = frozenset()


class Reads:
    """Symbolic indices at which values read the sub-roots, within the set `inside`
    (fsir.codegen.locality.subroot_reads, stopping at the set's inputs), memoized per
    (value, index) so all walks of one check cost O(ops) together."""

    def __init__(self, inside, subroots):
        self.inside = inside
        self.subroots = subroots
        self.memo: dict[tuple, frozenset] = {}

    def __call__(self, value: SSAValue, syms: tuple) -> frozenset:
        memo, inside, subroots = self.memo, self.inside, self.subroots
        stack = [(value, syms, False)]
        while stack:
            v, s, expanded = stack.pop()
            key = (v, s)
            if not expanded and key in memo:
                continue
            if v in subroots:
                memo[key] = frozenset((s,))
                continue
            op = v.owner
            if not isinstance(op, Operation) or op not in inside:
                memo[key] = EMPTY
                continue
            children = list(zip(op.operands, memo_operand_syms(op, s)))
            if expanded:
                memo[key] = EMPTY.union(*(memo[c] for c in children))
            else:
                stack.append((v, s, True))
                stack.extend((c[0], c[1], False) for c in children if c not in memo)
        return memo[(value, syms)]


def root_row_dims(v: SSAValue, row_shape, reads_of: Reads) -> tuple[int, ...] | None:
    """The dims of output `v` that are the rows (None: it cannot be split into them)."""
    shape = shape_of(v.type)
    return row_dims_of(shape, row_shape, list(reads_of(v, tuple(range(len(shape))))))


@dataclass(frozen=True)
class RowProblem:
    """Why a set of ops is not one row kernel: `reason` for the explorer, `message` for
    the error at `op` (None: the fusion)."""

    op: Operation | None
    reason: str
    message: str


def row_shapes_problem(a: Sequence[int], b: Sequence[int]) -> str | None:
    if shapes_compatible(a, b):
        return None
    return (f"reductions keep different row shapes ({fmt_shape(tuple(a))} and {fmt_shape(tuple(b))}): "
            "stitching them needs inter-block communication")


def row_problem(reduces: Sequence[graph.ReduceOp], outputs: Sequence[SSAValue], reads_of: Reads) -> RowProblem | None:
    """The row mapping's rules on `reduces` and the `outputs` (values used outside),
    with `reads_of` walking the set's ops (see the module docstring)."""
    row_shape = shape_of(reduces[0].result.type)
    for r in reduces[1:]:
        shape = shape_of(r.result.type)
        why = row_shapes_problem(row_shape, shape)
        if why is not None:
            return RowProblem(r, why, f"keeps a {fmt_shape(shape)} shape unlike the fusion's first reduction "
                                      f"({fmt_shape(row_shape)}); stitching them needs inter-block communication")
    for r in reduces:
        rank = len(shape_of(r.input.type))
        dims = sorted(int_values(r.dims))
        kept = tuple(d for d in range(rank) if d not in dims)
        for read in reads_of(r.input, tuple(range(rank))):
            if not local(read, kept, row_shape):
                return RowProblem(r, "a reduction reads a reduction result of a row it does not reduce: "
                                     "stitching them needs inter-block communication",
                                  "reads a reduction result of a row it does not reduce; stitching them needs "
                                  "inter-block communication")
    for v in outputs:
        if v in reads_of.subroots or not reads_of(v, tuple(range(len(shape_of(v.type))))):
            continue  # a sub-root, or a packed independent part
        if root_row_dims(v, row_shape, reads_of) is None:
            text = (f"{fmt_shape(shape_of(v.type))} cannot be split into the rows ({fmt_shape(row_shape)}) of the "
                    "fusion's reductions without inter-block communication")
            return RowProblem(v.owner if isinstance(v.owner, Operation) else None, f"output {text}", f"result {text}")
    return None


# -- the mapping -------------------------------------------------------------------------


def row_registers(tensors: int, cached: int, steps: int) -> int:
    """A row kernel thread's registers, fitted to the gpu-IR evaluator's liveness on the
    examples' row candidates (mean error 3 registers): every tensor's address; a
    strided loop's bounds and iteration values; or the cached slots, row steps' loop
    state and, for up to four steps (which ptxas unrolls), the next step's loads
    issued early."""
    if not cached:
        return round(23.4 + 1.26 * tensors)
    return round(15.8 + 1.63 * tensors + cached + 10.9 * (steps > 1) + 0.95 * cached * (2 <= steps <= 4))


def _combine(per_row: int, interleaved: bool) -> Counter[str]:
    """Combining a row's partials across its threads (`RowLowering.combine_row`)."""
    out: Counter[str] = Counter()
    if interleaved:
        out.update(smem=3 + per_row, barrier=2, alu=per_row + 4)
    elif 1 < per_row <= WARP:
        steps = per_row.bit_length() - 1
        out.update(shuffle=steps, alu=steps)
    elif per_row > WARP:
        out.update(shuffle=10, alu=16, smem=4, barrier=2)
    return out


def _yielded(g) -> SSAValue:
    return g.yielded()[0]


def _group_row(g, v: SSAValue) -> tuple[int | None, list[SSAValue]]:
    """A group's row length (None: `?`) and the values its row's elements start from:
    a reduction's input, else the group's results."""
    owner = v.owner
    if isinstance(owner, graph.ReduceOp):
        src = shape_of(owner.input.type)
        return _prod([src[d] for d in int_values(owner.dims)]), [owner.input]
    rd = g.row_dims()
    return _prod([n for d, n in enumerate(shape_of(v.type)) if d not in rd]), [inner_value(r) for r in g.results]


def _prod(dims) -> int | None:
    return None if DYN in dims else math.prod(dims)


_KEYS = "structural keys"  # the entry of a scoring memo holding `split_costs` keys


def _split_groups(k: KernelOp, groups: list[schedule.GroupOp], rows: list[tuple], inputs: set[SSAValue],
                  row_shape: tuple, cached: bool) -> list[tuple]:
    """`split_costs` of each group's row elements, in order: with `cached` (register
    slots) an input loaded or an op computed by an earlier group is not counted again.
    While `k` is a choice's prototype the results are kept for the configurations
    that store the groups alike (`scoring_memo`)."""
    memo = scoring_memo(k)
    # what `split_costs` reads of the groups: their values and which keep rows in shared memory
    key = (cached, row_shape,
           tuple((g.storage.data == Storage.SHARED, tuple(map(id, start))) for g, (_, start) in zip(groups, rows)))
    if memo is not None and key in memo:
        return memo[key]
    loaded: set = set()
    seen: set = set()
    # structural keys name the cloned ops alone, so the configurations share them
    keys: dict = {} if memo is None else memo.setdefault(_KEYS, {})
    out = []
    for _, start in rows:
        if not cached:
            loaded, seen = set(), set()
        out.append(split_costs(start, inputs, row_shape, loaded, seen, keys))
    if memo is not None:
        memo[key] = out
    return out


class RowMapping(Mapping):
    PARAMS = schedule.RowParamsAttr
    lowering = RowLowering

    def claims(self, ops: Sequence[Operation]) -> bool:
        return any(isinstance(op, graph.ReduceOp) for op in ops)

    def accepts(self, ops: Sequence[Operation]) -> str | None:
        reduces = [op for op in ops if isinstance(op, graph.ReduceOp)]
        inside = set(ops)
        outputs = [r for op in ops for r in op.results if any(u.operation not in inside for u in r.uses)]
        problem = row_problem(reduces, outputs, Reads(inside, {r.result for r in reduces}))
        return None if problem is None else problem.reason

    def pack(self, row_shape_a: Sequence[int] | None, row_shape_b: Sequence[int] | None) -> str | None:
        """`accepts(a + b)` for two accepted sets with no path between them (kernel
        packing), given their reductions' row shapes (None: no reduction): no walk from
        one part's reductions or outputs enters the other, so only the row shapes of
        the reductions must agree."""
        if row_shape_a is None or row_shape_b is None:
            return None
        return row_shapes_problem(row_shape_a, row_shape_b)

    def build(self, ctx: FusionContext) -> KernelOp:
        return RowKernels(self, ctx).build([op for op in ctx.ops if isinstance(op, graph.ReduceOp)])

    def summarize(self, k: KernelOp, spec: GpuSpec) -> Summary:
        """A row kernel's thread (`fsir/lowering/kernels.py`, `rows`): for each of its row
        steps, every group in order computes its row's elements (its share of the columns:
        unrolled register slots or a strided loop) by index propagation and combines a
        reduction's partials (shuffles, or shared memory and barriers); values at the row's
        index (a reduction's result and what is computed from it) cost once per row, and
        register-cached slots load each input once for all groups."""
        p = k.params
        assert isinstance(p, RowParamsAttr)
        per_row, cached, vector, steps = p.threads_per_row, p.elements_per_thread or 0, p.vector_width, p.row_steps
        inputs: set[SSAValue] = set(k.block.args)
        groups = [g for g in k.groups() if not g.packed]
        reduces = [g for g in groups
                   if g.storage.data != Storage.GLOBAL and isinstance(_yielded(g).owner, graph.ReduceOp)]
        row_shape = shape_of(_yielded(reduces[0]).type) if reduces else ()
        s = Summary()
        per_step: Counter[str] = Counter()
        hoisted: Counter[str] = Counter()  # row-invariant loads of cached steps, once per thread
        nbytes = 0
        out_bytes = 0
        rows = [_group_row(g, _yielded(g)) for g in groups]
        for g, (length, _), (elem, row, _, elem_bytes, invariant) in zip(
                groups, rows, _split_groups(k, groups, rows, inputs, row_shape, bool(cached))):
            v = _yielded(g)
            is_reduce = isinstance(v.owner, graph.ReduceOp)
            per_step["alu"] += 6
            per_step += row
            if cached:
                slots = -(-length // (per_row * vector)) if length else 1
                n = slots * vector
                # the row index clamped to the last row; a last slot past the row's end
                # clamps its columns and masks its values
                per_step["alu"] += 2 + (3 + vector * is_reduce if length and slots * per_row * vector > length else 0)
            else:
                n = -(-length // per_row) if length else UNKNOWN_TRIP_COUNT
                per_step["alu"] += 2 * n + 1  # the loop's increment and test
            for cls, c in elem.items():
                if cls == "global" and cached and steps > 1 and invariant:
                    hoisted[cls] += len(invariant) * n
                    c -= len(invariant)
                per_step[cls] += c * n
            nbytes += n * elem_bytes
            if is_reduce:
                per_step["alu"] += n  # combine
                per_step += _combine(per_row, p.interleaved)
                if any(r in g.results for r in k.yielded()):
                    per_step["alu"] += 2
                    per_step["global"] += 1
                    out_bytes += element_bytes_of(v)
            elif g.storage.data == Storage.GLOBAL:
                per_step["global"] += len(g.results) * n
                per_step["alu"] += 3 * n
                out_bytes += n * sum(element_bytes_of(r) for r in g.results)
            elif g.storage.data == Storage.SHARED:
                per_step["smem"] += n
                per_step["barrier"] += 1 + (steps > 1)
        s.add(per_step, steps)
        s.add(hoisted)
        if steps > 1:
            s.counts["alu"] += 2 * steps
        s.counts["alu"] += 8
        vec_loads = s.counts["global"]
        if vector > 1 and cached:  # the vectorizer merges V consecutive accesses
            s.counts["global"] = -(-vec_loads // vector)
        s.registers = row_registers(len(k.block.args) + len(k.results), cached, steps)
        s.shared_bytes = k.shared_bytes()
        s.global_bytes = steps * (nbytes + out_bytes)
        return s

    def grid(self, k: KernelOp, axis: int, shapes: ShapeCalc) -> Index:
        ib = shapes.ib
        p = k.params
        assert isinstance(p, RowParamsAttr)
        return ib.max(ib.ceildiv(row_count(k, shapes), p.rows_per_block * p.row_steps), 1)

    def vector_problem(self, k: KernelOp, vec: int) -> str | None:
        """Each vector lies in one row: every group's row length is a static multiple of
        V (the verifier holds that the row is kept in registers)."""
        for g in k.groups():
            for v in g.results:
                gv = inner_value(v)
                if g.packed:
                    return "a row kernel with packed groups has no vector_width"
                r = group_reduce(g)
                shape = shape_of((r.input if r is not None else gv).type)
                rows = set(g.row_dims()) if r is None else set()
                reduced = set(int_values(r.dims)) if r is not None else set(range(len(shape))) - rows
                dims = [shape[d] for d in sorted(reduced)]
                if not dims or DYN in dims or dims[-1] % vec:
                    return (f"vector_width {vec} needs static innermost extents that are multiples of it "
                            f"(a row of {fmt_shape(tuple(dims))})")
        return None

    def check_kernel(self, k: KernelOp) -> None:
        def fail(message: str) -> UserError:
            return self.cannot_lower(k, message)

        groups = k.groups()
        p = k.params
        assert isinstance(p, RowParamsAttr)
        rows = p.rows_per_block
        if not any(group_reduce(g) is not None for g in groups):
            raise fail("a row kernel needs a group led by a graph.reduce")
        for g in groups:
            if g.storage.data == Storage.GLOBAL or group_reduce(g) is not None:
                continue
            # an elementwise sub-root group: a row of results per row of the block
            if not isinstance(inner_value(g.results[0]).owner, graph.ElementwiseOp) or len(g.results) != 1:
                raise fail("a sub-root group that is not a reduction must yield one elementwise op")
            if not g.has_row_dims or g.packed:
                raise fail("an elementwise sub-root group needs row_dims")
            shape = shape_of(g.results[0].type)
            cols = [n for d, n in enumerate(shape) if d not in g.row_dims()]
            length = -1 if DYN in cols else math.prod(cols)
            if g.storage.data in (Storage.REG, Storage.LANES) and p.elements_per_thread is None:
                raise fail("an elementwise sub-root kept in registers needs elements_per_thread (each thread "
                           "keeps its slots of the row)")
            if g.storage.data == Storage.SHARED:
                name, offset = g.shared_slot()
                size = k.shared_buffers()[name].size
                if length < 0 or offset + rows * length > size:
                    raise fail(f"shared buffer @{name} cannot hold {rows} rows of "
                               f"{'?' if length < 0 else length} elements from offset {offset}")


class RowKernels:
    """The row mapping's kernels for one fusion: its layout, configurations and
    shared-memory placement."""

    def __init__(self, mapping: RowMapping, ctx: FusionContext):
        self.mapping = mapping
        self.ctx = ctx

    def build(self, reduces: list[graph.ReduceOp]) -> KernelOp:
        ctx = self.ctx
        row_shape = shape_of(reduces[0].result.type)
        subroots = {r.result: r for r in reduces}
        outputs = unique(ctx.yields)
        reads_of = Reads(set(ctx.ops), subroots)
        problem = row_problem(reduces, outputs, reads_of)
        if problem is not None:
            raise op_error(problem.op or ctx.fusion, problem.message)
        trailing = True
        longest = 0
        for r in reduces:
            rank = len(shape_of(r.input.type))
            dims = sorted(int_values(r.dims))
            src = shape_of(r.input.type)
            reduced = [src[d] for d in dims]
            longest = max(longest, 1 << 30 if DYN in reduced else math.prod(reduced))
            if dims != list(range(rank - len(dims), rank)):
                trailing = False
        # The root outputs: which of their dims are the rows.
        roots = [v for v in outputs if v not in subroots]
        # Outputs reading no reduction are independent parts packed into the kernel: they
        # need no row locality, so every thread of the grid takes elements in turn.
        packed = [v for v in roots if not reads_of(v, tuple(range(len(shape_of(v.type)))))]
        roots = [v for v in roots if v not in packed]
        root_dims: list[tuple[int, ...]] = []
        for v in roots:
            rd = root_row_dims(v, row_shape, reads_of)
            assert rd is not None  # row_problem found every output splittable
            root_dims.append(rd)
        # the grid covers the most rows any group has (packed parts may differ at run time)
        extents = [numel(shape_of(r.result.type)) for r in reduces]
        extents += [numel([shape_of(v.type)[d] for d in dims]) for v, dims in zip(roots, root_dims)]
        k = max_known(extents)
        lengths: list[int | None] = [longest, *(numel([n for d, n in enumerate(shape_of(v.type)) if d not in dims])
                                                for v, dims in zip(roots, root_dims))]
        layout = RowLayout(reduces, roots, root_dims, packed, k, lengths)
        layout.subroots = self.expensive_subroots(layout, row_shape)
        default = default_row_schedule(trailing, longest, numel(row_shape))
        vectors = self.row_vector_widths(reduces, roots, root_dims, row_shape) if trailing and not packed else [1]
        if ctx.row_schedule != "auto" or k is None:
            # forced, or a `?` row count the evaluator cannot count waves for: the rules
            vec = ctx.vector if ctx.vector in vectors else 1
            base = RowConfig.make(ctx.row_schedule if ctx.row_schedule != "auto" else default, BLOCK,
                                  longest, layout, ctx.spec, cached=ctx.registers, vector=vec)
            configs = self.with_subroots([base], layout)
            if len(configs) == 1 or k is None:
                return self.row_kernel(configs[0], layout)
            return self.mapping.choose(configs, lambda c: self.row_kernel(c, layout), ctx.spec)
        configs = [c for c in row_candidates(trailing, longest, layout, ctx.spec, tuple(v for v in vectors if v > 1))
                   if ctx.registers or not c.slots]
        if ctx.vector is not None:  # forced: the configurations of that width, if any
            configs = [c for c in configs if c.vector == ctx.vector] or [c for c in configs if c.vector == 1]
        return self.mapping.choose(self.with_subroots(configs, layout), lambda c: self.row_kernel(c, layout), ctx.spec)

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
        outputs = set(self.ctx.yields)
        rows: dict[SSAValue, tuple[int, ...]] = {}
        for op in self.ctx.ops:
            if graph.op_class(op) != graph.OpClass.EXPENSIVE or op in packed_ops or op.results[0] in outputs:
                continue
            v = op.results[0]
            shape = shape_of(v.type)
            reads = subroot_reads(v, tuple(range(len(shape))), lambda u: u in red)
            dims = row_dims_of(shape, row_shape, [s for _, s in reads])
            # one value per row (LayerNorm's mean): each reader computes it once per
            # thread (hoisted out of its column loop), cheaper than publishing it
            if dims is not None and numel([n for d, n in enumerate(shape) if d not in dims]) != 1:
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
            out.append(SubRoot(v, dims, numel([n for d, n in enumerate(shape) if d not in dims]), readers[v],
                               same_slot[v]))
        return out

    def consumer_spaces(self, layout: RowLayout, subroots):
        """Every row group that may read a sub-root: (key, the values it starts index
        propagation from, its row dims, its element-space shape)."""
        for i, r in enumerate(layout.reduces):
            rank = len(shape_of(r.input.type))
            reduced = int_values(r.dims)
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
        if self.ctx.subroots == "none" or not subs:
            return configs
        out: list[RowConfig] = []
        names = tuple(s.op.name.removeprefix("graph.") for s in subs)
        for c in configs:
            fits = all(s.in_registers for s in subs) if c.slots else (
                all(s.length for s in subs) and self.row_smem(replace(c, subroots=names), layout) <= self.smem_limit)
            variant = replace(c, subroots=names) if fits else None
            if variant is None:
                out.append(c)
            elif self.ctx.subroots == "all":
                out.append(variant)
            else:
                out += [c, variant]
        return out

    @property
    def smem_limit(self) -> int:
        """Shared memory a block may declare: the GPU's, and at most what static
        `.shared` arrays may hold (row kernels' occupancy was calibrated there; a GEMM's
        larger tiles are dynamic shared memory, `fsir.lowering.kernels.shared_layout`)."""
        return min(self.ctx.spec.smem_per_block, STATIC_SHARED_LIMIT)

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
            rows.append(tuple(src[d] for d in sorted(int_values(r.dims))))
        for v, dims in zip(roots, root_dims):
            shape = shape_of(v.type)
            rows.append(tuple(shape[d] for d in range(len(shape)) if d not in dims))
        tensors = [t for t in [*self.ctx.fusion.operands, *roots] if not shapes_compatible(shape_of(t.type), row_shape)]
        return self.ctx.vector_widths(tensors, rows)

    def row_kernel(self, config: RowConfig, layout: RowLayout) -> KernelOp:
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
        e_where = Storage.SHARED if not config.slots else (Storage.LANES if comp == Composition.WARP else Storage.REG)
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
                spec = GroupSpec(roots[item][0], comp, Storage.GLOBAL, row_dims=roots[item][1])
            if key in places:
                spec.buffer, spec.offset = places[key]
            groups.append(spec)
        by_shape: dict[tuple, list[SSAValue]] = {}
        for v in layout.packed:
            by_shape.setdefault(_shape_key(v), []).append(v)
        for values in by_shape.values():
            groups.append(GroupSpec(values, Composition.THREAD, Storage.GLOBAL, packed=True))
        k = layout.rows
        steps = config.steps if config.slots else 1
        params = RowParamsAttr(per_row, rows_per_block, config.slots * config.vector if config.slots else None,
                               row_steps=steps, vector_width=config.vector if config.slots else 1,
                               interleaved=interleaved)
        grid = DYNAMIC if k is None else max(1, -(-k // (rows_per_block * steps)))
        return self.ctx.kernel(params, (grid, 1, 1), (block, 1, 1), groups, shared)

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
        if config.storage == Storage.SHARED:
            for i, r in enumerate(layout.reduces):
                acc = accumulator_type(r.result.type.element_type)
                nbytes = element_bytes(acc)
                node = index[("r", i)]
                arenas.setdefault(("results", acc), []).append(Request(f"r{i}", rows_per_block * nbytes, node,
                                                                       (node,), nbytes))
        if not config.slots:
            for s in subs:
                elem = elem_type(s.value)
                nbytes = element_bytes(elem)
                assert s.length is not None  # `with_subroots` keeps shared rows of static length only
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
                assert isinstance(req.writer, int)  # the groups are numbered in `order`
                places[order[req.writer]] = (f"{kind}_{elem}", placement.offsets[req.name] // nbytes)
            if kind == "results":
                partials = block if config.interleaved else block // WARP  # per thread / per warp
                shared.append(SharedOp(f"partials_{elem}", MemRefType(elem, [partials], memory_space=space)))
            shared.append(SharedOp(f"{kind}_{elem}", MemRefType(elem, [-(-placement.size // nbytes)],
                                                                memory_space=space)))
        return shared, places
