"""Graph canonicalization: constant folding of small tensors and algebraic identities.

The patterns are attached to the graph ops (trait `GraphCanonicalization`), so xDSL's
generic `canonicalize` pass applies them too; `graph-canonicalize` applies only these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from fsir.dialects import graph
from fsir.dialects.graph import DYN, shape_of
from fsir.interpreters import graph_value

# Folding evaluates with numpy at compile time and stores the result in the IR, so
# only small results are folded (large constants would bloat the IR and the PTX).
MAX_FOLD_ELEMENTS = 1024


def _constant(value: SSAValue) -> np.ndarray | None:
    if isinstance(value.owner, graph.ConstantOp):
        return graph.constant_array(value.owner.value)
    return None


def _splat(value: SSAValue) -> float | None:
    """The splat value of a constant operand (or of a broadcast of one)."""
    owner = value.owner
    if isinstance(owner, graph.BroadcastOp):
        return _splat(owner.input)
    arr = _constant(value)
    if arr is None or arr.size == 0:
        return None
    first = arr.reshape(-1)[0]
    return float(first) if np.all(arr == first) else None


class FoldConstantOperands(RewritePattern):
    """An op whose operands are all constants becomes a constant (small results only)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.GraphOp) or isinstance(op, graph.ConstantOp) or not op.operands:
            return
        t = op.result_type
        shape = shape_of(t)
        if DYN in shape or math.prod(shape) > MAX_FOLD_ELEMENTS:
            return
        maybe_args = [_constant(v) for v in op.operands]
        args = [a for a in maybe_args if a is not None]
        if len(args) != len(maybe_args):
            return
        with np.errstate(all="ignore"):
            value = graph_value(op, args)
        if value.dtype.kind not in "biu" and not np.isfinite(value.astype(np.float32)).all():
            # xDSL prints NaN/inf as hex (0x7fc00000) but reads hex back as an integer
            # value (2.14e9), so a non-finite constant would not survive printing.
            return
        rewriter.replace_op(op, graph.ConstantOp.from_array(value, t.element_type))


class RemoveIdentity(RewritePattern):
    """Ops that return their operand unchanged."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.operands or len(op.results) != 1 or op.operands[0].type != op.results[0].type:
            return
        x = op.operands[0]
        identity = False
        match op:
            case graph.ReshapeOp():  # with groups, [B, 4, S] -> [B/4, 4, 4*S] keeps the type
                identity = op.groups is None
            case graph.ConvertOp():
                identity = True
            case graph.TransposeOp():
                identity = list(graph.dims_property(op, "perm")) == list(range(len(graph.dims_property(op, "perm"))))
            case graph.BroadcastOp():
                dims = graph.dims_property(op, "dims")
                identity = list(dims) == list(range(len(dims))) and DYN not in shape_of(x.type)
            case graph.SliceOp():
                start, strides = graph.dims_property(op, "start"), graph.dims_property(op, "strides")
                # limit must be the (static) size: a `?` operand may be longer than limit.
                full = list(graph.dims_property(op, "limit")) == list(shape_of(x.type))
                identity = full and all(s == 0 for s in start) and all(k == 1 for k in strides)
            case graph.ConcatOp():
                identity = len(op.operands) == 1
            case graph.ReduceOp():
                identity = len(graph.dims_property(op, "dims")) == 0
            case graph.PadOp():
                identity = not any(v for p in op.params() for v in p)
            case graph.ReduceWindowOp():
                window, strides, _, low, high = op.params()
                identity = set(window) | set(strides) <= {1} and not any(low) and not any(high)
            case graph.ElementwiseOp() if op.name in ("graph.max", "graph.min", "graph.and", "graph.or"):
                identity = op.operands[0] is op.operands[1]
            case _:
                identity = False
        if identity:
            rewriter.replace_op(op, [], [x])


class ComposeIndexOps(RewritePattern):
    """reshape(reshape(x)) -> reshape(x); transpose(transpose(x)) -> one transpose;
    neg(neg(x)) -> x."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, graph.ReshapeOp) and isinstance(op.input.owner, graph.ReshapeOp) \
                and op.groups is None and op.input.owner.groups is None:  # groups hold for their own shapes only
            inner = op.input.owner
            rewriter.replace_op(op, graph.ReshapeOp.build(operands=[inner.input], result_types=[op.result_type]))
        elif isinstance(op, graph.TransposeOp) and isinstance(op.input.owner, graph.TransposeOp):
            inner = op.input.owner
            p_in, p_out = graph.dims_property(inner, "perm"), graph.dims_property(op, "perm")
            perm = [p_in[p] for p in p_out]
            rewriter.replace_op(op, graph.TransposeOp.build(
                operands=[inner.input], result_types=[op.result_type],
                properties={"perm": builtin.DenseArrayBase.from_list(builtin.i64, perm)}))
        elif (op.name == "graph.neg" and isinstance(inner := op.operands[0].owner, Operation)
              and inner.name == "graph.neg"):
            # (the operand may be a block argument, whose owner is a Block)
            rewriter.replace_op(op, [], [inner.operands[0]])


