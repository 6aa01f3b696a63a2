"""A convolution by its definition, for tests: every output element as the sum over
its window (Python loops: small sizes only), the oracle graph.conv's numpy reference
and the importers are checked against."""

from __future__ import annotations

import itertools

import numpy as np


def direct_conv(x, w, strides, low, high, dilation, lhs_dilation, groups):
    """Every output element as the sum over its window (the definition)."""
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    kernel = w.shape[2:]
    dilated = [(s - 1) * d + 1 for s, d in zip(x.shape[2:], lhs_dilation)]
    out = [(di + lo + hi - (k - 1) * dl - 1) // st + 1
           for di, lo, hi, k, dl, st in zip(dilated, low, high, kernel, dilation, strides)]
    y = np.zeros((n, o, *out), np.float64)
    og = o // groups
    for b, oc, *pos in itertools.product(range(n), range(o), *(range(s) for s in out)):
        g = oc // og
        total = 0.0
        for ci, *kp in itertools.product(range(cg), *(range(k) for k in kernel)):
            src = []
            for p, k, st, dl, lo, ld, s in zip(pos, kp, strides, dilation, low, lhs_dilation, x.shape[2:]):
                q = p * st + k * dl - lo
                if q < 0 or q % ld or q // ld >= s:
                    break
                src.append(q // ld)
            else:
                total += x[(b, g * cg + ci, *src)] * w[(oc, ci, *kp)]
        y[(b, oc, *pos)] = total
    return y


def direct_conv_transpose(x, w, strides, dilations, begin, out_shape, groups):
    """ONNX ConvTranspose by its definition: every input element scatters its products
    with the kernel ([C, O / groups, *kernel]) into the full output, which is then
    cropped by `begin` pads to `out_shape` (spatial sizes)."""
    n, c = x.shape[:2]
    og = w.shape[1]
    cg = c // groups
    kernel = w.shape[2:]
    full = [(i - 1) * s + (k - 1) * d + 1 for i, s, k, d in zip(x.shape[2:], strides, kernel, dilations)]
    size = [max(f, b + o) for f, b, o in zip(full, begin, out_shape)]  # output padding adds zeros at the end
    y = np.zeros((n, og * groups, *size), np.float64)
    for b, ci, *pos in itertools.product(range(n), range(c), *(range(s) for s in x.shape[2:])):
        g = ci // cg
        for o, *kp in itertools.product(range(og), *(range(k) for k in kernel)):
            at = [p * s + k * d for p, s, k, d in zip(pos, strides, kp, dilations)]
            y[(b, g * og + o, *at)] += x[(b, ci, *pos)] * w[(ci, o, *kp)]
    return y[(slice(None), slice(None), *(slice(b, b + o) for b, o in zip(begin, out_shape)))]
