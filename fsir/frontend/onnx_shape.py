"""ONNX converters of shape and data-movement ops: Reshape, Flatten, Transpose,
(Un)Squeeze, Expand, Concat, Split, Slice, Gather(ND), Shape, Size, Constant(OfShape), Range.

Shape values stay symbolic where they only feed shapes (`fsir/frontend/onnx_dynamic.py`).
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.errors import UserError
from fsir.frontend.onnx_dynamic import SYMBOLIC, factors, infer_minus_one, is_symbolic
from fsir.frontend.onnx_import import OnnxImporter, converter, elem_type, tensor_array


@converter("Reshape")
def op_Reshape(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    target = imp.sizes(node.input[1], "the target shape")
    src = shape_of(x.type)
    if graph.DYN in src or any(is_symbolic(d) for d in target):
        return [_dynamic_reshape(imp, x, target, attrs)]
    copies = [i for i, d in enumerate(target) if d == 0 and not attrs.get("allowzero", 0)]
    if copies and copies[-1] >= len(src):
        raise imp.error(f"{imp.describe()}: the target shape copies dim {copies[-1]} (a 0 there) of a "
                         f"rank-{len(src)} input")
    out = [src[i] if i in copies else d for i, d in enumerate(target)]
    if out.count(-1) == 1:
        known = math.prod(d for d in out if d != -1)
        out[out.index(-1)] = math.prod(src) // known if known else 0
    if math.prod(out) != math.prod(src) or any(d < 0 for d in out):
        raise imp.error(f"{imp.describe()}: cannot reshape {list(src)} to {target}")
    return [imp.b.reshape(x, out)]


def _dynamic_reshape(imp: OnnxImporter, x: SSAValue, target: list, attrs: dict) -> SSAValue:
    """A Reshape with run-time sizes. Where `x` is itself a reshape whose result no
    longer shows the run-time sizes the target splits out (BERT's mask flattened to
    [batch * seq] and reshaped back to [batch, 1, 1, seq]), the reshape of its source
    is the same row-major relabelling and keeps them; else a `?` dim split into several
    run-time sizes is a gather (`_unflatten`). Anything else is the importer's located
    refusal."""
    try:
        return imp.dynamic_reshape(x, target, attrs)
    except UserError:
        owner = x.owner
        if isinstance(owner, graph.ReshapeOp) and not any(
                isinstance(d, int) and d == 0 for d in target):  # a 0 copies a dim of `x` itself
            try:
                return _dynamic_reshape(imp, owner.input, target, attrs)
            except UserError:
                pass
        y = _unflatten(imp, x, target, attrs)
        if y is None:
            raise
        return y


def _unflatten(imp: OnnxImporter, x: SSAValue, target: list, attrs: dict) -> SSAValue | None:
    """A `?` dim of `x` split into several dims, two or more of them of run-time size
    (GPT-2's `addmm(b, x.view(-1, n), w).view(batch, seq, m)`: [batch * seq, m] to
    [batch, seq, m]), which graph.reshape cannot state (it takes one run-time size from
    the element count): a gather of the rows of that dim at the row-major index
    i_0 * (d_1 * ... * d_n) + ... + i_n over the new dims. None if the target is not
    such a split."""
    sx = imp.sym.dims(x)
    want = [sx[i] if isinstance(d, int) and d == 0 and not attrs.get("allowzero", 0) else d
            for i, d in enumerate(target)]
    want = infer_minus_one(sx, want)
    if any(isinstance(d, int) and d < 0 for d in want):
        return None
    for k, size in enumerate(sx):
        tail = len(sx) - k - 1
        mid = want[k:len(want) - tail]
        if (not is_symbolic(size) or want[:k] != sx[:k] or want[len(want) - tail:] != sx[k + 1:]
                or len(mid) < 2 or sorted(map(str, _factors_of(mid))) != sorted(map(str, _factors_of([size])))):
            continue
        b, i64 = imp.b, graph.IntegerType(64)
        shape = [graph.DYN if is_symbolic(d) else d for d in mid]
        ids = None
        for i in range(len(mid)):
            term = imp.iota(mid, i, i64)
            stride = 1
            for d in mid[i + 1:]:
                stride = SYMBOLIC.mul(stride, d)
            if stride != 1:
                scalar = imp.run_time_sizes.scalar(stride)
                if scalar is None:
                    return None
                term = b.ew("mul", term, b.broadcast(scalar, shape, [], like=term if graph.DYN in shape else None))
            ids = term if ids is None else b.ew("add", ids, term)
        assert ids is not None
        y = imp.take(x, ids, k)
        imp.sym.bind(y, want)
        return y
    return None


def _factors_of(sizes: list) -> list:
    """The factors of the product of `sizes`, without 1s."""
    return [f for d in sizes for f in factors(d) if not (isinstance(f, int) and f == 1)]


@converter("Flatten")
def op_Flatten(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    s = shape_of(x.type)
    a = attrs.get("axis", 1)
    a = imp.axis(a, len(s)) if a < 0 else imp.axis(a, len(s) + 1)
    if graph.DYN in s:  # run-time sizes: the products of the symbolic sizes
        dims = imp.sym.dims(x)
        return [imp.dynamic_reshape(x, [math.prod(dims[:a], start=1), math.prod(dims[a:], start=1)], {})]
    return [imp.b.reshape(x, [math.prod(s[:a]), math.prod(s[a:])])]


@converter("Transpose")
def op_Transpose(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    perm = attrs.get("perm", list(reversed(range(imp.rank(x)))))
    return [imp.b.transpose(x, list(perm))]


@converter("Unsqueeze")
def op_Unsqueeze(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    axes = imp._axes(node, attrs, 13) or []
    out_rank = imp.rank(x) + len(axes)
    normalized = {imp.axis(a, out_rank) for a in axes}
    if len(normalized) != len(axes):
        raise imp.error(f"{imp.describe()}: its {len(axes)} axes repeat an axis")
    axes = normalized
    src = iter(shape_of(x.type))
    return [imp.b.reshape(x, [1 if i in axes else next(src) for i in range(out_rank)])]


@converter("Squeeze")
def op_Squeeze(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    s = shape_of(x.type)
    axes = imp._axes(node, attrs, 13)
    axes = {imp.axis(a, len(s)) for a in axes} if axes is not None else {i for i, d in enumerate(s) if d == 1}
    if any(s[a] != 1 for a in axes):
        raise imp.error(f"{imp.describe()}: cannot squeeze a dimension whose size is not 1")
    return [imp.b.reshape(x, [d for i, d in enumerate(s) if i not in axes])]


@converter("Expand")
def op_Expand(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    target = imp.sizes(node.input[1], "the target shape")
    if graph.DYN in shape_of(x.type) or any(is_symbolic(d) for d in target):
        rank = max(len(target), imp.rank(x))
        xs = [1] * (rank - imp.rank(x)) + imp.sym.dims(x)
        ts = [1] * (rank - len(target)) + target
        what = f"{graph.fmt_shape(shape_of(x.type))} and [{', '.join(map(str, target))}]"
        out = [imp.broadcast_sizes([a, t], what) for a, t in zip(xs, ts)]
        shape = [graph.DYN if is_symbolic(d) else d for d in out]
        return [imp.b.broadcast_to(x, shape, imp.like(shape, out, [x]))]
    try:
        shape = np.broadcast_shapes(shape_of(x.type), tuple(target))
    except ValueError:
        raise imp.error(f"{imp.describe()}: cannot expand {list(shape_of(x.type))} to {target}") from None
    return [imp.b.broadcast_to(x, shape)]


@converter("Concat")
def op_Concat(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    vs = [imp.value(n) for n in node.input if n]
    # ONNX allows empty parts; a `?` dim is not known to be empty
    vs = [v for v in vs if 0 not in shape_of(v.type)] or vs[:1]
    return [imp.b.concat(vs, imp.axis(attrs["axis"], imp.rank(vs[0])))]


@converter("Split")
def op_Split(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    s = shape_of(x.type)
    axis = imp.axis(attrs.get("axis", 0), len(s))
    n = len(node.output)
    if imp.opset >= 13 and len(node.input) > 1 and node.input[1]:
        sizes = imp.ints(node.input[1], "split sizes")
    elif "split" in attrs:
        sizes = list(attrs["split"])
    else:  # equal parts, the last one smaller (opset 18 num_outputs)
        part = -(-s[axis] // n)
        sizes = [min(part, s[axis] - i * part) for i in range(n)]
    outs, offset = [], 0
    for size in sizes:
        start, limit = [0] * len(s), list(s)
        start[axis], limit[axis] = offset, offset + size
        outs.append(imp.b.slice(x, start, limit))
        offset += size
    return outs


@converter("Slice")
def op_Slice(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    s = shape_of(x.type)
    if imp.opset >= 10:
        starts = imp.sizes(node.input[1], "starts")
        ends = imp.sizes(node.input[2], "ends")
        axes = imp.ints(node.input[3], "axes") if len(node.input) > 3 and node.input[3] else None
        steps = imp.ints(node.input[4], "steps") if len(node.input) > 4 and node.input[4] else None
    else:
        starts, ends, axes, steps = list(attrs["starts"]), list(attrs["ends"]), attrs.get("axes"), None
    axes = [imp.axis(a, len(s)) for a in (axes if axes is not None else range(len(starts)))]
    steps = steps or [1] * len(axes)
    start, limit, strides = [0] * len(s), list(s), [1] * len(s)
    reverse, prefixes = [], []
    for a, st, en, k in zip(axes, starts, ends, steps):
        if s[a] != graph.DYN and is_symbolic(en) and not is_symbolic(st) and k == 1:
            prefixes.append((a, st if st >= 0 else max(st + s[a], 0), en))
            continue
        if s[a] == graph.DYN or is_symbolic(st) or is_symbolic(en):
            imp.check_whole_slice(x, a, st, en, k)
            continue  # the whole dim: start 0, limit its run-time size
        # Python/numpy slice semantics, as ONNX specifies (clamping out-of-range bounds).
        lo, hi, k = slice(st, en, k).indices(s[a])
        if k < 0:
            reverse.append((a, list(range(lo, hi, k))))
            continue
        start[a], limit[a], strides[a] = lo, max(hi, lo), k
    y = imp.b.slice(x, start, limit, strides)
    for a, idx in reverse:  # negative steps: a gather with constant indices
        y = imp.take(y, imp.const(np.array(idx, np.int64), graph.IntegerType(64)), a)
    for a, st, en in prefixes:
        # A static dim cut at a run-time end (BERT's `position_ids[:, :seq]` of a buffer
        # of max_position_embeddings): the rows start + iota(end - start), whose length
        # is taken from a value with that dim. Rows past the dim are clamped by the
        # gather where ONNX would clamp the end; a model whose sizes agree never has them.
        ids = imp.run_time_range(st, en, 1, {"limit": en}, imp.const(np.zeros((), np.int64), graph.IntegerType(64)))
        y = imp.take(y, ids, a)
    return [y]


@converter("Gather")
def op_Gather(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x, ids = imp.inputs(node)
    axis = imp.axis(attrs.get("axis", 0), imp.rank(x))
    ids = imp.normalize_ids(ids, shape_of(x.type)[axis], x, axis)
    return [imp.take(x, ids, axis)]


@converter("GatherND")
def op_GatherND(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    """data[b..., idx[b..., j..., 0], ..., idx[b..., j..., k-1]] (b: the batch_dims
    leading dims both share) via one flat index into the batch and the next k dims."""
    x, ids = imp.inputs(node)
    s, ish = shape_of(x.type), shape_of(ids.type)
    bd = attrs.get("batch_dims", 0)
    k = ish[-1] if ish else 0
    if k == 0:
        raise imp.error(f"{imp.describe()}: empty index tuples (indices of shape {list(ish)}) are not supported")
    if bd < 0 or bd + k > len(s) or bd >= len(ish) or tuple(s[:bd]) != tuple(ish[:bd]):
        raise imp.error(f"{imp.describe()}: indices of shape {list(ish)} with batch_dims {bd} do not fit "
                         f"data of shape {list(s)}")
    batch, lead, rest = s[:bd], s[bd:bd + k], s[bd + k:]
    if graph.DYN in (*batch, *lead[1:]) or (bd and graph.DYN in ish):
        shown = [["?" if d == graph.DYN else d for d in dims] for dims in (s, ish)]
        raise imp.error(f"{imp.describe()}: fsir gathers along a dim of run-time size only as the first indexed dim "
                        f"without batch_dims (data of shape {shown[0]}, indices of shape {shown[1]}, batch_dims {bd})")
    strides = [math.prod(lead[i + 1:]) for i in range(k)]
    b = imp.b
    # a run-time first dim (`x[arange(batch)[:, None], cols]`) keeps the flat table's rows `?`
    rows = graph.DYN if lead[0] == graph.DYN else math.prod(batch) * math.prod(lead)
    block = math.prod(lead)
    flat_table = b.reshape(x, [rows, *rest])
    outer = ish[:-1]
    folded = b.fold(ids)
    if folded is not None and folded.dtype == object:
        folded = None  # indices computed from run-time sizes: data
    if folded is not None and lead[0] != graph.DYN:
        idx = np.where(folded < 0, folded + np.array(lead), folded)
        batch_lin = np.zeros(outer, np.int64)
        for d in range(bd):
            batch_lin = batch_lin * batch[d] + np.indices(outer)[d]
        flat = imp.const((idx * np.array(strides)).sum(-1) + batch_lin * block, ids)
    else:
        flat: SSAValue | None = None
        for i in range(k):
            col = b.reshape(b.slice(ids, [0] * len(outer) + [i], [*outer, i + 1]), outer)
            col = imp.normalize_ids(col, lead[i], x, bd + i)
            term = b.ew("mul", col, b.scalar_like(strides[i], col))
            flat = term if flat is None else b.ew("add", flat, term)
        for d in range(bd):
            assert flat is not None
            stride = math.prod(batch[d + 1:]) * block
            term = b.ew("mul", b.iota(outer, d, b.elem(flat)), b.scalar_like(stride, flat))
            flat = b.ew("add", flat, term)
    assert flat is not None  # k > 0
    return [b.gather(flat_table, flat)]


@converter("Shape")
def op_Shape(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    s = imp.sym.dims(x)
    lo, hi, _ = slice(attrs.get("start", 0), attrs.get("end", len(s))).indices(len(s))
    if not any(is_symbolic(d) for d in s[lo:hi]):
        return [imp.const(np.array(s[lo:hi], np.int64), graph.IntegerType(64))]
    # run-time sizes: a placeholder whose folded value holds them (see onnx_dynamic)
    return [imp.shape_placeholder(np.array(s[lo:hi], dtype=object), graph.IntegerType(64))]


@converter("Size")
def op_Size(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    return [imp.const(np.array(math.prod(shape_of(x.type)), np.int64), graph.IntegerType(64))]


@converter("Constant")
def op_Constant(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    if "value" in attrs:
        t = attrs["value"]
        return [imp.const(tensor_array(t, imp.describe()), elem_type(t.data_type, imp.describe()))]
    for key, dtype in (("value_float", np.float32), ("value_floats", np.float32),
                       ("value_int", np.int64), ("value_ints", np.int64)):
        if key in attrs:
            array = np.array(attrs[key], dtype)
            return [imp.const(array, graph.f32 if dtype == np.float32 else graph.IntegerType(64))]
    raise imp.error(f"{imp.describe()}: only tensor, float(s) and int(s) values are supported")


@converter("ConstantOfShape")
def op_ConstantOfShape(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    sizes = imp.sizes(node.input[0], "the shape")
    t = attrs.get("value")
    fill = tensor_array(t, imp.describe()).reshape(-1)[0] if t is not None else np.float32(0)
    elem = elem_type(t.data_type, imp.describe()) if t is not None else graph.f32
    if not any(is_symbolic(d) for d in sizes):
        return [imp.const(np.full(sizes, fill), elem)]
    # run-time sizes: the fill broadcast like a value that has them (`like`)
    shape = [graph.DYN if is_symbolic(d) else d for d in sizes]
    y = imp.b.broadcast(imp.const(np.array(fill), elem), shape, [], like=imp.like(shape, sizes, []))
    imp.sym.bind(y, sizes)
    return [y]


@converter("Range")
def op_Range(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    start, limit, delta = (imp.constant_value(n, what) for n, what in zip(node.input, ("start", "limit", "delta")))
    bounds = {"start": start, "limit": limit, "delta": delta}
    symbolic = {what: v.item() for what, v in bounds.items() if is_symbolic(v.reshape(-1)[0])}
    v = imp.value(node.input[0])
    if symbolic:
        return [imp.run_time_range(start.item(), limit.item(), delta.item(), symbolic, v)]
    return [imp.const(np.arange(start.item(), limit.item(), delta.item()).astype(start.dtype), v)]