class AlgebraicIdentities(RewritePattern):
    """x*1, x/1, x+0 (integers; floats only with -0.0 since 0.0 changes -0.0), x-0,
    select with a constant condition."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, graph.SelectOp):
            c = _splat(op.cond)
            if c is not None and op.on_true.type == op.result_type == op.on_false.type:
                rewriter.replace_op(op, [], [op.on_true if c else op.on_false])
            return
        if not isinstance(op, graph.ElementwiseOp) or op.SPEC.arity != 2:
            return
        x, y = op.operands
        if x.type != op.result_type:
            return
        is_int = graph.is_int(op.result_type.element_type)
        c = _splat(y)
        if c is None:
            return
        keep = False
        if op.name in ("graph.mul", "graph.div") and c == 1.0:
            keep = True
        elif op.name in ("graph.add", "graph.sub") and c == 0.0:
            # 0.0 + -0.0 = 0.0, so for floats only x + (-0.0) and x - (+0.0) are exact.
            sign_bit = math.copysign(1.0, c) < 0
            keep = is_int or (op.name == "graph.add") == sign_bit
        if keep:
            rewriter.replace_op(op, [], [x])


def per_channel_constant(value: SSAValue, shape: tuple[int, ...], dim: int = 1) -> np.ndarray | None:
    """The values along `dim` of a constant `value` of `shape` that varies along `dim`
    only (a broadcast of a per-channel vector, or a splat), else None."""
    owner = value.owner
    if isinstance(owner, graph.BroadcastOp) and shape_of(value.type) == shape:
        src = _constant(owner.input)
        dims = graph.dims_property(owner, "dims")
        if src is None or any(n != 1 for i, n in enumerate(src.shape) if dims[i] != dim):
            return None
        vector = src.reshape(-1)
        return np.broadcast_to(vector, (shape[dim],)) if vector.size in (1, shape[dim]) else None
    arr = _constant(value)
    if arr is None or arr.shape != shape or arr.size == 0:
        return None
    vector = arr[tuple(slice(None) if i == dim else 0 for i in range(len(shape)))]
    expanded = vector.reshape([shape[dim] if i == dim else 1 for i in range(len(shape))])
    return vector if np.array_equal(arr, np.broadcast_to(expanded, shape)) else None


class FoldScaleIntoConv(RewritePattern):
    """(conv(x, w) [+ b]) * s with b and s constant per output channel (a conv's bias,
    then BatchNormalization's scale, as importers emit them) -> conv(x, w * s) [+ b * s]:
    the multiply disappears into the weights at compile time; a per-channel add stays
    as the conv kernel's bias epilogue. Only a constant weight, and a conv (and bias
    add) read by nothing else, are rewritten."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "graph.mul":
            return
        for value, scale_value in (op.operands, reversed(op.operands)):
            bias_add = value.owner if isinstance(value.owner, Operation) and value.owner.name == "graph.add" else None
            bias = None
            conv = value.owner
            if bias_add is not None and bias_add.results[0].has_one_use():
                for c, b in (bias_add.operands, reversed(bias_add.operands)):
                    if isinstance(c.owner, graph.ConvOp):
                        conv, bias = c.owner, per_channel_constant(b, shape_of(c.type))
                        break
                if bias is None:
                    continue
            if not isinstance(conv, graph.ConvOp) or not conv.result.has_one_use():
                continue
            weight = _constant(conv.weight)
            shape = shape_of(conv.result.type)
            if weight is None or DYN in shape or op.results[0].type != conv.result.type:
                continue
            scale = per_channel_constant(scale_value, shape)
            if scale is None:
                continue
            elem = graph.tensor_type(conv.weight).element_type
            cdt = graph.compute_dtype(elem)
            scale = scale.astype(cdt)
            scaled = weight.astype(cdt) * scale.reshape(-1, *[1] * (weight.ndim - 1))
            new_ops: list[Operation] = [graph.ConstantOp.from_array(scaled.astype(graph.numpy_dtype(elem)), elem)]
            strides, low, high, dilation, lhs_dilation = conv.window()
            new_conv = graph.ConvOp.build_conv(conv.input, new_ops[0].results[0], conv.result.type, strides, low,
                                               high, dilation, lhs_dilation, conv.group_count)
            new_ops.append(new_conv)
            result = new_conv.result
            if bias is not None:
                vector = graph.ConstantOp.from_array((bias.astype(cdt) * scale).astype(graph.numpy_dtype(elem)), elem)
                spread = graph.BroadcastOp.build(
                    operands=[vector.result, []], result_types=[conv.result.type],
                    properties={"dims": builtin.DenseArrayBase.from_list(builtin.i64, [1])})
                add = graph.ELEMENTWISE_OPS["add"]
                added = add.build(operands=add._group_operands([result, spread.results[0]]),
                                  result_types=[conv.result.type])
                new_ops += [vector, spread, added]
                result = added.results[0]
            for new in new_ops:
                new.location = conv.location
            rewriter.insert_op(new_ops, InsertPoint.before(op))
            rewriter.replace_op(op, [], [result])
            if bias_add is not None:
                rewriter.erase_op(bias_add)
            rewriter.erase_op(conv)
            return


