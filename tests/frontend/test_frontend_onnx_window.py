"""ONNX pooling, LRN, Pad, Resize and DepthToSpace/SpaceToDepth (fsir/frontend/onnx_window.py):
one model per op and attribute set, run on the reference interpreter and the simulator
and checked against onnxruntime; pads, scales and sizes are initializers here; located
errors for what the importer rejects."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from fsir.errors import UserError
from fsir.frontend.onnx_import import import_onnx
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.compare import compare
from fsir.runtime.executor import execute
from fsir.runtime.reference import run

rng = np.random.default_rng(0)


def model(op: str, x_shape, y_shape=None, inits: dict | None = None, extra_inputs=(), opset: int = 19,
          post: str | None = None, **attrs) -> onnx.ModelProto:
    """One `op` node on input x (and initializers `inits`, in `extra_inputs` order),
    optionally followed by a unary `post` op."""
    inits = inits or {}
    names = ["x", *extra_inputs]
    nodes = [helper.make_node(op, names, ["y" if post is None else "t"], **attrs)]
    if post is not None:
        nodes.append(helper.make_node(post, ["t"], ["y"]))
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def check(m: onnx.ModelProto, x_shape, kernels: int | None = None, at_most: int | None = None) -> None:
    """fsir (reference interpreter and simulator) against onnxruntime; `kernels`: how
    many kernels stitch fusion makes (or `at_most`)."""
    x = rng.standard_normal(x_shape).astype(np.float32)
    (want,) = ort.InferenceSession(m.SerializeToString()).run(None, {m.graph.input[0].name: x})
    data = m.SerializeToString()
    (ref,) = run(import_onnx(data, "m.onnx"), [x])
    np.testing.assert_allclose(ref, want, rtol=1e-4, atol=1e-5)
    lowered = lower(import_onnx(data, "m.onnx"), PipelineOptions(fusion="stitch"))
    (sim,), _ = execute(lowered, [x])
    c = compare(sim, want.astype(np.float32))
    assert c.ok, str(c)
    count = len([op for op in lowered.walk() if op.name == "gpu.func"])
    assert kernels is None or count == kernels
    assert at_most is None or count <= at_most


@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[2, 2], auto_pad="SAME_UPPER"),
    dict(kernel_shape=[2, 3], dilations=[2, 1], strides=[1, 2]),
], ids=["pads", "ceil", "same_upper", "dilations"])
def test_max_pool_then_relu_is_one_kernel(attrs):
    check(model("MaxPool", (2, 3, 11, 10), post="Relu", **attrs), (2, 3, 11, 10), kernels=1)


@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
    dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, pads=[1, 0, 1, 0]),
    dict(kernel_shape=[2, 2], auto_pad="SAME_LOWER"),
], ids=["exclude_pad", "include_pad", "ceil", "same_lower"])
def test_average_pool(attrs):
    check(model("AveragePool", (1, 4, 9, 9), **attrs), (1, 4, 9, 9), kernels=1)


def test_max_pool_indices_output():
    x_shape = (1, 2, 6, 6)
    g = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 8
    x = rng.standard_normal(x_shape).astype(np.float32)
    want = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})
    got = run(import_onnx(m.SerializeToString(), "m.onnx"), [x])
    for g_, w in zip(got, want):
        np.testing.assert_array_equal(g_, w)


def test_lp_pool_and_global_pools():
    check(model("LpPool", (1, 3, 8, 8), kernel_shape=[3, 3], p=3, strides=[2, 2]), (1, 3, 8, 8))
    check(model("GlobalAveragePool", (2, 16, 7, 7)), (2, 16, 7, 7), kernels=1)
    check(model("GlobalMaxPool", (2, 16, 5, 5)), (2, 16, 5, 5), kernels=1)


def test_global_average_pool_is_a_row_reduction():
    m = model("GlobalAveragePool", (2, 64, 7, 7))
    lowered = lower(import_onnx(m.SerializeToString(), "m.onnx"), PipelineOptions(fusion="stitch"),
                    until="stitch-codegen")
    kernels = [op for op in lowered.walk() if op.name == "schedule.kernel"]
    assert len(kernels) == 1 and "row<" in str(kernels[0])


def test_lrn():
    check(model("LRN", (2, 7, 4, 4), size=5, alpha=1e-3, beta=0.75, bias=2.0, opset=13), (2, 7, 4, 4), kernels=2)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad(mode):
    inits = {"pads": np.array([1, 2, 0, 3], np.int64), "value": np.array(0.5, np.float32),
             "axes": np.array([2, -1], np.int64)}
    extra = ["pads", "value", "axes"] if mode == "constant" else ["pads", "", "axes"]
    if mode != "constant":
        del inits["value"]
    check(model("Pad", (1, 2, 5, 6), inits=inits, extra_inputs=extra, mode=mode), (1, 2, 5, 6), kernels=1)


def test_pad_negative_is_a_slice():
    inits = {"pads": np.array([0, 0, -1, 2, 0, 0, 1, -2], np.int64)}
    check(model("Pad", (1, 2, 5, 6), inits=inits, extra_inputs=["pads"]), (1, 2, 5, 6))


@pytest.mark.parametrize("attrs,inputs", [
    (dict(mode="nearest"), {"scales": [1, 1, 2.0, 3.0]}),
    (dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
     {"scales": [1, 1, 0.5, 1.5]}),
    (dict(mode="linear"), {"scales": [1, 1, 2.0, 2.0]}),
    (dict(mode="linear", coordinate_transformation_mode="align_corners"), {"sizes": [1, 2, 7, 3]}),
    (dict(mode="linear", antialias=1), {"sizes": [1, 2, 3, 4]}),
    (dict(mode="cubic"), {"scales": [1, 1, 1.5, 0.75]}),
    (dict(mode="cubic", exclude_outside=1, cubic_coeff_a=-0.5), {"scales": [1, 1, 2.0, 2.0]}),
], ids=["nearest", "nearest_floor", "linear", "align_corners", "antialias", "cubic", "cubic_exclude"])
def test_resize(attrs, inputs):
    """Gathers and blends: one kernel, or two where the explorer materialises the first
    axis's result rather than recompute it for each of many taps."""
    inits = {"roi": np.zeros(0, np.float32)}
    names = ["roi"]
    if "scales" in inputs:
        inits["scales"] = np.array(inputs["scales"], np.float32)
        names.append("scales")
    else:
        inits["sizes"] = np.array(inputs["sizes"], np.int64)
        names += ["", "sizes"]
    taps = 2 if attrs["mode"] == "nearest" or (attrs["mode"] == "linear" and not attrs.get("antialias")) else 4
    check(model("Resize", (1, 2, 6, 8), inits=inits, extra_inputs=names, **attrs), (1, 2, 6, 8),
          at_most=1 if taps == 2 else 2)


