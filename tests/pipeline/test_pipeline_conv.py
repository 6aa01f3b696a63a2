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
from fsir.testing.pipeline import schedule_kernels as kernels_of


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


EPILOGUE = """
func.func @f(%x: tensor<2x8x9x9xf32>, %w: tensor<12x8x3x3xf32>, %b: tensor<12xf32>, %r: tensor<2x12x5x5xf32>)
    -> tensor<2x12x5x5xf32> {
  %y = graph.conv %x, %w strides [2, 2] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<2x8x9x9xf32>, tensor<12x8x3x3xf32>) -> tensor<2x12x5x5xf32>
  %bb = graph.broadcast %b dims [1] : (tensor<12xf32>) -> tensor<2x12x5x5xf32>
  %z = graph.add %y, %bb : tensor<2x12x5x5xf32>
  %s = graph.add %z, %r : tensor<2x12x5x5xf32>
  %c0 = graph.constant dense<0.0> : tensor<2x12x5x5xf32>
  %c6 = graph.constant dense<6.0> : tensor<2x12x5x5xf32>
  %m = graph.max %s, %c0 : tensor<2x12x5x5xf32>
  %o = graph.min %m, %c6 : tensor<2x12x5x5xf32>
  func.return %o : tensor<2x12x5x5xf32>
}
"""  # noqa: E501


def test_fused_epilogue_is_one_kernel_and_matches():
    """Bias (per-channel broadcast), residual add and a clip to [0, 6] run on the
    accumulators of the conv kernel: one kernel, the result written once."""
    lowered = check(EPILOGUE, fusion="stitch", scale=4)
    assert [k.params.MAPPING for k in kernels_of(EPILOGUE)] == ["conv"]
    assert len(_launches(lowered)) == 1


def test_xla_mode_keeps_the_conv_alone():
    lowered = check(EPILOGUE, fusion="xla", scale=4)
    assert len(_launches(lowered)) == 2


def test_a_conv_result_read_twice_stays_an_output():
    """The conv's result also leaves the function: the epilogue cannot absorb it (a
    conv kernel has one output), so it is written and the add reads it back."""
    text = EPILOGUE.replace("func.return %o : tensor<2x12x5x5xf32>", "func.return %o, %y : tensor<2x12x5x5xf32>, "
                            "tensor<2x12x5x5xf32>").replace("-> tensor<2x12x5x5xf32> {",
                                                            "-> (tensor<2x12x5x5xf32>, tensor<2x12x5x5xf32>) {")
    lowered = check(text, fusion="stitch", scale=4)
    assert len(_launches(lowered)) == 2


def _launches(lowered):
    return [op for op in lowered.walk() if op.name == "gpu.launch_func"]


def test_dynamic_batch():
    check("""
func.func @f(%x: tensor<?x3x7x6xf32>, %w: tensor<5x3x3x3xf32>) -> tensor<?x5x4x3xf32> {
  %y = graph.conv %x, %w strides [2, 2] pad_low [1, 1] pad_high [1, 0] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<?x3x7x6xf32>, tensor<5x3x3x3xf32>) -> tensor<?x5x4x3xf32>
  func.return %y : tensor<?x5x4x3xf32>
}""", shapes=[(3, 3, 7, 6), (5, 3, 3, 3)], scale=4)  # noqa: E501


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_half_types(t):
    check(conv_ir((2, 3, 7, 6), (5, 3, 3, 3), (1, 1), (1, 1), (1, 1)).replace("f32", t), scale=4)
