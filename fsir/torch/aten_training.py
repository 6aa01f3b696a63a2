"""Core ATen ops of training graphs: batch statistics and convolution gradients.

AOTAutograd's forward graph of a model in training mode holds
`_native_batch_norm_legit_functional` (batch statistics and the updated running
statistics as outputs); its backward graph holds `convolution_backward`, the one
gradient that core ATen keeps whole (the others decompose into elementwise ops,
reductions and matrix products, which `fsir.torch.aten` converts already). Both
become ordinary graph ops here: the gradients of a convolution are two convolutions,
as in every framework's autodiff:

- the input's gradient convolves the output's gradient, dilated by the stride, with
  the weight flipped in space and with its two channel dims swapped;
- the weight's gradient convolves the input (batch and channel dims swapped) with the
  output's gradient as the kernel, dilated by the stride, striding by the dilation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import DYN, shape_of
from fsir.torch.aten import Converter, Ctx, Result, Unsupported, aten, channel_vector, compare, is_half_precision

__all__ = ["TRAINING_ROWS"]


def _static_shape(cx: Ctx, v: SSAValue, what: str) -> list[int]:
    shape = list(shape_of(v.type))
    if DYN in shape:
        raise Unsupported(str(cx.node.target) if cx.node is not None else what, f"{what} with `?` dims")
    return shape


def batch_norm_train(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    """_native_batch_norm_legit_functional(x, weight, bias, running_mean, running_var,
    training, momentum, eps) -> (y, mean, rstd, new_running_mean, new_running_var): the
    batch's statistics over every dim but 1 (the variance biased in `y`, unbiased in the
    running variance, as PyTorch's kernel)."""
    x, weight, bias, running_mean, running_var, training, momentum, eps = args
    if not training:
        raise Unsupported("aten._native_batch_norm_legit_functional.default", "training=False")
    b = cx.b
    shape = _static_shape(cx, x, "batch norm")
    dims = [d for d in range(len(shape)) if d != 1]
    n = int(np.prod([shape[d] for d in dims]))
    xf = b.convert(x, graph.f32) if is_half_precision(b, x) else x
    total = b.reduce("sum", xf, dims)
    mean = b.ew("div", total, b.scalar_like(n, total))
    xc = b.ew("sub", xf, channel_vector(cx, mean, xf))
    var = b.reduce("sum", b.ew("mul", xc, xc), dims)
    var = b.ew("div", var, b.scalar_like(n, var))
    rstd = b.ew("rsqrt", b.ew("add", var, b.scalar_like(eps, var)))
    y = b.ew("mul", xc, channel_vector(cx, rstd, xf))
    if weight is not None:
        y = b.ew("mul", y, channel_vector(cx, weight, xf))
    if bias is not None:
        y = b.ew("add", y, channel_vector(cx, bias, xf))
    stat = cx.out_elem(1)

    def running(old: SSAValue, batch: SSAValue) -> SSAValue:
        old = b.convert(old, b.elem(batch))
        kept = b.ew("mul", old, b.scalar_like(1 - momentum, old))
        return b.convert(b.ew("add", kept, b.ew("mul", batch, b.scalar_like(momentum, batch))), b.elem(running_mean))

    unbiased = b.ew("mul", var, b.scalar_like(n / max(n - 1, 1), var))
    return (b.convert(y, b.elem(x)), b.convert(mean, stat), b.convert(rstd, stat),
            running(running_mean, mean), running(running_var, unbiased))


def _flip(cx: Ctx, w: SSAValue, dims: list[int]) -> SSAValue:
    """`w` reversed along `dims` (a gather of the rows in reverse order per dim)."""
    shape = shape_of(w.type)
    for d in dims:
        if shape[d] > 1:
            w = cx.b.take(w, cx.b.constant(np.arange(shape[d] - 1, -1, -1), IntegerType(64)), d)
    return w


def convolution_backward(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    """convolution_backward(grad_out, x, w, bias_sizes, stride, padding, dilation,
    transposed, output_padding, groups, output_mask) -> (grad_x, grad_w, grad_bias)."""
    gy, x, w, _bias_sizes, stride, padding, dilation, transposed, _out_pad, groups, mask = args
    name = "aten.convolution_backward.default"
    if transposed or groups != 1:
        raise Unsupported(name, "transposed or grouped convolutions")
    b = cx.b
    xs, ws, ys = (_static_shape(cx, v, "convolution gradient") for v in (x, w, gy))
    n = len(ws) - 2
    kernel = ws[2:]
    spatial = list(range(2, 2 + n))
    grad_x = grad_w = grad_b = None
    if mask[0]:
        wt = b.transpose(_flip(cx, w, spatial), [1, 0, *spatial])
        low = [dilation[i] * (kernel[i] - 1) - padding[i] for i in range(n)]
        high = [xs[2 + i] - 1 + padding[i] - (ys[2 + i] - 1) * stride[i] for i in range(n)]
        grad_x = b.convert(b.conv(gy, b.convert(wt, b.elem(gy)), [1] * n, low, high, dilation, stride, 1),
                           cx.out_elem(0))
    if mask[1]:
        xt = b.transpose(x, [1, 0, *spatial])
        gt = b.transpose(gy, [1, 0, *spatial])
        high = [(kernel[i] - 1) * dilation[i] + stride[i] * (ys[2 + i] - 1) + 1 - xs[2 + i] - padding[i]
                for i in range(n)]
        gw = b.conv(xt, b.convert(gt, b.elem(xt)), dilation, list(padding), high, stride, [1] * n, 1)
        grad_w = b.convert(b.transpose(gw, [1, 0, *spatial]), cx.out_elem(1))
    if mask[2]:
        grad_b = b.convert(b.reduce("sum", b.convert(gy, graph.f32) if is_half_precision(b, gy) else gy, [0, *spatial]),
                           cx.out_elem(2))
    return (grad_x, grad_w, grad_b)


TRAINING_ROWS: dict[Any, Converter] = {
    aten._native_batch_norm_legit_functional.default: batch_norm_train,
    aten.convolution_backward.default: convolution_backward,
    # masks of the backward graphs (threshold_backward decomposes into le and where)
    aten.le.Scalar: compare("le"),
    aten.ge.Scalar: compare("ge"),
    aten.le.Tensor: compare("le"),
    aten.ge.Tensor: compare("ge"),
    aten.lt.Tensor: compare("lt"),
    aten.gt.Tensor: compare("gt"),
}
