"""The two-pass LayerNorm after a GEMM: the GEMM's kernel writes its output z and the
partial moments of z's rows (`graph.tile_moments`, `fsir/lowering/ln_partials.py`);
each consumer of the normalised value combines them (`graph.combine_moments`, Chan's
formula: `fsir/lowering/moments.py`) and normalises z where it reads it: a GEMM as it
stages its A tiles (the statistics combined once per staged row,
`fsir/lowering/prologue.py`); a copy read as a residual goes where the explorer puts
it (after BERT's FFN2, into the next LayerNorm's row kernel). No kernel of its own
computes the LayerNorm.

    %z  = add(dot(%a, %w), ...)           ─┐ one GEMM kernel: z and
    %p  = graph.tile_moments %z tile 16    ─┘ its rows' partials
    %s  = graph.combine_moments %p ...      ─┐ per consumer (a copy each):
    %h  = (z - mean) * rsqrt(var + eps) * γ + β │ in FFN1's tile loads,
    dot(%h, %w1) ; add(dot(..), %h)         ─┘ where the residual is read

This replaces the row kernel (bias + residual + LayerNorm) of a post-LN transformer
layer whose hidden size is wider than a block tile (`row_epilogue.py` handles
N ≤ 128 in the GEMM itself). It applies where the LayerNorm's statistics are of a
GEMM epilogue's output (`rewrite_two_pass`) and its normalised value is read by a dot;
the GEMM kernel with its partials and each consumer's GEMM with its copy of the
normalisation are then fixed patterns of the explorer (`two_pass_patterns`). The
explorer plans the block with and without the rewrite and keeps the plan the
latency-evaluator scores lower (`explorer._explore_two_pass`). Stitch mode only.

Cost: the consumers repeat the normalisation per element in each of their column
tiles and stage A synchronously (no cp.async for an operand with producers); on the
BERT layer the model scores that above the row kernel it saves (A100 tf32: 233.6 µs
in 8 launches against 212.5 µs in 9), so the explorer keeps the row kernel there and
takes the two-pass form for narrow consumers.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import Block, Operation, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of, tensor
from fsir.lowering.prologue import SAME_INDEX_OPS

TILE = 16  # columns per partial: an FMA row's lanes or a tensor-core warp tile's quad hold one
WIDEST_ROW_TILE = 128  # wider rows than a row-normalising GEMM epilogue's block tile


@dataclass
class TwoPass:
    """One rewritten LayerNorm: its GEMM kernel's ops (dot, epilogue, partials) and, per
    consumer, the copy of the normalisation it reads."""

    producer: list[Operation]
    copies: list[list[Operation]]
    consumers: list[Operation]


def _is(op: Operation | None, name: str) -> bool:
    return isinstance(op, graph.ElementwiseOp) and op.name == f"graph.{name}"


def _splat(v: SSAValue) -> float | None:
    op = v.owner
    if isinstance(op, graph.ConstantOp) and graph.is_splat(op.value):
        return float(graph.constant_array(op.value).reshape(-1)[0])
    return None


def _row_sum(v: SSAValue) -> graph.ReduceOp | None:
    """The one use of `v` that sums its last dim, if any."""
    rank = len(shape_of(v.type))
    for u in v.uses:
        op = u.operation
        if isinstance(op, graph.ReduceOp) and op.kind.data == graph.ReduceKind.SUM and \
                list(op.dims.get_values()) == [rank - 1]:
            return op
    return None


def _mean_of(reduce: graph.ReduceOp, n: int) -> Operation | None:
    """`reduce`'s one user dividing it by n (a mean)."""
    users = [u.operation for u in reduce.results[0].uses]
    if len(users) == 1 and _is(users[0], "div") and users[0].operands[0] is reduce.results[0] and \
            _splat(users[0].operands[1]) == float(n):
        return users[0]
    return None


def _statistics(z: SSAValue) -> tuple[Operation, Operation, list[Operation]] | None:
    """The LayerNorm statistics of z's rows: (mean op, variance op, the ops only they
    need: the sums, the squares), or None."""
    n = shape_of(z.type)[-1]
    r1 = _row_sum(z)
    mean = _mean_of(r1, n) if r1 is not None else None
    if mean is None:
        return None
    for u in mean.results[0].uses:
        b = u.operation
        if not isinstance(b, graph.BroadcastOp):
            continue
        for bu in b.results[0].uses:
            xc = bu.operation
            if not (_is(xc, "sub") and xc.operands[0] is z and xc.operands[1] is b.results[0]):
                continue
            for xu in xc.results[0].uses:
                sq = xu.operation
                if _is(sq, "mul") and sq.operands[0] is xc.results[0] and sq.operands[1] is xc.results[0]:
                    r2 = _row_sum(sq.results[0])
                    var = _mean_of(r2, n) if r2 is not None else None
                    if var is not None and len(list(sq.results[0].uses)) == 1:
                        return mean, var, [r1, r2, sq]
    return None


