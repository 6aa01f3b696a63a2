"""The idioms transformers' exports write over symbolic (`dim_param`) dims, each in a
small hand-built graph compiled once and run at several sizes against onnxruntime:
run-time sizes used as data (flat indices from Shape -> Gather -> Range -> Mul/Add,
BERT's mask and position code), CumSum and GatherElements over a `?` dim (RoBERTa's
position ids), Conv and BatchNormalization over a symbolic batch, ConstantOfShape of a
run-time shape, Split and Slice keeping a `?` dim whole."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import fsir


def _model(nodes, inputs, outputs, inits=()) -> bytes:
    g = h.make_graph(nodes, "m", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()


def _ints(**values) -> list:
    return [nh.from_array(np.asarray(v, np.int64), k) for k, v in values.items()]


def _check(model: bytes, make_inputs, sizes) -> None:
    """One compile; at each size the outputs equal onnxruntime's."""
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    exe = fsir.compile(model, frontend="onnx")
    for size in sizes:
        feeds = make_inputs(np.random.default_rng(sum(size)), *size)
        want = session.run(None, feeds)
        got = exe.run(feeds)
        for g, w in zip(got, want):
            assert g.shape == w.shape, size
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"sizes {size}")


def _floats(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_flat_index_from_run_time_sizes():
    """BERT's idiom: idx = arange(B)[:, None] * S + arange(S)[None, :] indexes the
    flattened [B*S] input; S (a Gather of Shape) multiplies a tensor, so it is computed
    at run time, and the index itself is an output too."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "i0"], ["b"], axis=0),
        h.make_node("Gather", ["s", "i1"], ["q"], axis=0),
        h.make_node("Range", ["zero", "b", "one"], ["rb"]),
        h.make_node("Range", ["zero", "q", "one"], ["rq"]),
        h.make_node("Unsqueeze", ["rb", "ax1"], ["rb2"]),
        h.make_node("Unsqueeze", ["rq", "ax0"], ["rq2"]),
        h.make_node("Mul", ["rb2", "q"], ["rows"]),
        h.make_node("Add", ["rows", "rq2"], ["idx"]),
        h.make_node("Reshape", ["x", "flat"], ["xf"]),
        h.make_node("Gather", ["xf", "idx"], ["g"], axis=0),
        h.make_node("Cast", ["idx"], ["fidx"], to=T.FLOAT),
        h.make_node("Add", ["g", "fidx"], ["y"]),
    ]
    model = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["B", "S"])],
                   [h.make_tensor_value_info("y", T.FLOAT, ["B", "S"]),
                    h.make_tensor_value_info("idx", T.INT64, ["B", "S"])],
                   _ints(i0=0, i1=1, zero=0, one=1, ax0=[0], ax1=[1], flat=[-1]))
    _check(model, lambda rng, b, s: {"x": _floats(rng, b, s)}, [(1, 5), (3, 7)])


def test_size_compared_with_data():
    """A run-time size compared with tensor data (a mask from `positions < seq`) and
    added to it, through a Where between shape values' arithmetic."""
    nodes = [
        h.make_node("Shape", ["ids"], ["s"]),
        h.make_node("Gather", ["s", "i1"], ["q"], axis=0),
        h.make_node("Sub", ["q", "one"], ["last"]),
        h.make_node("Less", ["ids", "last"], ["keep"]),
        h.make_node("Add", ["ids", "q"], ["shifted"]),
        h.make_node("Where", ["keep", "ids", "shifted"], ["y"]),
    ]
    model = _model(nodes, [h.make_tensor_value_info("ids", T.INT64, ["B", "S"])],
                   [h.make_tensor_value_info("y", T.INT64, ["B", "S"])], _ints(i1=1, one=1))
    _check(model, lambda rng, b, s: {"ids": rng.integers(0, 9, (b, s), dtype=np.int64)}, [(2, 4), (3, 9)])


def test_cumsum_over_a_symbolic_dim():
    """RoBERTa's position ids: cumsum(mask, axis=1) * mask over [B, S]."""
    nodes = [h.make_node("CumSum", ["m", "axis"], ["c"]), h.make_node("Mul", ["c", "m"], ["y"])]
    model = _model(nodes, [h.make_tensor_value_info("m", T.INT32, ["B", "S"])],
                   [h.make_tensor_value_info("y", T.INT32, ["B", "S"])], _ints(axis=1))
    _check(model, lambda rng, b, s: {"m": rng.integers(0, 2, (b, s), dtype=np.int32)}, [(1, 3), (4, 6)])


def test_gather_elements_with_a_symbolic_dim():
    """torch.gather(table.expand(B, -1), 1, ids): GatherElements of data [B, 8] by
    indices [B, S], negative ones counted from the end."""
    nodes = [h.make_node("GatherElements", ["x", "ids"], ["y"], axis=1)]
    model = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["B", 8]),
                           h.make_tensor_value_info("ids", T.INT64, ["B", "S"])],
                   [h.make_tensor_value_info("y", T.FLOAT, ["B", "S"])])
    _check(model, lambda rng, b, s: {"x": _floats(rng, b, 8), "ids": rng.integers(-8, 8, (b, s), dtype=np.int64)},
           [(2, 3), (5, 4)])


