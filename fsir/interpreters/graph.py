"""numpy semantics of the graph dialect: what each op computes, op by op.

The reference interpreter (`fsir.interpreters.evaluate_op`) and constant folding read
this table, as xDSL keeps `@impl` interpreters apart from the dialects they run. Arrays
arrive with `numpy_dtype` of their element type, one positional argument per operand.
An elementwise op's numpy function is a column of its row in the dialect's elementwise
table (`ELEMENTWISE`), beside its arity and types: that row is the op's one home.
"""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import Float32Type
from xdsl.utils.exceptions import VerifyException

from fsir.dialects.graph import (
    DYN,
    TF32_DOTS,
    BitcastOp,
    BroadcastOp,
    CombineMomentsOp,
    CompareDirection,
    CompareOp,
    ConcatOp,
    ConstantOp,
    ConvertOp,
    ConvOp,
    DotOp,
    ElementwiseOp,
    GatherOp,
    IotaOp,
    PadMode,
    PadOp,
    ReduceKind,
    ReduceOp,
    ReduceWindowOp,
    ReshapeOp,
    ScatterKind,
    ScatterOp,
    SegmentKind,
    SegmentReduceOp,
    SelectOp,
    SliceOp,
    SortOp,
    TileMomentsOp,
    TransposeOp,
    check_matmul,
    compute_dtype,
    constant_array,
    dims_property,
    fmt_shape,
    kept_dynamic_dims,
    numpy_dtype,
    reduce_identity,
    round_tf32,
    shape_of,
    tensor_type,
)
from fsir.interpreters.moments import Moments, combine_tiles, tile_moments
from fsir.interpreters.table import ImplTable

GRAPH = ImplTable("graph")


def _same_runtime_shapes(*arrays: np.ndarray) -> None:
    """`?` dims are only known at run time: elementwise operands must agree then (numpy
    would silently broadcast a size-1 dim)."""
    if len({a.shape for a in arrays}) > 1:
        shapes = " and ".join(fmt_shape(a.shape) for a in arrays)
        raise VerifyException(f"operand shapes differ at run time: {shapes}")


_COMPARE_REF = {
    CompareDirection.EQ: np.equal,
    CompareDirection.NE: np.not_equal,
    CompareDirection.LT: np.less,
    CompareDirection.LE: np.less_equal,
    CompareDirection.GT: np.greater,
    CompareDirection.GE: np.greater_equal,
}


_REDUCE_REF = {ReduceKind.SUM: np.sum, ReduceKind.MAX: np.max, ReduceKind.MIN: np.min, ReduceKind.PROD: np.prod}


_SCATTER_UFUNC = {
    ScatterKind.ADD: np.add,
    ScatterKind.MUL: np.multiply,
    ScatterKind.MAX: np.maximum,
    ScatterKind.MIN: np.minimum,
}


@GRAPH.impl(ElementwiseOp)
def run_elementwise(op: ElementwiseOp, *args: np.ndarray) -> np.ndarray:
    _same_runtime_shapes(*args)
    elem = op.result_type.element_type
    cdt = compute_dtype(elem)
    out = op.SPEC.ref(*(a.astype(cdt, copy=False) for a in args))
    return np.asarray(out).astype(numpy_dtype(elem), copy=False)


@GRAPH.impl(CompareOp)
def run_compare(op: CompareOp, a, b):
    _same_runtime_shapes(a, b)
    cdt = compute_dtype(tensor_type(op.lhs).element_type)
    return _COMPARE_REF[op.direction.data](a.astype(cdt), b.astype(cdt))


@GRAPH.impl(SelectOp)
def run_select(op: SelectOp, c, a, b):
    _same_runtime_shapes(c, a, b)
    return np.where(c, a, b)


@GRAPH.impl(ConvertOp)
def run_convert(op: ConvertOp, x):
    dst = numpy_dtype(op.result_type.element_type)
    if dst == np.bool_:
        return x != 0
    if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16:
        x = x.astype(np.float32) if x.dtype != np.float64 else x
        if dst.kind in "iu":
            # Saturate like PTX cvt.rzi (NaN -> 0). Compare in f64 against max + 1, a power
            # of two: info.max itself may round up to it in float and would wrap.
            info = np.iinfo(dst)
            x = np.trunc(x.astype(np.float64))
            high, low = x >= float(info.max) + 1.0, x < float(info.min)
            inside = np.where(high | low | np.isnan(x), 0.0, x).astype(dst)
            return np.where(high, info.max, np.where(low, info.min, inside)).astype(dst)
    return x.astype(dst)


