"""Fusions through stitch-codegen and schedule-to-gpu: multi-group row kernels
(LayerNorm, softmax: sub-roots in registers / warp lanes / shared memory), column
reductions with consumers, multi-output and packed loop kernels, and the errors for
fusions that need inter-block communication."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.errors import UserError
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute
from fsir.testing.graphs import GRAPH_LAYERNORM, SOFTMAX_FUSION, layernorm_fusion
from fsir.testing.pipeline import check


def launches(lowered) -> int:
    return str(lowered).count("gpu.launch_func")


@pytest.mark.parametrize("rows,cols,comp", [("6", 64, "warp"), ("3", 768, "block"), ("1", 33, "warp")])
def test_layernorm(rows, cols, comp):
    lowered = check(layernorm_fusion(rows, cols), scale=4)
    assert launches(lowered) == 1


def test_layernorm_f16():
    check(layernorm_fusion("4", 100, "f16"), scale=2)


def test_layernorm_dynamic_rows():
    lowered = check(layernorm_fusion("?", 600), shapes=[(5, 600), (600,), (600,)], scale=4)
    assert "memref.dim" in str(lowered)


@pytest.mark.parametrize("R,C", [(7, 50), (2, 1030)])
def test_softmax_rows(R, C):
    lowered = check(SOFTMAX_FUSION.format(R=R, C=C, D=1, K=R, KD=0), scale=4)
    assert launches(lowered) == 1


def test_softmax_columns():
    """A column softmax: a thread per column (reductions over dim 0 with consumers)."""
    lowered = check(SOFTMAX_FUSION.format(R=40, C=6, D=0, K=6, KD=1), scale=4)
    assert "gpu.shuffle" not in str(lowered)


def test_multi_output():
    """The mean (a sub-root result) and the centred values are both outputs."""
    check("""
func.func @f(%x: tensor<5x70xf32>) -> (tensor<5xf32>, tensor<5x70xf32>) {
  %m, %c = stitch.fusion (%x) : (tensor<5x70xf32>) -> (tensor<5xf32>, tensor<5x70xf32>) {
  ^bb0(%xa: tensor<5x70xf32>):
    %s = graph.reduce sum %xa dims [1] : (tensor<5x70xf32>) -> tensor<5xf32>
    %sb = graph.broadcast %s dims [0] : (tensor<5xf32>) -> tensor<5x70xf32>
    %d = graph.sub %xa, %sb : tensor<5x70xf32>
    stitch.yield %s, %d : tensor<5xf32>, tensor<5x70xf32>
  }
  func.return %m, %c : tensor<5xf32>, tensor<5x70xf32>
}
""", scale=4)


def test_packed_loop():
    """Independent outputs of different sizes share one loop kernel (kernel packing)."""
    lowered = check("""
func.func @f(%a: tensor<3x7xf32>, %b: tensor<300xi32>) -> (tensor<3x7xf32>, tensor<300xi32>) {
  %x, %y = stitch.fusion (%a, %b) : (tensor<3x7xf32>, tensor<300xi32>) -> (tensor<3x7xf32>, tensor<300xi32>) {
  ^bb0(%p: tensor<3x7xf32>, %q: tensor<300xi32>):
    %e = graph.exp %p : tensor<3x7xf32>
    %n = graph.neg %q : tensor<300xi32>
    stitch.yield %e, %n : tensor<3x7xf32>, tensor<300xi32>
  }
  func.return %x, %y : tensor<3x7xf32>, tensor<300xi32>
}
""")
    assert launches(lowered) == 1


def test_reduction_of_broadcast_consumer_rows():
    """A reduction feeding an elementwise consumer whose rows are its trailing dim."""
    check("""
