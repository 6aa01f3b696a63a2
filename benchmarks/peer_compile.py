"""Compile time of the peers beside fsir's: the BERT layer (B=2, S=128, H=768, f32) and
BERT-base's 12 chained copies, through XLA (JAX), TorchInductor (torch.compile), TVM
(where installed) and fsir, in-process and as a fresh process.

    python benchmarks/peer_compile.py                         # every peer importable here
    python benchmarks/peer_compile.py --peers xla inductor fsir --layers 1 12 --repeat 3
    python benchmarks/peer_compile.py --markdown              # a table for docs/peers.md

In-process: the compile call alone, the best of `--repeat` after a warm-up compile of
the same model, every compiler's caches emptied between runs (JAX's `clear_caches`,
dynamo's `reset` with Inductor's FX-graph and autotuning caches off, fsir's kernel and
plan caches off) so each run compiles from scratch. Fresh process: a new Python process
that imports the compiler, builds the model and compiles it, start to exit (the best of
`--repeat`). Each peer targets the device its framework finds: on a machine without a
GPU XLA and Inductor compile for the CPU, which is not the GPU compile they are compared
on, and the table says which device each row compiled for. fsir always compiles to PTX
(it needs no GPU to do so).

The layer is `examples/bert_layer.mlir`'s (post-LayerNorm, 12 heads of 64, FFN 3072,
erf GELU); the PyTorch form is `gpu_check.torch_bert_layer`, the JAX form below.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # gpu_check and compile_speed, beside this script

B, S, H, FFN = 2, 128, 768, 3072
PEERS = ("xla", "inductor", "tvm", "fsir")


def layer_weights(rng: np.random.Generator) -> list[np.ndarray]:
    """One layer's weights in `torch_bert_layer`'s argument order after x and mask."""
    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    ones, zeros = np.ones(H, np.float32), np.zeros(H, np.float32)
    return [w(H, H), w(H), w(H, H), w(H), w(H, H), w(H), w(H, H), w(H),
            ones, zeros, w(H, FFN), w(FFN), w(FFN, H), w(H), ones, zeros]


def model_inputs(layers: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, S, H)).astype(np.float32)
    mask = np.zeros((B, 1, 1, S), np.float32)
    return [x, mask] + [a for _ in range(layers) for a in layer_weights(rng)]


def stacked(layer: Callable, layers: int) -> Callable:
    def model(x, mask, *weights):
        for i in range(layers):
            x = layer(x, mask, *weights[16 * i:16 * (i + 1)])
        return x

    return model


def jax_bert_layer(x, mask, wq, bq, wk, bk, wv, bv, wo, bo, g1, be1, w1, b1, w2, b2, g2, be2):
    import jax

    b, s, h = x.shape
    heads = h // 64

    def split(t):
        return t.reshape(b, s, heads, 64).transpose(0, 2, 1, 3)

    def layer_norm(t, g, be):
        mean = t.mean(-1, keepdims=True)
        var = ((t - mean) ** 2).mean(-1, keepdims=True)
        return (t - mean) * jax.lax.rsqrt(var + 1e-5) * g + be

    q, k, v = split(x @ wq + bq), split(x @ wk + bk), split(x @ wv + bv)
    p = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / 8.0 + mask, axis=-1)
    attn = (p @ v).transpose(0, 2, 1, 3).reshape(b, s, h) @ wo + bo
    h1 = layer_norm(attn + x, g1, be1)
    ffn = jax.nn.gelu(h1 @ w1 + b1, approximate=False) @ w2 + b2
    return layer_norm(ffn + h1, g2, be2)


# -- one compile per peer: returns the device it compiled for ----------------------------


def compile_xla(layers: int, inputs: list[np.ndarray]) -> str:
    import jax

    jax.clear_caches()
    args = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs]
    jax.jit(stacked(jax_bert_layer, layers)).lower(*args).compile()
    return jax.default_backend()


def compile_inductor(layers: int, inputs: list[np.ndarray]) -> str:
    import torch
    import torch._dynamo
    import torch._inductor.config as inductor_config
    from gpu_check import torch_bert_layer

    inductor_config.fx_graph_cache = False
    inductor_config.autotune_local_cache = False
    torch._dynamo.reset()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    xs = [torch.from_numpy(a).to(device) for a in inputs]
    fn = torch.compile(stacked(torch_bert_layer, layers))
    with torch.no_grad():
        fn(*xs)  # compiles, then runs once: the run is a small part of a first call
    return device


def compile_tvm(layers: int, inputs: list[np.ndarray]) -> str:
    import torch
    import tvm
    from gpu_check import torch_bert_layer
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program

    class Stack(torch.nn.Module):
        def forward(self, *xs):
            return stacked(torch_bert_layer, layers)(*xs)

    exported = torch.export.export(Stack(), tuple(torch.from_numpy(a) for a in inputs))
    target = "cuda" if tvm.cuda().exist else "llvm"
    relax.build(from_exported_program(exported), target=target)
    return target


def compile_fsir(layers: int, inputs: list[np.ndarray]) -> str:
    from compile_speed import bert_stack

    import fsir

    del inputs  # the graph IR names its own arguments
    ptx = fsir.compile(bert_stack(layers), fusion="stitch", cache=False).ptx
    assert ptx, "no PTX"
    return "PTX (no GPU needed)"


COMPILERS: dict[str, Callable[[int, list[np.ndarray]], str]] = {
    "xla": compile_xla, "inductor": compile_inductor, "tvm": compile_tvm, "fsir": compile_fsir}
MODULES = {"xla": "jax", "inductor": "torch", "tvm": "tvm", "fsir": "fsir"}


@dataclass
class Row:
    peer: str
    layers: int
    device: str
    in_process_s: float | None
    fresh_s: float | None
    note: str = ""


def in_process(peer: str, layers: int, repeat: int) -> tuple[str, float]:
    inputs = model_inputs(layers)
    device = COMPILERS[peer](layers, inputs)  # the warm-up: imports, first-use set-up
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        COMPILERS[peer](layers, inputs)
        best = min(best, time.perf_counter() - start)
    return device, best


def fresh_process(peer: str, layers: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache_dir:
            env_cmd = [sys.executable, str(Path(__file__).resolve()), "--child", peer, str(layers)]
            start = time.perf_counter()
            done = subprocess.run(env_cmd, capture_output=True, text=True, cwd=cache_dir,
                                  env=child_env(cache_dir))
            took = time.perf_counter() - start
        if done.returncode:
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed")
        best = min(best, took)
    return best


def child_env(cache_dir: str) -> dict[str, str]:
    """A fresh process with every persistent compile cache pointed at an empty folder."""
    env = dict(os.environ)
    env.update(FSIR_CACHE="0", FSIR_CACHE_DIR=cache_dir, TORCHINDUCTOR_CACHE_DIR=cache_dir,
               TORCHINDUCTOR_FX_GRAPH_CACHE="0", JAX_COMPILATION_CACHE_DIR="", TVM_NUM_THREADS="2")
    return env


def measure(peer: str, layers: int, repeat: int) -> Row:
    if importlib.util.find_spec(MODULES[peer]) is None:
        return Row(peer, layers, "-", None, None, f"{MODULES[peer]} is not installed here")
    try:
        device, warm = in_process(peer, layers, repeat)
        return Row(peer, layers, device, warm, fresh_process(peer, layers, repeat))
    except Exception as e:  # a peer that fails is reported in its row; the others still run
        return Row(peer, layers, "-", None, None, f"{type(e).__name__}: {str(e).splitlines()[0][:120]}")


def seconds(s: float | None) -> str:
    return "-" if s is None else f"{s:.2f}"


def print_table(rows: list[Row], markdown: bool) -> None:
    header = ["compiler", "layers", "compiled for", "in-process s", "fresh process s", "note"]
    lines = [[r.peer, str(r.layers), r.device, seconds(r.in_process_s), seconds(r.fresh_s), r.note] for r in rows]
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|---|---:|---|---:|---:|---|")
        for line in lines:
            print("| " + " | ".join(line) + " |")
        return
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    for line in [header, *lines]:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--peers", nargs="+", choices=PEERS, default=list(PEERS))
    p.add_argument("--layers", nargs="+", type=int, default=[1, 12])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--child", nargs=2, metavar=("PEER", "LAYERS"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        peer, layers = args.child[0], int(args.child[1])
        COMPILERS[peer](layers, model_inputs(layers))
        return 0
    rows = []
    for peer in args.peers:
        for layers in args.layers:
            rows.append(measure(peer, layers, args.repeat))
            print(f"{peer} x{layers}: {seconds(rows[-1].in_process_s)} s in-process, "
                  f"{seconds(rows[-1].fresh_s)} s fresh {rows[-1].note}", file=sys.stderr, flush=True)
    print_table(rows, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
