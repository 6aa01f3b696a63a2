"""ONNX's convolution family: Conv, ConvTranspose and (inference) BatchNormalization.

Conv becomes one `graph.conv`; ConvTranspose is the convolution of the input dilated
by the strides (`lhs_dilation`) with the spatially flipped kernel, whose channel roles
are swapped per group; BatchNormalization becomes a per-channel multiply-add, with its
factors folded to constants when the statistics are constants (a canonicalization then
folds them into a preceding conv's weights). In training mode the statistics are the
batch's (mean and population variance over every dim but the channel's), and the
optional outputs are the running statistics updated by `momentum`.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.frontend.onnx_import import OnnxImporter, converter

_AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _window(imp: OnnxImporter, attrs: dict, kernel: list[int]) -> tuple[list[int], list[int], list[int]]:
    """strides, dilations and the explicit pads (begin..., end...) of a Conv-like node."""
    spatial = len(kernel)
    strides = list(attrs.get("strides", [1] * spatial))
    dilations = list(attrs.get("dilations", [1] * spatial))
    pads = list(attrs.get("pads", [0] * 2 * spatial))
    for name, values, size in (("strides", strides, spatial), ("dilations", dilations, spatial),
                               ("pads", pads, 2 * spatial)):
        if len(values) != size:
            raise imp.error(f"{imp.describe()}: {name} has {len(values)} entries, expected {size}")
    if "kernel_shape" in attrs and list(attrs["kernel_shape"]) != kernel:
        raise imp.error(f"{imp.describe()}: kernel_shape {list(attrs['kernel_shape'])} does not match the "
                        f"weight's kernel {kernel}")
    if min(strides + dilations, default=1) < 1:
        raise imp.error(f"{imp.describe()}: strides and dilations must be positive")
    return strides, dilations, pads


def _auto_pad(imp: OnnxImporter, attrs: dict) -> str:
    mode = _text(attrs.get("auto_pad", "NOTSET"))
    if mode not in _AUTO_PADS:
        raise imp.error(f"{imp.describe()}: auto_pad '{mode}' is not one of {', '.join(_AUTO_PADS)}")
    return mode


def _channel_bias(imp: OnnxImporter, y: SSAValue, bias: SSAValue | None) -> SSAValue:
    """y + bias broadcast along the channel dim (dim 1)."""
    if bias is None:
        return y
    shape = shape_of(y.type)
    if shape_of(bias.type) != (shape[1],):
        raise imp.error(f"{imp.describe()}: the bias has shape {list(shape_of(bias.type))}, expected [{shape[1]}]")
    return imp.b.ew("add", y, imp.b.broadcast(bias, shape, [1], like=y))


def _operands(imp: OnnxImporter, node) -> tuple[SSAValue, SSAValue, SSAValue | None]:
    if len(node.input) < 2 or not node.input[0] or not node.input[1]:
        raise imp.error(f"{imp.describe()}: needs the input X and the weight W")
    x, w = imp.value(node.input[0]), imp.value(node.input[1])
    xs, ws = shape_of(x.type), shape_of(w.type)
    if len(xs) < 3 or len(ws) != len(xs):
        raise imp.error(f"{imp.describe()}: X {list(xs)} and W {list(ws)} must have one rank >= 3 "
                        "([N, C, spatial...])")
    return x, w, imp.optional_input(node, 2)


@converter("Conv")
def conv(imp: OnnxImporter, node, attrs):
    x, w, bias = _operands(imp, node)
    xs, ws = shape_of(x.type), shape_of(w.type)
    kernel = list(ws[2:])
    strides, dilations, pads = _window(imp, attrs, kernel)
    spatial = len(kernel)
    low, high = pads[:spatial], pads[spatial:]
    mode = _auto_pad(imp, attrs)
    if mode == "VALID":
        low, high = [0] * spatial, [0] * spatial
    elif mode != "NOTSET":
        low, high = [], []
        for size, k, s, d in zip(xs[2:], kernel, strides, dilations):
            if size == graph.DYN:
                raise imp.error(f"{imp.describe()}: auto_pad {mode} needs static spatial sizes")
            out = -(-size // s)
            total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
            small = total // 2
            low.append(small if mode == "SAME_UPPER" else total - small)
            high.append(total - low[-1])
    y = imp.b.conv(x, w, strides, low, high, dilations, [1] * spatial, int(attrs.get("group", 1)))
    return [_channel_bias(imp, y, bias)]


def _flip_transposed_weight(imp: OnnxImporter, w: SSAValue, groups: int) -> SSAValue:
    """ConvTranspose's weight [C, O / groups, *kernel] as the equivalent convolution's
    [O, C / groups, *kernel], kernel positions reversed."""
    b = imp.b
    ws = list(shape_of(w.type))
    c, og, kernel = ws[0], ws[1], ws[2:]
    if c % groups:
        raise imp.error(f"{imp.describe()}: {c} input channels do not split into {groups} groups")
    cg = c // groups
    spatial = list(range(2, len(ws)))
    value = b.fold(w)
    if value is not None:
        flipped = np.flip(value.reshape(groups, cg, og, *kernel).swapaxes(1, 2), axis=tuple(a + 1 for a in spatial))
        return b.constant(np.ascontiguousarray(flipped).reshape(groups * og, cg, *kernel), b.elem(w))
    v = b.reshape(w, [groups, cg, og, *kernel])
    v = b.reshape(b.transpose(v, [0, 2, 1, *(a + 1 for a in spatial)]), [groups * og, cg, *kernel])
    for axis, k in zip(spatial, kernel):
        if k > 1:
            v = b.take(v, b.constant(np.arange(k - 1, -1, -1, dtype=np.int32), graph.i32), axis)
    return v


@converter("ConvTranspose")
def conv_transpose(imp: OnnxImporter, node, attrs):
    x, w, bias = _operands(imp, node)
    xs, ws = shape_of(x.type), shape_of(w.type)
    kernel = list(ws[2:])
    spatial = len(kernel)
    strides, dilations, pads = _window(imp, attrs, kernel)
    groups = int(attrs.get("group", 1))
    if groups < 1:
        raise imp.error(f"{imp.describe()}: group must be positive, got {groups}")
    output_padding = list(attrs.get("output_padding", [0] * spatial))
    if len(output_padding) != spatial:
        raise imp.error(f"{imp.describe()}: output_padding has {len(output_padding)} entries, expected {spatial}")
    mode = _auto_pad(imp, attrs)
    begin, end = pads[:spatial], pads[spatial:]
    if graph.DYN in xs[2:]:
        raise imp.error(f"{imp.describe()}: needs static spatial sizes")
    full = [s * (i - 1) + p + (k - 1) * d + 1
            for s, i, p, k, d in zip(strides, xs[2:], output_padding, kernel, dilations)]
    output_shape = list(attrs.get("output_shape", []))
    if output_shape and len(output_shape) == spatial + 2:
        output_shape = output_shape[2:]
    if not output_shape and mode in ("SAME_UPPER", "SAME_LOWER"):
        output_shape = [i * s for i, s in zip(xs[2:], strides)]
    if output_shape:
        if len(output_shape) != spatial:
            raise imp.error(f"{imp.describe()}: output_shape {output_shape} does not have {spatial} spatial sizes")
        begin, end = [], []
        for f, o in zip(full, output_shape):
            total = f - o
            if mode == "SAME_UPPER":
                begin.append(total // 2)
            else:
                begin.append(total - total // 2)
            end.append(total - begin[-1])
    elif mode == "VALID":
        begin, end = [0] * spatial, [0] * spatial
    # the input, dilated by the strides, convolved with the flipped kernel; the pads
    # crop what the full transposed convolution would add around it
    reach = [(k - 1) * d for k, d in zip(kernel, dilations)]
    low = [r - p for r, p in zip(reach, begin)]
    high = [r - p + op for r, p, op in zip(reach, end, output_padding)]
    weight = _flip_transposed_weight(imp, w, groups)
    y = imp.b.conv(x, weight, [1] * spatial, low, high, dilations, strides, groups)
    return [_channel_bias(imp, y, bias)]


@converter("BatchNormalization")
def batch_normalization(imp: OnnxImporter, node, attrs):
    if attrs.get("spatial", 1) != 1:
        raise imp.error(f"{imp.describe()}: spatial=0 (per-element statistics) is not supported")
    if len(node.input) != 5:
        raise imp.error(f"{imp.describe()}: needs X, scale, B, mean and var")
    x, scale, shift, mean, var = imp.inputs(node)
    xs = shape_of(x.type)
    if len(xs) < 2:
        raise imp.error(f"{imp.describe()}: X must have rank >= 2 ([N, C, ...]), got {list(xs)}")
    for name, v in (("scale", scale), ("B", shift), ("mean", mean), ("var", var)):
        if shape_of(v.type) != (xs[1],):
            raise imp.error(f"{imp.describe()}: {name} has shape {list(shape_of(v.type))}, expected [{xs[1]}]")
    eps = float(attrs.get("epsilon", 1e-5))
    b = imp.b
    if attrs.get("training_mode", 0):
        return _batch_statistics_normalization(imp, x, scale, shift, mean, var, eps,
                                               float(attrs.get("momentum", 0.9)))
    elem = b.elem(x)
    folded = [b.fold(v) for v in (scale, shift, mean, var)]
    if all(f is not None for f in folded):
        s, c, m, v = (np.asarray(f, np.float64) for f in folded if f is not None)
        factor = s / np.sqrt(v + eps)
        mul, add = b.constant(factor, elem), b.constant(c - m * factor, elem)
    else:
        factor = b.ew("mul", scale, b.ew("rsqrt", b.ew("add", var, b.scalar_like(eps, var))))
        mul, add = factor, b.ew("sub", shift, b.ew("mul", mean, factor))
    y = b.ew("mul", x, b.broadcast(mul, xs, [1], like=x))
    return [b.ew("add", y, b.broadcast(add, xs, [1], like=x))]


def _batch_statistics_normalization(imp: OnnxImporter, x, scale, shift, running_mean, running_var, eps: float,
                                    momentum: float) -> list[SSAValue]:
    """Training-mode BatchNormalization: Y normalised by the batch's statistics, and the
    running mean and variance moved towards them (ONNX's `_batchnorm_training_mode`)."""
    b = imp.b
    xs = shape_of(x.type)
    axes = [d for d in range(len(xs)) if d != 1]
    count = float(np.prod([xs[d] for d in axes]))
    mean = b.ew("div", b.reduce("sum", x, axes), b.scalar_like(count, running_mean))
    centred = b.ew("sub", x, b.broadcast(mean, xs, [1]))
    var = b.ew("div", b.reduce("sum", b.ew("mul", centred, centred), axes), b.scalar_like(count, running_var))
    factor = b.ew("mul", scale, b.ew("rsqrt", b.ew("add", var, b.scalar_like(eps, var))))
    y = b.ew("add", b.ew("mul", centred, b.broadcast(factor, xs, [1])), b.broadcast(shift, xs, [1]))

    def moved(running, batch):
        return b.ew("add", b.ew("mul", running, b.scalar_like(momentum, running)),
                    b.ew("mul", batch, b.scalar_like(1.0 - momentum, batch)))

    return [y, moved(running_mean, mean), moved(running_var, var)]
