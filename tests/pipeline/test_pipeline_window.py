"""graph.reduce_window and graph.pad end to end (graph → PTX → simulator vs. the numpy
reference): every reduction kind and element type, strides, dilations, padding on one
or both sides, `?` dims; pads in every mode with negative and interior padding; and
their consumers stitched into the same loop kernel."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.dialects.schedule import KernelOp
from fsir.testing.pipeline import check


def window_fn(kind: str, t: str, src: str, out: str, window, strides, dilations, low, high) -> str:
    ints = lambda xs: "[" + ", ".join(map(str, xs)) + "]"  # noqa: E731
    return f"""
func.func @f(%x: tensor<{src}x{t}>) -> tensor<{out}x{t}> {{
  %y = graph.reduce_window {kind} %x window {ints(window)} strides {ints(strides)} dilations {ints(dilations)} low {ints(low)} high {ints(high)} : (tensor<{src}x{t}>) -> tensor<{out}x{t}>
  func.return %y : tensor<{out}x{t}>
}}
"""


@pytest.mark.parametrize("kind", ["sum", "max", "min", "prod"])
@pytest.mark.parametrize("t", ["f32", "f16", "i32"])
def test_reduce_window_kinds(kind, t):
    # 3x3 windows, stride 2, padding 1 on both sides of H and W (as a ResNet stem's max-pool)
    check(window_fn(kind, t, "2x3x9x10", "2x3x5x5", [1, 1, 3, 3], [1, 1, 2, 2], [1, 1, 1, 1],
                    [0, 0, 1, 1], [0, 0, 1, 0]), kinds=["small" if t[0] == "f" else "int"])


def test_reduce_window_dilated_overlapping():
    check(window_fn("max", "f32", "3x17x6", "3x7x4", [1, 4, 2], [1, 2, 1], [1, 3, 2],
                    [0, 2, 0], [0, 3, 0]))


def test_reduce_window_identity_shows_where_everything_is_padding():
    # the first window of dim 1 lies wholly in the padding: max gives -inf
    lowered = check(window_fn("max", "f32", "4x5", "4x5", [1, 2], [1, 2], [1, 1], [0, 3], [0, 2]))
    assert lowered is not None


def test_reduce_window_dynamic_dim():
    text = window_fn("sum", "f32", "?x12", "?x6", [1, 3], [1, 2], [1, 1], [0, 1], [0, 0])
    check(text, shapes=[(5, 12)])
    check(text, shapes=[(1, 12)])


def test_average_pool_stitches_into_one_kernel():
    # count_include_pad=0: sum * (1 / count), the count a constant; ReLU after it
    count = np.array([[4, 6, 6, 4], [6, 9, 9, 6], [6, 9, 9, 6], [4, 6, 6, 4]], dtype=np.float32)
    dense = "dense<[" + ", ".join("[" + ", ".join(f"{1 / c:.9e}" for c in row) + "]" for row in count) + "]>"
    text = f"""
