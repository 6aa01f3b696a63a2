"""XLA's convolution in the HLO importer: dimension labels, windows (stride, padding,
input and kernel dilation), feature groups, against a direct windowed sum in numpy; and
located errors for what it cannot read."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.errors import UserError
from fsir.frontend.hlo import import_hlo
from fsir.runtime.reference import run
from fsir.testing.conv import direct_conv


def _hlo(xs, ws, out, window: str, labels: str, extra: str = "") -> str:
    def shape(s):
        return f"f32[{','.join(map(str, s))}]"

    return f"""HloModule conv

ENTRY main {{
  x = {shape(xs)} parameter(0)
  w = {shape(ws)} parameter(1)
  ROOT c = {shape(out)} convolution(x, w), window={{{window}}}, dim_labels={labels}{extra}
}}
"""


CASES = [
    # NHWC / HWIO -> NHWC (JAX's default), strided and padded
    ((2, 9, 9, 3), (3, 3, 3, 4), (2, 5, 5, 4), "size=3x3 stride=2x2 pad=1_1x1_1", "b01f_01io->b01f", "",
     dict(strides=(2, 2), low=(1, 1), high=(1, 1), dilation=(1, 1), lhs_dilation=(1, 1), groups=1)),
    # NCHW / OIHW -> NCHW with kernel dilation and asymmetric padding
    ((1, 2, 8, 7), (3, 2, 2, 3), (1, 3, 8, 4), "size=2x3 pad=1_1x0_1 rhs_dilate=2x2", "bf01_oi01->bf01", "",
     dict(strides=(1, 1), low=(1, 0), high=(1, 1), dilation=(2, 2), lhs_dilation=(1, 1), groups=1)),
    # a transposed convolution (input dilation) with feature groups, 1-d
    ((1, 5, 4), (3, 2, 6), (1, 11, 6), "size=3 pad=2_2 lhs_dilate=2", "b0f_0io->b0f", ", feature_group_count=2",
     dict(strides=(1,), low=(2,), high=(2,), dilation=(1,), lhs_dilation=(2,), groups=2)),
]


@pytest.mark.parametrize("case", CASES, ids=["nhwc", "nchw_dilated", "transposed_grouped_1d"])
def test_convolution_matches_the_windowed_sum(case):
    xs, ws, out, window, labels, extra, conv = case
    module = import_hlo(_hlo(xs, ws, out, window, labels, extra), "conv.hlo")
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    (got,) = run(module, [x, w])
    lhs, rhs_out = labels.split("_")
    rhs, out_labels = rhs_out.split("->")
    spatial = [str(i) for i in range(len(xs) - 2)]
    xn = x.transpose([lhs.index(c) for c in ["b", "f", *spatial]])
    wn = w.transpose([rhs.index(c) for c in ["o", "i", *spatial]])
    want = direct_conv(xn, wn, conv["strides"], conv["low"], conv["high"], conv["dilation"], conv["lhs_dilation"],
                       conv["groups"])
    ours = ["b", "f", *spatial]
    want = want.transpose([ours.index(c) for c in out_labels])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("window, labels, extra, message", [
    ("size=3x3", "b01f_01io->b0f", "", "cannot read dim_labels=b01f_01io->b0f"),
    ("size=3x3 stride=2", "b01f_01io->b01f", "", "window stride=2 of 'c' needs 2 sizes"),
    ("size=3x2", "b01f_01io->b01f", "", "does not match the kernel 3x3"),
    ("size=3x3", "b01f_01io->b01f", ", batch_group_count=2", "convolution with batch_group_count"),
    ("size=3x3 window_reversal=1x1", "b01f_01io->b01f", "", "window field(s) window_reversal"),
])
def test_errors_are_located(window, labels, extra, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        import_hlo(_hlo((1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 4), window, labels, extra), "conv.hlo")
    assert info.value.loc is not None and info.value.loc.line == 6