@GRAPH.impl(BitcastOp)
def run_bitcast(op: BitcastOp, x):
    dst = numpy_dtype(op.result_type.element_type)
    bits = x.astype(np.uint8) if x.dtype == np.bool_ else x
    if dst == np.bool_:
        return bits.view(np.uint8) != 0
    return np.ascontiguousarray(bits).view(dst)


@GRAPH.impl(ConstantOp)
def run_constant(op: ConstantOp):
    return constant_array(op.value)


@GRAPH.impl(IotaOp)
def run_iota(op: IotaOp, like=None):
    out = list(shape_of(op.result_type))
    if like is not None:
        dims = dims_property(op, "like_dims") if op.like_dims is not None else range(len(out))
        out = [like.shape[k] if s == DYN else s for s, k in zip(out, dims)]
    if DYN in out:
        raise VerifyException(
            "graph.iota with a '?' dim cannot be evaluated without a 'like' operand (its size is unknown)"
        )
    d = op.dim.value.data
    idx = np.arange(out[d]).reshape([-1 if i == d else 1 for i in range(len(out))])
    return np.broadcast_to(idx, out).astype(numpy_dtype(op.result_type.element_type))


@GRAPH.impl(BroadcastOp)
def run_broadcast(op: BroadcastOp, x, like=None):
    out = list(shape_of(op.result_type))
    dims = dims_property(op, "dims")
    expanded = [1] * len(out)
    for i, d in enumerate(dims):
        expanded[d] = x.shape[i]
    for d, s in enumerate(out):
        if s == DYN and like is not None:
            out[d] = like.shape[d]
    src, static_out = shape_of(op.input.type), shape_of(op.result_type)
    for i, d in enumerate(dims):
        if out[d] == DYN:
            out[d] = x.shape[i]
        elif x.shape[i] != out[d] and (x.shape[i] != 1 or (src[i] == DYN and static_out[d] == DYN)):
            raise VerifyException(
                f"operand dim {i} of size {x.shape[i]} cannot broadcast to result dim {d} of size {out[d]} at run time"
            )
    if DYN in out:
        raise VerifyException("a '?' result dim of graph.broadcast is not determined by its operand")
    return np.broadcast_to(x.reshape(expanded), out).copy()


