"""The examples verify, run in the reference interpreter, and compute what their headers
say: each is checked against an independent numpy formulation of the same model."""


import numpy as np
import pytest
from scipy.special import erf
from xdsl.dialects.builtin import DenseArrayBase

from fsir.parse import parse_module
from fsir.runtime.inputs import RUNTIME_SHAPE_ATTR
from fsir.runtime.reference import arg_names, find_function, run
from fsir.testing.paths import EXAMPLES


def _layernorm(x, gamma, beta, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _gelu(h):
    return 0.5 * h * (1 + erf(h / np.sqrt(2)))


def _bert_layer(a):
    B, S, H, NH, D = 2, 128, 768, 12, 64
    x = a["x"]

    def heads(t):
        return t.reshape(B, S, NH, D).transpose(0, 2, 1, 3)

    q, k, v = (heads(x @ a[f"w{n}"] + a[f"b{n}"]) for n in "qkv")
    p = _softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(D) + a["mask"])
    ctx = (p @ v).transpose(0, 2, 1, 3).reshape(B, S, H)
    h1 = _layernorm(ctx @ a["wo"] + a["bo"] + x, a["ln1_gamma"], a["ln1_beta"])
    ffn = _gelu(h1 @ a["w1"] + a["b1"]) @ a["w2"] + a["b2"]
    return _layernorm(ffn + h1, a["ln2_gamma"], a["ln2_beta"])


MODELS = {
    "layernorm": lambda a: _layernorm(a["x"], a["gamma"], a["beta"]),
    "softmax": lambda a: _softmax(a["x"]),
    "rmsnorm": lambda a: a["x"] / np.sqrt((a["x"] ** 2).mean(-1, keepdims=True) + 1e-6) * a["gamma"],
    "gelu": lambda a: _gelu(a["x"] + a["bias"]),
    "bert_layer": _bert_layer,
    "layernorm_dynamic": lambda a: _layernorm(a["x"], a["gamma"], a["beta"]),
    "softmax_dynamic": lambda a: _softmax(a["x"]),
}


def _inputs(f, rng):
    inputs = {}
    attrs = f.arg_attrs.data if f.arg_attrs is not None else [None] * len(f.args)
    for name, t, a in zip(arg_names(f), f.function_type.inputs.data, attrs):
        recorded = a.data.get(RUNTIME_SHAPE_ATTR) if a is not None else None  # the sizes of `?` dims
        shape = tuple(recorded.get_values() if isinstance(recorded, DenseArrayBase) else t.get_shape())
        if name == "mask":  # BERT's additive mask: 0 for tokens, -10000 for padding
            value = np.where(rng.random(shape) < 0.2, -10000.0, 0.0)
        elif name.startswith("w"):  # keep activations O(1) through the dots
            value = rng.standard_normal(shape) / np.sqrt(shape[0])
        else:
            value = rng.standard_normal(shape)
        inputs[name] = value.astype(np.float32)
    return inputs


@pytest.mark.parametrize("name", sorted(MODELS))
def test_example_matches_numpy(name):
    path = EXAMPLES / f"{name}.mlir"
    text = path.read_text()
    assert text.startswith("//"), "every example starts with a comment saying what it computes"
    module = parse_module(text, str(path))
    f = find_function(module)
    inputs = _inputs(f, np.random.default_rng(0))
    (got,) = run(module, inputs)
    assert got.dtype == np.float32
    expected = MODELS[name]({k: v.astype(np.float64) for k, v in inputs.items()})
    np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-4)


def test_readme_lists_every_example():
    readme = (EXAMPLES / "README.md").read_text()
    for path in EXAMPLES.glob("*.mlir"):
        assert path.name in readme
