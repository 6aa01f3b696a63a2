"""The ONNX importer: PyTorch-exported examples and one model per supported op, each
checked against onnxruntime; external weights; errors naming the node and op_type."""

import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort  # noqa: E402 - the test extra installs it
import pytest
from onnx import TensorProto, helper, numpy_helper

from fsir import registry
from fsir.dialects import graph
from fsir.errors import UserError
from fsir.frontend.onnx_import import import_onnx
from fsir.runtime.reference import run
from fsir.testing import paths

EXAMPLES = paths.EXAMPLES / "onnx"
ONNX_FILES = sorted(EXAMPLES.glob("*.onnx"))


def random_feeds(session, rng):
    feeds = {}
    for i in session.get_inputs():
        if "int64" in i.type:
            high = 2 if "mask" in i.name else 100
            feeds[i.name] = rng.integers(0, high, i.shape).astype(np.int64)
        elif i.name == "mask":  # BERT's additive mask
            feeds[i.name] = np.where(rng.random(i.shape) < 0.2, -10000.0, 0.0).astype(np.float32)
        else:
            feeds[i.name] = rng.standard_normal(i.shape).astype(np.float32)
    return feeds


@pytest.mark.parametrize("path", ONNX_FILES, ids=[p.name for p in ONNX_FILES])
def test_example_matches_onnxruntime(path: Path):
    module = import_onnx(path.read_bytes(), str(path))
    session = ort.InferenceSession(str(path))
    feeds = random_feeds(session, np.random.default_rng(0))
    want = session.run(None, feeds)
    got = run(module, list(feeds.values()))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5)


def test_composites_are_expanded_into_primitives():
    text = str(import_onnx((EXAMPLES / "bert_tiny.onnx").read_bytes(), "bert_tiny.onnx"))
    assert text.count("graph.reduce sum") >= 10  # LayerNorm means/variances, softmax sums
    assert "graph.reduce max" in text and "graph.rsqrt" in text and "graph.erf" in text
    assert "graph.gather" in text


def test_registered_as_binary_frontend():
    assert registry.FRONTENDS["onnx"]() is import_onnx
    assert "onnx" in registry.BINARY_FRONTENDS


# -- one op at a time, against onnxruntime -------------------------------------------

rng = np.random.default_rng(1)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def make_model(nodes, inputs: dict, outputs: list[str], inits: dict | None = None, opset: int = 18):
    def info(name, array):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)

    g = helper.make_graph(
        nodes, "test", [info(n, a) for n, a in inputs.items()],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [numpy_helper.from_array(a, n) for n, a in (inits or {}).items()],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def check(nodes, inputs, outputs, inits=None, opset=18, rtol=1e-5, atol=1e-6):
    model = make_model(nodes, inputs, outputs, inits, opset)
    data = model.SerializeToString()
    want = ort.InferenceSession(data).run(None, inputs)
    got = run(import_onnx(data, "test.onnx"), list(inputs.values()))
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


@pytest.mark.parametrize("op", ["Sqrt", "Exp", "Log", "Tanh", "Erf", "Relu", "Sigmoid", "Neg", "Abs",
                                "Reciprocal", "Identity", "Floor"])
def test_unary(op):
    x = np.abs(f32(3, 5)) + 0.1 if op in ("Sqrt", "Log") else f32(3, 5)
    check([node(op, ["x"], ["y"])], {"x": x}, ["y"])


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min"])
def test_binary_with_numpy_broadcasting(op):
    check([node(op, ["a", "b"], ["y"])], {"a": f32(2, 1, 5), "b": f32(3, 1)}, ["y"])


@pytest.mark.parametrize("exponent", [2.0, 3.0, 0.5])
def test_pow(exponent):
    check([node("Pow", ["x", "e"], ["y"])], {"x": np.abs(f32(3, 4)) + 0.1}, ["y"],
          {"e": np.array(exponent, np.float32)})


@pytest.mark.parametrize("op", ["Equal", "Less", "Greater"])
def test_comparisons_where_and_not(op):
    a = np.round(f32(3, 4))
    nodes = [node(op, ["a", "b"], ["c"]), node("Not", ["c"], ["n"]), node("And", ["c", "m"], ["k"]),
             node("Where", ["k", "a", "b"], ["y"])]
    check(nodes, {"a": a, "b": np.round(f32(4)), "m": rng.random((3, 1)) < 0.5}, ["y", "n"])


def test_cast_and_constants():
    value = helper.make_tensor("v", TensorProto.INT64, [1], [7])
    nodes = [node("Cast", ["x"], ["i"], to=TensorProto.INT32),
             node("Constant", [], ["c"], value=numpy_helper.from_array(np.arange(4, dtype=np.float32))),
             node("Constant", [], ["s"], value_ints=[2, 4]),
             node("ConstantOfShape", ["s"], ["z"], value=value),
             node("Add", ["x", "c"], ["y"])]
    check(nodes, {"x": f32(2, 4) * 10}, ["i", "z", "y"])


def test_matmul_and_gemm():
    check([node("MatMul", ["a", "b"], ["y"])], {"a": f32(2, 3, 4, 5), "b": f32(3, 5, 6)}, ["y"], atol=1e-5)
    check([node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1, alpha=0.5, beta=2.0)],
          {"a": f32(5, 3), "b": f32(4, 5)}, ["y"], {"c": f32(4)}, atol=1e-5)


