"""GEMM prologues of normalised activations: LayerNorm → dot as a statistics kernel and
a GEMM that normalises its A (or B) tiles while loading them.

A dot's light producers are inlined into its tile loads (`gemm` mapping), but fusion
patterns are disjoint, and the normalisation of a LayerNorm or RMSNorm shares an op with
its statistics: `xc = x - mean[row]` is read both by the variance (`xc * xc`, reduced)
and by the normalised value `xc * rstd[row] * gamma + beta`. Its kernel then has to
write the normalised activation for the dot to read back. Here the operand's light
producers that follow a row statistic (`normalisation_cone`) get a copy of their own
for the dot, and the explorer a candidate pattern of the copy with the dot and its
epilogues (`CandidateGenerator.prologue_patterns`: the copy has several tops, the
statistics' broadcasts, which PatternReduction from one vertex does not join), so it
can choose between the row kernel writing the activation
and a statistics kernel writing only `mean` and `rstd` per row with the GEMM applying
the normalisation per tile element (the latency-evaluator picks). The GEMM loads a
row's statistics once, before its k-loop, and γ, β once per k-step
(`fsir/lowering/prologue.py`); what remains per element is x's load and the
normalisation's few ops, repeated by each column tile of the product, which the
evaluator weighs against writing and re-reading the normalised activation:

    %m  = reduce sum %x ...          stats kernel: %m, %r (one value per row)
    %xc = sub %x, broadcast(%m)      <- also read by the variance
    %y  = add(mul(mul(%xc, broadcast(%r)), γ), β)
    %d  = dot %y, %w                  GEMM: dot of copies of %xc..%y, read from %x, %m, %r

Only operands the dot alone reads, whose ops are otherwise read by the statistics
alone, are copied (a normalised activation also read elsewhere, as post-LN BERT's
residual, would be computed twice), and each copy is at most `MAX_CONE` ops. Runs in
stitch mode only (XLA keeps a GEMM a library call)."""

from __future__ import annotations

from xdsl.ir import Block, Operation, SSAValue

from fsir.dialects import graph
from fsir.fusion.dataflow import tensor_elements

MAX_CONE = 24  # ops copied per operand: a normalisation is about ten


def _light(op: Operation) -> bool:
    return isinstance(op, graph.GraphOp) and not isinstance(op, graph.ConstantOp) \
        and graph.op_class(op) == graph.OpClass.LIGHT


def _row_statistic(op: Operation) -> bool:
    """A broadcast of a computed value with fewer elements (a per-row statistic), not of
    a function argument or constant (a bias, a γ)."""
    if not isinstance(op, graph.BroadcastOp):
        return False
    src = op.operands[0]
    return isinstance(src.owner, graph.GraphOp) and not isinstance(src.owner, graph.ConstantOp) \
        and tensor_elements(src.type) < tensor_elements(op.results[0].type)


def _feeds_only_reductions(op: Operation, depth: int = 4) -> bool:
    """Whether `op` is a reduction, or a light or expensive op whose results feed only
    such ops (within `depth` steps): part of computing a statistic (`(x - mean)²` of a
    variance), not a value used on its own."""
    if isinstance(op, graph.ReduceOp):
        return True
    if depth == 0 or not isinstance(op, graph.GraphOp) or \
            graph.op_class(op) not in (graph.OpClass.LIGHT, graph.OpClass.EXPENSIVE):
        return False
    uses = [u.operation for r in op.results for u in r.uses]
    return bool(uses) and all(_feeds_only_reductions(u, depth - 1) for u in uses)


def normalisation_cone(operand: SSAValue, position: dict[Operation, int]) -> list[Operation]:
    """The light producers of `operand` that read a row statistic (directly or through
    each other), with the broadcasts they read, in block order (`position`: the ops'
    indices in their block; a scan of the block per op would make the explorer
    quadratic); empty when there are none, more than `MAX_CONE`, or the operand is not
    such an op."""
    owner = operand.owner
    if not isinstance(owner, Operation) or not _light(owner):
        return []
    # walk up through light ops; keep those downstream of a row statistic
    seen: list[Operation] = []
    stack = [owner]
    visited: set[Operation] = set()
    while stack:
        op = stack.pop()
        if op in visited:
            continue
        visited.add(op)
        seen.append(op)
        if len(seen) > 4 * MAX_CONE:
            return []
        for v in op.operands:
            if isinstance(v.owner, Operation) and _light(v.owner):
                stack.append(v.owner)
    order = sorted(seen, key=position.__getitem__)
    after: dict = {}  # whether an op reads a row statistic (itself one, or through an op that does)
    for op in order:
        after[op] = _row_statistic(op) or any(after.get(v.owner, False) for v in op.operands)
    if not after[owner]:
        return []
    cone = {op for op in order if after[op]}
    # the broadcasts (of a γ, a β) the cone's ops read
    cone |= {v.owner for op in list(cone) for v in op.operands
             if isinstance(v.owner, graph.BroadcastOp) and v.owner in visited}
    if len(cone) > MAX_CONE:
        return []
    return [op for op in order if op in cone]


def copy_normalised_operands(block: Block) -> list[tuple[graph.DotOp, list[Operation]]]:
    """Give every dot operand of `block` that is a normalised activation read by the
    dot alone its own copy of the normalisation (`normalisation_cone`) when an op of
    the cone is also read elsewhere; the originals no longer read are erased. Returns
    each such dot with its copy (the explorer's prologue candidates,
    `CandidateGenerator.prologue_patterns`)."""
    copied: list[tuple[graph.DotOp, list[Operation]]] = []
    # The cones hold original ops only (a copy is read by its dot alone, never by a
    # light op another cone walks through), and inserting copies or erasing originals
    # keeps the others' order, so the positions taken once stay a valid sort key.
    position = {op: i for i, op in enumerate(block.ops)}
    for dot in [op for op in block.ops if isinstance(op, graph.DotOp)]:
        for i, operand in enumerate(dot.operands):
            uses = {u.operation for u in operand.uses}
            if uses != {dot}:
                continue
            cone = normalisation_cone(operand, position)
            inside = set(cone) | {dot}
            shared = {u.operation for op in cone for r in op.results for u in r.uses} - inside
            # nothing shared: the explorer may fuse the cone as it is; shared with more
            # than the statistics: the originals stay, and the copy would be extra work
            if not shared or not all(_feeds_only_reductions(u) for u in shared):
                continue
            mapping: dict[SSAValue, SSAValue] = {}
            clones = []
            for op in cone:
                clone = op.clone(value_mapper=mapping)
                clone.location = op.location
                block.insert_op_after(clone, op)
                clones.append(clone)
                for old, new in zip(op.results, clone.results):
                    mapping[old] = new
            dot.operands[i] = mapping[operand]
            for op in reversed(cone):
                if all(not r.uses for r in op.results):
                    op.detach()
                    op.erase()
            copied.append((dot, clones))
    return copied
