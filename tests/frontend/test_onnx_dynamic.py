"""ONNX symbolic dims (`dim_param`): graph inputs with them import as `?` dims, and
the transformer export patterns over them (Shape -> Gather -> Unsqueeze -> Concat ->
Reshape, a dynamic Expand, numpy broadcasting, Softmax and LayerNormalization over `?`
dims) compile once and run for several sizes, matching onnxruntime; what fsir cannot
take is refused with a located error."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import fsir
from fsir.errors import UserError
from fsir.frontend.onnx_import import import_onnx


def bert_like(H=64, NH=4, F=128, seed=0):
    """A BERT encoder layer as a dynamic-axes export writes it: x [batch, seq, H] and
    mask [batch, seq] with dim_params, head splits by Shape chains, a position bias
    expanded to x's run-time shape."""
    rng = np.random.default_rng(seed)
    D = H // NH
    inits, nodes = [], []
    def w(name, *shape, scale=None):
        a = (rng.standard_normal(shape) * (scale if scale is not None else 1 / np.sqrt(shape[0]))).astype(np.float32)
        inits.append(nh.from_array(a, name))
        return name

    def n(op, ins, outs, **kw):
        nodes.append(h.make_node(op, ins, outs, **kw))
        return outs[0]

    for name, value in [("i0", np.array(0, np.int64)), ("i1", np.array(1, np.int64)),
                        ("ax0", np.array([0], np.int64)), ("ax12", np.array([1, 2], np.int64)),
                        ("heads", np.array([NH, D], np.int64)), ("hidden", np.array([H], np.int64)),
                        ("one", np.float32(1)), ("neg", np.float32(-10000)), ("sqrtd", np.float32(np.sqrt(D))),
                        ("half", np.float32(0.5)), ("rsqrt2", np.float32(1 / np.sqrt(2)))]:
        inits.append(nh.from_array(np.asarray(value), name))
    # a position bias expanded to x's run-time shape (dynamic Expand)
    w("posb", 1, 1, H, scale=0.1)
    s = n("Shape", ["x"], ["s"])
    pe = n("Expand", ["posb", "s"], ["pe"])
    x0 = n("Add", ["x", pe], ["x0"])
    # the additive attention mask [B, 1, 1, S]
    m4 = n("Unsqueeze", ["mask", "ax12"], ["m4"])
    inv = n("Sub", ["one", m4], ["inv"])
    ext = n("Mul", [inv, "neg"], ["ext"])
    # B and S as 1-D shape pieces (Shape -> Gather -> Unsqueeze)
    b = n("Unsqueeze", [n("Gather", [s, "i0"], ["b0"], axis=0), "ax0"], ["b"])
    sq = n("Unsqueeze", [n("Gather", [s, "i1"], ["s0"], axis=0), "ax0"], ["sq"])
    split = n("Concat", [b, sq, "heads"], ["split"], axis=0)
    merged = n("Concat", [b, sq, "hidden"], ["merged"], axis=0)
    def proj(name, inp, out=None):
        return n("Add", [n("MatMul", [inp, w("w" + name, H, out or H)], [name + "_mm"]), w("b" + name, out or H, scale=0.1)], [name])
    def heads(name, perm):
        r = n("Reshape", [proj(name, x0), split], [name + "_r"])
        return n("Transpose", [r], [name + "_t"], perm=perm)
    q, k, v = heads("q", [0, 2, 1, 3]), heads("k", [0, 2, 3, 1]), heads("v", [0, 2, 1, 3])
    sc = n("Add", [n("Div", [n("MatMul", [q, k], ["qk"]), "sqrtd"], ["qks"]), ext], ["scores"])
    p = n("Softmax", [sc], ["p"], axis=-1)
    ctx = n("Transpose", [n("MatMul", [p, v], ["pv"])], ["ctx_t"], perm=[0, 2, 1, 3])
    ctx = n("Reshape", [ctx, merged], ["ctx"])
    h1 = n("Add", [proj("o", ctx), x0], ["res1"])
    ln1 = n("LayerNormalization", [h1, w("g1", H, scale=1.0), w("be1", H, scale=0.1)], ["ln1"], axis=-1, epsilon=1e-5)
    f = proj("f1", ln1, F)
    gelu = n("Mul", [n("Mul", [f, "half"], ["fh"]), n("Add", [n("Erf", [n("Mul", [f, "rsqrt2"], ["fs"])], ["fe"]), "one"], ["fe1"])], ["gelu"])
    f2 = n("Add", [n("MatMul", [gelu, w("wf2", F, H)], ["f2mm"]), w("bf2", H, scale=0.1)], ["f2"])
    h2 = n("Add", [f2, ln1], ["res2"])
    n("LayerNormalization", [h2, w("g2", H, scale=1.0), w("be2", H, scale=0.1)], ["y"], axis=-1, epsilon=1e-5)
    g = h.make_graph(nodes, "bert_like",
                     [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", H]),
                      h.make_tensor_value_info("mask", T.FLOAT, ["batch", "seq"])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq", H])], inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model



@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    model = bert_like()
    path = tmp_path_factory.mktemp("onnx") / "bert_like.onnx"
    onnx.save(model, str(path))
    return model, fsir.compile(str(path))


def test_dim_params_become_dynamic_dims(bert):
    _, exe = bert
    text = str(import_onnx(bert_like().SerializeToString(), "bert_like.onnx"))
    # the dim_params name the `?` dims: both inputs' batch and sequence are one size each
    assert ("%x: tensor<?x?x64xf32> {graph.dims = #graph.dims<[batch, seq, 64]>}, "
            "%mask: tensor<?x?xf32> {graph.dims = #graph.dims<[batch, seq]>}") in text
    assert "graph.reshape" in text and "tensor<?x?x4x16xf32>" in text  # heads split at run-time sizes
    assert "like %x" in text  # the expanded position bias takes x's sizes


@pytest.mark.parametrize("batch,seq", [(1, 1), (2, 7), (3, 16), (1, 33)])
def test_bert_like_matches_onnxruntime(bert, batch, seq):
    model, exe = bert
    rng = np.random.default_rng(batch * 100 + seq)
    x = rng.standard_normal((batch, seq, 64)).astype(np.float32)
    mask = (rng.random((batch, seq)) < 0.8).astype(np.float32)
    mask[:, 0] = 1
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x, "mask": mask})[0]
    got = exe.run({"x": x, "mask": mask})[0]
    assert got.shape == (batch, seq, 64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)


