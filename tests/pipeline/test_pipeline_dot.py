"""graph.dot as a tiled shared-memory GEMM: sizes not multiples of the 16x16 tile,
batch dims with numpy.matmul broadcasting, vectors, f16/bf16/int, dynamic sizes, and
producers inlined into the tile loads."""

from __future__ import annotations

import pytest

from fsir.codegen.mappings.gemm import CANDIDATES, VECTOR_CANDIDATES
from fsir.testing.pipeline import check


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


# -- every GEMM configuration ----------------------------------------------------------

# The evaluator's candidates, the forcible 8x8 micro-tile, and configurations that
# exercise the general staging paths: a tile with fewer elements than threads (8x8x4
# with 64 threads: guarded copies), threads not a multiple of a tile's width (8x64x8/2x8: 32 threads for a
# 64-wide B tile) and sizes that are not powers of two (24x20x6/3x2: 80 threads).
CONFIGS = [c.text() for c in CANDIDATES + VECTOR_CANDIDATES] + [
    "128x128x8/8x8", "8x8x4/1x1", "8x64x8/2x8", "24x20x6/3x2"]

# Several products in one function (each its own kernel): odd M, N, K; numpy.matmul
# batch broadcasting; vector operands; a transposed operand and an elementwise
# producer inlined into the tile loads.
MIXED = """
func.func @f(%a: tensor<33x21xf32>, %b: tensor<21x17xf32>, %c: tensor<3x1x6x8xf32>, %d: tensor<2x8x70xf32>,
             %v: tensor<21xf32>, %w: tensor<67x21xf32>) -> (tensor<33x17xf32>, tensor<3x2x6x70xf32>, tensor<17xf32>,
                                                            tensor<33x67xf32>) {
  %ab = graph.dot %a, %b : (tensor<33x21xf32>, tensor<21x17xf32>) -> tensor<33x17xf32>
  %cd = graph.dot %c, %d : (tensor<3x1x6x8xf32>, tensor<2x8x70xf32>) -> tensor<3x2x6x70xf32>
  %vb = graph.dot %v, %b : (tensor<21xf32>, tensor<21x17xf32>) -> tensor<17xf32>
  %aw = stitch.fusion (%a, %w) : (tensor<33x21xf32>, tensor<67x21xf32>) -> tensor<33x67xf32> {
  ^bb0(%x: tensor<33x21xf32>, %y: tensor<67x21xf32>):
    %e = graph.tanh %x : tensor<33x21xf32>
    %t = graph.transpose %y perm [1, 0] : (tensor<67x21xf32>) -> tensor<21x67xf32>
    %r = graph.dot %e, %t : (tensor<33x21xf32>, tensor<21x67xf32>) -> tensor<33x67xf32>
    stitch.yield %r : tensor<33x67xf32>
  }
  func.return %ab, %cd, %vb, %aw : tensor<33x17xf32>, tensor<3x2x6x70xf32>, tensor<17xf32>, tensor<33x67xf32>
}
"""


def _blocks(lowered) -> set[tuple[int, ...]]:
    from fsir.dialects import gpu

    return {tuple(k.known_block_size.get_values()) for k in lowered.walk() if isinstance(k, gpu.FuncOp) and k.is_kernel}


@pytest.mark.parametrize("config", CONFIGS)
def test_every_configuration(config):
    from fsir.codegen.mappings.gemm import GemmConfig

    lowered = check(MIXED, scale=4, gemm=config)
    # every kernel runs with the forced configuration's block
    assert _blocks(lowered) == {(GemmConfig.parse(config).threads, 1, 1)}


@pytest.mark.parametrize("t", ["f16", "bf16", "i32"])
@pytest.mark.parametrize("config", ["16x16x16/1x1", "64x64x16/4x4", "24x20x6/3x2"])
def test_configuration_types(config, t):
    check(_dot("2x37x45", "45x29", "2x37x29", t), kinds=["int", "int"] if t.startswith("i") else None, scale=4,
          gemm=config)


@pytest.mark.parametrize("config", ["auto", "64x32x16/4x2"])
def test_configuration_dynamic(config):
    check(_dot("?x?", "?x5", "?x5"), shapes=[(45, 21), (21, 5)], scale=4, gemm=config)
    check(_dot("?x5x9", "?x9x70", "?x5x70"), shapes=[(3, 5, 9), (1, 9, 70)], scale=4, gemm=config)
