"""ONNX Conv, ConvTranspose and BatchNormalization (fsir/frontend/onnx_nn.py): a
conv + BatchNormalization + ReLU + residual block compiles to one conv kernel (the
BatchNormalization folded into the weights at compile time, bias, residual and ReLU
stitched into the epilogue) and matches onnx's reference evaluator on the simulator;
what fsir does not support is refused with a located error."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import fsir
from fsir.errors import UserError
from fsir.frontend.onnx_import import import_onnx
from fsir.testing.conv import direct_conv_transpose


def _model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "block", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _resnet_block() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    c = 8
    inits = [numpy_helper.from_array(a.astype(np.float32), name) for name, a in (
        ("w", rng.standard_normal((c, c, 3, 3)) * 0.2), ("bias", rng.standard_normal(c)),
        ("scale", rng.uniform(0.5, 1.5, c)), ("shift", rng.standard_normal(c)),
        ("mean", rng.standard_normal(c) * 0.1), ("var", rng.uniform(0.5, 2.0, c)))]
    nodes = [helper.make_node("Conv", ["x", "w", "bias"], ["y"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
             helper.make_node("BatchNormalization", ["y", "scale", "shift", "mean", "var"], ["bn"], epsilon=1e-3),
             helper.make_node("Add", ["bn", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["out"])]
    shape = [2, c, 10, 10]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                  [helper.make_tensor_value_info("out", TensorProto.FLOAT, shape)], inits)


def test_conv_bn_relu_residual_is_one_kernel_and_matches_onnx():
    model = _resnet_block()
    exe = fsir.compile(model.SerializeToString(), fusion="stitch")
    assert [k.mapping for k in exe.kernels] == ["conv"]
    assert "graph.mul" not in str(exe.module)  # BatchNormalization's scale is in the weights
    x = np.random.default_rng(1).standard_normal((2, 8, 10, 10)).astype(np.float32)
    (got,) = exe.run([x], device="sim")
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_xla_and_none_modes_launch_more_kernels():
    model = _resnet_block().SerializeToString()
    counts = {mode: len(fsir.compile(model, fusion=mode).kernels) for mode in ("none", "xla", "stitch")}
    assert counts["stitch"] < counts["xla"] < counts["none"]


def _single(op_type: str, x_shape, w_shape, **attrs) -> onnx.ModelProto:
    node = helper.make_node(op_type, ["x", "w"], ["y"], **attrs)
    return _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
                           helper.make_tensor_value_info("w", TensorProto.FLOAT, w_shape)],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])


@pytest.mark.parametrize("x_shape, w_shape, attrs", [
    ([1, 4, 7, 6], [6, 2, 3, 3], dict(group=2, strides=[2, 1], auto_pad="SAME_LOWER")),
    ([1, 3, 9], [2, 3, 4], dict(dilations=[2], pads=[0, 3])),
])
def test_conv_against_onnx_reference(x_shape, w_shape, attrs):
    model = _single("Conv", x_shape, w_shape, **attrs)
    x, w = _inputs(x_shape, w_shape)
    (got,) = fsir.compile(model.SerializeToString(), fusion="stitch").run([x, w], device="sim")
    (want,) = ReferenceEvaluator(model).run(None, {"x": x, "w": w})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# (onnx's reference ConvTranspose fails on groups and output_shape, so the oracle is
# the definition: scatter, then crop by the begin pads the spec derives)
@pytest.mark.parametrize("x_shape, w_shape, attrs, begin, out", [
    ([1, 4, 3, 4], [4, 3, 3, 2], dict(group=2, strides=[2, 3], output_padding=[1, 0], pads=[1, 0, 0, 1]),
     [1, 0], [7, 10]),
    ([1, 2, 3, 3], [2, 3, 3, 3], dict(strides=[2, 2], output_shape=[6, 7], dilations=[1, 2]), [1, 1], [6, 7]),
    ([1, 2, 3], [2, 1, 3], dict(strides=[2], auto_pad="SAME_UPPER"), [0], [6]),
])
def test_conv_transpose_against_its_definition(x_shape, w_shape, attrs, begin, out):
    model = _single("ConvTranspose", x_shape, w_shape, **attrs)
    x, w = _inputs(x_shape, w_shape)
    (got,) = fsir.compile(model.SerializeToString(), fusion="stitch").run([x, w], device="sim")
    want = direct_conv_transpose(x, w, attrs["strides"], attrs.get("dilations", [1] * len(out)), begin, out,
                                 attrs.get("group", 1))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _inputs(x_shape, w_shape):
    rng = np.random.default_rng(0)
    return rng.standard_normal(x_shape).astype(np.float32), rng.standard_normal(w_shape).astype(np.float32)


@pytest.mark.parametrize("model, message", [
    (_single("Conv", [1, 3, 8, 8], [4, 3, 3, 3], auto_pad="SAME"), "auto_pad 'SAME' is not one of"),
    (_single("Conv", [1, 3, 8, 8], [4, 3, 3, 3], kernel_shape=[2, 2]), "kernel_shape [2, 2] does not match"),
    (_single("Conv", [1, 3, 8, 8], [4, 3, 3], kernel_shape=[3, 3]), "must have one rank >= 3"),
    (_single("Conv", [1, 4, 8, 8], [4, 3, 3, 3]), "the input has 4 channels but the weight expects 3"),
    (_model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], training_mode=1)],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 2, 3] if n == "x" else [3])
             for n in "xsbmv"], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]),
     "scale has shape [3], expected [2]"),
])
def test_refusals_are_located(model, message):
    with pytest.raises(UserError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")
                       .replace(")", r"\)")) as info:
        import_onnx(model.SerializeToString(), "m.onnx")
    assert info.value.loc is not None and info.value.loc.line == 1