def _gemm_epilogue(z: SSAValue, besides: frozenset[Operation] = frozenset()) -> list[Operation] | None:
    """The ops of a GEMM kernel ending in z: a dot and the chain of same-index ops
    from its result to z (each read once), with the broadcasts they read; None when z
    is not such a value. Ops in `besides` are not in the chain (a copy of the
    normalisation read as a residual)."""
    ops: list[Operation] = []
    v = z
    shape = shape_of(z.type)
    while True:
        op = v.owner
        if isinstance(op, graph.DotOp):
            ops.append(op)
            return list(reversed(ops))
        if not isinstance(op, SAME_INDEX_OPS) or shape_of(op.results[0].type) != shape or \
                (v is not z and len(list(v.uses)) != 1):
            return None
        ops.append(op)
        chain = [o for o in op.operands if isinstance(o.owner, (graph.DotOp, *SAME_INDEX_OPS))
                 and shape_of(o.type) == shape and not _outside_chain(o) and o.owner not in besides]
        others = [o for o in op.operands if o not in chain]
        ops.extend(o.owner for o in others if isinstance(o.owner, graph.BroadcastOp)
                   and len(list(o.uses)) == 1)  # type: ignore[misc]  # an op
        if len(chain) != 1:
            return None
        v = chain[0]


def _outside_chain(v: SSAValue) -> bool:
    """A value used by more than one op (a residual input shared with others)."""
    return len(list(v.uses)) != 1


def _normalisation(z: SSAValue, stats: list[SSAValue], block: Block, dead: set[Operation]) -> \
        tuple[list[Operation], list[tuple[Operation, int]]]:
    """The light (and expensive elementwise) ops computing the normalised value from z
    and the statistics (`stats`: the mean and variance values), in block order: those
    reading a statistic or one of them, whose other operands are z, broadcasts (γ, β)
    or constants; and the uses of their values outside them (the consumers of the
    normalised value)."""
    cone: set[Operation] = set()
    values: set[SSAValue] = set(stats)

    def allowed(v: SSAValue) -> bool:
        return v in values or v is z or isinstance(v.owner, (graph.BroadcastOp, graph.ConstantOp))

    for op in block.ops:
        if op in dead or not isinstance(op, graph.GraphOp) or isinstance(op, graph.DotOp) or \
                graph.op_class(op) not in (graph.OpClass.LIGHT, graph.OpClass.EXPENSIVE):
            continue
        if any(v in values for v in op.operands) and all(allowed(v) for v in op.operands):
            cone.add(op)
            values.update(op.results)
    cone |= {v.owner for op in list(cone) for v in op.operands
             if isinstance(v.owner, (graph.BroadcastOp, graph.ConstantOp))}  # type: ignore[misc]  # an op
    ordered = [op for op in block.ops if op in cone]
    outside = [(u.operation, u.index) for op in ordered if not isinstance(op, (graph.BroadcastOp, graph.ConstantOp))
               for r in op.results for u in r.uses if u.operation not in cone and u.operation not in dead]
    return ordered, outside


