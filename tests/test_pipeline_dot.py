"""graph.dot as a tiled shared-memory GEMM: sizes not multiples of the 16x16 tile,
batch dims with numpy.matmul broadcasting, vectors, f16/bf16/int, dynamic sizes, and
producers inlined into the tile loads."""

from __future__ import annotations

import pytest

from pipeline_util import check


def _dot(a: str, b: str, out: str, t: str = "f32") -> str:
    ta, tb = f"tensor<{a}x{t}>", f"tensor<{b}x{t}>"
    to = f"tensor<{out}x{t}>" if out else f"tensor<{t}>"
    return f"""
func.func @f(%a: {ta}, %b: {tb}) -> {to} {{
  %d = graph.dot %a, %b : ({ta}, {tb}) -> {to}
  func.return %d : {to}
}}
"""


@pytest.mark.parametrize("a,b,out", [
    ("5x7", "7x3", "5x3"), ("33x20", "20x17", "33x17"), ("1x1", "1x1", "1x1"),
    ("2x5x40", "40x9", "2x5x9"), ("3x1x6x8", "2x8x5", "3x2x6x5"), ("7", "7x4", "4"),
    ("4x7", "7", "4"), ("19", "19", ""),
])
def test_shapes(a, b, out):
    check(_dot(a, b, out), scale=4)


@pytest.mark.parametrize("t", ["f16", "bf16", "i32", "i64"])
def test_types(t):
    check(_dot("6x18", "18x10", "6x10", t), kinds=["int", "int"] if t.startswith("i") else None, scale=4)


def test_dynamic():
    check(_dot("?x?", "?x5", "?x5"), shapes=[(9, 21), (21, 5)], scale=4)


def test_inlined_producer():
    check("""
func.func @f(%a: tensor<10x12xf32>, %b: tensor<12x6xf32>) -> tensor<10x6xf32> {
  %d = stitch.fusion (%a, %b) : (tensor<10x12xf32>, tensor<12x6xf32>) -> tensor<10x6xf32> {
  ^bb0(%x: tensor<10x12xf32>, %y: tensor<12x6xf32>):
    %e = graph.tanh %x : tensor<10x12xf32>
    %t = graph.transpose %y perm [1, 0] : (tensor<12x6xf32>) -> tensor<6x12xf32>
    %u = graph.transpose %t perm [1, 0] : (tensor<6x12xf32>) -> tensor<12x6xf32>
    %r = graph.dot %e, %u : (tensor<10x12xf32>, tensor<12x6xf32>) -> tensor<10x6xf32>
    stitch.yield %r : tensor<10x6xf32>
  }
  func.return %d : tensor<10x6xf32>
}
""", scale=4)
