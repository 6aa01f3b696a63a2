"""HLO reduce-window (sizes, strides, window dilation, padding, init values) and pad
(negative and interior padding) against numpy, on the reference interpreter and on the
simulator, and located errors for what the importer rejects."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.errors import UserError
from fsir.frontend.hlo import import_hlo
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.compare import compare
from fsir.runtime.executor import execute
from fsir.runtime.reference import run

REGIONS = """
add_r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
max_r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}
"""

rng = np.random.default_rng(0)
X = rng.standard_normal((2, 9, 10, 3)).astype(np.float32)


def module(body: str, x_shape: str = "f32[2,9,10,3]") -> str:
    lines = [line.strip() for line in body.strip().splitlines()]
    lines[-1] = "ROOT " + lines[-1]
    return (f"HloModule m\n{REGIONS}\nENTRY main {{\n  x = {x_shape} parameter(0)\n  "
            + "\n  ".join(lines) + "\n}\n")


def windows(x: np.ndarray, size, stride, dilate, low, high, fill, fn) -> np.ndarray:
    """numpy reduce-window, one window at a time (the independent oracle)."""
    padded = np.pad(x, list(zip(low, high)), constant_values=fill)
    out_shape = [(n - ((k - 1) * d + 1)) // s + 1 for n, k, s, d in zip(padded.shape, size, stride, dilate)]
    out = np.empty(out_shape, dtype=x.dtype)
    for idx in np.ndindex(*out_shape):
        sl = tuple(slice(i * s, i * s + (k - 1) * d + 1, d) for i, k, s, d in zip(idx, size, stride, dilate))
        out[idx] = fn(padded[sl])
    return out


def check_both(text: str, want: np.ndarray) -> None:
    """The reference interpreter and the simulator both give `want`."""
    m = import_hlo(text, "m.hlo")
    (got,) = run(m, [X])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    lowered = lower(import_hlo(text, "m.hlo"), PipelineOptions(fusion="stitch"))
    (sim,), _ = execute(lowered, [X])
    assert compare(sim, want).ok


def test_max_pool_nhwc_with_padding():
    # JAX's max_pool over NHWC: -inf init, 3x3 windows, stride 2, SAME-style padding
    text = module("""
        ninf = f32[] constant(-inf)
        w = f32[2,5,5,3] reduce-window(x, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max_r""")
    want = windows(X, [1, 3, 3, 1], [1, 2, 2, 1], [1] * 4, [0, 1, 1, 0], [0, 1, 1, 0], -np.inf, np.max)
    check_both(text, want)
    ops = [op.name for op in import_hlo(text, "m.hlo").walk()]
    assert "graph.reduce_window" in ops


def test_sum_window_dilated_and_negative_padding():
    text = module("""
        zero = f32[] constant(0)
        w = f32[2,2,4,3] reduce-window(x, zero), window={size=1x2x3x1 stride=1x3x2x1 pad=0_0x-1_0x2_-1x0_0 rhs_dilate=1x2x2x1}, to_apply=add_r""")
    cut = X[:, 1:, :9, :]
    want = windows(cut, [1, 2, 3, 1], [1, 3, 2, 1], [1, 2, 2, 1], [0, 0, 2, 0], [0, 0, 0, 0], 0.0, np.sum)
    check_both(text, want)


def test_non_identity_init_takes_part_once():
    text = module("""
        init = f32[] constant(0.25)
        w = f32[2,4,10,3] reduce-window(x, init), window={size=1x3x1x1 stride=1x2x1x1}, to_apply=add_r""")
    want = windows(X, [1, 3, 1, 1], [1, 2, 1, 1], [1] * 4, [0] * 4, [0] * 4, 0.0, np.sum) + np.float32(0.25)
    check_both(text, want)
    # max with padding: the padded positions hold the init, which takes part anyway
    text = module("""
        init = f32[] constant(0.5)
        w = f32[2,9,10,3] reduce-window(x, init), window={size=1x3x3x1 pad=0_0x1_1x1_1x0_0}, to_apply=max_r""")
    want = np.maximum(windows(X, [1, 3, 3, 1], [1] * 4, [1] * 4, [0, 1, 1, 0], [0, 1, 1, 0], 0.5, np.max), 0.5)
    check_both(text, want)


@pytest.mark.parametrize("window,message", [
    ("size=1x2x2x1 lhs_dilate=1x2x2x1", "base dilation (lhs_dilate)"),
    ("size=1x2x2x1 pad=0_0x1_1x0_0x0_0", "padded reduce-window whose init value is not the sum's identity"),
    ("size=1x2x2", "cannot read size=1x2x2"),
])
def test_rejected_windows_are_located(window, message):
    text = module(f"""
        init = f32[] constant(1)
        w = f32[2,5,5,3] reduce-window(x, init), window={{{window}}}, to_apply=add_r""")
    with pytest.raises(UserError) as info:
        import_hlo(text, "m.hlo")
    assert message in info.value.message
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "reduce-window" in t)
    assert info.value.loc is not None and info.value.loc.line == line


def test_pad_interior_and_negative():
    text = module("""
        v = f32[] constant(-2)
        p = f32[3,22,10,3] pad(x, v), padding=1_0x2_3_1x-1_1x0_0""")
    spread = np.full((2, 17, 10, 3), -2, np.float32)
    spread[:, ::2] = X
    want = np.full((3, 22, 10, 3), -2, np.float32)
    want[1:, 2:19, :9] = spread[:, :, 1:]
    check_both(text, want)
    ops = [op.name for op in import_hlo(text, "m.hlo").walk()]
    assert "graph.pad" in ops and "graph.concat" not in ops


def test_average_pool_counts_fold_to_a_constant():
    # jax's avg_pool(count_include_pad=False): window sums divided by window sums of ones
    text = module("""
        zero = f32[] constant(0)
        one = f32[] constant(1)
        ones = f32[2,9,10,3] broadcast(one), dimensions={}
        s = f32[2,5,5,3] reduce-window(x, zero), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=add_r
        c = f32[2,5,5,3] reduce-window(ones, zero), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=add_r
        d = f32[2,5,5,3] divide(s, c)""")
    sums = windows(X, [1, 3, 3, 1], [1, 2, 2, 1], [1] * 4, [0, 1, 1, 0], [0, 1, 1, 0], 0.0, np.sum)
    counts = windows(np.ones_like(X), [1, 3, 3, 1], [1, 2, 2, 1], [1] * 4, [0, 1, 1, 0], [0, 1, 1, 0], 0.0, np.sum)
    check_both(text, sums / counts)
    windows_left = [op for op in import_hlo(text, "m.hlo").walk() if op.name == "graph.reduce_window"]
    assert len(windows_left) == 1
