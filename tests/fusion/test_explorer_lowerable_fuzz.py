"""The explorer never forms a fusion the code generator cannot lower (issue 27).

Random graphs around dots, reductions and broadcasts — batch-1 and batch > 1, 2-D and
3-D activations, LayerNorm, softmax and row reductions after a matmul, a LayerNorm
before one, a second matmul after — are compiled in stitch mode: every fusion the
explorer forms must lower as it is (stitch-codegen splits one it cannot lower and
counts it in `fusions_split`, which must stay 0), and the simulator's results must
match the reference interpreter.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import fsir
from fsir import stats
from fsir.runtime.compare import compare
from fsir.runtime.reference import run

CASES = 16


def _layernorm(x: str, out: str, width: int, inits: list, rng) -> list[onnx.NodeProto]:
    inits += [numpy_helper.from_array(rng.standard_normal(width).astype(np.float32), f"{out}_g"),
              numpy_helper.from_array(rng.standard_normal(width).astype(np.float32), f"{out}_b")]
    return [helper.make_node("LayerNormalization", [x, f"{out}_g", f"{out}_b"], [out], axis=-1, epsilon=1e-5)]


def _matmul(x: str, out: str, k: int, n: int, inits: list, rng, bias: bool) -> list[onnx.NodeProto]:
    inits.append(numpy_helper.from_array((rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32), f"{out}_w"))
    if not bias:
        return [helper.make_node("MatMul", [x, f"{out}_w"], [out])]
    inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), f"{out}_bias"))
    return [helper.make_node("MatMul", [x, f"{out}_w"], [f"{out}_m"]),
            helper.make_node("Add", [f"{out}_m", f"{out}_bias"], [out])]


def _gelu(x: str, out: str, inits: list) -> list[onnx.NodeProto]:
    """x/2 (1 + erf(x/sqrt 2)), as exporters write it before opset 20's Gelu."""
    for name, value in (("sqrt2", np.sqrt(2.0)), ("one", 1.0), ("half", 0.5)):
        inits.append(numpy_helper.from_array(np.array(value, np.float32), f"{out}_{name}"))
    return [helper.make_node("Div", [x, f"{out}_sqrt2"], [f"{out}_s"]),
            helper.make_node("Erf", [f"{out}_s"], [f"{out}_e"]),
            helper.make_node("Add", [f"{out}_e", f"{out}_one"], [f"{out}_p"]),
            helper.make_node("Mul", [x, f"{out}_p"], [f"{out}_xp"]),
            helper.make_node("Mul", [f"{out}_xp", f"{out}_half"], [out])]


def random_model(seed: int) -> tuple[bytes, tuple[int, ...]]:
    """A dot with random surroundings; its input's shape."""
    rng = np.random.default_rng(seed)
    batch = rng.choice([0, 1, 1, 3])  # 0: a 2-D activation
    m, k = int(rng.choice([1, 5, 16])), int(rng.choice([8, 32]))
    n = int(rng.choice([k, 16, 64]))
    shape = (m, k) if batch == 0 else (int(batch), m, k)
    nodes: list[onnx.NodeProto] = []
    inits: list = []
    x = "x"
    if rng.random() < 0.3:  # a LayerNorm feeding the dot (a GEMM prologue)
        nodes += _layernorm(x, "pre", k, inits, rng)
        x = "pre"
    nodes += _matmul(x, "mm", k, n, inits, rng, bias=bool(rng.random() < 0.7))
    y = "mm"
    if n == k and rng.random() < 0.5:  # a residual
        nodes.append(helper.make_node("Add", [y, x], ["res"]))
        y = "res"
    tail = rng.choice(["layernorm", "softmax", "rowmax", "gelu", "none"])
    if tail == "layernorm":
        nodes += _layernorm(y, "ln", n, inits, rng)
        y = "ln"
    elif tail == "softmax":
        nodes.append(helper.make_node("Softmax", [y], ["sm"], axis=-1))
        y = "sm"
    elif tail == "rowmax":
        nodes.append(helper.make_node("ReduceMax", [y], ["rmax"], axes=[-1], keepdims=1))
        nodes.append(helper.make_node("Sub", [y, "rmax"], ["centred"]))
        y = "centred"
    elif tail == "gelu":
        nodes += _gelu(y, "gelu", inits)
        y = "gelu"
    if rng.random() < 0.4:  # a second dot after the row op
        nodes += _matmul(y, "mm2", n, 16, inits, rng, bias=True)
        y = "mm2"
    graph = helper.make_graph(nodes, f"fuzz{seed}", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString(), shape


@pytest.mark.parametrize("seed", range(CASES))
def test_every_fusion_lowers_and_matches(seed):
    model, shape = random_model(seed)
    with stats.collecting() as counts:
        exe = fsir.compile(model, fusion="stitch", cache=False)
    assert counts.result().fusions_split == 0, "the explorer formed a fusion stitch-codegen could not lower"
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    (got,) = exe.run([x], device="sim")
    (want,) = run(exe.source, [x])
    result = compare(got, want)
    assert result.ok, str(result)


def test_the_fuzz_covers_batch_one_3d_products_with_row_ops():
    """The shapes the user reports were about: a batch-1 3-D product and a row op after."""
    seen = set()
    for seed in range(CASES):
        model, shape = random_model(seed)
        ops = {n.op_type for n in onnx.load_from_string(model).graph.node}
        seen.add((len(shape) == 3 and shape[0] == 1, bool(ops & {"LayerNormalization", "Softmax", "ReduceMax"})))
    assert (True, True) in seen and (False, True) in seen