def rewrite_two_pass(block: Block) -> list[TwoPass]:
    """Rewrite each LayerNorm of a GEMM epilogue's output z (rows wider than
    `WIDEST_ROW_TILE`, a multiple of `TILE`) whose normalised value only dots read into
    the two-pass form, each consumer of the normalised value with its own copy."""
    done: list[TwoPass] = []
    for op in list(block.ops):
        if not isinstance(op, graph.ReduceOp) or op.parent_block() is not block:
            continue
        z = op.operands[0]
        shape = shape_of(z.type)
        n = shape[-1] if shape else graph.DYN
        if n == graph.DYN or n <= WIDEST_ROW_TILE or n % TILE or graph.DYN in shape:
            continue
        elem = z.type.element_type  # type: ignore[attr-defined]  # a tensor
        if not isinstance(elem, graph.Float32Type):
            continue
        found = _statistics(z)
        producer = _gemm_epilogue(z)
        if found is None or producer is None:
            continue
        mean, var, dead = found
        # the normalisation as it reads the statistics now, and who reads its values
        cone, outside = _normalisation(z, [mean.results[0], var.results[0]], block, set(dead))
        # only dots read the normalised value: their prologues combine the statistics once
        # per row, where other kernels would recompute them per element
        if not outside or not all(isinstance(user, graph.DotOp) for user, _ in outside) or \
                any(isinstance(o, graph.ReduceOp) for o in cone):
            continue
        rows = shape[:-1]
        parts_t = tensor(graph.f32, [*rows, n // TILE, 2])
        moments = graph.TileMomentsOp.build(operands=[z], result_types=[parts_t],
                                            properties={"tile": graph.i64_attr(TILE)})
        moments.location = op.location
        block.insert_op_after(moments, z.owner)  # type: ignore[arg-type]  # an op (the epilogue's)
        copies: list[list[Operation]] = []
        consumers: list[Operation] = []
        for user, index in outside:
            ops = _statistic_ops(moments, n, rows, mean, var, op.location)
            mapping: dict[SSAValue, SSAValue] = {mean.results[0]: ops[-2].results[0],
                                                 var.results[0]: ops[-1].results[0]}
            clones = list(ops)
            for c in cone:
                clone = c.clone(value_mapper=mapping)
                clone.location = c.location
                clones.append(clone)
                for old, new in zip(c.results, clone.results):
                    mapping[old] = new
            for c in clones:
                block.insert_op_before(c, user)
            user.operands[index] = mapping[user.operands[index]]
            copies.append(clones)
            consumers.append(user)
        left = [*dead, mean, var, *cone]
        while True:  # readers first: erase what nothing reads until nothing changes
            unread = [c for c in left if all(not r.uses for r in c.results)]
            if not unread:
                break
            for c in unread:
                c.detach()
                c.erase()
            left = [c for c in left if c not in unread]
        done.append(TwoPass([*producer, moments], copies, consumers))
    return done


def _statistic_ops(moments: graph.TileMomentsOp, n: int, rows: tuple[int, ...], mean: Operation, var: Operation,
                   location) -> list[Operation]:
    """combine_moments of the partials, then the mean and the variance as values of
    the row shape (the last two ops)."""
    pair = tensor(graph.f32, [*rows, 2])
    one = tensor(graph.f32, [*rows, 1])
    combine = graph.CombineMomentsOp.build(
        operands=[moments.result], result_types=[pair],
        properties={"tile": graph.i64_attr(TILE), "size": graph.i64_attr(n)})
    ops: list[Operation] = [combine]
    for c in (0, 1):
        start = [0] * len(rows) + [c]
        limit = [*rows, c + 1]
        sl = graph.SliceOp.build(operands=[combine.results[0]], result_types=[one], properties={
            "start": DenseArrayBase.from_list(i64, start), "limit": DenseArrayBase.from_list(i64, limit),
            "strides": DenseArrayBase.from_list(i64, [1] * (len(rows) + 1))})
        ops.append(sl)
    for sl, target in zip(ops[1:3], (mean, var)):
        ops.append(graph.ReshapeOp.build(operands=[sl.results[0]], result_types=[target.results[0].type]))
    for o in ops:
        o.location = location
    return ops


def _grow(ops: list[Operation], product: Operation, cap) -> list[Operation]:
    """`ops` (a GEMM kernel's) with the same-index ops on the `product`'s shape that read
    them, through each other, whose other operands are broadcasts of arguments or
    constants (the GEMM's elementwise epilogue: bias, GELU), when the capability
    check `cap` accepts the whole; else `ops`."""
    shape = shape_of(product.results[0].type)
    grown, inside = list(ops), set(ops)

    def source(v: SSAValue) -> Operation | None:
        """The op to take in with a reader of v from outside, None if v is fine as is."""
        o = v.owner
        if isinstance(o, graph.ConstantOp):
            return o
        if isinstance(o, graph.BroadcastOp) and not isinstance(o.operands[0].owner, graph.GraphOp):
            return o
        raise ValueError

    changed = True
    while changed:
        changed = False
        for op in list(grown):
            for r in op.results:
                for u in r.uses:
                    user = u.operation
                    if user in inside or not isinstance(user, SAME_INDEX_OPS) or \
                            shape_of(user.results[0].type) != shape:
                        continue
                    try:
                        extra = [source(v) for v in user.operands if v.owner not in inside]
                    except ValueError:
                        continue
                    for o in [*extra, user]:
                        if o is not None and o not in inside:
                            grown.append(o)
                            inside.add(o)
                    changed = True
    return grown if cap(grown) is None else ops


def two_pass_patterns(g, ev, cap, rewrites: list[TwoPass]) -> list:
    """The explorer's fixed patterns of the rewritten LayerNorms (`g` a `DataflowGraph`,
    `ev` its `DeltaEvaluator`, `cap` the capability check): each GEMM with the partials
    it writes, and each consumer's GEMM with its copy of the normalisation (in its tile
    loads or its epilogue) and the elementwise epilogue that follows, where the
    capability check accepts them; their ops leave the search (no longer `fusible`)."""
    patterns = []

    def fix(ops: list[Operation], root: Operation) -> None:
        members = frozenset(g.index[op] for op in ops if op in g.index and g.fusible[g.index[op]])
        if cap([g.ops[m] for m in members]) is not None:
            return
        patterns.append(ev.of(members, g.index[root]))
        for m in members:
            g.fusible[m] = False

    for t in rewrites:
        dot = next(op for op in t.producer if isinstance(op, graph.DotOp))
        fix(t.producer, dot)
        for copy, user in zip(t.copies, t.consumers):
            if isinstance(user, graph.DotOp):
                fix(_grow([*copy, user], user, cap), user)
                continue
            chain = _gemm_epilogue(user.results[0], frozenset(copy)) if isinstance(user, graph.GraphOp) else None
            if chain is None:
                continue
            consumer_dot = chain[0]
            fix(_grow([*chain, *copy], consumer_dot, cap), consumer_dot)
    return patterns
