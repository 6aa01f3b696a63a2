"""The attention pattern in the graph dialect: softmax(Q·Kᵀ)·V as exporters write it.

`match_attention` recognises the ops from the first dot to the second (scaled,
masked, with the exporters' guards for fully masked rows) and `attention_output` the
transpose that usually follows. The explorer groups a match, the attention mapping
makes one kernel of it, and the lowering emits it: all three read this one matcher.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import DYN, shape_of, splat_value


@dataclass(frozen=True)
class AttentionMatch:
    """One attention in the graph: its two dots, the softmax input (`scores`, computed
    per element from the first dot's result), the ops from the first dot to the second
    (`core`) and how a fully masked row comes out: NaN probabilities replaced by 0
    (`nan_to_zero`, PyTorch's export) or a zero sum divided as 1 (`safe_sum`, ONNX
    Attention); the running max's guard against -inf is the kernel's own."""

    qk: graph.DotOp
    pv: graph.DotOp
    scores: SSAValue
    core: tuple[Operation, ...]
    nan_to_zero: bool
    safe_sum: bool = False  # a row sum of 0 (every score -inf) divides by 1: the row is 0

    @property
    def batch(self) -> tuple[int, ...]:
        return tuple(shape_of(self.pv.result.type)[:-2])

    @property
    def sizes(self) -> tuple[int, int, int, int]:
        """(Sq, Sk, Dk, Dv)."""
        sq, sk = shape_of(self.qk.result.type)[-2:]
        return sq, sk, shape_of(self.qk.lhs.type)[-1], shape_of(self.pv.result.type)[-1]


def _owner(v: SSAValue, name: str) -> Operation | None:
    op = v.owner
    return op if isinstance(op, Operation) and op.name == name else None


def _is_splat(v: SSAValue, pred) -> bool:
    op = v.owner
    if not isinstance(op, graph.ConstantOp):
        return False
    value = splat_value(op)
    return value is not None and pred(value)


def _row_stat(v: SSAValue, kind: str, of: SSAValue, rank: int, reciprocal: bool = False) -> list[Operation] | None:
    """The ops of `v = broadcast(reduce kind (of) dims [rank-1]) dims [0..rank-2]`
    (with `max(m, -inf)`, which JAX's softmax writes, the guards of ONNX Attention's
    safe softmax, `m == -inf ? 0 : m` and `s == 0 ? 1 : s`, or the reciprocal `1 / s`
    XLA's optimised softmax multiplies by, between the reduce and the broadcast), else
    None."""
    b = v.owner
    if not isinstance(b, graph.BroadcastOp) or list(b.dims.get_values()) != list(range(rank - 1)):
        return None
    ops: list[Operation] = [b]
    stat = b.operands[0]
    if kind == "max":  # max(m, -inf) is m
        mx = _owner(stat, "graph.max")
        if mx is not None and _is_splat(mx.operands[1], lambda x: x == -math.inf):
            ops.append(mx)
            stat = mx.operands[0]
    # ONNX Attention's safe softmax: a row max of -inf shifts by 0, a row sum of 0 divides by 1
    guard = (-math.inf, 0) if kind == "max" else (0, 1)
    sel = stat.owner
    if isinstance(sel, graph.SelectOp):
        cond = sel.operands[0].owner
        if not (isinstance(cond, graph.CompareOp) and cond.direction.data == "eq"
                and cond.operands[0] == sel.operands[2] and _is_splat(cond.operands[1], lambda x: x == guard[0])
                and _is_splat(sel.operands[1], lambda x: x == guard[1])):
            return None
        ops += [sel, cond]
        stat = sel.operands[2]
    if reciprocal:
        recip = _owner(stat, "graph.div")
        if recip is None or not _is_splat(recip.operands[0], lambda x: x == 1):
            return None
        ops.append(recip)
        stat = recip.operands[1]
    r = stat.owner
    if not isinstance(r, graph.ReduceOp) or r.kind.data != kind or list(r.dims.get_values()) != [rank - 1]:
        return None
    copies = _copy_ops(r.operands[0], of)
    return [*ops, r, *copies] if copies is not None else None


def _copy_ops(a: SSAValue, b: SSAValue, depth: int = 8) -> list[Operation] | None:
    """The ops computing `a` that are copies of those computing `b` (an importer's
    duplicated score expression: the reduce and the subtraction may each read their
    own), [] when a is b, None unless a equals b up to such copies."""
    if a == b:
        return []
    x, y = a.owner, b.owner
    if (depth == 0 or not isinstance(x, Operation) or not isinstance(y, Operation) or x.name != y.name
            or len(x.operands) != len(y.operands) or x.properties != y.properties
            or x.attributes != y.attributes or [r.type for r in x.results] != [r.type for r in y.results]
            or x.results.index(a) != y.results.index(b)):
        return None
    if isinstance(x, graph.ConstantOp):
        return []  # constants are no kernel's ops: each fusion clones those it reads
    out = [x]
    for u, v in zip(x.operands, y.operands):
        inner = _copy_ops(u, v, depth - 1)
        if inner is None:
            return None
        out += inner
    return out


def _normalised(p: SSAValue, rank: int) -> tuple[SSAValue, list[Operation]] | None:
    """(e, the ops) when `p` is `e / broadcast(sum e)` or `e * broadcast(1 / sum e)`."""
    div = _owner(p, "graph.div")
    if div is not None:
        stat = _row_stat(div.operands[1], "sum", div.operands[0], rank)
        return (div.operands[0], [div, *stat]) if stat is not None else None
    mul = _owner(p, "graph.mul")
    if mul is None:
        return None
    for e, other in ((mul.operands[0], mul.operands[1]), (mul.operands[1], mul.operands[0])):
        stat = _row_stat(other, "sum", e, rank, reciprocal=True)
        if stat is not None:
            return e, [mul, *stat]
    return None


def _matrices(dot: graph.DotOp) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    shapes = (shape_of(dot.lhs.type), shape_of(dot.rhs.type), shape_of(dot.result.type))
    if any(len(s) != len(shapes[2]) or len(s) < 2 or DYN in s for s in shapes):
        return None
    if not all(s[:-2] == shapes[2][:-2] for s in shapes):
        return None  # batch dims broadcast: not a per-head attention
    return shapes


def match_attention(pv: Operation) -> AttentionMatch | None:
    """The attention whose second dot is `pv`, else None (see the module docstring)."""
    if not isinstance(pv, graph.DotOp) or _matrices(pv) is None:
        return None
    rank = len(shape_of(pv.result.type))
    core: list[Operation] = [pv]
    p = pv.lhs
    nan_to_zero = False
    sel = p.owner
    if isinstance(sel, graph.SelectOp):
        cond = sel.operands[0].owner
        if not (isinstance(cond, graph.CompareOp) and cond.direction.data == "ne"
                and cond.operands[0] == cond.operands[1] == sel.operands[2]
                and _is_splat(sel.operands[1], lambda x: x == 0)):
            return None
        core += [sel, cond]
        p = sel.operands[2]
        nan_to_zero = True
    normalised = _normalised(p, rank)
    if normalised is None:
        return None
    e, norm_ops = normalised
    exp = _owner(e, "graph.exp")
    sub = _owner(exp.operands[0], "graph.sub") if exp is not None else None
    if exp is None or sub is None:
        return None
    x = sub.operands[0]
    max_ops = _row_stat(sub.operands[1], "max", x, rank)
    if max_ops is None:
        return None
    core += [*norm_ops, exp, sub, *max_ops]
    found = _score_chain(x)
    if found is None:
        return None
    qk, chain = found
    if _matrices(qk) is None or shape_of(qk.result.type) != shape_of(pv.lhs.type):
        return None
    core += [*chain, qk]
    inside = set(core)
    for op in core:
        if op is pv:
            continue
        if any(u.operation not in inside for r in op.results for u in r.uses):
            return None  # a score or probability is read elsewhere: it must be written
    safe_sum = any(isinstance(op, graph.SelectOp) for op in norm_ops)
    return AttentionMatch(qk, pv, x, tuple(core), nan_to_zero, safe_sum)


_PER_ELEMENT = (graph.ElementwiseOp, graph.SelectOp, graph.ConvertOp, graph.CompareOp)
MAX_CHAIN = 32


def _score_chain(x: SSAValue) -> tuple[graph.DotOp, list[Operation]] | None:
    """The dot the softmax input `x` is computed from per element, and the ops between
    them (any DAG of per-element ops of the score shape: a scale, a mask add or select).
    None unless exactly one dot of that shape feeds `x` through such ops."""
    shape = shape_of(x.type)
    ops: list[Operation] = []
    dots: set[graph.DotOp] = set()
    stack, seen = [x], set()
    while stack:
        v = stack.pop()
        op = v.owner
        if not isinstance(op, Operation) or op in seen or shape_of(v.type) != shape:
            continue
        seen.add(op)
        if isinstance(op, graph.DotOp):
            dots.add(op)
        elif isinstance(op, _PER_ELEMENT):
            if len(ops) == MAX_CHAIN:
                return None
            ops.append(op)
            stack.extend(op.operands)
    if len(dots) != 1:
        return None
    (qk,) = dots
    # the chain: those of the ops computed from the dot
    on_path: set[SSAValue] = {qk.result}
    chain: list[Operation] = []
    changed = True  # (at most MAX_CHAIN ops: a fixpoint is cheap)
    while changed:
        changed = False
        for op in ops:
            if op not in chain and any(o in on_path for o in op.operands):
                chain.append(op)
                on_path.update(op.results)
                changed = True
    return (qk, chain) if x in on_path else None


def is_light(op: Operation) -> bool:
    return isinstance(op, graph.GraphOp) and graph.op_class(op) == graph.OpClass.LIGHT


def output_transpose(pv: Operation) -> graph.TransposeOp | None:
    """The transpose that alone reads the attention's output (heads merged back, as
    [B, H, S, D] -> [B, S, H, D] before the output projection) when it keeps the last
    dim last: the kernel stores its output rows at the permuted index instead of
    writing the untransposed tensor for a copy kernel to move."""
    uses = list(pv.results[0].uses)
    t = uses[0].operation if len(uses) == 1 else None
    if not isinstance(t, graph.TransposeOp) or list(t.perm.get_values())[-1] != len(t.perm.get_values()) - 1:
        return None
    return t


def attention_output(value: SSAValue) -> tuple[Operation | None, graph.TransposeOp | None]:
    """The p·v dot an attention kernel's output `value` is, and its output transpose
    (None when the kernel writes the dot itself)."""
    owner = value.owner
    if isinstance(owner, graph.TransposeOp) and isinstance(owner.input.owner, Operation) \
            and output_transpose(owner.input.owner) is owner:
        return owner.input.owner, owner
    return (owner if isinstance(owner, Operation) else None), None
