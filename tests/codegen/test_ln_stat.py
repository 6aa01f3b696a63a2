"""The two-pass LayerNorm statistic in kernels (`graph.tile_moments`,
`graph.combine_moments`, `fsir/lowering/moments.py`): the simulator against the numpy
reference, on rows with a large mean offset (100 + N(0, 1)) so a one-pass statistic
would cancel, in f32 and f16; a GEMM whose A operand is normalised with statistics
combined from partial moments is one kernel computing them once per staged row."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.dialects.schedule import KernelOp
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute
from fsir.runtime.reference import run


def layernorm(rows: int, n: int, tile: int, t: str, dot: int | None = None) -> str:
    """LayerNorm of z's rows with its mean and variance from the partial moments `p`
    (`tile` wide; an input, as a GEMM epilogue writes them), followed by a dot with
    w (rows x n · n x `dot`) when `dot` is given."""
    tiles = -(-n // tile)
    z, p, s, c, r, v = (f"tensor<{d}>" for d in (f"{rows}x{n}x{t}", f"{rows}x{tiles}x2xf32", f"{rows}x2xf32",
                                                 f"{rows}x1xf32", f"{rows}xf32", f"{n}x{t}"))
    zf = f"tensor<{rows}x{n}xf32>"
    w, o = f"tensor<{n}x{dot}x{t}>", f"tensor<{rows}x{dot}x{t}>"
    tail = (f"""  %yt = graph.convert %y : ({zf}) -> {z}
  %d = graph.dot %yt, %w : ({z}, {w}) -> {o}
  func.return %d : {o}""" if dot else f"""  %yt = graph.convert %y : ({zf}) -> {z}
  func.return %yt : {z}""")
    return f"""
func.func @ln(%z: {z}, %p: {p}, %g: {v}, %b: {v}{f', %w: {w}' if dot else ''}) -> {o if dot else z} {{
  %s = graph.combine_moments %p tile {tile} size {n} : ({p}) -> {s}
  %m1 = graph.slice %s start [0, 0] limit [{rows}, 1] strides [1, 1] : ({s}) -> {c}
  %v1 = graph.slice %s start [0, 1] limit [{rows}, 2] strides [1, 1] : ({s}) -> {c}
  %m = graph.reshape %m1 : ({c}) -> {r}
  %var = graph.reshape %v1 : ({c}) -> {r}
  %eps = graph.constant dense<1.0e-5> : {r}
  %ve = graph.add %var, %eps : {r}
  %rs = graph.rsqrt %ve : {r}
  %zf = graph.convert %z : ({z}) -> {zf}
  %gf = graph.convert %g : (tensor<{n}x{t}>) -> tensor<{n}xf32>
  %bf = graph.convert %b : (tensor<{n}x{t}>) -> tensor<{n}xf32>
  %mb = graph.broadcast %m dims [0] : ({r}) -> {zf}
  %rb = graph.broadcast %rs dims [0] : ({r}) -> {zf}
  %gb = graph.broadcast %gf dims [1] : (tensor<{n}xf32>) -> {zf}
  %bb = graph.broadcast %bf dims [1] : (tensor<{n}xf32>) -> {zf}
  %xc = graph.sub %zf, %mb : {zf}
  %y0 = graph.mul %xc, %rb : {zf}
  %y1 = graph.mul %y0, %gb : {zf}
  %y = graph.add %y1, %bb : {zf}
{tail}
}}
"""


def partials(text: str, z: np.ndarray) -> np.ndarray:
    """The partial moments of z as graph.tile_moments computes them (the reference)."""
    tile = int(text.split("tile ")[1].split()[0])
    from fsir.interpreters.moments import tile_moments

    parts = tile_moments(z, tile)
    return np.stack([parts.mean, parts.m2], -1).astype(np.float32)


def offset_inputs(rows: int, n: int, t: str, text: str, dot: int | None, seed: int = 0) -> list[np.ndarray]:
    dtype = {"f32": np.float32, "f16": np.float16}[t]
    rng = np.random.default_rng(seed)
    z = (100 + rng.standard_normal((rows, n))).astype(dtype)
    ins = [z, partials(text, z), rng.uniform(0.5, 1.5, n).astype(dtype), rng.standard_normal(n).astype(dtype)]
    if dot:
        ins.append((rng.standard_normal((n, dot)) / np.sqrt(n)).astype(dtype))
    return ins


def exact_layernorm(z: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LayerNorm in f64 (the statistic's ground truth)."""
    x = z.astype(np.float64)
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * g.astype(np.float64) + b.astype(np.float64)