def test_one_dim_param_is_one_size(bert):
    """x and mask share `batch` and `seq`: the host checks the sizes agree."""
    _, exe = bert
    with pytest.raises(UserError, match=r"differ at run time: \d+ vs \d+") as err:
        exe.run({"x": np.zeros((2, 5, 64), np.float32), "mask": np.ones((2, 6), np.float32)})
    assert err.value.loc is not None and err.value.loc.file.endswith("bert_like.onnx")


def _model(nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, "m", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_dynamic_expand_and_flatten_run():
    """Expand to a run-time shape, then a Reshape that folds B*S into one `?` dim."""
    m = _model([h.make_node("Shape", ["x"], ["s"]),
                h.make_node("Expand", ["b", "s"], ["e"]),
                h.make_node("Add", ["x", "e"], ["y0"]),
                h.make_node("Reshape", ["y0", "flat"], ["y"])],
               [h.make_tensor_value_info("x", T.FLOAT, ["B", "S", 8])],
               [h.make_tensor_value_info("y", T.FLOAT, ["N", 8])],
               [nh.from_array(np.arange(8, dtype=np.float32).reshape(1, 1, 8), "b"),
                nh.from_array(np.array([-1, 8], np.int64), "flat")])
    exe = fsir.compile(m.SerializeToString(), frontend="onnx")
    for shape in [(1, 1, 8), (3, 5, 8)]:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        (got,) = exe.run([x])
        np.testing.assert_allclose(got, (x + np.arange(8, dtype=np.float32)).reshape(-1, 8))


def test_run_time_size_as_data_is_computed_at_run_time():
    """The sequence length used as a value (Shape -> Cast -> Mul): computed at run time
    from the input's dim, so one compile runs every length."""
    m = _model([h.make_node("Shape", ["x"], ["s"]),
                h.make_node("Cast", ["s"], ["f"], to=T.FLOAT),
                h.make_node("Mul", ["f", "x"], ["y"])],
               [h.make_tensor_value_info("x", T.FLOAT, ["S"])],
               [h.make_tensor_value_info("y", T.FLOAT, ["S"])])
    exe = fsir.compile(m.SerializeToString(), frontend="onnx")
    for n in (3, 8):
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        (got,) = exe.run([x])
        np.testing.assert_allclose(got, x * n, rtol=1e-6)


def test_undeterminable_reshape_is_refused():
    """[B, S] -> [S, B] keeps no `?` dim in place: refused, naming the sizes."""
    m = _model([h.make_node("Shape", ["x"], ["s"]),
                h.make_node("Gather", ["s", "i"], ["b"]),
                h.make_node("Gather", ["s", "j"], ["q"]),
                h.make_node("Concat", ["q", "b"], ["t"], axis=0),
                h.make_node("Reshape", ["x", "t"], ["y"])],
               [h.make_tensor_value_info("x", T.FLOAT, ["B", "S"])],
               [h.make_tensor_value_info("y", T.FLOAT, ["S", "B"])],
               [nh.from_array(np.array([0], np.int64), "i"), nh.from_array(np.array([1], np.int64), "j")])
    with pytest.raises(UserError) as err:
        import_onnx(m.SerializeToString(), "m.onnx")
    assert "cannot reshape ?x? to [S, B]" in err.value.message
    assert (err.value.loc.file, err.value.loc.line) == ("m.onnx", 5)
