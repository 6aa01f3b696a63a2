"""graph.scatter and graph.sort end to end (graph → PTX → simulator vs. reference), and
their numpy references against plain loops that apply the documented semantics."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.dialects import graph
from fsir.parse import parse_module
from fsir.runtime.reference import find_function, run_function
from fsir.testing.pipeline import check

KINDS = ["none", "add", "mul", "max", "min"]


def _scatter_text(kind: str, t: str, dims: str = "[0]", x="7x5", idx="6x1", upd="6x5", it="i32") -> str:
    return f"""
func.func @f(%x: tensor<{x}x{t}>, %i: tensor<{idx}x{it}>, %u: tensor<{upd}x{t}>) -> tensor<{x}x{t}> {{
  %r = graph.scatter {kind} %x, %i, %u dims {dims} : (tensor<{x}x{t}>, tensor<{idx}x{it}>, tensor<{upd}x{t}>) -> tensor<{x}x{t}>
  func.return %r : tensor<{x}x{t}>
}}
"""


def _loop_scatter(kind, x, indices, updates, dims):
    """The semantics as written: updates in order, out-of-bounds points skipped."""
    out = x.copy()
    k = len(dims)
    points = indices.reshape(-1, k)
    ups = updates.reshape(points.shape[0], *updates.shape[indices.ndim - 1:])
    for p, u in zip(points, ups):
        if any(not 0 <= int(c) < x.shape[d] for c, d in zip(p, dims)):
            continue
        sel = tuple(int(p[dims.index(d)]) if d in dims else slice(None) for d in range(x.ndim))
        cur = out[sel]
        out[sel] = {"none": lambda a, b: b, "add": np.add, "mul": np.multiply, "max": np.maximum,
                    "min": np.minimum}[kind](cur, u)
    return out


def _inputs(rng, t, x=(7, 5), idx=(6, 1), upd=(6, 5), high=7):
    dt = graph.numpy_dtype({"f32": graph.f32, "f16": graph.f16, "i32": graph.i32}[t])
    cast = (lambda a: a.astype(dt)) if t != "i32" else (lambda a: (a * 10).astype(dt))
    ids = rng.integers(-1, high + 1, size=idx).astype(np.int32)  # duplicates and out-of-bounds points
    return [cast(rng.standard_normal(x)), ids, cast(rng.standard_normal(upd))]


@pytest.mark.parametrize("kind", KINDS)
def test_scatter_reference_is_the_loop(kind):
    rng = np.random.default_rng(1)
    for dims, x, idx, upd in [([0], (7, 5), (6, 1), (6, 5)), ([1, 0], (4, 6, 3), (2, 5, 2), (2, 5, 3)),
                              ([2], (3, 4, 5), (9, 1), (9, 3, 4))]:
        text = _scatter_text(kind, "f32", str(dims), "x".join(map(str, x)), "x".join(map(str, idx)),
                             "x".join(map(str, upd)))
        inputs = _inputs(rng, "f32", x, idx, upd, high=max(x))
        got = run_function(find_function(parse_module(text, "<t>")), inputs)[0]
        np.testing.assert_array_equal(got, _loop_scatter(kind, *inputs, dims))


@pytest.mark.parametrize("t", ["f32", "f16", "i32"])
@pytest.mark.parametrize("kind", KINDS)
def test_scatter_on_the_simulator(kind, t):
    check(_scatter_text(kind, t), inputs=_inputs(np.random.default_rng(2), t), ptxas=kind == "add")


def test_scatter_index_vectors_and_windows():
    """Two scattered dims (in reverse order) and a window dim between them; i64 ids."""
    rng = np.random.default_rng(3)
    ids = np.stack([rng.integers(0, 6, (2, 5)), rng.integers(0, 4, (2, 5))], axis=-1).astype(np.int64)
    check(_scatter_text("add", "f32", "[2, 0]", "4x3x6", "2x5x2", "2x5x3", "i64"),
          inputs=[rng.standard_normal((4, 3, 6)).astype(np.float32), ids,
                  rng.standard_normal((2, 5, 3)).astype(np.float32)])


def test_scatter_dynamic_updates_fused():
    """A `?` number of updates, computed updates and a consumer in one stitched kernel."""
    text = """
