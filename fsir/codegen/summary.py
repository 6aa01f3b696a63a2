"""Kernel summaries: what the latency-evaluator needs of a candidate, without lowering it.

Scoring a configuration (§4.3) needs, per thread, the instructions by class, the
registers, the shared bytes, the global bytes and (for GEMMs) the dependence-bound
warp cycles. The gpu-IR evaluator (`fsir.codegen.latency.estimate`) reads them off
the lowered kernel; a `Summary` states them from the schedule kernel and its
configuration, so every candidate of a fusion can be scored for the cost of building
its `schedule.kernel`, and only the chosen one is lowered.

Per-element costs come from the ops themselves: an elementwise op's instruction mix
is what its scalar lowering (the `lower` of its `ELEMENTWISE` row) emits, measured
once per op and element type on a scratch block (`op_mix`), so a new op needs no
entry here.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import DYN, shape_of
from fsir.dialects.schedule import GemmParamsAttr, LoopParamsAttr, RowParamsAttr, Storage


@dataclass
class Summary:
    """One thread's work in a kernel configuration (what `latency.estimate` derives
    from gpu IR). `ilp_cycles`: the warp's dependence-bound cycles, for estimates
    with `ilp=True`."""

    counts: Counter[str] = field(default_factory=Counter)
    registers: int = 0
    shared_bytes: int = 0
    global_bytes: int = 0
    ilp_cycles: float | None = None

    def add(self, counts: Counter[str] | dict[str, int], times: float = 1) -> None:
        for cls, n in counts.items():
            self.counts[cls] += round(n * times)


def _elem(v: SSAValue):
    t = v.type
    assert isinstance(t, TensorType)
    return t.element_type


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
        elem = _elem(op.results[0])
        return Counter(dict(_mix(op.name.removeprefix("graph."), str(elem), elem)))
    if isinstance(op, (graph.CompareOp, graph.SelectOp, graph.ConvertOp, graph.IotaOp)):
        return Counter(alu=1)
    if isinstance(op, (graph.ReshapeOp, graph.SliceOp)):
        return Counter(alu=2 * len(shape_of(op.results[0].type)))
    if isinstance(op, graph.ConcatOp):
        return Counter(alu=2 * len(op.operands))
    if isinstance(op, graph.GatherOp):
        return Counter(alu=4)  # to index, clamp to the table, row offset
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
                out["alu"] += 1
            continue
        op = v.owner
        if not isinstance(op, Operation) or op in seen:
            continue
        seen.add(op)
        out += op_mix(op)
        stack.extend(op.operands)
    return out


def _non_splat(op: graph.ConstantOp) -> bool:
    from fsir.lowering.emit import splat_value

    return splat_value(op) is None


def element_bytes_of(v: SSAValue) -> int:
    from fsir.dialects.schedule import element_bytes

    return element_bytes(_elem(v))


def numel(v: SSAValue) -> int | None:
    shape = shape_of(v.type)
    return None if DYN in shape else math.prod(shape)


# Registers of a GEMM thread besides its accumulators and operand fragments: addresses,
# tile positions, loop state and ptxas's base (calibrated against the gpu-IR
# evaluator's liveness on the candidates of the examples' GEMMs).
GEMM_BASE_REGISTERS = 28


def gemm_summary(k, spec) -> Summary:
    """A register-blocked GEMM kernel's thread (`fsir/lowering/kernels.py`, `gemm`):
    per k-step it stages its share of the bm x bk and bk x bn operand tiles (one global
    load, inlined producers and a shared store per element, guarded where a tile can
    cross the operand's edge), waits at a barrier, then for each of the bk columns loads
    tm + tn fragments from shared memory and issues tm x tn multiply-adds; finally it
    stores its tm x tn outputs."""
    from fsir.codegen.latency import UNKNOWN_TRIP_COUNT

    (g,) = k.groups()
    dot = g.block.last_op.operands[0].owner
    assert isinstance(dot, graph.DotOp)
    p = k.params
    assert isinstance(p, GemmParamsAttr)
    bm, bn, bk, tm, tn = p.tile_m, p.tile_n, p.tile_k, p.thread_m, p.thread_n
    threads = p.threads
    a, b = shape_of(dot.lhs.type), shape_of(dot.rhs.type)
    m = a[-2] if len(a) > 1 else 1
    n = b[-1] if len(b) > 1 else 1
    kk = a[-1]
    steps = UNKNOWN_TRIP_COUNT if kk == DYN else -(-kk // bk)
    crosses = {name: size == DYN or size % tile != 0 for name, size, tile in (("m", m, bm), ("n", n, bn), ("k", kk, bk))}
    inputs = set(k.block.args)
    cpi = spec.cpi

    def staging(operand: SSAValue, rows: int, cols: int, guards: list[str]) -> tuple[Counter[str], float, float, int]:
        """One k-step's staging of a tile: (instructions, cycles of its guarded elements,
        the dependence chain of an unguarded one, bytes)."""
        per = -(-rows * cols // threads)
        partial = per * threads > rows * cols
        loads = element_counts([operand], inputs)
        nbytes = sum(element_bytes_of(v) for v in _loaded(operand, inputs))
        elem: Counter[str] = Counter(loads)
        elem["alu"] += 2  # tile position and shared address
        elem["smem"] += 1
        guarded = any(crosses[x] for x in guards)
        if guarded:
            elem["alu"] += 3  # compares, and, the branch
        out: Counter[str] = Counter()
        for cls, c in elem.items():
            out[cls] = c * per
        if partial:
            out["alu"] += 2
        chain_one = _chain(loads, cpi) + 2 * cpi["alu"] + cpi["smem"]
        if guarded:  # every element its own branch: no overlap between them
            return out, per * (chain_one + cpi["alu"]), 0.0, per * nbytes
        return out, 0.0, chain_one, per * nbytes

    stage_a, branches_a, chain_a, bytes_a = staging(dot.lhs, bm, bk, ["m", "k"])
    stage_b, branches_b, chain_b, bytes_b = staging(dot.rhs, bk, bn, ["k", "n"])
    step: Counter[str] = stage_a + stage_b
    # the unguarded elements of both tiles form one straight run before the barrier
    unguarded = [c for c, chain in ((stage_a, chain_a), (stage_b, chain_b)) if chain]
    run = max(chain_a, chain_b, sum(sum(c.values()) for c in unguarded)) if unguarded else 0.0
    step["barrier"] += 2
    step["smem"] += bk * (tm + tn)
    step["alu"] += bk * tm * tn + 2
    compute_issue = bk * (tm + tn + tm * tn)
    compute_cycles = max(cpi["smem"] + bk * cpi["alu"], compute_issue)
    step_cycles = branches_a + branches_b + run + compute_cycles + 2 * cpi["barrier"] + 2 * cpi["alu"]
    s = Summary()
    s.add(step, steps)
    outs = tm * tn
    guarded_out = crosses["m"] or crosses["n"]
    s.counts["alu"] += 12 + 2 * (tm + tn) + bk * (tm + tn) + outs * (3 + (3 if guarded_out else 0))
    s.counts["global"] += outs
    store = cpi["global"] + 3 * cpi["alu"]
    epilogue = outs * (store + cpi["alu"]) if guarded_out else max(store, outs * 4)
    s.ilp_cycles = 12 * cpi["alu"] + steps * step_cycles + epilogue
    # an inlined producer reading further inputs keeps their addresses and values live
    extra = len(_loaded(dot.lhs, inputs)) + len(_loaded(dot.rhs, inputs)) - 2
    s.registers = GEMM_BASE_REGISTERS + outs + 2 * (tm + tn) + 4 * max(0, extra)
    s.shared_bytes = k.shared_bytes()
    s.global_bytes = steps * (bytes_a + bytes_b) + outs * element_bytes_of(dot.result)
    return s


def _loaded(v: SSAValue, inputs: set[SSAValue]) -> list[SSAValue]:
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


def _chain(counts: Counter[str], cpi) -> float:
    """A dependent sequence of `counts`' instructions (an element's producers)."""
    return sum(n * cpi.get(cls, cpi["alu"]) for cls, n in counts.items())


def row_registers(tensors: int, cached: int, steps: int, kept: int) -> int:
    """A row kernel thread's registers, fitted to the gpu-IR evaluator's liveness on the
    examples' row candidates (mean error 2-3 registers): every tensor's address; a
    strided loop's bounds and iteration values per group; or the cached slots (each
    slot's values live across the groups) and, with row steps, the next step's loads
    that ptxas issues early."""
    if not cached:
        return round(19 + 8 * tensors / 3)
    return round(14 + 1.5 * tensors + 2.5 * cached + (steps > 1) * (4 + cached * kept))
WARP = 32


def row_summary(k, spec) -> Summary:
    """A row kernel's thread (`fsir/lowering/kernels.py`, `rows`): for each of its row
    steps, every group in order computes its row's elements (its share of the columns:
    unrolled register slots or a strided loop) by index propagation and combines a
    reduction's partials (shuffles, or shared memory and barriers); values at the row's
    index (a reduction's result and what is computed from it) cost once per row, and
    register-cached slots load each input once for all groups."""
    from fsir.codegen.latency import UNKNOWN_TRIP_COUNT

    p = k.params
    assert isinstance(p, RowParamsAttr)
    per_row, cached, vector, steps = p.threads_per_row, p.elements_per_thread or 0, p.vector_width, p.row_steps
    inputs = set(k.block.args)
    groups = [g for g in k.groups() if "packed" not in g.attributes]
    reduces = [g for g in groups if g.storage.data != Storage.GLOBAL and isinstance(_yielded(g).owner, graph.ReduceOp)]
    row_shape = shape_of(_yielded(reduces[0]).type) if reduces else ()
    s = Summary()
    per_step: Counter[str] = Counter()
    hoisted: Counter[str] = Counter()  # row-invariant loads of cached steps, once per thread
    loaded: set = set()
    seen: set = set()
    keys: dict = {}
    kept: set[SSAValue] = set()  # inputs a cached row keeps in registers across groups
    nbytes = 0
    out_bytes = 0
    for g in groups:
        v = _yielded(g)
        owner = v.owner
        is_reduce = isinstance(owner, graph.ReduceOp)
        if is_reduce:
            src = shape_of(owner.input.type)
            length = _prod([src[d] for d in owner.dims.get_values()])
            start = [owner.input]
        else:
            shape = shape_of(v.type)
            dims = g.attributes.get("row_dims")
            rd = list(dims.get_values()) if dims is not None else []
            length = _prod([n for d, n in enumerate(shape) if d not in rd])
            start = [_inner(r) for r in g.results]
        per_step["alu"] += 6
        if not cached:
            loaded, seen = set(), set()
        elem, row, loads, elem_bytes, invariant = _split_costs(start, inputs, row_shape, loaded, seen, keys)
        per_step += row
        if cached:
            slots = -(-length // (per_row * vector)) if length else 1
            n = slots * vector
            # the row index clamped to the last row; a last slot past the row's end
            # clamps its columns and masks its values
            per_step["alu"] += 2 + (3 + vector * is_reduce if length and slots * per_row * vector > length else 0)
            kept.update(loads)
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
            if any(r in g.results for r in k.block.last_op.operands):
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
    s.registers = row_registers(len(k.block.args) + len(k.results), cached, steps, len(kept))
    s.shared_bytes = k.shared_bytes()
    s.global_bytes = steps * (nbytes + out_bytes)
    return s


def _yielded(g) -> SSAValue:
    return g.block.last_op.operands[0]


def _inner(r: SSAValue) -> SSAValue:
    g = r.owner
    return g.block.last_op.operands[list(g.results).index(r)]


def _prod(dims) -> int | None:
    return None if DYN in dims else math.prod(dims)


def _split_costs(values, inputs, row_shape, loaded, seen, keys):
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
                target["alu"] += 1
                if not per_row:
                    loads.append(v)
                    nbytes += element_bytes_of(v)
                    if row_shape and not _has_rows(shape_of(v.type), row_shape):
                        invariant.append(v)
            continue
        op = v.owner
        if not isinstance(op, Operation):
            continue
        if op.name == "schedule.group":  # an earlier group's result: registers or shared rows
            if op.storage.data == Storage.SHARED and not isinstance(_inner(v).owner, graph.ReduceOp):
                target.update(smem=1, alu=1)
            continue
        key = _key(v, keys)
        if key in seen:
            continue
        seen.add(key)
        target += op_mix(op)
        stack.extend((o, per_row) for o in op.operands)
    return elem, row, loads, nbytes, invariant


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
        keys[u] = (op.name, props, tuple(keys[o] for o in op.operands), list(op.results).index(u))
        stack.pop()
    return keys[v]


def _squeeze(shape) -> tuple:
    return tuple(d for d in shape if d != 1)


def _has_rows(shape, row_shape) -> bool:
    """Whether a tensor varies along the rows (else every row reads the same values)."""
    rows = _squeeze(row_shape)
    sq = _squeeze(shape)
    return len(sq) > 0 and len(rows) > 0 and sq[: len(rows)] == rows


def _combine(per_row: int, interleaved: bool) -> Counter[str]:
    """Combining a row's partials across its threads (`KernelLowering.combine_row`)."""
    out: Counter[str] = Counter()
    if interleaved:
        out.update(smem=3 + per_row, barrier=2, alu=per_row + 4)
    elif 1 < per_row <= WARP:
        steps = per_row.bit_length() - 1
        out.update(shuffle=steps, alu=steps)
    elif per_row > WARP:
        out.update(shuffle=10, alu=16, smem=4, barrier=2)
    return out


LOOP_BASE_REGISTERS = 12


def loop_summary(k, spec) -> Summary:
    """A loop kernel's thread (`fsir/lowering/kernels.py`, `loop`): V consecutive
    elements of every output, each computed by index propagation (what several outputs
    share is computed once) and stored; the vectorizer merges the V accesses of one
    tensor into one instruction."""
    p = k.params
    assert isinstance(p, LoopParamsAttr)
    vector = p.vector_width
    (g,) = k.groups()
    inputs = set(k.block.args)
    keys: dict = {}
    elem, _, loads, nbytes, _ = _split_costs([_inner(r) for r in g.results], inputs, (), set(), set(), keys)
    s = Summary()
    s.add(elem, vector)
    outs = len(set(g.results))
    s.counts["global"] = -(-(elem["global"] * vector) // vector) + outs
    s.counts["alu"] += 8 + 3 * outs * vector
    s.registers = LOOP_BASE_REGISTERS + vector * (len(loads) + outs)
    s.shared_bytes = k.shared_bytes()
    s.global_bytes = vector * (nbytes + sum(element_bytes_of(r) for r in set(g.results)))
    return s
