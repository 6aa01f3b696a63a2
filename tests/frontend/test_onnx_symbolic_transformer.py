"""Issue 27 item 3: one compile of a transformer with symbolic batch and sequence runs
every (batch, seq).

The model is built as `torch.onnx.export` writes a GPT-style block from transformers
(no torch here): position ids and the causal mask come from `Shape -> Gather -> Range`
(`arange(seq)`), the mask from Range/Unsqueeze/Less/Where, then one multi-head
attention block, LayerNormalization and an erf-GELU MLP. One `fsir.compile` (stitch)
must match onnxruntime at every size.
"""

from __future__ import annotations

import math

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import fsir
from fsir.frontend.onnx_import import import_onnx

VOCAB, POSITIONS, WIDTH, HEADS = 50, 40, 16, 2
HEAD = WIDTH // HEADS
MIN = float(np.finfo(np.float32).min)  # transformers' mask value: torch.finfo(dtype).min


def _weights(rng: np.random.Generator) -> dict[str, np.ndarray]:
    def w(*shape: int, scale: float = 0.3) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    return {"wte": w(VOCAB, WIDTH, scale=1.0), "wpe": w(POSITIONS, WIDTH, scale=1.0),
            "wq": w(WIDTH, WIDTH), "wk": w(WIDTH, WIDTH), "wv": w(WIDTH, WIDTH), "wo": w(WIDTH, WIDTH),
            "g1": 1 + w(WIDTH, scale=0.1), "b1": w(WIDTH, scale=0.1), "g2": 1 + w(WIDTH, scale=0.1),
            "b2": w(WIDTH, scale=0.1), "w_up": w(WIDTH, 4 * WIDTH), "b_up": w(4 * WIDTH, scale=0.1),
            "w_down": w(4 * WIDTH, WIDTH), "b_down": w(WIDTH, scale=0.1)}


def _ints(**values: list[int] | int) -> list[TensorProto]:
    return [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in values.items()]


def _floats(**values: float) -> list[TensorProto]:
    return [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in values.items()]


def _n(op: str, inputs: list[str], outputs: list[str], **attrs) -> object:
    return helper.make_node(op, inputs, outputs, **attrs)


def _positions() -> list:
    """position_ids = arange(seq).unsqueeze(0).expand(batch, seq); the token and
    position embeddings' sum."""
    return [
        _n("Shape", ["input_ids"], ["ids_shape"]),
        _n("Gather", ["ids_shape", "i0"], ["batch"], axis=0),
        _n("Gather", ["ids_shape", "i1"], ["seq"], axis=0),
        _n("Range", ["i0", "seq", "i1"], ["arange"]),
        _n("Unsqueeze", ["arange", "axis0"], ["pos_row"]),
        _n("Unsqueeze", ["batch", "axis0"], ["batch_1"]),
        _n("Unsqueeze", ["seq", "axis0"], ["seq_1"]),
        _n("Concat", ["batch_1", "seq_1"], ["bs"], axis=0),
        _n("Expand", ["pos_row", "bs"], ["position_ids"]),
        _n("Gather", ["wte", "input_ids"], ["tok"]),
        _n("Gather", ["wpe", "position_ids"], ["pos"]),
        _n("Add", ["tok", "pos"], ["h0"]),
    ]


def _causal_mask() -> list:
    """mask[i, j] = 0 where j <= i, finfo.min elsewhere, as [1, 1, seq, seq]:
    transformers' `mask_cond < (mask_cond + 1).view(seq, 1)` with a Where."""
    return [
        _n("Range", ["i0", "seq", "i1"], ["mask_cond"]),
        _n("Add", ["mask_cond", "i1"], ["mask_next"]),
        _n("Concat", ["seq_1", "one_1"], ["seq_by_1"], axis=0),
        _n("Reshape", ["mask_next", "seq_by_1"], ["mask_col"]),
        _n("Less", ["mask_cond", "mask_col"], ["visible"]),
        _n("Where", ["visible", "f0", "fmin"], ["mask2d"]),
        _n("Unsqueeze", ["mask2d", "axes01"], ["mask"]),
    ]


def _heads(x: str, out: str, perm: list[int]) -> list:
    """[B, S, D] -> [B, S, H, D/H] (a Reshape to Shape-computed sizes) -> `perm`."""
    return [_n("Concat", ["batch_1", "seq_1", "heads", "head"], [f"{out}_shape"], axis=0),
            _n("Reshape", [x, f"{out}_shape"], [f"{out}_split"]),
            _n("Transpose", [f"{out}_split"], [out], perm=perm)]


