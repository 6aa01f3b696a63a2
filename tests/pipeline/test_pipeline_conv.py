"""graph.conv as an implicit GEMM (the `conv` mapping) on the simulator against the numpy
reference, PTX assembled by ptxas: strides, padding (incl. asymmetric and negative),
dilation, input dilation (transposed convolutions), groups and depthwise, 1-d and 3-d,
odd sizes, every GEMM configuration, and a fused epilogue."""

from __future__ import annotations

import pytest
from xdsl.ir import Block

from fsir.codegen.mappings.gemm import CANDIDATES
from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.testing.pipeline import check


def _t(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def conv_ir(xs, ws, strides, low, high, dilation=None, lhs=None, groups=1) -> str:
    """A function of one graph.conv; its result shape from the op's own shape rule."""
    spatial = len(xs) - 2
    dilation, lhs = dilation or [1] * spatial, lhs or [1] * spatial
    block = Block(arg_types=[graph.tensor(graph.f32, xs), graph.tensor(graph.f32, ws)])
    op = graph.ConvOp.build_conv(block.args[0], block.args[1], graph.tensor(graph.f32, [1] * len(xs)), strides,
                                 low, high, dilation, lhs, groups)
    ys = shape_of(op.infer_type())
    op.drop_all_references()
    window = (f"strides {list(strides)} pad_low {list(low)} pad_high {list(high)} dilation {list(dilation)} "
              f"lhs_dilation {list(lhs)} groups {groups}")
    return f"""func.func @f(%x: {_t(xs)}, %w: {_t(ws)}) -> {_t(ys)} {{
  %y = graph.conv %x, %w {window} : ({_t(xs)}, {_t(ws)}) -> {_t(ys)}
  func.return %y : {_t(ys)}
}}"""


CASES = {
    "3x3_same": ((2, 3, 7, 6), (5, 3, 3, 3), (1, 1), (1, 1), (1, 1)),
    "strided_asymmetric": ((1, 4, 9, 8), (6, 4, 3, 2), (2, 3), (0, 1), (2, 0)),
    "dilated_grouped": ((1, 4, 9, 8), (6, 2, 3, 2), (1, 1), (2, 1), (2, 1), (2, 1), None, 2),
    "depthwise": ((2, 8, 6, 5), (8, 1, 3, 3), (1, 1), (1, 1), (1, 1), None, None, 8),
    "1d": ((2, 3, 11), (5, 3, 4), (3,), (2,), (1,), (2,)),
    "3d": ((1, 2, 4, 3, 5), (3, 2, 2, 2, 3), (1, 2, 1), (1, 0, 1), (0, 1, 1), (1, 1, 2)),
    "transposed": ((1, 2, 4, 3), (3, 2, 3, 3), (1, 1), (2, 2), (2, 1), None, (2, 3)),
    "negative_pads": ((1, 2, 6, 6), (2, 2, 3, 3), (1, 1), (-1, 0), (0, -2)),
    "1x1": ((3, 17, 5, 5), (33, 17, 1, 1), (1, 1), (0, 0), (0, 0)),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_shapes(case):
    check(conv_ir(*CASES[case]), scale=4)


@pytest.mark.parametrize("config", [c.text() for c in CANDIDATES] + ["8x8x4/1x1", "24x20x6/3x2"])
def test_every_gemm_configuration(config):
    check(conv_ir((2, 6, 9, 7), (10, 3, 3, 3), (2, 1), (1, 1), (1, 0), (1, 2), None, 2), scale=4,
          gemm=config.replace("/", "_"))
