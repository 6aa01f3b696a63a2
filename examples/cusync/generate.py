"""The cuSync paper's pipelines (Jangda et al., CGO'24, §II-B, Fig. 2, 3, 5) as graph-dialect
models, at any size. `python examples/cusync/generate.py` writes the small versions
checked in beside it (what the tests simulate); `benchmarks/cusync.py` builds the
full-size GPT-3 MLP from `gpt3_mlp`.

    gpt3_mlp(tokens, hidden, gpus)   X[B·S, H] x W1[H, 4H/g] -> GeLU -> x W2[4H/g, H]
    llama_mlp(tokens, hidden, gpus)  SwiGLU(X W1, X V) x W2, W1/V [H, H/3·8/g... as given]
    attention(seq, head, hidden)     X W_QKV -> softmax(Q K^T) V -> x W_O: three kernels (GEMM,
                                     attention, GEMM)
    qkv_heads(seq, head, heads)      X W_QKV -> each head's softmax(Q_h K_h^T) V_h: Q, K, V of a
                                     head a stride of heads x head columns apart (StridedSync)
    conv2(batch, channels, size)     two stacked 3x3 convolutions (same padding)
    fig4a()                          two GEMMs of 2x2 and 2x3 16x16 tiles (the paper's Fig. 4a)

GeLU is the exact erf form; tensors are f32.
"""

from __future__ import annotations

import sys
from pathlib import Path


def _t(*shape: int) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _gelu(lines: list[str], h: str, shape: tuple[int, ...], out: str) -> None:
    t = _t(*shape)
    lines += [
        f"  %half = graph.constant dense<5.000000e-01> : {t}",
        f"  %one = graph.constant dense<1.000000e+00> : {t}",
        f"  %inv_sqrt2 = graph.constant dense<0.707106769> : {t}",
        f"  %hs = graph.mul %{h}, %inv_sqrt2 : {t}",
        f"  %erf = graph.erf %hs : {t}",
        f"  %erf1 = graph.add %erf, %one : {t}",
        f"  %hh = graph.mul %{h}, %half : {t}",
        f"  %{out} = graph.mul %hh, %erf1 : {t}",
    ]


def gpt3_mlp(tokens: int, hidden: int, gpus: int = 8) -> str:
    """GPT-3's MLP on one of `gpus` model-parallel GPUs (Fig. 2a): GeLU(X W1) W2."""
    f = 4 * hidden // gpus
    lines = [
        f"// GPT-3 MLP (cuSync Fig. 2a), one of {gpus} model-parallel GPUs: B·S = {tokens} tokens, H = {hidden}:",
        "//",
        "//   y = GeLU(x @ w1) @ w2        (GeLU in its exact erf form)",
        "//",
        f"// x {tokens}x{hidden}, w1 {hidden}x{f}, w2 {f}x{hidden}; written by examples/cusync/generate.py.",
        f"func.func @gpt3_mlp(%x: {_t(tokens, hidden)}, %w1: {_t(hidden, f)}, %w2: {_t(f, hidden)}) -> "
        f"{_t(tokens, hidden)} {{",
        f"  %h = graph.dot %x, %w1 : ({_t(tokens, hidden)}, {_t(hidden, f)}) -> {_t(tokens, f)}",
    ]
    _gelu(lines, "h", (tokens, f), "g")
    lines += [
        f"  %y = graph.dot %g, %w2 : ({_t(tokens, f)}, {_t(f, hidden)}) -> {_t(tokens, hidden)}",
        f"  func.return %y : {_t(tokens, hidden)}",
        "}",
    ]
    return "\n".join(lines) + "\n"


def llama_mlp(tokens: int, hidden: int, inner: int) -> str:
    """LLaMA's MLP (Fig. 3): (Swish(X W1) * (X V)) W2, three GEMMs."""
    t, ti = _t(tokens, hidden), _t(tokens, inner)
    return "\n".join([
        f"// LLaMA MLP (cuSync Fig. 3): B·S = {tokens} tokens, H = {hidden}, inner size {inner}:",
        "//",
        "//   y = (swish(x @ w1) * (x @ v)) @ w2        swish(a) = a * sigmoid(a)",
        "//",
        f"// x {tokens}x{hidden}, w1/v {hidden}x{inner}, w2 {inner}x{hidden}; written by examples/cusync/generate.py.",
        f"func.func @llama_mlp(%x: {t}, %w1: {_t(hidden, inner)}, %v: {_t(hidden, inner)}, "
        f"%w2: {_t(inner, hidden)}) -> {t} {{",
        f"  %a = graph.dot %x, %w1 : ({t}, {_t(hidden, inner)}) -> {ti}",
        f"  %b = graph.dot %x, %v : ({t}, {_t(hidden, inner)}) -> {ti}",
        f"  %s = graph.sigmoid %a : {ti}",
        f"  %sw = graph.mul %a, %s : {ti}",
        f"  %g = graph.mul %sw, %b : {ti}",
        f"  %y = graph.dot %g, %w2 : ({ti}, {_t(inner, hidden)}) -> {t}",
        f"  func.return %y : {t}",
        "}",
    ]) + "\n"


