"""Horizontal GEMM fusion (`fsir/fusion/horizontal.py`): dots sharing their activation
become one dot over the concatenated weights; the rewrite keeps the reference's
results (within f32 summation order), leaves other dots alone, and the merged GEMM
(the concat inlined into its B tile loads) matches the reference on the simulator and
assembles with ptxas."""

from __future__ import annotations

import numpy as np

from fsir.dialects import graph
from fsir.dialects.schedule import KernelOp
from fsir.fusion.horizontal import merge_sibling_dots, sibling_dots
from fsir.ir import verify
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.reference import find_function, run
from fsir.testing.pipeline import check
from fsir.testing.random_graphs import random_inputs

QKV = """
func.func @qkv(%x: tensor<2x20x40xf32>, %y: tensor<2x20x40xf32>, %wq: tensor<40x32xf32>,
    %wk: tensor<40x32xf32>, %wv: tensor<40x48xf32>, %w5: tensor<50x8xf32>)
    -> (tensor<2x20x32xf32>, tensor<2x20x32xf32>, tensor<2x20x48xf32>, tensor<2x20x32xf32>, tensor<40x8xf32>) {
  %q = graph.dot %x, %wq : (tensor<2x20x40xf32>, tensor<40x32xf32>) -> tensor<2x20x32xf32>
  %k = graph.dot %x, %wk : (tensor<2x20x40xf32>, tensor<40x32xf32>) -> tensor<2x20x32xf32>
  %kt = graph.tanh %k : tensor<2x20x32xf32>
  %v = graph.dot %x, %wv : (tensor<2x20x40xf32>, tensor<40x48xf32>) -> tensor<2x20x48xf32>
  %z = graph.dot %y, %wq : (tensor<2x20x40xf32>, tensor<40x32xf32>) -> tensor<2x20x32xf32>
  %xs = graph.slice %x start [0, 0, 0] limit [1, 20, 40] strides [1, 1, 1] : (tensor<2x20x40xf32>) -> tensor<1x20x40xf32>
  %x2 = graph.reshape %xs : (tensor<1x20x40xf32>) -> tensor<20x40xf32>
  %t = graph.transpose %x2 perm [1, 0] : (tensor<20x40xf32>) -> tensor<40x20xf32>
  %wide = graph.concat %t, %t, %t dim 1 : (tensor<40x20xf32>, tensor<40x20xf32>, tensor<40x20xf32>) -> tensor<40x60xf32>
  %w6 = graph.slice %wide start [0, 0] limit [40, 50] strides [1, 1] : (tensor<40x60xf32>) -> tensor<40x50xf32>
  %late = graph.dot %w6, %w5 : (tensor<40x50xf32>, tensor<50x8xf32>) -> tensor<40x8xf32>
  func.return %q, %kt, %v, %z, %late : tensor<2x20x32xf32>, tensor<2x20x32xf32>, tensor<2x20x48xf32>, tensor<2x20x32xf32>, tensor<40x8xf32>
}
"""


def test_dots_sharing_their_lhs_become_one_over_the_concatenated_weights():
    module = parse_module(QKV)
    block = find_function(module).body.block
    (group,) = sibling_dots(block)  # %z has another lhs, %late another lhs and K
    assert [d.result.name_hint for d in group] == ["q", "k", "v"]
    inputs = random_inputs(module, np.random.default_rng(0))
    want = run(module, inputs)
    assert merge_sibling_dots(block) == 2
    verify(module)
    dots = [op for op in block.ops if isinstance(op, graph.DotOp)]
    assert [graph.shape_of(d.result.type) for d in dots] == [(2, 20, 112), (2, 20, 32), (40, 8)]
    (concat,) = [op for op in block.ops if isinstance(op, graph.ConcatOp) and op.results[0].uses
                 and isinstance(next(iter(op.results[0].uses)).operation, graph.DotOp)]
    assert graph.shape_of(concat.results[0].type) == (40, 112)
    got = run(module, inputs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    assert sibling_dots(block) == []


def test_the_merged_gemm_on_the_simulator():
    """Stitch mode plans the graph both ways; for these small projections the merged
    GEMM wins (fewer launches): one GEMM kernel computes q, k and v."""
    lowered = check(QKV, fusion="stitch")
    module = lower(parse_module(QKV), PipelineOptions(fusion="stitch"), until="stitch-codegen")
    kernels = [k for k in module.walk() if isinstance(k, KernelOp)]
    products = [graph.shape_of(op.result.type) for k in kernels for op in k.walk() if isinstance(op, graph.DotOp)]
    assert sorted(products) == [(2, 20, 32), (2, 20, 112), (40, 8)]
    assert len([op for op in lowered.walk() if op.name == "gpu.launch_func"]) == len(kernels)