def _attention() -> list:
    nodes = [_n("LayerNormalization", ["h0", "g1", "b1"], ["x1"], axis=-1, epsilon=1e-5)]
    for name in ("q", "k", "v"):
        nodes.append(_n("MatMul", ["x1", f"w{name}"], [f"{name}_flat"]))
    nodes += _heads("q_flat", "q", [0, 2, 1, 3]) + _heads("k_flat", "k", [0, 2, 3, 1])
    nodes += _heads("v_flat", "v", [0, 2, 1, 3])
    nodes += [
        _n("MatMul", ["q", "k"], ["scores_raw"]),
        _n("Div", ["scores_raw", "sqrt_head"], ["scores_scaled"]),
        _n("Add", ["scores_scaled", "mask"], ["scores"]),
        _n("Softmax", ["scores"], ["probs"], axis=-1),
        _n("MatMul", ["probs", "v"], ["ctx_heads"]),
        _n("Transpose", ["ctx_heads"], ["ctx_t"], perm=[0, 2, 1, 3]),
        _n("Concat", ["batch_1", "seq_1", "width"], ["bsd"], axis=0),
        _n("Reshape", ["ctx_t", "bsd"], ["ctx"]),
        _n("MatMul", ["ctx", "wo"], ["attn"]),
        _n("Add", ["h0", "attn"], ["h1"]),
    ]
    return nodes


def _mlp() -> list:
    """LayerNormalization, then x W_up + b, erf-GELU as exported (x * 0.5 * (1 + erf(x / sqrt 2))), W_down."""
    return [
        _n("LayerNormalization", ["h1", "g2", "b2"], ["x2"], axis=-1, epsilon=1e-5),
        _n("MatMul", ["x2", "w_up"], ["up_raw"]),
        _n("Add", ["up_raw", "b_up"], ["up"]),
        _n("Div", ["up", "sqrt2"], ["up_scaled"]),
        _n("Erf", ["up_scaled"], ["up_erf"]),
        _n("Add", ["up_erf", "f1"], ["up_erf1"]),
        _n("Mul", ["up", "up_erf1"], ["up_gate"]),
        _n("Mul", ["up_gate", "half"], ["gelu"]),
        _n("MatMul", ["gelu", "w_down"], ["down_raw"]),
        _n("Add", ["down_raw", "b_down"], ["down"]),
        _n("Add", ["h1", "down"], ["hidden"]),
    ]


def transformer_model(seed: int = 0) -> bytes:
    weights = [numpy_helper.from_array(v, k) for k, v in _weights(np.random.default_rng(seed)).items()]
    consts = _ints(i0=0, i1=1, axis0=[0], axes01=[0, 1], one_1=[1], heads=[HEADS], head=[HEAD], width=[WIDTH])
    consts += _floats(f0=0.0, f1=1.0, fmin=MIN, half=0.5, sqrt2=math.sqrt(2), sqrt_head=math.sqrt(HEAD))
    graph = helper.make_graph(
        _positions() + _causal_mask() + _attention() + _mlp(), "gpt_block",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "seq", WIDTH])], weights + consts)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


SIZES = [(1, 7), (3, 32), (8, 5)]


def test_one_compile_runs_every_batch_and_sequence():
    model = transformer_model()
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    exe = fsir.compile(model)
    rng = np.random.default_rng(1)
    launches = set()
    for batch, seq in SIZES:
        ids = rng.integers(0, VOCAB, (batch, seq), dtype=np.int64)
        (want,) = session.run(None, {"input_ids": ids})
        (got,) = exe.run([ids], device="sim")
        assert got.shape == (batch, seq, WIDTH)
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4, err_msg=f"(batch, seq) = {(batch, seq)}")
        launches.add(tuple(launch.kernel for launch in exe.last_stats.per_launch))
    assert len(launches) == 1  # the same kernels, in the same order, at every size


def test_arange_of_seq_is_one_iota_sized_by_the_input():
    """Both `Range(0, seq, 1)`s become `graph.iota like %input_ids dims [1]` (no Range
    of compile-time length, no specialisation): the module has no static seq."""
    text = str(import_onnx(transformer_model()))
    assert text.count("graph.iota dim 0 like %input_ids dims [1] : (tensor<?x?xi64>) -> tensor<?xi64>") == 2
    assert "tensor<?x?xi64> {graph.dims = #graph.dims<[batch, seq]>}" in text