func.func @f(%x: tensor<4x9xf32>) -> tensor<9x4xf32> {
  %y = stitch.fusion (%x) : (tensor<4x9xf32>) -> tensor<9x4xf32> {
  ^bb0(%xa: tensor<4x9xf32>):
    %s = graph.reduce max %xa dims [1] : (tensor<4x9xf32>) -> tensor<4xf32>
    %t = graph.transpose %xa perm [1, 0] : (tensor<4x9xf32>) -> tensor<9x4xf32>
    %sb = graph.broadcast %s dims [1] : (tensor<4xf32>) -> tensor<9x4xf32>
    %d = graph.sub %t, %sb : tensor<9x4xf32>
    stitch.yield %d : tensor<9x4xf32>
  }
  func.return %y : tensor<9x4xf32>
}
""")


def _compile(text: str):
    return lower(parse_module(text, "t.mlir"), PipelineOptions(fusion="none"))


def test_inter_block_error():
    with pytest.raises(UserError, match="inter-block communication"):
        _compile("""
func.func @f(%x: tensor<4x9xf32>) -> tensor<4x9xf32> {
  %y = stitch.fusion (%x) : (tensor<4x9xf32>) -> tensor<4x9xf32> {
  ^bb0(%xa: tensor<4x9xf32>):
    %s = graph.reduce sum %xa dims [1] : (tensor<4x9xf32>) -> tensor<4xf32>
    %r = graph.slice %s start [1] limit [4] strides [1] : (tensor<4xf32>) -> tensor<3xf32>
    %c = graph.concat %r, %r dim 0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<6xf32>
    %k = graph.slice %c start [0] limit [4] strides [1] : (tensor<6xf32>) -> tensor<4xf32>
    %b = graph.broadcast %k dims [0] : (tensor<4xf32>) -> tensor<4x9xf32>
    %d = graph.sub %xa, %b : tensor<4x9xf32>
    stitch.yield %d : tensor<4x9xf32>
  }
  func.return %y : tensor<4x9xf32>
}
""")


def test_dot_with_consumer_error():
    """An elementwise consumer of a dot is its kernel's epilogue; a reduction of its
    rows only on the way to normalising them (a LayerNorm), not as the output."""
    with pytest.raises(UserError, match="graph.dot.*reducing its rows must end in a value of the dot's shape"):
        _compile("""
