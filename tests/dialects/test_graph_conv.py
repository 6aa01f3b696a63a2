"""graph.conv: its syntax, its shape rule's errors, and its numpy reference against a
direct sum over every output element's window (small sizes: the direct sum loops in
Python)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.errors import UserError
from fsir.interpreters import graph_value
from fsir.parse import parse_module
from fsir.testing.conv import direct_conv


def conv_op(xs, ws, strides, low, high, dilation, lhs_dilation, groups):
    mod = parse_module(
        f"func.func @f(%x: tensor<{'x'.join(map(str, xs))}xf32>, %w: tensor<{'x'.join(map(str, ws))}xf32>) {{\n"
        "  func.return\n}")
    f = next(iter(mod.ops))
    x, w = f.body.block.args
    probe = graph.ConvOp.build_conv(x, w, graph.tensor(graph.f32, [1] * len(xs)), strides, low, high, dilation,
                                    lhs_dilation, groups)
    return graph.ConvOp.build_conv(x, w, probe.infer_type(), strides, low, high, dilation, lhs_dilation, groups)


CASES = [
    # (x shape, w shape, strides, low, high, dilation, lhs_dilation, groups)
    ((2, 3, 7, 6), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), (1, 1), 1),
    ((1, 4, 9, 8), (6, 2, 3, 2), (2, 3), (0, 1), (2, 0), (2, 1), (1, 1), 2),
    ((1, 4, 5, 5), (4, 1, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), (1, 1), 4),  # depthwise
    ((2, 3, 11), (5, 3, 4), (3,), (2,), (1,), (2,), (1,), 1),  # 1-d
    ((1, 2, 4, 3, 5), (3, 2, 2, 2, 3), (1, 2, 1), (1, 0, 1), (0, 1, 1), (1, 1, 2), (1, 1, 1), 1),  # 3-d
    ((1, 2, 4, 3), (3, 2, 3, 3), (1, 1), (2, 2), (2, 1), (1, 1), (2, 3), 1),  # transposed (lhs dilation)
    ((1, 2, 6, 6), (2, 2, 3, 3), (1, 1), (-1, 0), (0, -2), (1, 1), (1, 1), 1),  # negative pads crop
]


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_reference_is_the_windowed_sum(case):
    xs, ws, *window = case
    op = conv_op(xs, ws, *window)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    want = direct_conv(x, w, *window)
    assert shape_of(op.result.type) == want.shape
    got = graph_value(op, [x, w])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("xs, ws, window, message", [
    ((1, 3, 8), (4, 3), ((1,), (0,), (0,), (1,), (1,), 1), "must have the input's rank"),
    ((1, 3, 8, 8), (4, 3, 3, 3), ((1,), (0,), (0,), (1,), (1,), 1), "strides has 1 entries"),
    ((1, 3, 8, 8), (4, 3, 3, 3), ((0, 1), (0, 0), (0, 0), (1, 1), (1, 1), 1), "strides [0, 1] must be positive"),
    ((1, 4, 8, 8), (6, 2, 3, 3), ((1, 1), (0, 0), (0, 0), (1, 1), (1, 1), 4), "do not split into 4 groups"),
    ((1, 3, 8, 8), (4, 2, 3, 3), ((1, 1), (0, 0), (0, 0), (1, 1), (1, 1), 1), "the input has 3 channels"),
    ((1, 3, 2, 8), (4, 3, 3, 3), ((1, 1), (0, 0), (0, 0), (2, 1), (1, 1), 1), "is larger than the padded input"),
    ((3, 8, 8), (4, 3, 3, 3), ((1, 1), (0, 0), (0, 0), (1, 1), (1, 1), 1), "must have the input's rank"),
])
def test_shape_rule_errors(xs, ws, window, message):
    with pytest.raises(VerifyException, match=message.replace("[", r"\[").replace("]", r"\]")):
        conv_op(xs, ws, *window)


IR = """func.func @f(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32> {
  %y = graph.conv %x, %w strides [2, 2] pad_low [1, 1] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 1 : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32>
  func.return %y : tensor<2x4x4x4xf32>
}"""  # noqa: E501


def test_syntax_round_trips():
    mod = parse_module(IR)
    assert str(mod).count("graph.conv %x, %w strides [2, 2] pad_low [1, 1] pad_high [0, 0]") == 1
    assert str(parse_module(str(mod))) == str(mod)


def test_wrong_result_shape_is_located():
    with pytest.raises(UserError, match="result shape 2x4x4x4 does not match the expected 2x4x5x5"):
        from fsir.ir import verify
        verify(parse_module(IR.replace("pad_high [0, 0]", "pad_high [2, 2]")))