def kernels(lowered) -> int:
    return sum(1 for op in lowered.walk() if op.name == "gpu.launch_func")


@pytest.mark.parametrize("t,n,tile", [("f32", 768, 32), ("f32", 80, 32), ("f16", 768, 64)])
def test_normalise_from_partials_on_the_simulator(t, n, tile):
    """LN(z) from z and its partials (the layer's last LayerNorm after a GEMM writing
    partials): one elementwise kernel; the rows' mean of 100 does not cancel."""
    rows = 16
    text = layernorm(rows, n, tile, t)
    ins = offset_inputs(rows, n, t, text, None)
    module = parse_module(text, "<test>")
    lowered = lower(module, PipelineOptions(fusion="stitch"))
    assert kernels(lowered) == 1
    (got,), _ = execute(lowered, ins)
    (want,) = run(module, ins)
    exact = exact_layernorm(ins[0], ins[2], ins[3])
    # the kernel computes the reference's statistic (measured: equal bits)
    assert np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))) <= 1e-6
    # against the f64 LayerNorm, measured: f32 2.1e-5 (n = 768) and 1.3e-5 (n = 80),
    # about two ulps of the mean 100; f16 2.0e-3, the f16 output's own rounding. A
    # one-pass E[z²] - E[z]² statistic in f32 is off by 3.4e-3 on the same rows.
    tol = {"f32": 4e-5, "f16": 4e-3}[t]
    assert np.max(np.abs(got.astype(np.float64) - exact)) < tol
    if t == "f32":
        z = ins[0]
        mean = z.mean(-1, keepdims=True, dtype=np.float32)
        one_pass = (z * z).mean(-1, keepdims=True, dtype=np.float32) - mean * mean
        naive = (z - mean) / np.sqrt(np.maximum(one_pass, 0) + 1e-5) * ins[2] + ins[3]
        assert np.max(np.abs(naive - exact)) > 20 * tol


@pytest.mark.parametrize("t,precision", [("f32", "fp32"), ("f32", "tf32"), ("f16", "fp32")])
def test_gemm_prologue_combines_partials(t, precision):
    """LN(z) · w with LN's statistics combined from partials in the GEMM's prologue:
    one kernel, matching the reference within the GEMM precision's tolerance."""
    rows, n, dot = 64, 256, 64
    text = layernorm(rows, n, 32, t, dot)
    ins = offset_inputs(rows, n, t, text, dot)
    module = parse_module(text, "<test>")
    options = PipelineOptions(fusion="stitch", precision=precision)
    scheduled = lower(parse_module(text, "<test>"), options, until="stitch-codegen")
    (kernel,) = [op for op in scheduled.walk() if isinstance(op, KernelOp)]
    assert any(op.name == "graph.combine_moments" for op in kernel.walk())
    lowered = lower(module, options)
    (got,), _ = execute(lowered, ins)
    (want,) = run(module, ins)
    exact = (exact_layernorm(ins[0], ins[2], ins[3]) @ ins[4].astype(np.float64))
    scale = np.max(np.abs(exact))
    # relative to the product's largest value, measured: f32 FMA 5e-7 of the reference
    # and 7e-6 of f64; tf32 3.6e-4 (its 10-bit mantissa); f16 1.1e-4 and 3.9e-4
    tol = {("f32", "fp32"): 2e-5, ("f32", "tf32"): 1e-3, ("f16", "fp32"): 1e-3}[(t, precision)]
    assert np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))) / scale < tol
    assert np.max(np.abs(got.astype(np.float64) - exact)) / scale < tol
