"""Dump the HLO examples in this folder from JAX programs.

    pip install jax jaxlib        # CPU wheels; needed only to regenerate, not by fsir
    python examples/hlo/make_hlo.py

For each model NAME it writes
  NAME.hlo       `jax.jit(f).lower(*args).as_text(dialect="hlo")` (unoptimized HLO)
  NAME.opt.hlo   `....compile().as_text()` for the models in OPTIMIZED (XLA's CPU fusions)
  NAME.inputs.npz   the inputs (arg0, arg1, ... in parameter order), for
                    `fs-run NAME.hlo --inputs NAME.inputs.npz`
  NAME.outputs.npz  JAX's outputs (out0, out1, ...) on those inputs, which
                    tests/frontend/test_frontend_hlo.py compares fsir's against.
Shapes are kept small so the files stay small and the tests fast.
"""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

HERE = Path(__file__).resolve().parent
OPTIMIZED = ("layernorm", "bert_layer", "embedding_bag")


def layernorm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def gelu_mlp(x, w1, b1, w2, b2):
    return jax.nn.gelu(x @ w1 + b1, approximate=False) @ w2 + b2


def _attention(q, k, v, bias):
    d = q.shape[-1]
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(d) + bias
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)


def _heads(t, nh):
    b, s, h = t.shape
    return t.reshape(b, s, nh, h // nh).transpose(0, 2, 1, 3)


def _merge(t):
    b, nh, s, d = t.shape
    return t.transpose(0, 2, 1, 3).reshape(b, s, nh * d)


def bert_layer(x, mask, wq, bq, wk, bk, wv, bv, wo, bo, g1, b1, w1, c1, w2, c2, g2, b2):
    """Post-LN BERT encoder layer with an additive attention mask."""
    nh = 4
    q, k, v = (_heads(x @ w + b, nh) for w, b in ((wq, bq), (wk, bk), (wv, bv)))
    ctx = _merge(_attention(q, k, v, mask))
    h = layernorm(ctx @ wo + bo + x, g1, b1)
    ffn = jax.nn.gelu(h @ w1 + c1, approximate=False) @ w2 + c2
    return layernorm(ffn + h, g2, b2)


def causal_attention(x, wqkv, wo, g, b):
    """Pre-LN causal self-attention block (GPT style): mask from iota comparisons."""
    nh = 4
    s = x.shape[1]
    h = layernorm(x, g, b)
    q, k, v = (_heads(t, nh) for t in jnp.split(h @ wqkv, 3, axis=-1))
    causal = jnp.tril(jnp.ones((s, s), bool))
    bias = jnp.where(causal, 0.0, -1e9).astype(x.dtype)
    return x + _merge(_attention(q, k, v, bias)) @ wo


def embedding_bag(ids0, ids1, ids2, dense, t0, t1, t2, w_bot, w1, b1, w2, b2):
    """DLRM-style recommendation model: sum-pooled embedding bags of three tables, a
    bottom MLP on dense features, feature concat, top MLP, sigmoid click probability."""
    bags = [t[ids].sum(axis=1) for t, ids in ((t0, ids0), (t1, ids1), (t2, ids2))]
    bottom = jax.nn.relu(dense @ w_bot)
    z = jnp.concatenate([bottom, *bags], axis=-1)
    hidden = jax.nn.relu(z @ w1 + b1)
    return jax.nn.sigmoid(hidden @ w2 + b2)


def _f(*shape):
    return ("f", shape)


def _ids(rows, *shape):
    return ("i", rows, shape)


B, S, H, FF = 2, 16, 64, 256
MODELS = {
    "layernorm": (layernorm, [_f(32, 64), _f(64), _f(64)]),
    "softmax": (softmax, [_f(32, 128)]),
    "gelu_mlp": (gelu_mlp, [_f(16, 64), _f(64, 256), _f(256), _f(256, 64), _f(64)]),
    "bert_layer": (bert_layer, [_f(B, S, H), ("mask", (B, 1, 1, S))]
                   + [_f(H, H), _f(H)] * 4 + [_f(H), _f(H), _f(H, FF), _f(FF), _f(FF, H), _f(H), _f(H), _f(H)]),
    "causal_attention": (causal_attention, [_f(B, S, H), _f(H, 3 * H), _f(H, H), _f(H), _f(H)]),
    "embedding_bag": (embedding_bag, [_ids(100, 8, 4), _ids(50, 8, 4), _ids(20, 8, 4), _f(8, 13),
                                      _f(100, 16), _f(50, 16), _f(20, 16), _f(13, 16),
                                      _f(64, 32), _f(32), _f(32, 1), _f(1)]),
}


def make_inputs(specs, rng):
    out = []
    for spec in specs:
        if spec[0] == "i":
            out.append(rng.integers(0, spec[1], spec[2]).astype(np.int32))
        elif spec[0] == "mask":  # additive mask: 0 for tokens, -10000 for padding
            out.append(np.where(rng.random(spec[1]) < 0.2, -10000.0, 0.0).astype(np.float32))
        else:
            shape = spec[1]
            scale = 1 / np.sqrt(shape[0]) if len(shape) == 2 else 1.0  # keep activations O(1)
            out.append((rng.standard_normal(shape) * scale).astype(np.float32))
    return out


def main():
    rng = np.random.default_rng(0)
    for name, (fn, specs) in MODELS.items():
        args = make_inputs(specs, rng)
        lowered = jax.jit(fn).lower(*args)
        (HERE / f"{name}.hlo").write_text(lowered.as_text(dialect="hlo"))
        if name in OPTIMIZED:
            (HERE / f"{name}.opt.hlo").write_text(lowered.compile().as_text())
        outs = jax.jit(fn)(*args)
        outs = outs if isinstance(outs, (tuple, list)) else [outs]
        np.savez_compressed(HERE / f"{name}.inputs.npz", **{f"arg{i}": a for i, a in enumerate(args)})
        np.savez_compressed(HERE / f"{name}.outputs.npz", **{f"out{i}": np.asarray(o) for i, o in enumerate(outs)})
        print(f"{name}: {len(args)} inputs, {len(outs)} outputs")


if __name__ == "__main__":
    main()