def attention(seq: int, head: int, hidden: int) -> str:
    """One head's attention layer in three kernels, as the paper's (Fig. 2b): the QKV
    projection XQKV = X W_QKV (a GEMM), the attention T = softmax(Q K^T) V of XQKV's
    column blocks Q, K, V (fsir's attention kernel: the S x S scores stay on chip), and
    the output projection O = T W_O (a GEMM)."""
    tx, tw, tqkv = _t(seq, hidden), _t(hidden, 3 * head), _t(seq, 3 * head)
    tq, tp, to = _t(seq, head), _t(seq, seq), _t(head, hidden)
    lines = [
        f"// Attention of one head in three kernels (cuSync Fig. 2b, 5b): S = {seq}, head size {head}, "
        f"H = {hidden}:",
        "//",
        "//   xqkv = x @ wqkv,   t = softmax(q @ k^T) @ v (q, k, v: xqkv's column blocks),   o = t @ wo",
        "//",
        "// fsir compiles it as GEMM, attention, GEMM; written by examples/cusync/generate.py.",
        f"func.func @attention(%x: {tx}, %wqkv: {tw}, %wo: {to}) -> {tx} {{",
        f"  %xqkv = graph.dot %x, %wqkv : ({tx}, {tw}) -> {tqkv}",
    ]
    for i, name in enumerate("qkv"):
        lines.append(f"  %{name} = graph.slice %xqkv start [0, {i * head}] limit [{seq}, {(i + 1) * head}] "
                     f"strides [1, 1] : ({tqkv}) -> {tq}")
    lines += [
        f"  %kt = graph.transpose %k perm [1, 0] : ({tq}) -> {_t(head, seq)}",
        f"  %p = graph.dot %q, %kt : ({tq}, {_t(head, seq)}) -> {tp}",
        f"  %m = graph.reduce max %p dims [1] : ({tp}) -> {_t(seq)}",
        f"  %mb = graph.broadcast %m dims [0] : ({_t(seq)}) -> {tp}",
        f"  %d = graph.sub %p, %mb : {tp}",
        f"  %e = graph.exp %d : {tp}",
        f"  %s = graph.reduce sum %e dims [1] : ({tp}) -> {_t(seq)}",
        f"  %sb = graph.broadcast %s dims [0] : ({_t(seq)}) -> {tp}",
        f"  %r = graph.div %e, %sb : {tp}",
        f"  %t = graph.dot %r, %v : ({tp}, {tq}) -> {tq}",
        f"  %o = graph.dot %t, %wo : ({tq}, {to}) -> {tx}",
        f"  func.return %o : {tx}",
        "}",
    ]
    return "\n".join(lines) + "\n"