func.func @f(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  %y = stitch.fusion (%a) : (tensor<4x4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4x4xf32>):
    %d = graph.dot %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %e = graph.exp %d : tensor<4x4xf32>
    %r = graph.reduce sum %e dims [1] : (tensor<4x4xf32>) -> tensor<4xf32>
    stitch.yield %r : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
""")


def test_unsupported_type_error():
    with pytest.raises(UserError, match="'graph.tanh' op on f64 needs 'math.tanh', which the GPU code generator has "
                                        "in f32 only"):
        _compile("""
func.func @f(%a: tensor<4xf64>) -> tensor<4xf64> {
  %e = graph.tanh %a : tensor<4xf64>
  func.return %e : tensor<4xf64>
}
""")


def test_unknown_mode():
    from xdsl.context import Context

    from fsir.fusion.explore import FusionExplorePass

    m = parse_module("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  func.return %a : tensor<4xf32>\n}\n")
    with pytest.raises(UserError, match="mode=.* \\(expected stitch, xla or none\\)"):
        FusionExplorePass(mode="bogus").apply(Context(), m)


@pytest.mark.parametrize("mode", ["none", "xla", "stitch"])
def test_explorer_modes_run(mode):
    """Whatever the explorer fuses, stitch-codegen and schedule-to-gpu must run it."""
    lowered = check(GRAPH_LAYERNORM, fusion=mode, scale=4, ptxas=False)
    if mode == "stitch":
        assert launches(lowered) == 1


def test_unfused_layernorm_launches():
    """mode=none: one kernel per op (constants folded in as immediates)."""
    text = """
func.func @f(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %s = graph.reduce sum %x dims [1] : (tensor<4x32xf32>) -> tensor<4xf32>
  %b = graph.broadcast %s dims [0] : (tensor<4xf32>) -> tensor<4x32xf32>
  %k = graph.constant dense<2.0> : tensor<4x32xf32>
  %m = graph.mul %b, %k : tensor<4x32xf32>
  %d = graph.sub %x, %m : tensor<4x32xf32>
  func.return %d : tensor<4x32xf32>
}
"""
    lowered = check(text)
    assert launches(lowered) == 4
    _, stats = execute(lowered, [np.ones((4, 32), np.float32)])
    assert stats.launches == 4


def test_yield_input_and_twice():
    """A fusion may return its input (a copy) and the same value twice."""
    check("""
func.func @f(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %a, %b, %c = stitch.fusion (%x) : (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  ^bb0(%xa: tensor<3x5xf32>):
    %e = graph.exp %xa : tensor<3x5xf32>
    stitch.yield %xa, %e, %e : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
  }
  func.return %a, %b, %c : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}
""")


def test_empty_tensor():
    check("""
func.func @f(%x: tensor<0x5xf32>) -> tensor<0x5xf32> {
  %e = graph.exp %x : tensor<0x5xf32>
  func.return %e : tensor<0x5xf32>
}
""")


def test_reduce_with_gather_and_concat_producers():
    """Index-only producers (gather, concat) inline into a reduction's loop."""
    check("""
func.func @f(%t: tensor<10x40xf32>, %ids: tensor<6xi32>, %z: tensor<6x3xf32>) -> tensor<6xf32> {
  %y = stitch.fusion (%t, %ids, %z) : (tensor<10x40xf32>, tensor<6xi32>, tensor<6x3xf32>) -> tensor<6xf32> {
  ^bb0(%ta: tensor<10x40xf32>, %ia: tensor<6xi32>, %za: tensor<6x3xf32>):
    %g = graph.gather %ta, %ia : (tensor<10x40xf32>, tensor<6xi32>) -> tensor<6x40xf32>
    %c = graph.concat %g, %za dim 1 : (tensor<6x40xf32>, tensor<6x3xf32>) -> tensor<6x43xf32>
    %r = graph.reduce max %c dims [1] : (tensor<6x43xf32>) -> tensor<6xf32>
    stitch.yield %r : tensor<6xf32>
  }
  func.return %y : tensor<6xf32>
}
""", kinds=["normal", "ids", "normal"])


def test_softmax_long_columns():
    """A column softmax over 300 rows: interleaved slices per column, two sub-roots in
    shared slots, the root reading them."""
    lowered = check(SOFTMAX_FUSION.format(R=300, C=20, D=0, K=20, KD=1), scale=8)
    assert launches(lowered) == 1


def test_concat_of_reduction_rows():
    """A reduction result concatenated along a row dim: the output's rows outnumber the
    reduction's, so the concat cannot be stitched through registers (random seed 1082)."""
    with pytest.raises(UserError, match="inter-block communication"):
        _compile("""
func.func @f(%x: tensor<8x35x2xf32>, %a: tensor<35x7xf32>) -> tensor<35x9xf32> {
  %y = stitch.fusion (%x, %a) : (tensor<8x35x2xf32>, tensor<35x7xf32>) -> tensor<35x9xf32> {
  ^bb0(%xa: tensor<8x35x2xf32>, %aa: tensor<35x7xf32>):
    %m = graph.reduce max %xa dims [0] : (tensor<8x35x2xf32>) -> tensor<35x2xf32>
    %c = graph.concat %m, %aa dim 1 : (tensor<35x2xf32>, tensor<35x7xf32>) -> tensor<35x9xf32>
    stitch.yield %c : tensor<35x9xf32>
  }
  func.return %y : tensor<35x9xf32>
}
""")


def test_dynamic_size_one_broadcast_of_reduction():
    """A `?` reduction result broadcast to a static dim may be stretched from size 1 at
    run time: its rows cannot be matched with the reader's."""
    with pytest.raises(UserError, match="inter-block communication"):
        _compile("""
func.func @f(%x: tensor<?x8xf32>) -> tensor<4x8xf32> {
  %y = stitch.fusion (%x) : (tensor<?x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%xa: tensor<?x8xf32>):
    %s = graph.reduce sum %xa dims [1] : (tensor<?x8xf32>) -> tensor<?xf32>
    %b = graph.broadcast %s dims [0] : (tensor<?xf32>) -> tensor<4x8xf32>
    stitch.yield %b : tensor<4x8xf32>
  }
  func.return %y : tensor<4x8xf32>
}
""")