@GRAPH.impl(ReshapeOp)
def run_reshape(op: ReshapeOp, x):
    shape = [(-1 if d == DYN else d) for d in shape_of(op.result_type)]
    spans = op.dim_groups()
    for j, i in ({} if spans else kept_dynamic_dims(shape_of(op.input.type), shape_of(op.result_type))).items():
        shape[j] = x.shape[i]
    for ins, outs in spans or []:  # each `?` dim: its group's size over the static dims
        n = math.prod(x.shape[i] for i in ins)
        known = math.prod(shape[j] for j in outs if shape[j] != -1)
        if n % known:
            raise VerifyException(f"cannot reshape {fmt_shape(x.shape)} at run time to "
                                  f"{fmt_shape(shape_of(op.result_type))}: dims {list(ins)} do not divide by {known}")
        shape = [n // known if j in outs and d == -1 else d for j, d in enumerate(shape)]
    known = math.prod(d for d in shape if d != -1)
    if (-1 not in shape and known != x.size) or (known and x.size % known):
        raise VerifyException(
            f"cannot reshape {fmt_shape(x.shape)} ({x.size} elements) at run time "
            f"to {fmt_shape(shape_of(op.result_type))}"
        )
    return x.reshape(shape)


@GRAPH.impl(TransposeOp)
def run_transpose(op: TransposeOp, x):
    return np.ascontiguousarray(np.transpose(x, dims_property(op, "perm")))


@GRAPH.impl(SliceOp)
def run_slice(op: SliceOp, x):
    start, limit, strides = (dims_property(op, p) for p in ("start", "limit", "strides"))
    ends = [None if l == DYN else l for l in limit]  # DYN keeps a dim of run-time size whole
    return np.ascontiguousarray(x[tuple(slice(s, e, k) for s, e, k in zip(start, ends, strides))])


@GRAPH.impl(ConcatOp)
def run_concat(op: ConcatOp, *xs):
    return np.concatenate(xs, axis=op.dim.value.data)


@GRAPH.impl(ReduceOp)
def run_reduce(op: ReduceOp, x):
    elem = op.result_type.element_type
    acc = x.astype(compute_dtype(elem), copy=False)
    out = _REDUCE_REF[op.kind.data](acc, axis=dims_property(op, "dims"))
    return np.asarray(out).astype(numpy_dtype(elem))


@GRAPH.impl(GatherOp)
def run_gather(op: GatherOp, table, ids):
    return table[np.clip(ids, 0, table.shape[0] - 1)]


@GRAPH.impl(DotOp)
def run_dot(op: DotOp, a, b):
    check_matmul(a.shape, b.shape)  # `?` contracting/batch dims must agree at run time
    elem = op.result_type.element_type
    cdt = compute_dtype(elem)
    if TF32_DOTS.get() and isinstance(elem, Float32Type):
        a, b = round_tf32(a), round_tf32(b)
    return np.matmul(a.astype(cdt), b.astype(cdt)).astype(numpy_dtype(elem))


@GRAPH.impl(ReduceWindowOp)
def run_reduce_window(op: ReduceWindowOp, x):
    window, strides, dilations, low, high = op.params()
    elem = op.result_type.element_type
    acc = x.astype(compute_dtype(elem), copy=False)
    identity = reduce_identity(op.kind.data, acc.dtype)
    if any(low) or any(high):
        acc = np.pad(acc, list(zip(low, high)), constant_values=identity)
    extent = [(k - 1) * r + 1 for k, r in zip(window, dilations)]
    if any(n < e for n, e in zip(acc.shape, extent)):
        raise VerifyException(
            f"the window ({fmt_shape(extent)} positions) is larger than the padded "
            f"operand ({fmt_shape(acc.shape)}) at run time"
        )
    rank = acc.ndim
    view = np.lib.stride_tricks.sliding_window_view(acc, extent)
    view = view[tuple(slice(None, None, s) for s in strides) + tuple(slice(None, None, r) for r in dilations)]
    out = _REDUCE_REF[op.kind.data](view, axis=tuple(range(rank, 2 * rank)))
    return np.asarray(out).astype(numpy_dtype(elem))


@GRAPH.impl(PadOp)
def run_pad(op: PadOp, x, value=None):
    low, high, interior = op.params()
    if any(interior):
        n = x.shape
        spread = np.full([m + max(m - 1, 0) * r for m, r in zip(n, interior)], value, dtype=x.dtype)
        spread[tuple(slice(None, None, r + 1) for r in interior)] = x
        x = spread
    # negative padding removes elements first; numpy.pad adds the rest
    x = x[tuple(slice(max(-lo, 0), m - max(-hi, 0)) for m, lo, hi in zip(x.shape, low, high))]
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in zip(low, high)]
    mode = op.mode_name
    if mode == PadMode.CONSTANT:
        assert value is not None  # the verifier requires it in constant mode
        return np.pad(x, widths, mode="constant", constant_values=value)
    if x.size == 0 and any(w != (0, 0) for w in widths):
        raise VerifyException(f"{mode} padding of an empty tensor at run time")
    numpy_mode: Any = {PadMode.EDGE: "edge", PadMode.REFLECT: "reflect", PadMode.WRAP: "wrap"}[mode]
    return np.pad(x, widths, mode=numpy_mode)