def identity_pad(kind: graph.ReduceKind, x: SSAValue) -> tuple[SSAValue, list[int], list[int]] | None:
    """When `x` is a constant pad, without interior or negative padding, whose value is
    the identity of reduction `kind`: (its operand, its low and high padding). A window
    reduction of `x` may pad the operand itself instead."""
    pad = x.owner
    if not isinstance(pad, graph.PadOp) or pad.value is None:
        return None
    low, high, interior = pad.params()
    if any(interior) or min(low, default=0) < 0 or min(high, default=0) < 0:
        return None
    value = _splat(pad.value)
    dtype = graph.compute_dtype(graph.tensor_type(x).element_type)
    if value is None or value != graph.reduce_identity(kind, dtype):
        return None
    return pad.input, list(low), list(high)


class PadIntoWindow(RewritePattern):
    """A window reduction of a constant pad whose value is the reduction's identity
    (an exported model's explicit Pad before a pooling) reduces the unpadded operand
    with the padding added to its own: one op, and the pad's tensor never exists."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.ReduceWindowOp):
            return
        found = identity_pad(op.kind.data, op.input)
        if found is None:
            return
        x, low, high = found
        window, strides, dilations, w_low, w_high = op.params()
        ints = lambda xs: builtin.DenseArrayBase.from_list(builtin.i64, list(xs))  # noqa: E731
        rewriter.replace_op(op, graph.ReduceWindowOp.build(
            operands=[x], result_types=[op.result_type],
            properties={"kind": op.kind, "window": ints(window), "strides": ints(strides),
                        "dilations": ints(dilations), "low": ints(a + b for a, b in zip(low, w_low)),
                        "high": ints(a + b for a, b in zip(high, w_high))}))


def graph_patterns() -> tuple[RewritePattern, ...]:
    return (FoldConstantOperands(), RemoveIdentity(), ComposeIndexOps(), AlgebraicIdentities(), PadIntoWindow(),
            FoldScaleIntoConv())


@dataclass(frozen=True)
class GraphCanonicalizePass(ModulePass):
    """Fold small constant subgraphs and remove identity ops in graph-dialect IR."""

    name = "graph-canonicalize"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier(list(graph_patterns()))).rewrite_module(op)