def qkv_heads(seq: int, head: int, heads: int) -> str:
    """The fused QKV projection of `heads` heads and each head's attention (its own
    kernel): head h reads columns [h*head, (h+1)*head) of each of XQKV's Q, K and V
    blocks, `heads * head` columns apart (the strided dependency of cuSync §IV-B)."""
    width = heads * head
    tx, tw, tqkv, tq, tp = _t(seq, head), _t(head, 3 * width), _t(seq, 3 * width), _t(seq, head), _t(seq, seq)
    outs = ", ".join([tq] * heads)
    lines = [
        f"// {heads} heads' attention over one fused QKV projection (cuSync §IV-B, StridedSync): S = {seq}, "
        f"head size {head}:",
        "//",
        "//   xqkv = x @ wqkv,   t_h = softmax(q_h @ k_h^T) @ v_h   (q_h, k_h, v_h: xqkv's columns of head h)",
        "//",
        "// written by examples/cusync/generate.py.",
        f"func.func @qkv_heads(%x: {tx}, %wqkv: {tw}) -> ({outs}) {{",
        f"  %xqkv = graph.dot %x, %wqkv : ({tx}, {tw}) -> {tqkv}",
    ]
    for h in range(heads):
        for i, name in enumerate("qkv"):
            lo = i * width + h * head
            lines.append(f"  %{name}{h} = graph.slice %xqkv start [0, {lo}] limit [{seq}, {lo + head}] "
                         f"strides [1, 1] : ({tqkv}) -> {tq}")
        lines += [
            f"  %kt{h} = graph.transpose %k{h} perm [1, 0] : ({tq}) -> {_t(head, seq)}",
            f"  %p{h} = graph.dot %q{h}, %kt{h} : ({tq}, {_t(head, seq)}) -> {tp}",
            f"  %m{h} = graph.reduce max %p{h} dims [1] : ({tp}) -> {_t(seq)}",
            f"  %mb{h} = graph.broadcast %m{h} dims [0] : ({_t(seq)}) -> {tp}",
            f"  %d{h} = graph.sub %p{h}, %mb{h} : {tp}",
            f"  %e{h} = graph.exp %d{h} : {tp}",
            f"  %s{h} = graph.reduce sum %e{h} dims [1] : ({tp}) -> {_t(seq)}",
            f"  %sb{h} = graph.broadcast %s{h} dims [0] : ({_t(seq)}) -> {tp}",
            f"  %r{h} = graph.div %e{h}, %sb{h} : {tp}",
            f"  %t{h} = graph.dot %r{h}, %v{h} : ({tp}, {tq}) -> {tq}",
        ]
    lines += [f"  func.return {', '.join(f'%t{h}' for h in range(heads))} : {outs}", "}"]
    return "\n".join(lines) + "\n"


def conv2(batch: int, channels: int, size: int) -> str:
    """Two stacked 3x3 convolutions with same padding (cuSync §IV-B, Fig. 5c)."""
    tx, tw = _t(batch, channels, size, size), _t(channels, channels, 3, 3)
    window = "strides [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] lhs_dilation [1, 1] groups 1"
    return "\n".join([
        f"// Two stacked 3x3 convolutions (cuSync Fig. 5c, ResNet/VGG layers): N = {batch}, C = {channels}, "
        f"{size}x{size}:",
        "//",
        "//   y = conv3x3(conv3x3(x, w1), w2)        stride 1, padding 1, NCHW",
        "//",
        f"// x {batch}x{channels}x{size}x{size}, w1/w2 {channels}x{channels}x3x3; written by "
        "examples/cusync/generate.py.",
        f"func.func @conv2(%x: {tx}, %w1: {tw}, %w2: {tw}) -> {tx} {{",
        f"  %h = graph.conv %x, %w1 {window} : ({tx}, {tw}) -> {tx}",
        f"  %y = graph.conv %h, %w2 {window} : ({tx}, {tw}) -> {tx}",
        f"  func.return %y : {tx}",
        "}",
    ]) + "\n"


def fig4a() -> str:
    """Two dependent GEMMs whose 16x16 tiles form a 2x2 (producer) and a 2x3 (consumer)
    grid: TileSync waits 12 times, RowSync 6 (the paper's Fig. 4a)."""
    return "\n".join([
        "// Two dependent GEMMs (cuSync Fig. 4a): with 16x16 tiles the producer c = a @ b is a 2x2 grid",
        "// of tiles and the consumer e = c @ d a 2x3 grid; TileSync waits on 12 semaphores, RowSync on 6.",
        "//",
        "//   c = a @ b,   e = c @ d",
        "//",
        "// a 32x32, b 32x32, d 32x48; written by examples/cusync/generate.py.",
        f"func.func @fig4a(%a: {_t(32, 32)}, %b: {_t(32, 32)}, %d: {_t(32, 48)}) -> {_t(32, 48)} {{",
        f"  %c = graph.dot %a, %b : ({_t(32, 32)}, {_t(32, 32)}) -> {_t(32, 32)}",
        f"  %e = graph.dot %c, %d : ({_t(32, 32)}, {_t(32, 48)}) -> {_t(32, 48)}",
        f"  func.return %e : {_t(32, 48)}",
        "}",
    ]) + "\n"


SMALL = {
    "gpt3_mlp.mlir": lambda: gpt3_mlp(64, 96),
    "llama_mlp.mlir": lambda: llama_mlp(64, 64, 48),
    "attention.mlir": lambda: attention(64, 32, 32),
    "conv2.mlir": lambda: conv2(1, 8, 8),
    "fig4a.mlir": fig4a,
}


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).parent
    for name, make in SMALL.items():
        (out / name).write_text(make())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