@GRAPH.impl(ConvOp)
def run_conv(op: ConvOp, x, w):
    elem = op.result_type.element_type
    cdt = compute_dtype(elem)
    x, w = x.astype(cdt), w.astype(cdt)
    if x.shape[1] != w.shape[1] * op.group_count:  # a `?` channel dim, known now
        raise VerifyException(
            f"the input has {x.shape[1]} channels at run time; the weight expects {w.shape[1] * op.group_count}"
        )
    strides, low, high, dilation, lhs_dilation = op.window()
    spatial = x.ndim - 2
    # the input with holes (lhs dilation), then padded (negative pads crop)
    if any(d > 1 for d in lhs_dilation):
        dilated = [(s - 1) * d + 1 if s else 0 for s, d in zip(x.shape[2:], lhs_dilation)]
        holes = np.zeros((*x.shape[:2], *dilated), cdt)
        holes[(slice(None), slice(None), *(slice(None, None, d) for d in lhs_dilation))] = x
        x = holes
    x = np.pad(x, [(0, 0), (0, 0), *((max(lo, 0), max(hi, 0)) for lo, hi in zip(low, high))])
    x = x[
        (slice(None), slice(None), *(slice(-min(lo, 0), s - max(-hi, 0)) for lo, hi, s in zip(low, high, x.shape[2:])))
    ]
    kernel = w.shape[2:]
    out = [(s - (k - 1) * d - 1) // st + 1 for s, k, d, st in zip(x.shape[2:], kernel, dilation, strides)]
    n, groups = x.shape[0], op.group_count
    o = w.shape[0]
    acc = np.zeros((n, groups, o // groups, *out), cdt)
    if min(out, default=1) > 0:
        xg = x.reshape(n, groups, x.shape[1] // groups, *x.shape[2:])
        wg = w.reshape(groups, o // groups, w.shape[1], *kernel)
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:spatial]
        eq = f"ngc{letters},goc->ngo{letters}"
        # one contraction per kernel position over a strided view of the input
        for pos in np.ndindex(*kernel):
            view = xg[
                (
                    slice(None),
                    slice(None),
                    slice(None),
                    *(slice(p * d, p * d + (m - 1) * st + 1, st) for p, d, m, st in zip(pos, dilation, out, strides)),
                )
            ]
            acc += np.einsum(eq, view, wg[(slice(None), slice(None), slice(None), *pos)])
    return acc.reshape(n, o, *out).astype(numpy_dtype(elem))


@GRAPH.impl(ScatterOp)
def run_scatter(op: ScatterOp, x, indices, updates):
    dims = dims_property(op, "dims")
    k = len(dims)
    nb = math.prod(indices.shape[:-1])
    window = [s for d, s in enumerate(x.shape) if d not in dims]
    if tuple(updates.shape) != (*indices.shape[:-1], *window):
        raise VerifyException(
            f"updates shape {fmt_shape(updates.shape)} does not match indices and operand "
            f"at run time: expected {fmt_shape([*indices.shape[:-1], *window])}"
        )
    points = indices.reshape(nb, k).astype(np.int64)
    inside = np.all((points >= 0) & (points < np.array([x.shape[d] for d in dims], dtype=np.int64)), axis=1)
    # every (update, window position) as coordinates of the result, in application order
    grid = np.indices(window, dtype=np.int64).reshape(len(window), -1) if window else np.zeros((0, 1), np.int64)
    nw = grid.shape[1]
    coords: list[np.ndarray] = []
    wi = iter(range(len(window)))
    for d in range(x.ndim):
        if d in dims:
            coords.append(np.repeat(points[:, dims.index(d)], nw))
        else:
            coords.append(np.tile(grid[next(wi)], nb))
    keep = np.repeat(inside, nw)
    targets = (
        np.ravel_multi_index([c[keep] for c in coords], x.shape) if x.ndim else np.zeros(int(keep.sum()), np.int64)
    )
    values = updates.reshape(-1)[keep]
    out = x.copy().reshape(-1)
    if op.kind.data == ScatterKind.NONE:
        # the last update of each element wins
        _, last_rev = np.unique(targets[::-1], return_index=True)
        last = len(targets) - 1 - last_rev
        out[targets[last]] = values[last]
    else:
        elem = op.result_type.element_type
        ufunc = _SCATTER_UFUNC[op.kind.data]
        if compute_dtype(elem) == out.dtype:
            ufunc.at(out, targets, values)  # unbuffered, in order
        else:  # f16/bf16 combine in f32 and round after every update
            acc = out.astype(compute_dtype(elem))
            for t, v in zip(targets.tolist(), values.astype(acc.dtype).tolist()):
                acc[t] = np.asarray(ufunc(acc[t], v)).astype(out.dtype)
            out = acc.astype(out.dtype)
    return out.reshape(x.shape)


@GRAPH.impl(SortOp)
def run_sort(op: SortOp, keys, values):
    _same_runtime_shapes(keys, values)
    return np.take_along_axis(
        values, op.order(keys.astype(compute_dtype(tensor_type(op.keys).element_type))), axis=op.dim.value.data
    )


@GRAPH.impl(SegmentReduceOp)
def run_segment_reduce(op: SegmentReduceOp, data, offsets):
    elem = op.result_type.element_type
    acc = data.astype(compute_dtype(elem), copy=False)
    starts, ends = op.bounds(offsets, data.shape[0])
    out = np.zeros((len(starts), *data.shape[1:]), dtype=acc.dtype)
    combine = _REDUCE_REF[op.combine_kind()]
    for s, (lo, hi) in enumerate(zip(starts.tolist(), ends.tolist())):
        if hi > lo:
            out[s] = combine(acc[lo:hi], axis=0)
            if op.kind.data == SegmentKind.MEAN:
                out[s] = out[s] / acc.dtype.type(hi - lo)
    return out.astype(numpy_dtype(elem))


@GRAPH.impl(TileMomentsOp)
def run_tile_moments(op: TileMomentsOp, x):
    parts = tile_moments(x, op.width)
    return np.stack([np.asarray(parts.mean), np.asarray(parts.m2)], -1).astype(numpy_dtype(op.result_type.element_type))


@GRAPH.impl(CombineMomentsOp)
def run_combine_moments(op: CombineMomentsOp, p):
    counts = np.broadcast_to(np.asarray(op.counts(), p.dtype), p.shape[:-1])
    total = combine_tiles(Moments(counts, p[..., 0], p[..., 1]))
    var = np.asarray(total.m2) / p.dtype.type(op.row)
    return np.stack([np.asarray(total.mean), var], -1).astype(p.dtype)
