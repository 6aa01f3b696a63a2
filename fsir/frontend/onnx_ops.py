"""ONNX activations, normalizations, index ops and attention, as graph primitives.

Every op here expands into elementwise ops, reductions, broadcasts, iotas, gathers and
dots, so the fusion explorer sees (and stitches) its parts:

- activations (Elu, Selu, Celu, HardSwish, Mish, Softsign, Swish, ThresholdedRelu,
  Shrink, PRelu) and IsInf: elementwise compositions;
- normalizations (RMS, Instance, Group, Lp, MeanVariance): row reductions whose
  statistics are broadcast back;
- Hardmax, OneHot, EyeLike, GatherElements (one flat-index `graph.gather`, exact),
  CumSum (a masked row sum: y[i] = Σ_j x[j]·[j ≤ i], O(n²) work per row, exact for
  integers and a plain sum for floats — the rows ONNX models scan are short);
- Einsum (any number of letters per operand, repeated letters as diagonals, ellipsis,
  implicit output; one or two operands);
- Attention (opset 23): scaled dot-product attention with its masks, causal masking,
  grouped kv heads and softcap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import onnx
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.frontend.onnx_dynamic import Sym
from fsir.frontend.onnx_import import OnnxImporter, converter, elem_type

I64 = graph.IntegerType(64)

# -- activations ------------------------------------------------------------------------

Activation = Callable[[OnnxImporter, SSAValue, dict], SSAValue]


def activation(*op_types: str) -> Callable[[Activation], Activation]:
    """Register `fn(imp, x, attrs) -> y` for a one-input activation. f16/bf16 inputs are
    computed in f32 and rounded once at the end, as ONNX's reference does."""

    def register(fn: Activation) -> Activation:
        def convert(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
            x = imp.value(node.input[0])
            elem = imp.b.elem(x)
            if not graph.is_float(elem):
                raise imp.error(f"{imp.describe()}: element type {elem} is not supported (float types are)")
            narrow = elem != graph.f32 and elem != graph.Float64Type()
            y = fn(imp, imp.b.convert(x, graph.f32) if narrow else x, attrs)
            return [imp.b.convert(y, elem) if narrow else y]

        converter(*op_types)(convert)
        return fn

    return register



def _elu_part(imp: OnnxImporter, x: SSAValue, alpha: float) -> SSAValue:
    """alpha·(exp(x) − 1) where x < 0, else x."""
    b = imp.b
    neg = b.ew("mul", b.ew("sub", b.ew("exp", x), b.scalar_like(1, x)), b.scalar_like(alpha, x))
    return b.select(b.compare("lt", x, b.scalar_like(0, x)), neg, x)


@activation("Elu")
def elu(imp: OnnxImporter, x: SSAValue, attrs: dict) -> SSAValue:
    return _elu_part(imp, x, attrs.get("alpha", 1.0))


@activation("Selu")
def selu(imp: OnnxImporter, x: SSAValue, attrs: dict) -> SSAValue:
    y = _elu_part(imp, x, attrs.get("alpha", 1.67326319217681884765625))
    return imp.b.ew("mul", y, imp.b.scalar_like(attrs.get("gamma", 1.05070102214813232421875), x))


@activation("Celu")
def celu(imp: OnnxImporter, x: SSAValue, attrs: dict) -> SSAValue:
    """max(0, x) + min(0, alpha·(exp(x / alpha) − 1))."""
    b, alpha = imp.b, attrs.get("alpha", 1.0)
    e = b.ew("mul", b.ew("sub", b.ew("exp", b.ew("div", x, b.scalar_like(alpha, x))), b.scalar_like(1, x)),
             b.scalar_like(alpha, x))
    zero = b.scalar_like(0, x)
    return b.ew("add", b.ew("max", x, zero), b.ew("min", e, zero))


@activation("HardSwish")
def hard_swish(imp: OnnxImporter, x: SSAValue, attrs: dict) -> SSAValue:
    """x·max(0, min(1, x/6 + 1/2))."""
    b = imp.b
    h = b.ew("add", b.ew("mul", x, b.scalar_like(1 / 6, x)), b.scalar_like(0.5, x))
    h = b.ew("max", b.ew("min", h, b.scalar_like(1, x)), b.scalar_like(0, x))
    return b.ew("mul", x, h)


@activation("Mish")
def mish(imp: OnnxImporter, x: SSAValue, attrs: dict) -> SSAValue:
    """x·tanh(softplus(x))."""
    b = imp.b
    softplus = b.ew("log", b.ew("add", b.ew("exp", x), b.scalar_like(1, x)))
    return b.ew("mul", x, b.ew("tanh", softplus))


@activation("Softsign")
def softsign(imp: OnnxImporter, x: SSAValue, attrs: dict) -> SSAValue:
    b = imp.b
    return b.ew("div", x, b.ew("add", b.ew("abs", x), b.scalar_like(1, x)))


@activation("Swish")
def swish(imp: OnnxImporter, x: SSAValue, attrs: dict) -> SSAValue:
    """x·sigmoid(alpha·x)."""
    b = imp.b
    return b.ew("mul", x, b.ew("sigmoid", b.ew("mul", x, b.scalar_like(attrs.get("alpha", 1.0), x))))


@activation("ThresholdedRelu")
def thresholded_relu(imp: OnnxImporter, x: SSAValue, attrs: dict) -> SSAValue:
    b = imp.b
    return b.select(b.compare("gt", x, b.scalar_like(attrs.get("alpha", 1.0), x)), x, b.scalar_like(0, x))


@activation("Shrink")
def shrink(imp: OnnxImporter, x: SSAValue, attrs: dict) -> SSAValue:
    """x + bias below −lambd, x − bias above lambd, else 0."""
    b = imp.b
    lambd, bias = attrs.get("lambd", 0.5), attrs.get("bias", 0.0)
    lo = b.select(b.compare("lt", x, b.scalar_like(-lambd, x)), b.ew("add", x, b.scalar_like(bias, x)),
                  b.scalar_like(0, x))
    return b.select(b.compare("gt", x, b.scalar_like(lambd, x)), b.ew("sub", x, b.scalar_like(bias, x)), lo)


@converter("PRelu")
def prelu(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """slope·x where x < 0; the slope broadcasts to x (unidirectionally)."""
    x, slope = imp.inputs(node)
    b = imp.b
    xs, slope = imp.bcast(x, slope)
    if shape_of(xs.type) != shape_of(x.type):
        raise imp.error(f"{imp.describe()}: slope of shape {list(shape_of(slope.type))} does not broadcast to "
                        f"the input's shape {list(shape_of(x.type))}")
    return [b.select(b.compare("lt", x, b.scalar_like(0, x)), b.ew("mul", x, slope), x)]


@converter("IsInf")
def is_inf(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """x == +inf (detect_positive) or x == −inf (detect_negative)."""
    x = imp.value(node.input[0])
    b = imp.b
    if not graph.is_float(b.elem(x)):
        raise imp.error(f"{imp.describe()}: element type {b.elem(x)} is not supported (float types are)")
    pos, neg = attrs.get("detect_positive", 1), attrs.get("detect_negative", 1)
    if pos and neg:
        return [b.compare("eq", b.ew("abs", x), b.scalar_like(np.inf, x))]
    if pos or neg:
        return [b.compare("eq", x, b.scalar_like(np.inf if pos else -np.inf, x))]
    return [imp.const(np.zeros(shape_of(x.type), bool), graph.i1)]


# -- normalizations ---------------------------------------------------------------------


def _stats(imp: OnnxImporter, x: SSAValue, axes: Sequence[int]) -> tuple[SSAValue, SSAValue]:
    """(x − mean, variance) over `axes`, both broadcast back to x's shape."""
    b = imp.b
    shape = shape_of(x.type)
    keep = [d for d in range(len(shape)) if d not in axes]
    total = b.reduce("sum", x, axes)
    if any(shape[a] == graph.DYN for a in axes):  # the count is known at run time only
        count = b.reduce("sum", b.scalar_like(1, x), axes)
    else:
        count = b.scalar_like(math.prod(shape[a] for a in axes), total)
    like = x if graph.DYN in shape else None  # the `?` sizes of the broadcasts
    mean = b.ew("div", total, count)
    xc = b.ew("sub", x, b.broadcast(mean, shape, keep, like=like))
    var = b.ew("div", b.reduce("sum", b.ew("mul", xc, xc), axes), count)
    return xc, b.broadcast(var, shape, keep, like=like)


def _stash(imp: OnnxImporter, x: SSAValue, attrs: dict) -> SSAValue:
    """x in f32 for the statistics when stash_type is 1 (the default), as ONNX specifies."""
    return imp.b.convert(x, graph.f32) if attrs.get("stash_type", 1) == 1 else x


@converter("RMSNormalization")
def rms_normalization(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """x / sqrt(mean(x², axes ≥ axis) + epsilon) · scale."""
    x, scale = imp.value(node.input[0]), imp.value(node.input[1])
    b = imp.b
    rank = imp.rank(x)
    first = imp.axis(attrs.get("axis", -1), rank)
    axes = list(range(first, rank))
    shape = shape_of(x.type)
    orig = b.elem(x)
    xs = _stash(imp, x, attrs)
    sq = b.reduce("sum", b.ew("mul", xs, xs), axes)
    ms = b.ew("div", sq, imp.count(xs, axes, sq))
    rstd = b.ew("rsqrt", b.ew("add", ms, b.scalar_like(attrs.get("epsilon", 1e-5), ms)))
    y = b.convert(b.ew("mul", xs, b.broadcast(rstd, shape, list(range(first)), like=xs)), orig)
    return [b.ew("mul", *imp.bcast(y, scale))]


def _channel_affine(imp: OnnxImporter, y: SSAValue, scale: SSAValue, bias: SSAValue | None) -> SSAValue:
    """y·scale[c] + bias[c] for a per-channel (axis 1) scale and bias."""
    b = imp.b
    shape = shape_of(y.type)
    if shape_of(scale.type) != (shape[1],) or (bias is not None and shape_of(bias.type) != (shape[1],)):
        raise imp.error(f"{imp.describe()}: scale and bias must have shape [{shape[1]}] (the channels)")
    y = b.ew("mul", y, b.broadcast(scale, shape, [1], like=y))
    return b.ew("add", y, b.broadcast(bias, shape, [1], like=y)) if bias is not None else y


@converter("InstanceNormalization")
def instance_normalization(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    x, scale, bias = imp.inputs(node)
    rank = imp.rank(x)
    if rank < 3:
        raise imp.error(f"{imp.describe()}: the input must have rank >= 3 (N, C, spatial...), got {rank}")
    b = imp.b
    xc, var = _stats(imp, x, list(range(2, rank)))
    y = b.ew("mul", xc, b.ew("rsqrt", b.ew("add", var, b.scalar_like(attrs.get("epsilon", 1e-5), var))))
    return [_channel_affine(imp, y, scale, bias)]


@converter("GroupNormalization")
def group_normalization(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """Statistics per (sample, group of C/G channels); scale and bias per channel (opset 21)."""
    x, scale, bias = imp.inputs(node)
    shape = shape_of(x.type)
    g = attrs["num_groups"]
    if len(shape) < 2 or g <= 0 or shape[1] % g:
        raise imp.error(f"{imp.describe()}: {shape[1] if len(shape) > 1 else 0} channels do not split "
                        f"into {g} groups")
    if imp.opset < 21:
        raise imp.error(f"{imp.describe()}: opset {imp.opset} GroupNormalization (per-group scale) is not "
                        "supported; opset 21 (per-channel scale) is")
    b = imp.b
    orig = b.elem(x)
    grouped = b.reshape(_stash(imp, x, attrs), [shape[0], g, math.prod(shape[1:]) // g])
    xc, var = _stats(imp, grouped, [2])
    y = b.ew("mul", xc, b.ew("rsqrt", b.ew("add", var, b.scalar_like(attrs.get("epsilon", 1e-5), var))))
    y = b.convert(b.reshape(y, shape), orig)
    return [_channel_affine(imp, y, scale, bias)]


@converter("MeanVarianceNormalization")
def mean_variance_normalization(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """(x − E[x]) / (sqrt(E[x²] − E[x]²) + 1e-9) over `axes` (ONNX's function body)."""
    x = imp.value(node.input[0])
    rank = imp.rank(x)
    axes = sorted({imp.axis(a, rank) for a in attrs.get("axes", [0, 2, 3])})
    b = imp.b
    shape = shape_of(x.type)
    keep = [d for d in range(rank) if d not in axes]
    count = imp.const(np.full([shape[d] for d in keep], math.prod(shape[a] for a in axes)), x)
    mean = b.ew("div", b.reduce("sum", x, axes), count)
    mean_sq = b.ew("div", b.reduce("sum", b.ew("mul", x, x), axes), count)
    std = b.ew("sqrt", b.ew("sub", mean_sq, b.ew("mul", mean, mean)))
    denom = b.ew("add", std, b.scalar_like(1e-9, std))
    return [b.ew("div", b.ew("sub", x, b.broadcast(mean, shape, keep)), b.broadcast(denom, shape, keep))]


@converter("LpNormalization")
def lp_normalization(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """x / ‖x‖_p along `axis` (p = 1 or 2); 0 where the norm is 0."""
    x = imp.value(node.input[0])
    p = attrs.get("p", 2)
    if p not in (1, 2):
        raise imp.error(f"{imp.describe()}: p = {p} is not supported (1 and 2 are)")
    rank = imp.rank(x)
    axis = imp.axis(attrs.get("axis", -1), rank)
    b = imp.b
    shape = shape_of(x.type)
    keep = [d for d in range(rank) if d != axis]
    norm = b.reduce("sum", b.ew("abs", x) if p == 1 else b.ew("mul", x, x), [axis])
    if p == 2:
        norm = b.ew("sqrt", norm)
    norm = b.broadcast(norm, shape, keep)
    zero = b.scalar_like(0, x)
    safe = b.select(b.compare("eq", norm, zero), b.scalar_like(1, x), norm)
    return [b.select(b.compare("eq", norm, zero), zero, b.ew("div", x, safe))]


# -- index ops ---------------------------------------------------------------------------


@converter("Hardmax")
def hardmax(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """1 at the first maximum along `axis` (before opset 13: of the 2-D coercion at
    `axis`), 0 elsewhere."""
    x = imp.value(node.input[0])
    shape = shape_of(x.type)
    rank = len(shape)
    b = imp.b
    if imp.opset >= 13:
        axis = imp.axis(attrs.get("axis", -1), rank)
        v = x
    else:
        first = imp.axis(attrs.get("axis", 1), rank)
        v = b.reshape(x, [math.prod(shape[:first]), math.prod(shape[first:])])
        axis = 1
    vshape = shape_of(v.type)
    keep = [d for d in range(len(vshape)) if d != axis]
    idx = b.iota(vshape, axis, I64)
    first_max = b.broadcast(imp.arg_reduce_of(v, axis, "max", last=False), vshape, keep)
    y = b.convert(b.compare("eq", idx, first_max), b.elem(x))
    return [b.reshape(y, shape) if v is not x else y]


@converter("OneHot")
def one_hot(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """values[1] where indices (negative ones count from depth) equal the position
    along the new axis, values[0] elsewhere (also for indices out of range)."""
    ids, values = imp.value(node.input[0]), imp.value(node.input[2])
    depth = imp.constant_value(node.input[1], "depth").reshape(-1)
    if depth.size != 1 or depth[0] < 1:
        raise imp.error(f"{imp.describe()}: depth must be one positive number, got {depth.tolist()}")
    n = int(depth[0])
    b = imp.b
    if shape_of(values.type) != (2,):
        raise imp.error(f"{imp.describe()}: values must have shape [2] (off, on)")
    ishape = shape_of(ids.type)
    axis = imp.axis(attrs.get("axis", -1), len(ishape) + 1)
    oshape = [*ishape[:axis], n, *ishape[axis:]]
    keep = [d for d in range(len(oshape)) if d != axis]
    ids = b.convert(ids, I64)  # float indices truncate, as ONNX casts them
    ids = b.select(b.compare("lt", ids, b.scalar_like(0, ids)), b.ew("add", ids, b.scalar_like(n, ids)), ids)
    hit = b.compare("eq", b.broadcast(ids, oshape, keep), b.iota(oshape, axis, I64))
    off, on = (b.broadcast(b.reshape(b.slice(values, [i], [i + 1]), []), oshape, []) for i in (0, 1))
    return [b.select(hit, on, off)]


@converter("EyeLike")
def eye_like(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    x = imp.value(node.input[0])
    shape = shape_of(x.type)
    if len(shape) != 2:
        raise imp.error(f"{imp.describe()}: the input must be 2-D, got rank {len(shape)}")
    elem = elem_type(attrs["dtype"], imp.describe()) if "dtype" in attrs else imp.b.elem(x)
    eye = np.eye(shape[0], shape[1], attrs.get("k", 0), dtype=graph.numpy_dtype(elem))
    return [imp.const(eye, elem)]


@converter("GatherElements")
def gather_elements(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """y[i_0, ..., i_r] = x[i_0, ..., idx[i_0, ..., i_r], ..., i_r] (idx along `axis`):
    one `graph.gather` from the flattened data at the flat index Σ_d i_d·stride_d, with
    the index along `axis` (negative ones counted from the end) in place of i_axis."""
    x, ids = imp.inputs(node)
    s, ish = shape_of(x.type), shape_of(ids.type)
    rank = len(s)
    axis = imp.axis(attrs.get("axis", 0), rank)
    if len(ish) != rank or any(ish[d] > s[d] for d in range(rank) if d != axis):
        raise imp.error(f"{imp.describe()}: indices of shape {list(ish)} do not fit data of shape {list(s)}")
    b = imp.b
    sizes, isizes = imp.sym.dims(x), imp.sym.dims(ids)
    strides = [math.prod(sizes[d + 1:], start=1) for d in range(rank)]
    ids = imp.normalize_ids(b.convert(ids, I64), s[axis], x, axis)
    flat = b.ew("mul", ids, _size_like(imp, strides[axis], ids))
    for d in range(rank):
        if d != axis and ish[d] != 1:
            flat = b.ew("add", flat, b.ew("mul", imp.iota(isizes, d, I64), _size_like(imp, strides[d], flat)))
    total = math.prod(sizes, start=1)
    return [b.gather(b.reshape(x, [graph.DYN if isinstance(total, Sym) else total]), flat)]


def _size_like(imp: OnnxImporter, size, like: SSAValue) -> SSAValue:
    """A size (an int, or a `Sym`: computed at run time) broadcast like `like`."""
    if not isinstance(size, Sym):
        return imp.b.scalar_like(size, like)
    scalar = imp.run_time_sizes.scalar(size)
    if scalar is None:
        raise imp.error(f"{imp.describe()}: no value has a dim of the run-time size {size} it needs")
    return imp.b.broadcast(imp.b.convert(scalar, imp.b.elem(like)), shape_of(like.type), [], like=like)


@converter("CumSum")
def cum_sum(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """y[..., i, ...] = Σ_j x[..., j, ...]·[j ≤ i] (exclusive: j < i; reverse: j ≥ i, j > i)
    as one masked reduction over a broadcast of x: O(n²) work per scanned row of n, but
    a single stitchable reduction and exact summation order per element."""
    x = imp.value(node.input[0])
    axis_value = imp.constant_value(node.input[1], "axis").reshape(-1)
    if axis_value.size != 1:
        raise imp.error(f"{imp.describe()}: axis must be one number, got {axis_value.tolist()}")
    s = shape_of(x.type)
    rank = len(s)
    a = imp.axis(int(axis_value[0]), rank)
    b = imp.b
    sizes = imp.sym.dims(x)
    wide = [*sizes[:a], sizes[a], *sizes[a:]]  # the output position i at a, the summed j at a + 1
    i, j = imp.iota(wide, a, I64), imp.iota(wide, a + 1, I64)
    like = i if graph.DYN in shape_of(i.type) else None
    xs = b.broadcast(x, shape_of(i.type), [d if d < a else d + 1 for d in range(rank)], like=like)
    direction = {(0, 0): "le", (1, 0): "lt", (0, 1): "ge", (1, 1): "gt"}[
        (int(attrs.get("exclusive", 0)), int(attrs.get("reverse", 0)))]
    masked = b.select(b.compare(direction, j, i), xs, b.scalar_like(0, xs))
    return [b.reduce("sum", masked, [a + 1])]


# -- attention ---------------------------------------------------------------------------


def _blocked(imp: OnnxImporter, allowed: SSAValue, elem) -> SSAValue:
    """An additive bias: 0 where `allowed`, −inf elsewhere."""
    shape = shape_of(allowed.type)
    return imp.b.select(allowed, imp.const(np.zeros(shape), elem), imp.const(np.full(shape, -np.inf), elem))


@converter("Attention")
def attention(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """Scaled dot-product attention (opsets 23–25), as ONNX's reference computes it:
    softmax((Q·√s)(K·√s)ᵀ, softcapped, + bias)·V, where the additive bias gathers the
    attention mask (bool: −inf where false; padded with −inf up to the key length), the
    causal mask j ≤ i + offset, the sliding window and the key padding of
    nonpad_kv_seqlen (offset = past length, or nonpad_kv_seqlen − q_len per batch).
    Query heads share kv heads in groups (GQA); a row whose bias is all −inf gives 0.
    3-D inputs are [batch, seq, heads·size]; past key/value are concatenated in front."""
    b = imp.b
    q, k, v = imp.value(node.input[0]), imp.value(node.input[1]), imp.value(node.input[2])
    mask, past_k, past_v, nonpad = (imp.optional_input(node, i) for i in (3, 4, 5, 6))
    t = b.elem(q)
    if not graph.is_float(t) or b.elem(k) != t or b.elem(v) != t:
        raise imp.error(f"{imp.describe()}: Q, K and V must have one float element type")
    rank = imp.rank(q)
    if rank not in (3, 4) or imp.rank(k) != rank or imp.rank(v) != rank:
        raise imp.error(f"{imp.describe()}: Q, K and V must all be 3-D or all 4-D")
    if (past_k is None) != (past_v is None) or (past_k is not None and nonpad is not None):
        raise imp.error(f"{imp.describe()}: past_key and past_value go together, and not with nonpad_kv_seqlen")
    if rank == 3:
        if "q_num_heads" not in attrs or "kv_num_heads" not in attrs:
            raise imp.error(f"{imp.describe()}: 3-D inputs need the q_num_heads and kv_num_heads attributes")

        def heads(x: SSAValue, n: int) -> SSAValue:
            bs, s, hidden = shape_of(x.type)
            if hidden % n:
                raise imp.error(f"{imp.describe()}: hidden size {hidden} does not split into {n} heads")
            return b.transpose(b.reshape(x, [bs, s, n, hidden // n]), [0, 2, 1, 3])

        q, k, v = heads(q, attrs["q_num_heads"]), heads(k, attrs["kv_num_heads"]), heads(v, attrs["kv_num_heads"])
    if past_k is not None and past_v is not None:
        k, v = b.concat([past_k, k], 2), b.concat([past_v, v], 2)
    present_k, present_v = k, v
    bs, hq, sq, d = shape_of(q.type)
    _, hkv, kv_len, _ = shape_of(k.type)
    if shape_of(v.type)[:3] != (bs, hkv, kv_len) or shape_of(k.type)[::3] != (bs, d):
        raise imp.error(f"{imp.describe()}: Q {list(shape_of(q.type))}, K {list(shape_of(k.type))} and "
                        f"V {list(shape_of(v.type))} do not agree")
    if hq % hkv:
        raise imp.error(f"{imp.describe()}: {hq} query heads do not share {hkv} kv heads evenly")
    precision = attrs.get("softmax_precision")
    soft_t = t if precision is None else elem_type(precision, f"softmax_precision of {imp.describe()}")
    if soft_t not in (t, graph.f32, graph.Float64Type()):
        raise imp.error(f"{imp.describe()}: softmax_precision {soft_t} is not supported (f32, f64 or the input "
                        "type)")

    # scores
    scale = attrs.get("scale", 1 / math.sqrt(d))
    root = float(np.asarray(math.sqrt(scale), graph.numpy_dtype(t)))
    qs, ks = b.ew("mul", q, b.scalar_like(root, q)), b.ew("mul", k, b.scalar_like(root, k))
    if hq != hkv:  # kv head h // (hq / hkv) serves query head h
        reps = hq // hkv

        def repeat(x: SSAValue) -> SSAValue:
            s = shape_of(x.type)
            return b.reshape(b.broadcast(x, [s[0], s[1], reps, *s[2:]], [0, 1, 3, 4]), [s[0], hq, *s[2:]])

        ks, v = repeat(ks), repeat(v)
    scores = b.dot_general(qs, ks, [0, 1], [3], [0, 1], [3])  # [bs, hq, sq, kv_len]
    full = list(shape_of(scores.type))
    softcap = attrs.get("softcap", 0.0)
    if softcap > 0:
        scores = b.ew("mul", b.ew("tanh", b.ew("div", scores, b.scalar_like(softcap, scores))),
                      b.scalar_like(softcap, scores))

    # the additive bias
    biases: list[SSAValue] = []
    if mask is not None:
        ms = shape_of(mask.type)
        pad = kv_len - ms[-1]
        if pad < 0:
            raise imp.error(f"{imp.describe()}: the mask covers {ms[-1]} keys, more than the {kv_len} there are")
        if graph.is_bool(b.elem(mask)):
            if pad:
                mask = b.concat([mask, imp.const(np.zeros([*ms[:-1], pad], bool), graph.i1)], len(ms) - 1)
            mask = _blocked(imp, mask, t)
        else:
            mask = b.convert(mask, t)
            if pad:
                mask = b.concat([mask, imp.const(np.full([*ms[:-1], pad], -np.inf), t)], len(ms) - 1)
        biases.append(mask)
    rows = b.iota([sq, kv_len], 0, I64)
    cols = b.iota([sq, kv_len], 1, I64)
    if nonpad is not None:  # the offset and the key padding per batch: [bs, 1, sq, kv_len]
        nonpad = b.convert(nonpad, I64)
        wide = [bs, 1, sq, kv_len]
        offset = b.broadcast(b.ew("sub", nonpad, b.scalar_like(sq, nonpad)), wide, [0])
        cols_wide = b.broadcast(cols, wide, [2, 3])
        diff = b.ew("sub", b.ew("add", b.broadcast(rows, wide, [2, 3]), offset), cols_wide)
        biases.append(_blocked(imp, b.compare("lt", cols_wide, b.broadcast(nonpad, wide, [0])), t))
    else:  # (i + offset) − j, offset = the past length
        offset_value = shape_of(past_k.type)[2] if past_k is not None else 0
        diff = b.ew("sub", b.ew("add", rows, b.scalar_like(offset_value, rows)), cols)
    allowed: SSAValue | None = None

    def both(p: SSAValue | None, c: SSAValue) -> SSAValue:
        return c if p is None else b.ew("and", p, c)

    if attrs.get("is_causal", 0):
        allowed = both(allowed, b.compare("ge", diff, b.scalar_like(0, diff)))
    left, right = attrs.get("left_window_size", -1), attrs.get("right_window_size", -1)
    if left >= 0:
        allowed = both(allowed, b.compare("le", diff, b.scalar_like(left, diff)))
    if right >= 0:
        allowed = both(allowed, b.compare("ge", diff, b.scalar_like(-right, diff)))
    if allowed is not None:
        biases.append(_blocked(imp, allowed, t))
    bias: SSAValue | None = None
    for part in biases:
        bias = part if bias is None else b.ew("add", *imp.bcast(bias, part))
    with_bias = scores if bias is None else b.ew("add", *imp.bcast(scores, bias))
    if shape_of(with_bias.type) != tuple(full):
        raise imp.error(f"{imp.describe()}: the mask of shape {list(shape_of(mask.type)) if mask else []} does not "
                        f"broadcast to the scores' shape {full}")

    # softmax over the keys; rows with no attendable key give 0
    x = b.convert(with_bias, soft_t)
    keep = [0, 1, 2]
    top = b.reduce("max", x, [3])
    inf = b.scalar_like(-np.inf, top)
    top = b.select(b.compare("eq", top, inf), b.scalar_like(0, top), top)
    e = b.ew("exp", b.ew("sub", x, b.broadcast(top, full, keep)))
    total = b.reduce("sum", e, [3])
    total = b.select(b.compare("eq", total, b.scalar_like(0, total)), b.scalar_like(1, total), total)
    probs = b.ew("div", e, b.broadcast(total, full, keep))
    if bias is not None:
        row_top = b.reduce("max", b.broadcast_to(bias, full), [3])
        blocked_row = b.compare("eq", row_top, b.scalar_like(-np.inf, row_top))
        probs = b.select(b.broadcast(blocked_row, full, keep), b.scalar_like(0, probs), probs)
    probs = b.convert(probs, t)
    y = b.dot_general(probs, v, [0, 1], [3], [0, 1], [2])  # [bs, hq, sq, dv]
    if rank == 3:
        y = b.reshape(b.transpose(y, [0, 2, 1, 3]), [bs, sq, hq * shape_of(y.type)[3]])
    mode = attrs.get("qk_matmul_output_mode", 0)
    if mode not in (0, 1, 2, 3):
        raise imp.error(f"{imp.describe()}: qk_matmul_output_mode {mode} is not one of 0, 1, 2, 3")
    qk_out = {0: scores, 1: scores, 2: with_bias, 3: probs}[mode]
    return [y, present_k, present_v, qk_out]


# -- einsum ------------------------------------------------------------------------------


def _einsum_terms(imp: OnnxImporter, eq: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    """The operands' labels and the output's, with each '...' spelled out as labels of
    its own (right-aligned across operands, as numpy broadcasts) and an implicit output
    (labels used once, sorted, after the ellipsis dims) made explicit."""
    lhs, arrow, out = eq.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks) or any(not (ch.isalpha() or ch == ".") for ch in lhs.replace(",", "") + out):
        raise imp.error(f"{imp.describe()}: equation '{eq}' does not fit {len(ranks)} operand(s)")
    ell = max((r - (len(t) - 3) for t, r in zip(terms, ranks) if "..." in t), default=0)
    dots = "".join(chr(0x3B1 + i) for i in range(ell))  # α β γ ...: never ONNX labels

    def spell(t: str, rank: int) -> str:
        if "..." not in t:
            return t
        n = rank - (len(t) - 3)
        return t.replace("...", dots[ell - n:] if n else "")

    spelled = [spell(t, r) for t, r in zip(terms, ranks)]
    for t, r in zip(spelled, ranks):
        if len(t) != r or "." in t:
            raise imp.error(f"{imp.describe()}: equation '{eq}' does not fit the operands' ranks {list(ranks)}")
    if arrow:
        output = out.replace("...", dots)
    else:
        counts = {ch: sum(t.count(ch) for t in spelled) for ch in set("".join(spelled)) - set(dots)}
        output = dots + "".join(sorted(ch for ch, n in counts.items() if n == 1))
    if len(set(output)) != len(output) or any(ch not in "".join(spelled) for ch in output):
        raise imp.error(f"{imp.describe()}: output '{out}' of equation '{eq}' repeats or invents labels")
    return spelled, output


def _diagonals(imp: OnnxImporter, t: str, v: SSAValue) -> tuple[str, SSAValue]:
    """A label repeated in one operand takes the diagonal: a masked sum over the
    second occurrence (exact: one term of each sum is not the zero selected in)."""
    b = imp.b
    while len(set(t)) != len(t):
        ch = next(c for c in t if t.count(c) > 1)
        i, j = t.index(ch), t.index(ch, t.index(ch) + 1)
        shape = shape_of(v.type)
        if shape[i] != shape[j]:
            raise imp.error(f"{imp.describe()}: label '{ch}' has sizes {shape[i]} and {shape[j]}")
        on_diagonal = b.compare("eq", b.iota(shape, i, I64), b.iota(shape, j, I64))
        v = b.reduce("sum", b.select(on_diagonal, v, b.scalar_like(0, v)), [j])
        t = t[:j] + t[j + 1:]
    return t, v


@converter("Einsum")
def einsum(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """Einsum as diagonals, sums, dot_generals and a transpose: labels that no later
    operand or the output needs are summed as early as possible, operands are
    contracted left to right (one dot_general per pair), and the result is put in the
    output's order."""
    eq = attrs["equation"].decode() if isinstance(attrs["equation"], bytes) else attrs["equation"]
    vs = imp.inputs(node)
    terms, out = _einsum_terms(imp, eq, [imp.rank(v) for v in vs])
    b = imp.b
    sizes: dict[str, int] = {}
    for t, v in zip(terms, vs):
        for ch, n in zip(t, shape_of(v.type)):
            if sizes.setdefault(ch, n) != n and 1 not in (sizes[ch], n):
                raise imp.error(f"{imp.describe()}: label '{ch}' has sizes {sizes[ch]} and {n}")
            sizes[ch] = max(sizes[ch], n)

    def sum_unneeded(t: str, v: SSAValue, needed: str) -> tuple[str, SSAValue]:
        dims = [i for i, ch in enumerate(t) if ch not in needed]
        if not dims:
            return t, v
        return "".join(ch for i, ch in enumerate(t) if i not in dims), b.reduce("sum", v, dims)

    def full(t: str, v: SSAValue) -> SSAValue:  # size-1 dims of a broadcast label, expanded
        want = [sizes[ch] for ch in t]
        return b.broadcast_to(v, want) if list(shape_of(v.type)) != want else v

    items = [_diagonals(imp, t, v) for t, v in zip(terms, vs)]
    ta, a = items[0]
    ta, a = sum_unneeded(ta, a, out + "".join(t for t, _ in items[1:]))
    for n, (tc, c) in enumerate(items[1:], start=1):
        later = out + "".join(t for t, _ in items[n + 1:])
        tc, c = sum_unneeded(tc, c, later + ta)
        ta, a = sum_unneeded(ta, a, later + tc)
        a, c = full(ta, a), full(tc, c)
        batch = [ch for ch in ta if ch in tc and ch in later]
        contract = [ch for ch in ta if ch in tc and ch not in later]
        a = b.dot_general(a, c, [ta.index(ch) for ch in batch], [ta.index(ch) for ch in contract],
                          [tc.index(ch) for ch in batch], [tc.index(ch) for ch in contract])
        ta = "".join(batch) + "".join(ch for ch in ta if ch not in tc) + "".join(ch for ch in tc if ch not in ta)
    ta, a = sum_unneeded(ta, a, out)
    return [b.transpose(a, [ta.index(ch) for ch in out]) if ta != out else a]