def test_conv_bias_and_batch_norm_with_a_symbolic_batch():
    """Vision models exported with a symbolic batch: Conv's bias and inference
    BatchNormalization broadcast along channels like their input [B, C, H, W]."""
    rng = np.random.default_rng(0)
    inits = [nh.from_array(rng.standard_normal(shape).astype(np.float32), name) for name, shape in
             [("w", (4, 3, 3, 3)), ("bias", (4,)), ("scale", (4,)), ("shift", (4,)), ("mean", (4,))]]
    inits.append(nh.from_array(rng.random(4).astype(np.float32) + 0.5, "var"))
    nodes = [h.make_node("Conv", ["x", "w", "bias"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             h.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["y"])]
    model = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["B", 3, 8, 8])],
                   [h.make_tensor_value_info("y", T.FLOAT, ["B", 4, 4, 4])], inits)
    _check(model, lambda rng, b: {"x": _floats(rng, b, 3, 8, 8)}, [(1,), (3,)])


def test_constant_of_a_symbolic_shape():
    """BART's decoder: ConstantOfShape(Shape(ids)) filled with a value, then used as data."""
    nodes = [h.make_node("Shape", ["ids"], ["s"]),
             h.make_node("ConstantOfShape", ["s"], ["c"], value=nh.from_array(np.array([3], np.int64))),
             h.make_node("Mul", ["ids", "c"], ["y"])]
    model = _model(nodes, [h.make_tensor_value_info("ids", T.INT64, ["B", 5])],
                   [h.make_tensor_value_info("y", T.INT64, ["B", 5])])
    _check(model, lambda rng, b: {"ids": rng.integers(-9, 9, (b, 5), dtype=np.int64)}, [(2,), (7,)])


def test_instance_normalization_with_a_symbolic_batch():
    """wav2vec2's feature extractor: InstanceNormalization of [B, C, T], its per-channel
    scale and bias broadcast like the input."""
    rng = np.random.default_rng(1)
    inits = [nh.from_array(rng.standard_normal(4).astype(np.float32), name) for name in ("scale", "bias")]
    nodes = [h.make_node("InstanceNormalization", ["x", "scale", "bias"], ["y"], epsilon=1e-5)]
    model = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["B", 4, 6])],
                   [h.make_tensor_value_info("y", T.FLOAT, ["B", 4, 6])], inits)
    _check(model, lambda rng, b: {"x": _floats(rng, b, 4, 6)}, [(1,), (5,)])


def test_slices_keeping_a_symbolic_dim_whole():
    """GPT-2's fused QKV Split along the static last dim of [B, S, 12]; a Slice of the
    `?` dims to INT64_MAX and to their own run-time size (`x[:, :seq]`) keeps them
    whole; a Slice of a static dim with a negative start is unaffected."""
    nodes = [
        h.make_node("Split", ["x", "parts"], ["q", "k", "v"], axis=2),
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Slice", ["s", "one", "two"], ["seq"]),
        h.make_node("Slice", ["k", "zeros", "ends", "axes"], ["k2"]),
        h.make_node("Slice", ["v", "zero", "seq", "one"], ["v2"]),
        h.make_node("Slice", ["q", "minus", "big", "two"], ["q2"]),
        h.make_node("Concat", ["k2", "v2"], ["kv"], axis=2),
    ]
    model = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["B", "S", 12])],
                   [h.make_tensor_value_info("kv", T.FLOAT, ["B", "S", 8]),
                    h.make_tensor_value_info("q2", T.FLOAT, ["B", "S", 2])],
                   _ints(parts=[4, 4, 4], one=[1], two=[2], zero=[0], zeros=[0, 0], minus=[-2],
                         big=[2**63 - 1], ends=[2**63 - 1, 2**63 - 1], axes=[0, 1]))
    _check(model, lambda rng, b, s: {"x": _floats(rng, b, s, 12)}, [(1, 3), (4, 5)])


def _mask_gather_nd() -> bytes:
    """transformers' mask code as the dynamo exporter writes it:
    mask[arange(B)[:, None, None, None], arange(S)[None, None, None, :]], a GatherND whose
    first index column is computed from the run-time batch size."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "i0"], ["b"], axis=0),
        h.make_node("Range", ["zero", "b", "one"], ["rb"]),
        h.make_node("Unsqueeze", ["rb", "ax123"], ["rb4"]),
        h.make_node("Max", ["rb4", "cols"], ["both"]),
        h.make_node("Shape", ["both"], ["grid"]),
        h.make_node("Expand", ["rb4", "grid"], ["e0"]),
        h.make_node("Expand", ["cols", "grid"], ["e1"]),
        h.make_node("Unsqueeze", ["e0", "last"], ["u0"]),
        h.make_node("Unsqueeze", ["e1", "last"], ["u1"]),
        h.make_node("Concat", ["u0", "u1"], ["idx"], axis=-1),
        h.make_node("GatherND", ["x", "idx"], ["y"]),
    ]
    return _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["B", 16])],
                  [h.make_tensor_value_info("y", T.FLOAT, None)],
                  _ints(i0=0, zero=0, one=1, ax123=[1, 2, 3], last=[-1], cols=np.arange(16).reshape(1, 1, 1, 16)))


def test_gather_nd_along_a_symbolic_dim():
    _check(_mask_gather_nd(), lambda rng, b: {"x": _floats(rng, b, 16)}, [(1,), (2,), (5,)])


def test_gather_nd_with_batch_dims_over_a_symbolic_dim_is_refused_at_its_node():
    import pytest

    nodes = [h.make_node("GatherND", ["x", "idx"], ["y"], batch_dims=1)]
    model = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["B", 16]),
                           h.make_tensor_value_info("idx", T.INT64, ["B", 1])],
                   [h.make_tensor_value_info("y", T.FLOAT, None)])
    with pytest.raises(fsir.UserError, match=r"GatherND\): fsir gathers along a dim of run-time size only .*"
                                             r"data of shape \['\?', 16\]"):
        fsir.compile(model, frontend="onnx")