@pytest.mark.parametrize("equation,sa,sc", [("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5)),
                                             ("ij,jk->ki", (3, 4), (4, 5)),
                                             ("bij,bkj->bik", (2, 3, 4), (2, 5, 4)),
                                             ("ij,kl->ikl", (3, 4), (5, 6)),
                                             ("ij,jk->k", (3, 4), (4, 5))])
def test_einsum(equation, sa, sc):
    check([node("Einsum", ["a", "c"], ["y"], equation=equation)], {"a": f32(*sa), "c": f32(*sc)}, ["y"],
          atol=1e-5)


def test_layernorm_softmax_gelu():
    nodes = [node("LayerNormalization", ["x", "g", "b"], ["ln"], axis=-1, epsilon=1e-6),
             node("LayerNormalization", ["x", "g2"], ["ln2"], axis=1),
             node("Softmax", ["x"], ["sm"], axis=1),
             node("Gelu", ["x"], ["ge"]), node("Gelu", ["x"], ["gt"], approximate="tanh")]
    check(nodes, {"x": f32(2, 3, 8)}, ["ln", "ln2", "sm", "ge", "gt"],
          {"g": f32(8), "b": f32(8), "g2": f32(3, 8)}, opset=20, atol=1e-5)


def test_softmax_before_opset_13_flattens_from_axis():
    check([node("Softmax", ["x"], ["y"], axis=1)], {"x": f32(2, 3, 4)}, ["y"], opset=11)


@pytest.mark.parametrize("keepdims", [0, 1])
def test_reductions(keepdims):
    axes = np.array([0, -1], np.int64)
    nodes = [node("ReduceSum", ["x", "axes"], ["s"], keepdims=keepdims),
             node("ReduceMean", ["x", "axes"], ["m"], keepdims=keepdims),
             node("ReduceMax", ["x"], ["mx"], keepdims=keepdims)]
    check(nodes, {"x": f32(2, 3, 4)}, ["s", "m", "mx"], {"axes": axes}, atol=1e-5)


def test_reductions_with_axes_attribute_before_opset_18():
    check([node("ReduceMean", ["x"], ["m"], axes=[1])], {"x": f32(2, 3, 4)}, ["m"], opset=13)


def test_more_elementwise():
    x = f32(3, 4) * 3
    nodes = [node("Clip", ["x", "lo", "hi"], ["c"]), node("LeakyRelu", ["x"], ["l"], alpha=0.1),
             node("Softplus", ["x"], ["sp"]), node("HardSigmoid", ["x"], ["hs"]), node("Sign", ["x"], ["sg"]),
             node("Sum", ["x", "x", "v"], ["su"]), node("Mean", ["x", "v"], ["me"]),
             node("Max", ["x", "v", "lo"], ["mx"]), node("Tile", ["x", "reps"], ["t"]),
             node("ReduceSumSquare", ["x", "ax"], ["ss"]), node("ReduceL2", ["x", "ax"], ["l2"], keepdims=0)]
    check(nodes, {"x": x}, ["c", "l", "sp", "hs", "sg", "su", "me", "mx", "t", "ss", "l2"],
          {"lo": np.array(-1, np.float32), "hi": np.array(1.5, np.float32), "v": f32(4),
           "reps": np.array([2, 3], np.int64), "ax": np.array([1], np.int64)}, atol=1e-5)


@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_sign_conventions(fmod):
    a = np.array([7, -7, 7, -7, 0, 6], np.int64)
    c = np.array([3, 3, -3, -3, 5, 3], np.int64)
    check([node("Mod", ["a", "c"], ["y"], fmod=fmod)], {"a": a, "c": c}, ["y"])


def test_argmax_argmin_trilu():
    x = np.round(f32(3, 5) * 2) / 2  # ties: the first index wins
    nodes = [node("ArgMax", ["x"], ["a"], axis=1), node("ArgMin", ["x"], ["b"], axis=0, keepdims=0),
             node("Trilu", ["x"], ["u"]), node("Trilu", ["x", "k"], ["l"], upper=0)]
    check(nodes, {"x": x}, ["a", "b", "u", "l"], {"k": np.array(-1, np.int64)})


def test_reshape_transpose_unsqueeze_squeeze_expand():
    nodes = [node("Reshape", ["x", "shape"], ["r"]),
             node("Transpose", ["r"], ["t"], perm=[2, 0, 1]),
             node("Unsqueeze", ["t", "ax"], ["u"]),
             node("Squeeze", ["u", "ax"], ["q"]),
             node("Expand", ["b", "eshape"], ["e"])]
    check(nodes, {"x": f32(2, 3, 4), "b": f32(3, 1)}, ["q", "u", "e"],
          {"shape": np.array([0, -1, 2], np.int64), "ax": np.array([1, -1], np.int64),
           "eshape": np.array([2, 1, 5], np.int64)})


def test_split_concat_slice():
    nodes = [node("Split", ["x", "sizes"], ["a", "b"], axis=1),
             node("Split", ["x"], ["c", "d", "e"], axis=2, num_outputs=3),
             node("Concat", ["b", "a"], ["cat"], axis=1),
             node("Slice", ["x", "st", "en", "axes", "steps"], ["s"]),
             node("Slice", ["x", "st2", "en2", "axes2", "steps2"], ["rev"])]
    check(nodes, {"x": f32(2, 5, 7)}, ["cat", "c", "e", "s", "rev"],
          {"sizes": np.array([2, 3], np.int64),
           "st": np.array([1, -6], np.int64), "en": np.array([100, -1], np.int64),
           "axes": np.array([1, 2], np.int64), "steps": np.array([2, 2], np.int64),
           "st2": np.array([-1], np.int64), "en2": np.array([-100], np.int64),
           "axes2": np.array([2], np.int64), "steps2": np.array([-2], np.int64)})


def test_gather_with_negative_ids_on_any_axis():
    nodes = [node("Gather", ["t", "ids"], ["g0"], axis=0), node("Gather", ["x", "ids"], ["g1"], axis=1)]
    ids = np.array([[0, -1], [2, 1]], np.int64)
    check(nodes, {"t": f32(5, 4), "x": f32(2, 3, 4), "ids": ids}, ["g0", "g1"])


def test_gather_nd():
    ids = np.array([[[0, 1]], [[1, 3]]], np.int64)
    check([node("GatherND", ["x", "ids"], ["y"])], {"x": f32(2, 4, 3)}, ["y"], {"ids": ids})
    check([node("GatherND", ["x", "ids"], ["y"])], {"x": f32(2, 4, 3), "ids": ids}, ["y"])


def test_shape_chains_fold_to_constants():
    """x.view(x.size(0), -1) as the TorchScript exporter writes it."""
    nodes = [node("Shape", ["x"], ["s"]),
             node("Gather", ["s", "zero"], ["n"], axis=0),
             node("Unsqueeze", ["n", "ax0"], ["n1"]),
             node("Concat", ["n1", "minus1"], ["shape"], axis=0),
             node("Reshape", ["x", "shape"], ["y"]),
             node("Shape", ["x"], ["tail"], start=-2),
             node("Cast", ["tail"], ["tailf"], to=TensorProto.FLOAT),
             node("Mul", ["y", "k"], ["z"])]
    inits = {"zero": np.array(0, np.int64), "ax0": np.array([0], np.int64),
             "minus1": np.array([-1], np.int64), "k": np.array(2, np.float32)}
    check(nodes, {"x": f32(2, 3, 4)}, ["z", "tailf"], inits)
    module = import_onnx(make_model(nodes, {"x": f32(2, 3, 4)}, ["z"], inits).SerializeToString(), "t.onnx")
    ops = {op.name for op in module.walk()}
    assert "graph.gather" not in ops and "graph.concat" not in ops  # folded away


def test_external_data(tmp_path):
    w = f32(64, 64)
    model = make_model([node("MatMul", ["x", "w"], ["y"])], {"x": f32(2, 64)}, ["y"], {"w": w})
    path = tmp_path / "ext.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, location="ext.weights", size_threshold=0)
    assert (tmp_path / "ext.weights").exists()
    module = import_onnx(path.read_bytes(), str(path))
    x = f32(2, 64)
    (got,) = run(module, [x])
    np.testing.assert_allclose(got, x @ w, rtol=1e-5, atol=1e-5)


def test_arguments_keep_onnx_names_and_types():
    model = make_model([node("Cast", ["input.ids"], ["y"], to=TensorProto.FLOAT)],
                       {"input.ids": np.zeros((2, 3), np.int64)}, ["y"])
    text = str(import_onnx(model.SerializeToString(), "m.onnx"))
    assert "%input.ids: tensor<2x3xi64>" in text
    assert graph.numpy_dtype(graph.IntegerType(64)) == np.int64


# -- errors ---------------------------------------------------------------------------


def error_of(model) -> UserError:
    with pytest.raises(UserError) as info:
        import_onnx(model.SerializeToString(), "bad.onnx")
    return info.value


def test_unsupported_op_names_node_and_op_type():
    nodes = [node("Relu", ["x"], ["r"], name="act"), node("Unique", ["r"], ["y"], name="uniq1")]
    err = error_of(make_model(nodes, {"x": f32(1, 1, 4, 4)}, ["y"]))
    assert "node 'uniq1' (Unique)" in err.message and "op_type 'Unique' is not supported" in err.message
    assert (err.loc.file, err.loc.line) == ("bad.onnx", 2)  # the node's index


def test_other_rejections():
    sym = make_model([node("Relu", ["x"], ["y"])], {}, ["y"])
    sym.graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4]))
    # a symbolic dim imports as `?` (more in test_onnx_dynamic.py)
    assert "%x: tensor<?x4xf32>" in str(import_onnx(sym.SerializeToString(), "sym.onnx"))
    ms = make_model([helper.make_node("FusedGemm", ["x"], ["y"], domain="com.microsoft")],
                    {"x": f32(2, 2)}, ["y"])
    assert "domain 'com.microsoft'" in error_of(ms).message
    dyn = make_model([node("Reshape", ["x", "s"], ["y"])], {"x": f32(2, 3), "s": np.array([3, 2], np.int64)}, ["y"])
    assert "must be a constant" in error_of(dyn).message
    with pytest.raises(UserError, match="cannot read ONNX model"):
        import_onnx(b"not a model", "junk.onnx")


def test_fs_run_reads_onnx_as_binary():
    fs_run = str(Path(sysconfig.get_path("scripts")) / "fs-run")
    proc = subprocess.run([fs_run, str(EXAMPLES / "bert_layer.onnx"), "--device", "reference"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "out0:" in proc.stdout


@pytest.mark.parametrize("elem,array", [
    (graph.f32, np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5),
    (graph.f16, np.array([1.5, -2, 3], np.float16)),
    (graph.IntegerType(64), np.array([[1, -2], [3, 4]])),
    (graph.IntegerType(8), np.array([1, -2, 3])),
])
def test_weights_from_bytes_equal_the_list_construction(elem, array):
    """Importers build weight attributes from numpy bytes (fast); they must be the very
    attributes xDSL's list construction gives."""
    from fsir.frontend.builder import GraphBuilder

    v = GraphBuilder("w.onnx").constant(array, elem)
    assert v.owner.value == graph.dense_attr(array, elem)
