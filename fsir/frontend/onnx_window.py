"""ONNX windows, padding and resampling → graph ops.

Pooling becomes `graph.reduce_window` (MaxPool, AveragePool, LpPool; LRN's sum of
squares over neighbouring channels too) with elementwise ops around it, global pooling
a `graph.reduce` over the spatial dims, Pad `graph.pad`, DepthToSpace/SpaceToDepth
reshapes and transposes. Resize and Upsample are separable: along each resized axis an
output position is a fixed weighted sum of a few input positions, which the importer
computes (`resize_taps`, following the ONNX specification's coordinate transforms and
interpolation kernels) and emits as gathers with constant indices and an elementwise
blend with constant weights, so a resize is light ops that stitch into one kernel.

Attributes that depend on the data (pads, scales, sizes, axes inputs) must be
constants: initializers, or inputs the backend specialises on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.frontend.builder import dense_i64
from fsir.frontend.onnx_import import OnnxImporter, converter
from fsir.transforms.canonicalize import identity_pad

# ---------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolGeometry:
    """The windows of a pooling node over its spatial dims: sizes, strides, dilations,
    the explicit (or auto_pad) padding before and after, and the output sizes (with
    ceil_mode's extra window, which may reach past the padding)."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    begin: tuple[int, ...]
    end: tuple[int, ...]
    out: tuple[int, ...]

    def high(self, sizes: Sequence[int]) -> list[int]:
        """The padding after each dim that makes `out` windows (ceil_mode's last window
        may need more than `end`; floor mode may leave some of `end` unused)."""
        return [max((o - 1) * s + (k - 1) * d + 1 - n - b, 0)
                for n, k, s, d, b, o in zip(sizes, self.kernel, self.strides, self.dilations, self.begin, self.out)]

    def counts(self, sizes: Sequence[int], include_pad: bool) -> np.ndarray:
        """How many window positions of each output lie in the input (or, with
        `include_pad`, in the input and its explicit padding): AveragePool's divisor."""
        per_dim = []
        for n, k, s, d, b, e, o in zip(sizes, self.kernel, self.strides, self.dilations, self.begin, self.end,
                                       self.out):
            pos = np.arange(o)[:, None] * s - b + np.arange(k)[None, :] * d
            lo, hi = (-b, n + e) if include_pad else (0, n)
            per_dim.append(((pos >= lo) & (pos < hi)).sum(axis=1))
        out = np.ones((), dtype=np.int64)
        for c in per_dim:
            out = np.multiply.outer(out, c)
        return out


def pool_geometry(imp: OnnxImporter, attrs: dict, sizes: Sequence[int]) -> PoolGeometry:
    """The windows of a pooling node (ONNX's output-size rules for pads, auto_pad,
    dilations and ceil_mode)."""
    rank = len(sizes)
    kernel = attrs.get("kernel_shape")
    if kernel is None or len(kernel) != rank:
        raise imp.error(f"{imp.describe()}: kernel_shape must give {rank} sizes (one per spatial dim)")
    strides = list(attrs.get("strides") or [1] * rank)
    dilations = list(attrs.get("dilations") or [1] * rank)
    pads = list(attrs.get("pads") or [0] * (2 * rank))
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank:
        raise imp.error(f"{imp.describe()}: strides, dilations and pads need {rank}, {rank} and {2 * rank} entries")
    if min(kernel) < 1 or min(strides) < 1 or min(dilations) < 1 or min(pads) < 0:
        raise imp.error(f"{imp.describe()}: kernel_shape, strides and dilations must be positive, pads not negative")
    auto_pad = attrs.get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    ceil_mode = bool(attrs.get("ceil_mode", 0))
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    begin, end = pads[:rank], pads[rank:]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = [-(-n // s) for n, s in zip(sizes, strides)]
        total = [max((o - 1) * s + e - n, 0) for o, s, e, n in zip(out, strides, extent, sizes)]
        small = [t // 2 for t in total]
        begin = small if auto_pad == "SAME_UPPER" else [t - h for t, h in zip(total, small)]
        end = [t - b for t, b in zip(total, begin)]
    elif auto_pad in ("VALID", "NOTSET"):
        if auto_pad == "VALID":
            begin, end = [0] * rank, [0] * rank
        out = []
        for n, e, s, b, p in zip(sizes, extent, strides, begin, end):
            span = n + b + p - e
            if span < 0:
                raise imp.error(f"{imp.describe()}: the window ({e} positions) is larger than the padded input "
                                f"({n + b + p})")
            o = (-(-span // s) if ceil_mode else span // s) + 1
            if ceil_mode and (o - 1) * s >= n + b:  # the last window would start in the padding
                o -= 1
            out.append(o)
    else:
        raise imp.error(f"{imp.describe()}: unknown auto_pad '{auto_pad}'")
    return PoolGeometry(tuple(kernel), tuple(strides), tuple(dilations), tuple(begin), tuple(end), tuple(out))


def window_reduce(imp: OnnxImporter, kind: graph.ReduceKind, x: SSAValue, geom: PoolGeometry) -> SSAValue:
    """`graph.reduce_window` over the spatial dims (all but N and C) of `x`; an explicit
    Pad before it with the reduction's identity becomes the window's own padding."""
    shape = shape_of(x.type)
    lead = len(shape) - len(geom.kernel)
    ones = [1] * lead
    low, high = [0] * lead + list(geom.begin), [0] * lead + geom.high(shape[lead:])
    found = identity_pad(kind, x)
    if found is not None:
        x = found[0]
        low, high = [a + b for a, b in zip(low, found[1])], [a + b for a, b in zip(high, found[2])]
    return imp.b.emit(graph.ReduceWindowOp, [x], kind=graph.ReduceKindAttr(kind),
                      window=dense_i64(ones + list(geom.kernel)), strides=dense_i64(ones + list(geom.strides)),
                      dilations=dense_i64(ones + list(geom.dilations)), low=dense_i64(low), high=dense_i64(high))


def pool_input(imp: OnnxImporter, node: onnx.NodeProto) -> SSAValue:
    x = imp.value(node.input[0])
    if imp.rank(x) < 3:
        raise imp.error(f"{imp.describe()}: the input must be N x C x spatial dims, got rank {imp.rank(x)}")
    require_static(imp, x, range(2, imp.rank(x)), "spatial")
    return x


def require_static(imp: OnnxImporter, x: SSAValue, dims, what: str) -> None:
    """Window and resampling geometry is computed at import time: the dims it depends
    on must be known."""
    shape = shape_of(x.type)
    if any(shape[d] == graph.DYN for d in dims):
        raise imp.error(f"{imp.describe()}: its {what} dims must be static, got {graph.fmt_shape(shape)}")


@converter("MaxPool")
def max_pool(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    x = pool_input(imp, node)
    geom = pool_geometry(imp, attrs, shape_of(x.type)[2:])
    y = window_reduce(imp, graph.ReduceKind.MAX, x, geom)
    if len(node.output) > 1 and node.output[1]:
        return [y, max_pool_indices(imp, x, y, geom, bool(attrs.get("storage_order", 0)))]
    return [y]


def max_pool_indices(imp: OnnxImporter, x: SSAValue, y: SSAValue, geom: PoolGeometry,
                     column_major: bool) -> SSAValue:
    """MaxPool's Indices output: the flat input index (row- or column-major over the
    spatial dims, then C and N) of the first maximum of each window. Each window
    position is a strided slice of the padded input; the smallest index among the
    positions equal to the maximum wins (a min over the window positions)."""
    b = imp.b
    require_static(imp, x, range(len(shape_of(x.type))), "N and C (for the Indices output)")
    shape = shape_of(x.type)
    spatial = shape[2:]
    rank = len(spatial)
    if math.prod(geom.kernel) > 64:
        raise imp.error(f"{imp.describe()}: the Indices output is supported for windows of at most 64 "
                        f"positions, not {math.prod(geom.kernel)}")
    high = geom.high(spatial)
    lowest = b.constant(np.array(graph.reduce_identity(graph.ReduceKind.MAX, graph.numpy_dtype(b.elem(x)))), b.elem(x))
    padded = b.emit(graph.PadOp, [x, lowest], mode=graph.PadModeAttr(graph.PadMode.CONSTANT),
                    low=dense_i64([0, 0, *geom.begin]), high=dense_i64([0, 0, *high]),
                    interior=dense_i64([0] * len(shape)))
    out = shape_of(y.type)
    # the flat index of every padded position (padding: never selected, as it holds the
    # lowest value only where the whole window is padding, which ONNX leaves undefined)
    grids = np.meshgrid(*[np.arange(-bb, n + h) for bb, n, h in zip(geom.begin, spatial, high)], indexing="ij")
    dims = list(spatial)
    if column_major:
        flat = sum(g * math.prod(dims[:i]) for i, g in enumerate(grids))
    else:
        flat = sum(g * math.prod(dims[i + 1:]) for i, g in enumerate(grids))
    plane = math.prod(spatial)
    nc = (np.arange(shape[0])[:, None] * shape[1] + np.arange(shape[1])[None, :]) * plane
    index = b.constant(nc.reshape(shape[0], shape[1], *([1] * rank)) + np.asarray(flat)[None, None],
                       graph.IntegerType(64))
    best: SSAValue | None = None
    big = b.constant(np.full(out, np.iinfo(np.int64).max), graph.IntegerType(64))
    for offsets in np.ndindex(*geom.kernel):
        start = [0, 0, *(o * d for o, d in zip(offsets, geom.dilations))]
        limit = [shape[0], shape[1], *(st + (n - 1) * s + 1 for st, n, s in zip(start[2:], out[2:], geom.strides))]
        steps = [1, 1, *geom.strides]
        hit = b.compare("eq", b.slice(padded, start, limit, steps), y)
        candidate = b.select(hit, b.slice(index, start, limit, steps), big)
        best = candidate if best is None else b.ew("min", best, candidate)
    assert best is not None
    return best


@converter("AveragePool")
def average_pool(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    x = pool_input(imp, node)
    spatial = shape_of(x.type)[2:]
    geom = pool_geometry(imp, attrs, spatial)
    total = window_reduce(imp, graph.ReduceKind.SUM, x, geom)
    counts = geom.counts(spatial, bool(attrs.get("count_include_pad", 0)))
    return [divide_by_counts(imp, total, counts)]


def divide_by_counts(imp: OnnxImporter, total: SSAValue, counts: np.ndarray) -> SSAValue:
    """`total` divided by a count per spatial position (a splat when all are equal)."""
    b = imp.b
    shape = shape_of(total.type)
    if counts.min() == counts.max():
        return b.ew("div", total, b.scalar_like(float(counts.reshape(-1)[0]), total))
    if counts.min() == 0:
        raise imp.error(f"{imp.describe()}: a window lies wholly in the padding, which has no average")
    c = b.constant(counts.astype(np.float64), b.elem(total))
    return b.ew("div", total, b.broadcast(c, shape, list(range(len(shape) - counts.ndim, len(shape)))))


@converter("LpPool")
def lp_pool(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    x = pool_input(imp, node)
    geom = pool_geometry(imp, attrs, shape_of(x.type)[2:])
    p = attrs.get("p", 2)
    b = imp.b
    if p == 2:
        powered = b.ew("mul", x, x)
    elif p == 1:
        powered = b.ew("abs", x)
    else:
        powered = b.ew("pow", b.ew("abs", x), b.scalar_like(p, x))
    total = window_reduce(imp, graph.ReduceKind.SUM, powered, geom)
    if p == 1:
        return [total]
    if p == 2:
        return [b.ew("sqrt", total)]
    return [b.ew("pow", total, b.scalar_like(1.0 / p, total))]


@converter("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def global_pool(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """A reduction over the spatial dims (the row mapping: a row per N x C), kept as
    size-1 dims."""
    x = pool_input(imp, node)
    shape = shape_of(x.type)
    axes = list(range(2, len(shape)))
    b = imp.b
    if node.op_type == "GlobalMaxPool":
        y = b.reduce("max", x, axes)
    elif node.op_type == "GlobalAveragePool":
        total = b.reduce("sum", x, axes)
        y = b.ew("div", total, b.scalar_like(math.prod(shape[2:]), total))
    else:
        p = attrs.get("p", 2)
        powered = b.ew("mul", x, x) if p == 2 else b.ew("pow", b.ew("abs", x), b.scalar_like(p, x))
        total = b.reduce("sum", powered, axes)
        y = b.ew("sqrt", total) if p == 2 else b.ew("pow", total, b.scalar_like(1.0 / p, total))
    return [imp.keep_dims(y, shape, axes)]


@converter("LRN")
def lrn(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    """y = x / (bias + alpha / size * sum of x² over `size` neighbouring channels)^beta;
    the sum is a window over C, padded with floor((size-1)/2) before and ceil after."""
    x = pool_input(imp, node)
    size = attrs.get("size")
    if not isinstance(size, int) or size < 1:
        raise imp.error(f"{imp.describe()}: the size attribute must be a positive integer")
    alpha, beta, bias = attrs.get("alpha", 1e-4), attrs.get("beta", 0.75), attrs.get("bias", 1.0)
    b = imp.b
    rank = imp.rank(x)
    window = [1] * rank
    window[1] = size
    low, high = [0] * rank, [0] * rank
    low[1], high[1] = (size - 1) // 2, size - 1 - (size - 1) // 2
    square = b.ew("mul", x, x)
    total = b.emit(graph.ReduceWindowOp, [square], kind=graph.ReduceKindAttr(graph.ReduceKind.SUM),
                   window=dense_i64(window), strides=dense_i64([1] * rank), dilations=dense_i64([1] * rank),
                   low=dense_i64(low), high=dense_i64(high))
    base = b.ew("add", b.ew("mul", total, b.scalar_like(alpha / size, total)), b.scalar_like(bias, total))
    return [b.ew("div", x, b.ew("pow", base, b.scalar_like(beta, base)))]


# ---------------------------------------------------------------------------
# Pad, DepthToSpace, SpaceToDepth
# ---------------------------------------------------------------------------

_PAD_MODES = {"constant": graph.PadMode.CONSTANT, "edge": graph.PadMode.EDGE, "reflect": graph.PadMode.REFLECT,
              "wrap": graph.PadMode.WRAP}


@converter("Pad")
def pad(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    x = imp.value(node.input[0])
    rank = imp.rank(x)
    b = imp.b
    mode_text = attrs.get("mode", b"constant")
    mode_text = mode_text.decode() if isinstance(mode_text, bytes) else mode_text
    if mode_text not in _PAD_MODES:
        raise imp.error(f"{imp.describe()}: unknown mode '{mode_text}' (constant, edge, reflect, wrap)")
    mode = _PAD_MODES[mode_text]
    if imp.opset < 11:
        pads = list(attrs.get("pads") or attrs.get("paddings") or [])
        value = b.scalar_like(attrs.get("value", 0.0), b.constant(np.zeros(()), b.elem(x)))
        axes = list(range(rank))
    else:
        pads = imp.ints(node.input[1], "pads")
        given = imp.optional_input(node, 2)
        value = b.reshape(given, []) if given is not None else b.constant(np.zeros(()), b.elem(x))
        if len(node.input) > 3 and node.input[3]:
            axes = [imp.axis(a, rank) for a in imp.ints(node.input[3], "axes")]
        else:
            axes = list(range(rank))
    if len(pads) != 2 * len(axes) or len(set(axes)) != len(axes):
        raise imp.error(f"{imp.describe()}: pads has {len(pads)} entries, expected {2 * len(axes)} "
                        f"(a begin and an end for each of {len(axes)} distinct axes)")
    low, high = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        low[a], high[a] = pads[i], pads[len(axes) + i]
    if mode != graph.PadMode.CONSTANT and (min(low) < 0 or min(high) < 0):
        # negative padding removes elements before the others are added
        require_static(imp, x, [d for d in range(rank) if low[d] < 0 or high[d] < 0], "negatively padded")
        shape = shape_of(x.type)
        x = b.slice(x, [max(-lo, 0) for lo in low], [n - max(-hi, 0) for n, hi in zip(shape, high)])
        low, high = [max(lo, 0) for lo in low], [max(hi, 0) for hi in high]
    if not any(low) and not any(high):
        return [x]
    operands = [x, value] if mode == graph.PadMode.CONSTANT else [x]
    return [b.emit(graph.PadOp, operands, mode=graph.PadModeAttr(mode), low=dense_i64(low), high=dense_i64(high),
                   interior=dense_i64([0] * rank))]


def _block_attrs(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> tuple[SSAValue, int, str]:
    x = imp.value(node.input[0])
    if imp.rank(x) != 4:
        raise imp.error(f"{imp.describe()}: the input must have rank 4 (N x C x H x W), got {imp.rank(x)}")
    require_static(imp, x, range(4), "N, C, H and W")
    bs = attrs.get("blocksize")
    if not isinstance(bs, int) or bs < 1:
        raise imp.error(f"{imp.describe()}: blocksize must be a positive integer")
    mode = attrs.get("mode", b"DCR")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in ("DCR", "CRD"):
        raise imp.error(f"{imp.describe()}: unknown mode '{mode}' (DCR or CRD)")
    return x, bs, mode


@converter("DepthToSpace")
def depth_to_space(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    x, bs, mode = _block_attrs(imp, node, attrs)
    n, c, h, w = shape_of(x.type)
    if c % (bs * bs):
        raise imp.error(f"{imp.describe()}: {c} channels are not a multiple of blocksize² = {bs * bs}")
    b, cc = imp.b, c // (bs * bs)
    if mode == "DCR":
        y = b.transpose(b.reshape(x, [n, bs, bs, cc, h, w]), [0, 3, 4, 1, 5, 2])
    else:
        y = b.transpose(b.reshape(x, [n, cc, bs, bs, h, w]), [0, 1, 4, 2, 5, 3])
    return [b.reshape(y, [n, cc, h * bs, w * bs])]


@converter("SpaceToDepth")
def space_to_depth(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    x, bs, mode = _block_attrs(imp, node, attrs)
    n, c, h, w = shape_of(x.type)
    if h % bs or w % bs:
        raise imp.error(f"{imp.describe()}: H = {h} and W = {w} must be multiples of blocksize {bs}")
    b = imp.b
    perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    y = b.transpose(b.reshape(x, [n, c, h // bs, bs, w // bs, bs]), perm)
    return [b.reshape(y, [n, c * bs * bs, h // bs, w // bs])]


# ---------------------------------------------------------------------------
# Resize, Upsample
# ---------------------------------------------------------------------------

_COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                     "tf_crop_and_resize")
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


@dataclass(frozen=True)
class ResizeSpec:
    """How one axis is resampled (the Resize attributes that matter per axis)."""

    mode: str  # nearest, linear, cubic
    coordinate: str
    nearest: str = "round_prefer_floor"
    cubic_a: float = -0.75
    exclude_outside: bool = False
    antialias: bool = False


def source_coordinates(spec: ResizeSpec, n_in: int, n_out: int, scale: float,
                       roi: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The input coordinate of each output position (ONNX's coordinate transforms),
    and for tf_crop_and_resize which positions fall outside the input."""
    y = np.arange(n_out, dtype=np.float64)
    length = scale * n_in  # the output length before it is truncated to an integer
    mode = spec.coordinate
    outside = None
    if mode == "align_corners":
        x = np.zeros(n_out) if length == 1 else y * (n_in - 1) / (length - 1)
    elif mode == "asymmetric":
        x = y / scale
    elif mode == "tf_crop_and_resize":
        assert roi is not None
        start, end = roi
        x = np.full(n_out, (end - start) * (n_in - 1) / 2) if length == 1 \
            else y * (end - start) * (n_in - 1) / (length - 1)
        x = x + start * (n_in - 1)
        outside = (x < 0) | (x > n_in - 1)
    elif mode == "pytorch_half_pixel":
        x = np.full(n_out, -0.5) if length == 1 else (y + 0.5) / scale - 0.5
    elif mode == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    else:  # half_pixel_symmetric: the centre of the input maps to the centre of the output
        offset = n_in / 2 * (1 - n_out / length)
        x = offset + (y + 0.5) / scale - 0.5
    return x, outside


def _kernel(spec: ResizeSpec, ratio: np.ndarray, scale: float) -> np.ndarray:
    """Interpolation weights of the taps around each coordinate (rows), for `ratio` =
    the coordinate minus the tap left of it, in (0, 1]."""
    r = ratio[:, None]
    if spec.mode == "nearest":
        if spec.nearest == "round_prefer_floor":
            right = r > 0.5
        elif spec.nearest == "round_prefer_ceil":
            right = r >= 0.5
        elif spec.nearest == "floor":
            right = np.zeros_like(r, dtype=bool)
        else:
            right = np.ones_like(r, dtype=bool)
        right = right | (r == 1)  # an integer coordinate is its own tap
        return np.concatenate([~right, right], axis=1).astype(np.float64)
    shrink = min(scale, 1.0) if spec.antialias else 1.0
    reach = 1 if spec.mode == "linear" else 2
    start = math.floor(-reach / shrink) + 1
    offsets = (np.arange(start, 2 - start)[None, :] - r) * shrink
    a = np.abs(offsets)
    if spec.mode == "linear":
        w = np.clip(1 - a, 0, 1)
    else:
        c = spec.cubic_a
        w = np.where(a <= 1, (c + 2) * a ** 3 - (c + 3) * a ** 2 + 1,
                     np.where(a < 2, c * a ** 3 - 5 * c * a ** 2 + 8 * c * a - 4 * c, 0.0))
    return w / w.sum(axis=1, keepdims=True) if spec.antialias else w


def resize_taps(spec: ResizeSpec, n_in: int, n_out: int, scale: float, roi: tuple[float, float] | None = None):
    """Along one axis: (indices, weights, outside) with output j = sum over taps t of
    weights[j, t] * input[indices[j, t]]; taps left of the input read its first
    element, right of it its last (edge padding), unless `exclude_outside` drops them;
    `outside` marks tf_crop_and_resize's extrapolated positions (or None)."""
    x, outside = source_coordinates(spec, n_in, n_out, scale, roi)
    left = np.ceil(x) - 1  # the tap left of x, or x - 1 when x is an integer (ratio 1)
    ratio = x - left
    w = _kernel(spec, ratio, scale)
    taps = w.shape[1]
    first = left.astype(np.int64) - (taps // 2 - 1)
    idx = first[:, None] + np.arange(taps)[None, :]
    if spec.exclude_outside:
        w = np.where((idx < 0) | (idx >= n_in), 0.0, w)
        total = w.sum(axis=1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    idx = np.clip(idx, 0, n_in - 1)
    # taps reading one input position are merged; weightless ones dropped
    merged = [{} for _ in range(n_out)]
    for j in range(n_out):
        for i, wt in zip(idx[j], w[j]):
            if wt != 0:
                merged[j][int(i)] = merged[j].get(int(i), 0.0) + float(wt)
    width = max(1, max(len(m) for m in merged))
    out_idx = np.zeros((n_out, width), dtype=np.int64)
    out_w = np.zeros((n_out, width), dtype=np.float64)
    for j, m in enumerate(merged):
        for t, (i, wt) in enumerate(sorted(m.items())):
            out_idx[j, t], out_w[j, t] = i, wt
    return out_idx, out_w, outside


def resize_axis(imp: OnnxImporter, x: SSAValue, axis: int, idx: np.ndarray, w: np.ndarray) -> SSAValue:
    """Resample `x` along `axis` by taps: gathers at constant indices blended by
    constant weights (a tap of weight 1 everywhere is a plain gather)."""
    b = imp.b
    shape = list(shape_of(x.type))
    out_shape = shape[:axis] + [idx.shape[0]] + shape[axis + 1:]
    total: SSAValue | None = None
    for t in range(idx.shape[1]):
        picked = b.take(x, b.constant(idx[:, t].astype(np.int32), graph.i32), axis)
        if not np.all(w[:, t] == 1.0):
            weights = b.constant(w[:, t], b.elem(x))
            picked = b.ew("mul", picked, b.broadcast(weights, out_shape, [axis]))
        total = picked if total is None else b.ew("add", total, picked)
    assert total is not None
    return total


def _text(attrs: dict, name: str, default: str) -> str:
    v = attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else v


@converter("Resize", "Upsample")
def resize(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict) -> list[SSAValue]:
    x = imp.value(node.input[0])
    b = imp.b
    shape = list(shape_of(x.type))
    rank = len(shape)
    if not graph.is_float(b.elem(x)):
        raise imp.error(f"{imp.describe()}: resizing {b.elem(x)} tensors is not supported (float only)")
    mode = _text(attrs, "mode", "nearest")
    if mode == "bilinear":
        mode = "linear"
    if mode not in ("nearest", "linear", "cubic"):
        raise imp.error(f"{imp.describe()}: unknown mode '{mode}' (nearest, linear, cubic)")
    upsample = node.op_type == "Upsample" or imp.opset < 11
    coordinate = _text(attrs, "coordinate_transformation_mode", "asymmetric" if upsample else "half_pixel")
    if coordinate not in _COORDINATE_MODES:
        raise imp.error(f"{imp.describe()}: unknown coordinate_transformation_mode '{coordinate}'")
    nearest = _text(attrs, "nearest_mode", "round_prefer_floor")
    if nearest not in _NEAREST_MODES:
        raise imp.error(f"{imp.describe()}: unknown nearest_mode '{nearest}'")
    spec = ResizeSpec(mode, coordinate, nearest if not upsample else "floor", attrs.get("cubic_coeff_a", -0.75),
                      bool(attrs.get("exclude_outside", 0)), bool(attrs.get("antialias", 0)))
    axes = [imp.axis(a, rank) for a in attrs.get("axes", range(rank))]
    require_static(imp, x, axes, "resized")
    scales, sizes, roi = _resize_inputs(imp, node, attrs, upsample)
    if sizes is not None:
        if len(sizes) != len(axes):
            raise imp.error(f"{imp.describe()}: sizes has {len(sizes)} entries for {len(axes)} axes")
        factors = [s / shape[a] for s, a in zip(sizes, axes)]
        policy = _text(attrs, "keep_aspect_ratio_policy", "stretch")
        if policy in ("not_larger", "not_smaller"):
            keep = min(factors) if policy == "not_larger" else max(factors)
            factors = [keep] * len(axes)
            sizes = [int(keep * shape[a] + 0.5) for a in axes]
        elif policy != "stretch":
            raise imp.error(f"{imp.describe()}: unknown keep_aspect_ratio_policy '{policy}'")
    elif scales is not None:
        if len(scales) != len(axes):
            raise imp.error(f"{imp.describe()}: scales has {len(scales)} entries for {len(axes)} axes")
        if min(scales) <= 0:
            raise imp.error(f"{imp.describe()}: scales must be positive, got {list(scales)}")
        factors = list(scales)
        sizes = [int(f * shape[a]) for f, a in zip(factors, axes)]
    else:
        raise imp.error(f"{imp.describe()}: needs scales or sizes")
    if spec.coordinate == "tf_crop_and_resize" and (roi is None or len(roi) != 2 * len(axes)):
        raise imp.error(f"{imp.describe()}: tf_crop_and_resize needs an roi of {2 * len(axes)} values")
    outside_any = None
    y = x
    for i, (a, factor, n_out) in enumerate(zip(axes, factors, sizes)):
        axis_roi = (roi[i], roi[len(axes) + i]) if roi is not None and len(roi) == 2 * len(axes) else None
        identity = math.isclose(factor, 1.0) and n_out == shape[a] and (
            spec.coordinate != "tf_crop_and_resize" or axis_roi == (0.0, 1.0))
        if identity:
            continue
        if n_out < 1:
            raise imp.error(f"{imp.describe()}: the output would have {n_out} elements along axis {a}")
        idx, w, outside = resize_taps(spec, shape[a], n_out, factor, axis_roi)
        y = resize_axis(imp, y, a, idx, w)
        if outside is not None and outside.any():
            mask = np.zeros([n_out if d == a else 1 for d in range(rank)], dtype=bool)
            mask.reshape(-1)[:] = outside
            outside_any = mask if outside_any is None else (outside_any | mask)
    if outside_any is not None:
        out_shape = shape_of(y.type)
        value = b.scalar_like(attrs.get("extrapolation_value", 0.0), y)
        m = b.constant(np.broadcast_to(outside_any, out_shape), graph.i1)
        y = b.select(m, value, y)
    return [y]


def _resize_inputs(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict, upsample: bool):
    """(scales, sizes, roi) of a Resize or Upsample node, from its inputs (constants)
    or, before opset 9, its attributes."""
    def floats(i: int, what: str) -> list[float] | None:
        if imp.optional_input(node, i) is None:
            return None
        value = imp.constant_value(node.input[i], what)  # from graph inputs: the backend binds them
        flat = [float(f) for f in np.asarray(value).reshape(-1)]
        return flat or None

    if node.op_type == "Upsample":
        if "scales" in attrs:
            return list(attrs["scales"]), None, None
        return floats(1, "scales"), None, None
    if imp.opset < 11:
        return floats(1, "scales"), None, None
    roi = floats(1, "roi")
    scales = floats(2, "scales")
    sizes_v = imp.optional_input(node, 3)
    sizes = imp.ints(node.input[3], "sizes") if sizes_v is not None else None
    if sizes is not None and not sizes:
        sizes = None
    return scales, sizes, roi

