"""ONNX LayerNormalization in half precision (fsir/frontend/onnx_import.py), on the
simulator against onnxruntime: with stash_type 1 the statistics, the scale and the bias
are computed in f32 and the result is cast to X's type once, as onnxruntime does; the
f16 scale and bias the TorchScript exporter leaves on an X it promoted to f32 are taken
in X's type (onnxruntime refuses that graph, so it runs with the casts written out)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import fsir
from fsir.frontend.onnx_import import import_onnx

H = 64
SHAPE = [2, 16, H]


def _model(x_type: int, with_casts: bool = False) -> onnx.ModelProto:
    """x (f16) → [Cast to x_type] → LayerNormalization with an f16 scale and bias."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.uniform(0.5, 1.5, H).astype(np.float16), "g"),
             numpy_helper.from_array((rng.standard_normal(H) * 0.3).astype(np.float16), "b")]
    nodes, x, g, b = [], "x", "g", "b"
    if x_type != TensorProto.FLOAT16:
        nodes.append(helper.make_node("Cast", ["x"], ["xc"], to=x_type))
        x = "xc"
    if with_casts:
        nodes += [helper.make_node("Cast", ["g"], ["gc"], to=x_type), helper.make_node("Cast", ["b"], ["bc"], to=x_type)]
        g, b = "gc", "bc"
    nodes.append(helper.make_node("LayerNormalization", [x, g, b], ["y"], axis=-1, epsilon=1e-5))
    graph = helper.make_graph(nodes, "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, SHAPE)],
                              [helper.make_tensor_value_info("y", x_type, SHAPE)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _input() -> np.ndarray:
    # a large mean and a small spread: the variance is lost if it is summed in f16
    rng = np.random.default_rng(1)
    return (40.0 + rng.standard_normal(SHAPE) * 0.5).astype(np.float16)


def _onnxruntime(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


@pytest.mark.parametrize("fusion", ["stitch", "none"])
def test_f16_layernorm_matches_onnxruntime_to_an_f16_ulp(fusion):
    model, x = _model(TensorProto.FLOAT16), _input()
    want = _onnxruntime(model, x)
    (got,) = fsir.compile(model.SerializeToString(), fusion=fusion).run([x], device="sim")
    assert got.dtype == np.float16
    # onnxruntime rounds once, after the bias: so does fsir, within an f16 ulp
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2**-10, atol=2**-12)


def test_f16_layernorm_computes_in_f32_and_casts_its_result_once():
    text = str(import_onnx(_model(TensorProto.FLOAT16).SerializeToString()))
    lines = [line for line in text.splitlines() if "= graph." in line and "graph.constant" not in line]
    half = [line.split("=", 1)[1].split()[0] for line in lines if line.rstrip().endswith("f16>")]
    assert half == ["graph.convert"], half  # the result only: scale and bias apply in f32
    assert "graph.convert" in lines[-1]


def test_f16_scale_on_an_f32_input_as_the_torchscript_exporter_writes_it():
    x = _input()
    mixed = _model(TensorProto.FLOAT)
    with pytest.raises(Exception, match="bound to different types"):  # not valid ONNX: onnxruntime refuses it
        _onnxruntime(mixed, x)
    want = _onnxruntime(_model(TensorProto.FLOAT, with_casts=True), x)
    (got,) = fsir.compile(mixed.SerializeToString(), fusion="stitch").run([x], device="sim")
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
