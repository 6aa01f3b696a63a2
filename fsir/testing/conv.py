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
