"""fsir.jax.jit against jax.jit on the CPU, on the functions examples/hlo was made from."""

import importlib.util
from pathlib import Path

import jax
import numpy as np
import pytest

import fsir.jax

MAKE_HLO = Path(__file__).resolve().parents[1] / "examples" / "hlo" / "make_hlo.py"


def _make_hlo():
    spec = importlib.util.spec_from_file_location("make_hlo", MAKE_HLO)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


M = _make_hlo()


@pytest.mark.parametrize("name", ["layernorm", "softmax", "gelu_mlp", "causal_attention", "embedding_bag",
                                  "bert_layer"])
def test_jit_matches_jax(name):
    fn, specs = M.MODELS[name]
    args = M.make_inputs(specs, np.random.default_rng(0))
    got = fsir.jax.jit(fn, device="sim")(*args)
    want = jax.jit(fn)(*args)
    assert isinstance(got, np.ndarray) and got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-4, atol=1e-5)


def test_compiled_once_per_signature_with_options():
    f = fsir.jax.jit(M.softmax, device="sim", fusion="none")
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    f(x)
    f(x + 1)
    assert len(f.compiled) == 1
    exe = f.executable(x)
    assert exe.options.fusion == "none" and len(exe.kernels) > 1  # the option reached fsir.compile
    y = f(np.zeros((2, 8), np.float32))  # another shape: another compilation
    assert len(f.compiled) == 2 and y.shape == (2, 8)
    np.testing.assert_allclose(y, np.full((2, 8), 1 / 8), rtol=1e-6)
    assert "ENTRY" in f.hlo(x)


def test_output_tree_and_decorator():
    @fsir.jax.jit(device="sim")
    def stats(x):
        return {"mean": x.mean(axis=1), "both": (x.max(axis=1), x * 2)}

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = stats(x)
    assert set(got) == {"mean", "both"} and isinstance(got["both"], tuple)
    np.testing.assert_allclose(got["mean"], x.mean(axis=1))
    np.testing.assert_allclose(got["both"][0], x.max(axis=1))
    np.testing.assert_allclose(got["both"][1], x * 2)


def _mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    out = jax.nn.gelu(x @ w1 + b1) @ w2 + b2
    return ((out - y) ** 2).mean()


def _sgd_step(params, x, y):
    """A training step: the loss, its gradients (value_and_grad) and the SGD update."""
    loss, grads = jax.value_and_grad(_mlp_loss)(params, x, y)
    return loss, grads, tuple(p - 0.1 * g for p, g in zip(params, grads, strict=True))


def test_value_and_grad_training_steps_match_jax():
    rng = np.random.default_rng(2)
    params = tuple((rng.standard_normal(s) * 0.3).astype(np.float32) for s in ((16, 32), (32,), (32, 8), (8,)))
    x, y = (rng.standard_normal(s).astype(np.float32) for s in ((8, 16), (8, 8)))
    step = fsir.jax.jit(_sgd_step, device="sim")
    mine, theirs, losses = params, params, []
    for _ in range(5):
        loss, grads, mine = step(mine, x, y)
        want_loss, want_grads, theirs = jax.jit(_sgd_step)(theirs, x, y)
        losses.append(float(loss))
        np.testing.assert_allclose(loss, want_loss, rtol=2e-4, atol=2e-5)
        for got, want in [*zip(grads, want_grads, strict=True), *zip(mine, theirs, strict=True)]:
            assert isinstance(got, np.ndarray) and got.shape == want.shape
            np.testing.assert_allclose(got, np.asarray(want), rtol=2e-4, atol=2e-5)
    assert losses == sorted(losses, reverse=True) and losses[-1] < losses[0]  # it trains
    assert len(step.compiled) == 1  # one compile serves the five steps
    stitched = len(step.executable(params, x, y).kernels)
    xla = len(fsir.jax.jit(_sgd_step, fusion="xla").executable(params, x, y).kernels)
    assert stitched < xla  # the backward graph stitches too