def test_depth_to_space_and_back():
    for mode in ("DCR", "CRD"):
        check(model("DepthToSpace", (1, 8, 3, 4), blocksize=2, mode=mode), (1, 8, 3, 4))
    check(model("SpaceToDepth", (2, 3, 4, 6), blocksize=2), (2, 3, 4, 6))


@pytest.mark.parametrize("m,message", [
    (model("MaxPool", (1, 1, 4, 4)), "Required attribute 'kernel_shape' is missing"),
    (model("AveragePool", (1, 1, 4, 4), kernel_shape=[5, 5]), "the window (5 positions) is larger than the padded"),
    (model("Pad", (1, 1, 4, 4), inits={"pads": np.zeros(8, np.int64)}, extra_inputs=["pads"], mode="mirror"),
     "unknown mode 'mirror'"),
    (model("Resize", (1, 1, 4, 4), extra_inputs=["", "x"]), "scales of node"),
    (model("DepthToSpace", (1, 6, 4, 4), blocksize=2), "6 channels are not a multiple of blocksize² = 4"),
], ids=["no_kernel", "window_too_large", "pad_mode", "resize_scales", "depth_to_space"])
def test_errors_name_the_node(m, message):
    with pytest.raises(UserError) as info:
        import_onnx(m.SerializeToString(), "m.onnx")
    assert message in info.value.message
    assert info.value.loc is not None and (info.value.loc.line, info.value.loc.col) == (1, 1)


def test_pytorch_names_import():
    """PyTorch exports name values `0`, `1`, … and the graph `torch-jit-export`: values
    and kernels get valid MLIR and PTX names."""
    m = model("MaxPool", (1, 2, 6, 6), kernel_shape=[2, 2])
    m.graph.name = "torch-jit-export"
    m.graph.input[0].name = m.graph.node[0].input[0] = "0"
    check(m, (1, 2, 6, 6), kernels=1)


def test_old_opsets_take_attributes():
    # Pad-2 (pads and value attributes), Upsample-7 (scales attribute), Resize-10
    check(model("Pad", (1, 2, 4, 5), opset=10, mode="reflect", pads=[0, 0, 1, 2, 0, 0, 2, 1]), (1, 2, 4, 5))
    check(model("Pad", (1, 2, 4, 5), opset=10, pads=[0, 1, 1, 0, 0, 0, 1, 1], value=1.5), (1, 2, 4, 5))
    check(model("Upsample", (1, 2, 3, 4), opset=7, mode="nearest", scales=[1.0, 1.0, 2.0, 3.0]), (1, 2, 3, 4))
    inits = {"scales": np.array([1, 1, 2, 2], np.float32)}
    check(model("Resize", (1, 2, 3, 4), opset=10, inits=inits, extra_inputs=["scales"], mode="nearest"),
          (1, 2, 3, 4))


def test_explicit_pad_before_max_pool_joins_the_window():
    """An exported model's Pad(-inf) then MaxPool: canonicalization moves the padding
    into the window reduction, so no padded tensor is written."""
    g = helper.make_graph(
        [helper.make_node("Pad", ["x", "pads", "value"], ["p"]),
         helper.make_node("MaxPool", ["p"], ["y"], kernel_shape=[3, 3], strides=[2, 2])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads"),
                     numpy_helper.from_array(np.array(-np.inf, np.float32), "value")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 8
    check(m, (1, 3, 8, 8), kernels=1)
    lowered = lower(import_onnx(m.SerializeToString(), "m.onnx"), PipelineOptions(fusion="stitch"),
                    until="stitch-codegen")
    assert not any(op.name == "graph.pad" for op in lowered.walk())
