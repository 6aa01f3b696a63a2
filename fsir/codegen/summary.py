"""Kernel summaries: what the latency-evaluator needs of a candidate, without lowering it.

Scoring a configuration (§4.3) needs, per thread, the instructions by class, the
registers, the shared bytes, the global bytes and (for GEMMs) the dependence-bound
warp cycles. The gpu-IR evaluator (`fsir.codegen.latency.estimate`) reads them off
the lowered kernel; a `Summary` states them from the schedule kernel and its
configuration, so every candidate of a fusion can be scored for the cost of building
its `schedule.kernel`; only the chosen one is lowered (and those whose summary is too
close to an occupancy step to decide: `Mapping.choose`).

Per-element costs come from the ops themselves: an elementwise op's instruction mix
is what its scalar lowering (the `lower` of its `ELEMENTWISE` row) emits, measured
once per op and element type on a scratch block (`op_mix`), so a new op needs no
entry here.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache

from xdsl.ir import Block, Operation, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import DYN, shape_of
from fsir.dialects.schedule import GroupOp, Storage, inner_value
from fsir.lowering.emit import elem_type


@dataclass
class Summary:
    """One thread's work in a kernel configuration (what `latency.estimate` derives
    from gpu IR). `ilp_cycles`: the warp's dependence-bound cycles, for estimates
    with `ilp=True`. Summaries of GEMM configurations also state what their
    throughput floors need: the tensor cores' multiply-adds per thread by precision (a
    warp's mma computes 16·8·k, a 32nd of them each lane's), the bytes a thread
    requests before it waits (`bytes_in_flight`, 0: the spec's default) and the
    launch's distinct global bytes (`distinct_bytes`: what reaches DRAM, the rest of
    the requested bytes being re-reads served by the L2; None: every requested byte
    reaches DRAM)."""

    counts: Counter[str] = field(default_factory=Counter)
    registers: int = 0
    shared_bytes: int = 0
    global_bytes: int = 0
    ilp_cycles: float | None = None
    tensor_fmas: Counter[str] = field(default_factory=Counter)
    bytes_in_flight: float = 0.0
    distinct_bytes: int | None = None

    def add(self, counts: Counter[str] | dict[str, int], times: float = 1) -> None:
        for cls, n in counts.items():
            self.counts[cls] += round(n * times)


@cache
def _mix(name: str, elem_text: str, elem) -> tuple[tuple[str, int], ...]:
    """The instruction mix of one element of the elementwise op `name` on `elem`, from
    its scalar lowering on a scratch block."""
    from fsir.codegen.latency import instruction_counts
    from fsir.lowering.scalar import Cursor, ScalarBuilder, compute_type

    spec = graph.ELEMENTWISE[name]
    ct = compute_type(elem)
    block = Block(arg_types=[ct] * spec.arity)
    sb = ScalarBuilder(Cursor(block))
    sb.round_to(spec.lower(sb, *block.args), elem)
    return tuple(sorted(instruction_counts(block.ops).items()))


def op_mix(op: Operation) -> Counter[str]:
    """Instructions one element of `op` costs, besides reading its operands."""
    if isinstance(op, graph.ElementwiseOp):
        elem = elem_type(op.results[0])
        return Counter(dict(_mix(op.name.removeprefix("graph."), str(elem), elem)))
    if isinstance(op, (graph.CompareOp, graph.SelectOp, graph.ConvertOp, graph.BitcastOp, graph.IotaOp)):
        return Counter(alu=1)
    if isinstance(op, graph.SliceOp):
        # per sliced dim, an index shifted by its start and scaled by its stride (a dim
        # kept whole, a zero start and a unit stride cost nothing: `operand_indices`)
        start, strides = op.start.get_values(), op.strides.get_values()
        return Counter(int=sum(int(s != 0) + int(k != 1) for s, k in zip(start, strides)))
    if isinstance(op, graph.ReshapeOp):
        return Counter(alu=2 * len(shape_of(op.results[0].type)))
    if isinstance(op, graph.ConcatOp):
        return Counter(alu=2 * len(op.operands))
    if isinstance(op, graph.GatherOp):
        return Counter(int=4)  # to index, clamp to the table, row offset
    if isinstance(op, graph.PadOp):  # a clamp per padded side, a select
        return Counter(alu=1 + 3 * len(shape_of(op.results[0].type)))
    if isinstance(op, graph.ReduceWindowOp):
        # per window element: its position and bounds tests, the combine, the load's
        # address; the walk counts the operand's first load, these are the others
        rank = len(shape_of(op.results[0].type))
        k = math.prod(op.params()[0])
        return Counter(alu=k * (2 * rank + 3), **{"global": k - 1})
    if isinstance(op, graph.TileMomentsOp):  # two passes over the tile: load, add / sub, fma
        w = op.width
        return Counter({"alu": 5 * w + 4, "global": 2 * w - 1})
    if isinstance(op, graph.CombineMomentsOp):  # per tile: its two partials, Chan's step
        t = len(op.counts())
        return Counter({"alu": 8 * t, "global": 2 * t - 1})
    if isinstance(op, graph.ScatterOp):  # every update visited: its point's K ids and the update loaded
        k = shape_of(op.indices.type)[-1]
        updates = math.prod(d for d in shape_of(op.indices.type)[:-1] if d != DYN)
        return Counter({"alu": updates * (2 * k + 4), "global": updates * (k + 1)})
    if isinstance(op, graph.SortOp):  # n ranks of n key comparisons each
        n = shape_of(op.keys.type)[op.dim.value.data]
        return Counter({"alu": 8 * n * n + 4 * n, "global": n * n + 2 * n})
    return Counter()  # broadcast, transpose, splat constants: index mapping only


def element_counts(values: Iterable[SSAValue], inputs: set[SSAValue], loaded: set[SSAValue] | None = None,
                   seen: set[Operation] | None = None) -> Counter[str]:
    """Instructions computing one element of each of `values` by index propagation:
    every op once (equal indices are memoised), each of `inputs` (kernel arguments,
    constant buffers) one global load plus its address. `loaded`/`seen` carry what an
    earlier computation at the same index already has (register-cached rows)."""
    loaded = set() if loaded is None else loaded
    seen = set() if seen is None else seen
    out: Counter[str] = Counter()
    stack = list(values)
    while stack:
        v = stack.pop()
        if v in inputs or (isinstance(v.owner, graph.ConstantOp) and _non_splat(v.owner)):
            if v not in loaded:
                loaded.add(v)
                out["global"] += 1
                out["int"] += 1  # its address
            continue
        op = v.owner
        if not isinstance(op, Operation) or op in seen or v in loaded:  # or held in a register
            continue
        seen.add(op)
        out += op_mix(op)
        stack.extend(op.operands)
    return out


def _non_splat(op: graph.ConstantOp) -> bool:
    from fsir.dialects.graph import splat_value

    return splat_value(op) is None


def element_bytes_of(v: SSAValue) -> int:
    from fsir.dialects.schedule import element_bytes

    return element_bytes(elem_type(v))


def numel(v: SSAValue) -> int | None:
    shape = shape_of(v.type)
    return None if DYN in shape else math.prod(shape)


def distinct_bytes(values: Iterable[SSAValue]) -> int | None:
    """The bytes of `values` (each counted once; None if one has a `?` size): what a
    kernel reading or writing each of them whole moves to and from DRAM."""
    total = 0
    for v in dict.fromkeys(values):
        n = numel(v)
        if n is None:
            return None
        total += n * element_bytes_of(v)
    return total


def loaded_inputs(v: SSAValue, inputs: set[SSAValue]) -> list[SSAValue]:
    """The kernel inputs (and constant buffers) one element of `v` reads."""
    out, seen, stack = [], set(), [v]
    while stack:
        u = stack.pop()
        if u in inputs or (isinstance(u.owner, graph.ConstantOp) and _non_splat(u.owner)):
            if u not in out:
                out.append(u)
            continue
        op = u.owner
        if isinstance(op, Operation) and op not in seen:
            seen.add(op)
            stack.extend(op.operands)
    return out


def chain_cycles(counts: Counter[str], cpi) -> float:
    """A dependent sequence of `counts`' instructions (an element's producers)."""
    return sum(n * cpi.get(cls, cpi["alu"]) for cls, n in counts.items())


def split_costs(values, inputs, row_shape, loaded, seen, keys):
    """One element of `values`: (instructions per element, instructions per row,
    inputs loaded per element, bytes loaded per element, row-invariant inputs). Ops
    are told apart by structure (`keys`), since every group holds its own copies."""
    elem: Counter[str] = Counter()
    row: Counter[str] = Counter()
    loads: list[SSAValue] = []
    invariant: list[SSAValue] = []
    nbytes = 0
    stack = [(v, False) for v in values]
    while stack:
        v, per_row = stack.pop()
        per_row = per_row or (bool(row_shape) and _squeeze(shape_of(v.type)) == _squeeze(row_shape))
        target = row if per_row else elem
        if v in inputs or (isinstance(v.owner, graph.ConstantOp) and _non_splat(v.owner)):
            key = _key(v, keys)
            if key not in loaded:
                loaded.add(key)
                target["global"] += 1
                target["int"] += 1  # its address
                if not per_row:
                    loads.append(v)
                    nbytes += element_bytes_of(v)
                    if row_shape and not _has_rows(shape_of(v.type), row_shape):
                        invariant.append(v)
            continue
        op = v.owner
        if not isinstance(op, Operation):
            continue
        if isinstance(op, GroupOp):  # an earlier group's result: registers or shared rows
            if op.storage.data == Storage.SHARED and not isinstance(inner_value(v).owner, graph.ReduceOp):
                target.update(smem=1, alu=1)
            continue
        key = _key(v, keys)
        if key in seen:
            continue
        seen.add(key)
        mixes = keys.setdefault(_MIXES, {})  # op_mix of each op, which the copies' walks revisit
        mix = mixes.get(op)
        if mix is None:
            mix = mixes[op] = op_mix(op)
        target += mix
        stack.extend((o, per_row) for o in op.operands)
    return elem, row, loads, nbytes, invariant


_INTERNED = "interned structural keys"  # the entry of `keys` holding the intern table
_MIXES = "op mixes"  # the entry of `keys` holding `op_mix` by op


def _key(v: SSAValue, keys: dict) -> object:
    """A structural name of `v`: equal for the copies of one value in different groups."""
    if v in keys:
        return keys[v]
    stack = [v]
    while stack:
        u = stack[-1]
        op = u.owner
        if not isinstance(op, Operation) or not op.name.startswith("graph."):
            keys[u] = u
            stack.pop()
            continue
        missing = [o for o in op.operands if o not in keys]
        if missing:
            stack.extend(missing)
            continue
        # copies share their attribute objects: identities name them without printing
        # (a constant's values may be megabytes)
        props = tuple((name, id(a)) for name, a in op.properties.items())
        position = next(i for i, r in enumerate(op.results) if r is u)
        # interned: a key holds its operands' numbers, not their keys, so hashing it
        # stays shallow however much a deep graph shares (nested tuples re-hash the DAG
        # as a tree, exponential in its depth)
        table = keys.setdefault(_INTERNED, {})
        keys[u] = table.setdefault((op.name, props, tuple(keys[o] for o in op.operands), position), len(table))
        stack.pop()
    return keys[v]


def _squeeze(shape) -> tuple:
    return tuple(d for d in shape if d != 1)


def _has_rows(shape, row_shape) -> bool:
    """Whether a tensor varies along the rows (else every row reads the same values)."""
    rows = _squeeze(row_shape)
    sq = _squeeze(shape)
    return len(sq) > 0 and len(rows) > 0 and sq[: len(rows)] == rows


@dataclass(frozen=True)
class OperandStaging:
    """What staging one element of a GEMM operand tile costs a thread (the lowering's
    `TiledGemmLowering.body` / `MmaGemmLowering.stage_sync`): `element`, its
    instructions (loads with their addresses, inlined producers); `nbytes`, the global
    bytes it loads; `per_tile`, instructions the tile's staging issues once per k-step
    (a concatenated operand's uniform branches choosing its piece); `branches`,
    whether every element is a branch of its own (a concat the tile straddles: each
    element searches the pieces), so the elements' loads do not overlap."""

    element: Counter[str]
    nbytes: int
    per_tile: Counter[str] = field(default_factory=Counter)
    branches: bool = False

    @property
    def own_run(self) -> bool:
        """The tile is staged inside its piece's branch: a straight run of its own."""
        return bool(self.per_tile)


def operand_staging(operand: SSAValue, inputs: set[SSAValue], tile_cols: int | None,
                    loaded: Iterable[SSAValue] = ()) -> OperandStaging:
    """The staging of one element of `operand` (inputs in `loaded` are held in
    registers already). A concat whose pieces a `tile_cols`-wide tile never straddles
    (`fsir.lowering.gemm.tile_sources`: the B operand of merged sibling dots) is staged
    from the tile's piece: one piece's element, after a uniform branch per level of
    the search over the pieces; any other concat makes each element search the
    pieces (a branch per level) and load from its one piece."""
    from fsir.lowering.gemm import tile_sources

    skip = set(loaded)
    op = operand.owner
    if operand in inputs or not isinstance(op, graph.ConcatOp):
        return OperandStaging(element_counts([operand], inputs, loaded=set(skip)),
                              sum(element_bytes_of(v) for v in loaded_inputs(operand, inputs) if v not in skip))
    parts = [operand_staging(piece, inputs, None, skip) for piece in op.operands]
    widest = max(parts, key=lambda s: (sum(s.element.values()), s.nbytes))
    levels = max(1, math.ceil(math.log2(len(op.operands))))
    search: Counter[str] = Counter(int=2 * levels)  # per level: a compare and the branch
    pieces = None if tile_cols is None else tile_sources(operand, tile_cols)
    if pieces is not None:
        return OperandStaging(widest.element, widest.nbytes, search + widest.per_tile, widest.branches)
    element = widest.element + search
    element["int"] += 1  # the index within the piece
    return OperandStaging(element, widest.nbytes, widest.per_tile, True)


def staged_from_inputs(operand: SSAValue, is_input: Callable[[SSAValue], bool], tile_cols: int | None) -> bool:
    """Whether a GEMM stages `operand`'s elements as plain loads (or copies) of kernel
    inputs: it is one, or a concat of them whose pieces its `tile_cols`-wide tiles
    never straddle (staged from one piece per tile,
    `fsir.lowering.gemm.tile_sources`)."""
    from fsir.lowering.gemm import tile_sources

    if is_input(operand):
        return True
    op = operand.owner
    return (isinstance(op, graph.ConcatOp) and tile_cols is not None and tile_sources(operand, tile_cols) is not None
            and all(is_input(piece) for piece in op.operands))