func.func @f(%x: tensor<9x33xf32>, %i: tensor<?x1xi32>, %u: tensor<?x33xf32>) -> tensor<9xf32> {
  %e = graph.exp %u : tensor<?x33xf32>
  %r = graph.scatter none %x, %i, %e dims [0] : (tensor<9x33xf32>, tensor<?x1xi32>, tensor<?x33xf32>) -> tensor<9x33xf32>
  %s = graph.reduce sum %r dims [1] : (tensor<9x33xf32>) -> tensor<9xf32>
  func.return %s : tensor<9xf32>
}
"""
    rng = np.random.default_rng(4)
    for n in (1, 5, 12):
        check(text, inputs=[rng.standard_normal((9, 33)).astype(np.float32),
                            rng.integers(0, 9, (n, 1)).astype(np.int32),
                            rng.standard_normal((n, 33)).astype(np.float32)], fusion="stitch", ptxas=n == 5)


def _sort_text(direction: str, kt: str, vt: str, shape="3x13", dim=1) -> str:
    return f"""
func.func @f(%k: tensor<{shape}x{kt}>, %v: tensor<{shape}x{vt}>) -> (tensor<{shape}x{vt}>, tensor<{shape}x{kt}>) {{
  %s = graph.sort {direction} %k, %v dim {dim} : (tensor<{shape}x{kt}>, tensor<{shape}x{vt}>) -> tensor<{shape}x{vt}>
  %t = graph.sort {direction} %k, %k dim {dim} : tensor<{shape}x{kt}>
  func.return %s, %t : tensor<{shape}x{vt}>, tensor<{shape}x{kt}>
}}
"""


def _loop_sort(direction, keys, values, dim):
    """Stable sort by plain comparisons: NaN after numbers ascending, before descending."""
    k = np.moveaxis(keys, dim, -1).astype(np.float64)
    v = np.moveaxis(values, dim, -1)
    out = np.empty_like(v)
    for row in np.ndindex(k.shape[:-1]):
        def key(i, row=row):
            x = k[row][i]
            rank = (1, 0.0) if np.isnan(x) else (0, x)
            return rank if direction == "ascending" else (-rank[0], -rank[1])
        order = sorted(range(k.shape[-1]), key=key)
        out[row] = v[row][order]
    return np.moveaxis(out, -1, dim)


@pytest.mark.parametrize("direction", ["ascending", "descending"])
def test_sort_reference_is_the_loop(direction):
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 4, (3, 13)).astype(np.float32)
    keys[0, [2, 7]] = np.nan
    keys[1, 4] = -np.inf
    values = np.arange(39, dtype=np.int32).reshape(3, 13)
    for dim in (0, 1):
        text = _sort_text(direction, "f32", "i32", dim=dim)
        got = run_function(find_function(parse_module(text, "<t>")), [keys, values])
        np.testing.assert_array_equal(got[0], _loop_sort(direction, keys, values, dim))
        np.testing.assert_array_equal(got[1], _loop_sort(direction, keys, keys, dim))


@pytest.mark.parametrize("kt, vt", [("f32", "i32"), ("f16", "f32"), ("i32", "f16"), ("i64", "i64")])
@pytest.mark.parametrize("direction", ["ascending", "descending"])
def test_sort_on_the_simulator(direction, kt, vt):
    rng = np.random.default_rng(6)
    dt = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64}
    keys = rng.integers(-3, 4, (3, 13)).astype(dt[kt])  # many ties: stability shows
    if kt.startswith("f"):
        keys[1, [0, 5]] = np.nan
    values = rng.standard_normal((3, 13)).astype(dt[vt]) if vt.startswith("f") else \
        np.arange(39).reshape(3, 13).astype(dt[vt])
    check(_sort_text(direction, kt, vt), inputs=[keys, values], ptxas=(kt, direction) == ("f32", "ascending"))


def test_sort_columns_of_64_fused():
    """The longest sorted dim, along dim 0, between an elementwise producer and a reduction."""
    text = """
func.func @f(%k: tensor<64x5xf32>) -> tensor<5xf32> {
  %n = graph.neg %k : tensor<64x5xf32>
  %s = graph.sort ascending %n, %k dim 0 : tensor<64x5xf32>
  %top = graph.slice %s start [0, 0] limit [3, 5] strides [1, 1] : (tensor<64x5xf32>) -> tensor<3x5xf32>
  %r = graph.reduce sum %top dims [0] : (tensor<3x5xf32>) -> tensor<5xf32>
  func.return %r : tensor<5xf32>
}
"""
    check(text, fusion="stitch")