func.func @f(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {{
  %s = graph.reduce_window sum %x window [1, 1, 3, 3] strides [1, 1, 1, 1] dilations [1, 1, 1, 1] low [0, 0, 1, 1] high [0, 0, 1, 1] : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %c = graph.constant {dense} : tensor<4x4xf32>
  %cb = graph.broadcast %c dims [2, 3] : (tensor<4x4xf32>) -> tensor<2x3x4x4xf32>
  %a = graph.mul %s, %cb : tensor<2x3x4x4xf32>
  %z = graph.constant dense<0.0> : tensor<2x3x4x4xf32>
  %r = graph.max %a, %z : tensor<2x3x4x4xf32>
  func.return %r : tensor<2x3x4x4xf32>
}}
"""
    lowered = check(text, fusion="stitch")
    kernels = [op for op in lowered.walk() if op.name == "gpu.func"]
    assert len(kernels) == 1


def test_window_operand_comes_from_memory():
    # the exp feeding the window is its own kernel; the window's consumer joins the window's
    text = """
func.func @f(%x: tensor<4x33xf32>) -> tensor<4x16xf32> {
  %e = graph.exp %x : tensor<4x33xf32>
  %y = graph.reduce_window max %e window [1, 3] strides [1, 2] dilations [1, 1] low [0, 0] high [0, 0] : (tensor<4x33xf32>) -> tensor<4x16xf32>
  %n = graph.neg %y : tensor<4x16xf32>
  func.return %n : tensor<4x16xf32>
}
"""
    from fsir.testing.pipeline import schedule_kernels

    kernels = schedule_kernels(text)
    assert len(kernels) == 2
    window_kernel = next(k for k in kernels if any(op.name == "graph.reduce_window" for op in k.walk()))
    assert not any(op.name == "graph.exp" for op in window_kernel.walk())
    assert any(op.name == "graph.neg" for op in window_kernel.walk())
    check(text, fusion="stitch")


def test_global_pool_is_a_row_reduction():
    text = """
func.func @f(%x: tensor<2x64x7x7xf32>) -> tensor<2x64xf32> {
  %s = graph.reduce sum %x dims [2, 3] : (tensor<2x64x7x7xf32>) -> tensor<2x64xf32>
  %k = graph.constant dense<0.020408163> : tensor<2x64xf32>
  %m = graph.mul %s, %k : tensor<2x64xf32>
  func.return %m : tensor<2x64xf32>
}
"""
    from fsir.testing.pipeline import schedule_kernels

    (k,) = schedule_kernels(text)
    assert isinstance(k, KernelOp) and str(k.params.MAPPING) == "row"
    check(text, fusion="stitch")


def pad_fn(mode: str, t: str, src: str, out: str, low, high, interior) -> str:
    ints = lambda xs: "[" + ", ".join(map(str, xs)) + "]"  # noqa: E731
    if mode == "constant":
        return f"""
func.func @f(%x: tensor<{src}x{t}>, %v: tensor<{t}>) -> tensor<{out}x{t}> {{
  %y = graph.pad constant %x, %v low {ints(low)} high {ints(high)} interior {ints(interior)} : (tensor<{src}x{t}>, tensor<{t}>) -> tensor<{out}x{t}>
  func.return %y : tensor<{out}x{t}>
}}
"""
    return f"""
func.func @f(%x: tensor<{src}x{t}>) -> tensor<{out}x{t}> {{
  %y = graph.pad {mode} %x low {ints(low)} high {ints(high)} interior {ints(interior)} : (tensor<{src}x{t}>) -> tensor<{out}x{t}>
  func.return %y : tensor<{out}x{t}>
}}
"""


@pytest.mark.parametrize("t", ["f32", "f16", "i32", "i1"])
def test_pad_constant_negative_and_interior(t):
    check(pad_fn("constant", t, "3x5x4", "6x3x9", [1, -1, 1], [2, -1, 1], [0, 0, 1]),
          kinds=["int", "int"] if t[0] == "i" else None)


@pytest.mark.parametrize("mode", ["edge", "reflect", "wrap"])
def test_pad_modes(mode):
    # pads longer than the dim: reflect and wrap repeat periodically, as numpy.pad does
    check(pad_fn(mode, "f32", "3x4x5", "3x11x8", [0, 5, 1], [0, 2, 2], [0, 0, 0]))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad_dynamic(mode):
    text = pad_fn(mode, "f32", "?x6", "?x9", [0, 2], [0, 1], [0, 0])
    check(text, shapes=[(3, 6), ()] if mode == "constant" else [(3, 6)])


def test_pad_stitches_into_its_consumer():
    text = """
func.func @f(%x: tensor<4x30xf32>, %v: tensor<f32>) -> tensor<4x32xf32> {
  %p = graph.pad constant %x, %v low [0, 1] high [0, 1] interior [0, 0] : (tensor<4x30xf32>, tensor<f32>) -> tensor<4x32xf32>
  %e = graph.exp %p : tensor<4x32xf32>
  func.return %e : tensor<4x32xf32>
}
"""
    lowered = check(text, fusion="stitch")
    assert len([op for op in lowered.walk() if op.name == "gpu.func"]) == 1


def test_window_feeds_a_row_reduction():
    # max-pool then global average pool: the window is computed per element of the rows
    text = """
func.func @f(%x: tensor<2x8x9x9xf32>) -> tensor<2x8xf32> {
  %p = graph.reduce_window max %x window [1, 1, 3, 3] strides [1, 1, 2, 2] dilations [1, 1, 1, 1] low [0, 0, 1, 1] high [0, 0, 1, 1] : (tensor<2x8x9x9xf32>) -> tensor<2x8x5x5xf32>
  %s = graph.reduce sum %p dims [2, 3] : (tensor<2x8x5x5xf32>) -> tensor<2x8xf32>
  func.return %s : tensor<2x8xf32>
}
"""
    from fsir.testing.pipeline import schedule_kernels

    for rows in ("thread", "warp", "block"):
        (k,) = schedule_kernels(text, rows=rows)
        assert str(k.params.MAPPING) == "row"
        check(text, fusion="stitch", rows=rows)


@pytest.mark.parametrize("vector", [2, 4])
def test_reduce_window_vectorized_loop(vector):
    check(window_fn("max", "f32", "2x3x9x17", "2x3x8x8", [1, 1, 2, 3], [1, 1, 1, 2], [1, 1, 1, 1],
                    [0, 0, 0, 1], [0, 0, 0, 0]), fusion="stitch", vector=vector)
