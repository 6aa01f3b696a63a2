"""The error bounds of docs/numerics.md, measured on the simulator.

Every place where compiled code computes something differently from the reference
interpreter (a reassociated sum, an FMA chain, a tensor-core product, an approximate
exponential, a rewritten statistic) has a documented bound. Each test compiles a graph,
runs it on inputs chosen to stress that place, and compares the result with a float64
evaluation: the error must be within the bound, and (where the approximation is real)
within 100x of it, so that the bound is not vacuous. u = 2^-24 (f32), 2^-11 (f16),
2^-8 (bf16); γ_d = d·u / (1 − d·u) bounds the error of d roundings in a chain.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from xdsl.context import Context

from fsir.dialects.schedule import ColumnsParamsAttr, GemmParamsAttr, KernelOp, RowParamsAttr
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute
from fsir.runtime.reference import find_function, run, run_function_float64
from fsir.transforms.canonicalize import GraphCanonicalizePass

U32, U16, UBF = 2.0**-24, 2.0**-11, 2.0**-8
UNIT = {"f32": U32, "f16": U16, "bf16": UBF}
DTYPE = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}
# A documented bound is not vacuous if the worst measured error reaches this share of it.
TIGHTNESS = 1 / 100


def gamma(d: int, u: float = U32) -> float:
    return d * u / (1 - d * u)


def compile_graph(text: str, canonicalize: bool = False, **options) -> tuple[object, list[KernelOp]]:
    """The lowered module and the schedule kernels stitch-codegen chose for it; with
    `canonicalize`, after `graph-canonicalize` (which the default pipeline does not run)."""
    kernels: list[KernelOp] = []

    def keep_kernels(stage: str, seconds: float, ir) -> None:
        if stage == "stitch-codegen":
            kernels.extend(op.clone() for op in ir.walk() if isinstance(op, KernelOp))

    options.setdefault("fusion", "stitch")
    module = parse_module(text, "<test>")
    if canonicalize:
        GraphCanonicalizePass().apply(Context(), module)
    lowered = lower(module, PipelineOptions(**options), on_stage=keep_kernels)
    return lowered, kernels


def simulate(lowered, inputs) -> list[np.ndarray]:
    outputs, _ = execute(lowered, inputs)
    return [np.asarray(o).astype(np.float64) for o in outputs]


def exact(text: str, inputs) -> list[np.ndarray]:
    """The graph evaluated with every float in float64."""
    return run_function_float64(find_function(parse_module(text, "<test>")), inputs)


def check_bound(err: np.ndarray, bound: np.ndarray, tight: bool = True) -> float:
    """The worst err/bound, asserted ≤ 1 (and ≥ TIGHTNESS when `tight`)."""
    ratio = np.max(err / np.maximum(bound, 1e-300))
    worst = int(np.argmax(err / np.maximum(bound, 1e-300)))
    assert ratio <= 1.0, f"error {err.flat[worst]:.3e} beyond the bound {bound.flat[worst]:.3e}"
    if tight:
        assert ratio >= TIGHTNESS, f"bound vacuous: worst error is {ratio:.1e} of it"
    return float(ratio)


def tensor(shape: tuple[int, ...], t: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{t}>"


# -- reassociated row reductions (fsir/lowering/rows.py) ----------------------------------

def row_sum(rows: int, n: int, t: str) -> str:
    x, r = tensor((rows, n), t), tensor((rows,), t)
    return f"""func.func @f(%x: {x}) -> {r} {{
  %s = graph.reduce sum %x dims [1] : ({x}) -> {r}
  func.return %s : {r}
}}"""


def row_depth(p: RowParamsAttr, n: int) -> int:
    """Roundings on the longest path of a row schedule's sum: a thread's strided loop,
    then a butterfly (log2 of the row's threads) or, interleaved, the slices in turn."""
    per_row = p.threads_per_row
    serial = -(-n // per_row)
    combine = per_row if p.interleaved else math.ceil(math.log2(per_row)) if per_row > 1 else 0
    return serial + combine


@pytest.mark.parametrize("rows_schedule,n,t", [
    ("thread", 256, "f32"), ("warp", 4096, "f32"), ("block", 8192, "f32"),
    ("interleaved", 2048, "f32"), ("warp", 2048, "f16"),
])
def test_row_sum_within_gamma_of_its_depth(rows_schedule, n, t):
    """|ŝ − s| ≤ γ_d·Σ|x| (+ the final rounding u_t·|s| to a 16-bit type), d the
    schedule's depth; positive data makes the rounding errors add up."""
    text = row_sum(8, n, t)
    lowered, (kernel,) = compile_graph(text, rows=rows_schedule)
    assert isinstance(kernel.params, RowParamsAttr)
    x = np.random.default_rng(1).uniform(0, 1, (8, n)).astype(DTYPE[t])
    (got,) = simulate(lowered, [x])
    (want,) = exact(text, [x])
    d = row_depth(kernel.params, n)
    bound = gamma(d) * np.abs(x.astype(np.float64)).sum(1)
    if t != "f32":
        bound += UNIT[t] * np.abs(want) * (1 + gamma(d))
    check_bound(np.abs(got - want), bound)


def test_row_max_is_exact():
    """max and min do not round: any order gives the reference's bits."""
    text = row_sum(8, 4096, "f32").replace("reduce sum", "reduce max")
    lowered, _ = compile_graph(text, rows="block")
    x = np.random.default_rng(2).standard_normal((8, 4096)).astype(np.float32)
    (got,) = simulate(lowered, [x])
    assert np.array_equal(got, x.max(1).astype(np.float64))


# -- GEMMs: FMA chains, split-K, tensor cores, tf32 ---------------------------------------

def dot(m: int, k: int, n: int, t: str) -> str:
    a, b, c = tensor((m, k), t), tensor((k, n), t), tensor((m, n), t)
    return f"""func.func @f(%a: {a}, %b: {b}) -> {c} {{
  %d = graph.dot %a, %b : ({a}, {b}) -> {c}
  func.return %d : {c}
}}"""


def dot_inputs(m: int, k: int, n: int, t: str, seed: int = 3) -> list[np.ndarray]:
    """Positive operands: the running sums grow, so each rounding error is as large as it
    gets (random signs would cancel them)."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(0, 1, s).astype(DTYPE[t]) for s in ((m, k), (k, n))]


def gemm_depth(p: GemmParamsAttr, k: int) -> int:
    """Roundings on an output's longest path: an FMA per k in each slice, then the
    slices' partial sums added in turn; a tensor-core mma rounds once per k16 (k8
    for tf32) step."""
    slices = p.split_k
    per_slice = -(-k // slices)
    if p.tensor_cores:
        per_slice = -(-per_slice // (8 if p.math.value == "tf32" else 16))
    return per_slice + slices


@pytest.mark.parametrize("gemm,precision,t", [
    ("32x32x8/4x4", "fp32", "f32"),
    ("16x16x8_2x2_s4", "fp32", "f32"),
    ("32x32x32_16x16_f16", "fp32", "f16"),
    ("32x32x32_16x16_bf16", "fp32", "bf16"),
    ("32x32x32_16x16_tf32", "tf32", "f32"),
])
def test_gemm_within_gamma_of_its_depth(gemm, precision, t):
    """|Ĉ − C| ≤ (ρ + γ_d)·(|A|·|B|) + u_t·|C|: ρ = 2^-10 + 2^-22 for operands rounded
    to tf32 (0 otherwise), d the FMAs or mma steps of the longest chain, u_t the
    output's rounding (16-bit types)."""
    m, k, n = 40, 256, 48
    text = dot(m, k, n, t)
    lowered, (kernel,) = compile_graph(text, gemm=gemm, precision=precision)
    assert isinstance(kernel.params, GemmParamsAttr)
    a, b = dot_inputs(m, k, n, t)
    (got,) = simulate(lowered, [a, b])
    (want,) = exact(text, [a, b])
    magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    rho = 2.0**-10 + 2.0**-22 if precision == "tf32" else 0.0
    bound = (rho + gamma(gemm_depth(kernel.params, k))) * magnitude
    if t != "f32":
        bound += UNIT[t] * (np.abs(want) + bound)
    check_bound(np.abs(got - want), bound)


# -- per-op rounding of 16-bit types, recomputed sub-roots --------------------------------

CHAIN = """func.func @f(%x: {T}, %y: {T}) -> {T} {{
  %a = graph.add %x, %y : {T}
  %b = graph.mul %a, %x : {T}
  %c = graph.sub %b, %y : {T}
  %d = graph.div %c, %a : {T}
  %e = graph.abs %d : {T}
  %f = graph.sqrt %e : {T}
  %g = graph.mul %f, %b : {T}
  func.return %g : {T}
}}"""


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_16_bit_chains_round_after_every_op(t):
    """The kernel keeps f32 registers but rounds each op's result to its element type,
    as the reference does: correctly rounded ops give the reference's bits."""
    text = CHAIN.format(T=tensor((64, 96), t))
    lowered, _ = compile_graph(text)
    rng = np.random.default_rng(4)
    ins = [rng.uniform(-3, 3, (64, 96)).astype(DTYPE[t]) for _ in range(2)]
    (got,) = simulate(lowered, ins)
    (want,) = run(parse_module(text, "<test>"), ins)
    assert np.array_equal(got, np.asarray(want).astype(np.float64), equal_nan=True)


def test_recomputed_subroots_give_the_same_bits():
    """A sub-root (an expensive op read by several groups) computed once and kept, or
    recomputed by each reader, runs the same ops in the same order."""
    from fsir.testing.graphs import gelu_sum

    text = gelu_sum(16, 256)
    x = np.random.default_rng(5).standard_normal((16, 256)).astype(np.float32)
    kept, _ = compile_graph(text, subroots="all", rows="warp")
    recomputed, _ = compile_graph(text, subroots="none", rows="warp")
    assert np.array_equal(simulate(kept, [x])[0], simulate(recomputed, [x])[0])


# -- sigmoid: 1 / (1 + exp(-x)) ------------------------------------------------------------

def test_sigmoid_relative_error():
    """|σ̂ − σ|/σ ≤ ε_exp + 2u = 5u on the simulator (ε_exp ≤ 1.5 ulp ≤ 3u, then the
    add and the division), for results in the normal range (x ≥ −87)."""
    n = 8192
    t = tensor((n,), "f32")
    text = f"func.func @f(%x: {t}) -> {t} {{\n  %y = graph.sigmoid %x : {t}\n  func.return %y : {t}\n}}"
    lowered, _ = compile_graph(text, fusion="none")
    x = np.concatenate([np.linspace(-87, 20, n // 2), np.random.default_rng(6).uniform(-10, 10, n // 2)])
    x = x.astype(np.float32)
    (got,) = simulate(lowered, [x])
    want = 1 / (1 + np.exp(-x.astype(np.float64)))
    check_bound(np.abs(got - want), 5 * U32 * want)


# -- online-softmax attention (fsir/lowering/attention.py) -------------------------------

def attention(sq: int, sk: int, d: int, t: str) -> str:
    """softmax(q·kᵀ·d^-1/2)·v of one batch entry and two heads."""
    q, k, kt, v = (tensor((1, 2, *s), t) for s in ((sq, d), (sk, d), (d, sk), (sk, d)))
    s4, s3 = tensor((1, 2, sq, sk), t), tensor((1, 2, sq), t)
    return f"""func.func @attn(%q: {q}, %k: {k}, %v: {v}) -> {q} {{
  %kt = graph.transpose %k perm [0, 1, 3, 2] : ({k}) -> {kt}
  %s = graph.dot %q, %kt : ({q}, {kt}) -> {s4}
  %scale = graph.constant dense<{d ** -0.5}> : {s4}
  %x = graph.mul %s, %scale : {s4}
  %mx = graph.reduce max %x dims [3] : ({s4}) -> {s3}
  %mxb = graph.broadcast %mx dims [0, 1, 2] : ({s3}) -> {s4}
  %sh = graph.sub %x, %mxb : {s4}
  %e = graph.exp %sh : {s4}
  %sum = graph.reduce sum %e dims [3] : ({s4}) -> {s3}
  %sumb = graph.broadcast %sum dims [0, 1, 2] : ({s3}) -> {s4}
  %p = graph.div %e, %sumb : {s4}
  %o = graph.dot %p, %v : ({s4}, {v}) -> {q}
  func.return %o : {q}
}}"""


def attention_bound(q, k, v, t: str, mma: bool) -> np.ndarray:
    """docs/numerics.md's bound: per probability a relative error η_j from the scores'
    errors (E), the exponent's roundings (3u·|t|) and the rescales; the weights'
    renormalisation turns it into Σ w_j·η_j·(|v_j| + |o|); the accumulations add
    γ_(3Sk+2) of Σ w_j·|v_j| + |o|; the output rounds once."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    d, sk = q.shape[-1], k.shape[-2]
    c = d**-0.5
    kt = np.swapaxes(k, -1, -2)
    x = c * (q @ kt)
    ut = UNIT[t]
    err_x = c * gamma(d) * (np.abs(q) @ np.abs(kt)) + 2 * ut * np.abs(x)
    m = x.max(-1, keepdims=True)
    spread = m - x.min(-1, keepdims=True)
    eta = 1.01 * (err_x + err_x.max(-1, keepdims=True) + 3 * U32 * (m - x + spread))
    if mma:
        eta += U16 if t == "f16" else UBF  # probabilities rounded to the operand type
    w = np.exp(x - m)
    w /= w.sum(-1, keepdims=True)
    o = w @ v
    spread_v = w @ np.abs(v)
    bound = (w * eta) @ np.abs(v) + (w * eta).sum(-1, keepdims=True) * np.abs(o)
    bound += gamma(3 * sk + 2) * (spread_v + np.abs(o)) + U32 * np.abs(o)
    return bound + ut * (np.abs(o) + bound)


@pytest.mark.parametrize("t,schedule", [("f32", "auto"), ("f16", "mma")])
def test_attention_within_its_bound(monkeypatch, t, schedule):
    if schedule == "mma":
        import fsir.codegen.mappings.attention as attention_mapping

        monkeypatch.setattr(attention_mapping, "CANDIDATES", ())
        monkeypatch.setattr(attention_mapping, "WARP_CANDIDATES", ())
    sq, sk, d = 32, 96, 16
    text = attention(sq, sk, d, t)
    lowered, kernels = compile_graph(text)
    assert len(kernels) == 1 and kernels[0].params.MAPPING.value == "attention"
    assert bool(kernels[0].params.mma) == (schedule == "mma")
    rng = np.random.default_rng(7)
    # spread-out scores (|x| up to ~10): many small probabilities, large exponents
    q, k, v = (rng.standard_normal((1, 2, *s)).astype(DTYPE[t]) for s in ((sq, d), (sk, d), (sk, d)))
    q = (2 * q.astype(np.float32)).astype(DTYPE[t])
    (got,) = simulate(lowered, [q, k, v])
    (want,) = exact(text, [q, k, v])
    check_bound(np.abs(got - want), attention_bound(q, k, v, t, schedule == "mma"))


# -- two-pass LayerNorm statistic (fsir/lowering/moments.py, fsir/fusion/ln_stat.py) --------

def layernorm_from_partials(rows: int, n: int, tile: int) -> str:
    tiles = n // tile
    z, p, s, c, r, v = (tensor(d, "f32") for d in ((rows, n), (rows, tiles, 2), (rows, 2), (rows, 1), (rows,), (n,)))
    return f"""func.func @ln(%z: {z}, %p: {p}, %g: {v}, %b: {v}) -> {z} {{
  %s = graph.combine_moments %p tile {tile} size {n} : ({p}) -> {s}
  %m1 = graph.slice %s start [0, 0] limit [{rows}, 1] strides [1, 1] : ({s}) -> {c}
  %v1 = graph.slice %s start [0, 1] limit [{rows}, 2] strides [1, 1] : ({s}) -> {c}
  %m = graph.reshape %m1 : ({c}) -> {r}
  %var = graph.reshape %v1 : ({c}) -> {r}
  %eps = graph.constant dense<1.0e-5> : {r}
  %ve = graph.add %var, %eps : {r}
  %rs = graph.rsqrt %ve : {r}
  %mb = graph.broadcast %m dims [0] : ({r}) -> {z}
  %rb = graph.broadcast %rs dims [0] : ({r}) -> {z}
  %gb = graph.broadcast %g dims [1] : ({v}) -> {z}
  %bb = graph.broadcast %b dims [1] : ({v}) -> {z}
  %xc = graph.sub %z, %mb : {z}
  %y0 = graph.mul %xc, %rb : {z}
  %y1 = graph.mul %y0, %gb : {z}
  %y = graph.add %y1, %bb : {z}
  func.return %y : {z}
}}"""


def exact_partials(z: np.ndarray, tile: int) -> np.ndarray:
    """Each tile's (mean, M2), exact then rounded to f32 (as a GEMM epilogue writes them,
    up to its own γ of the tile)."""
    parts = z.astype(np.float64).reshape(*z.shape[:-1], -1, tile)
    mean = parts.mean(-1)
    m2 = ((parts - mean[..., None]) ** 2).sum(-1)
    return np.stack([mean, m2], -1).astype(np.float32)


def layernorm_bound(z, g, b, tiles: int) -> np.ndarray:
    """|ŷ − y| ≤ |g|·r·(δμ + |z − μ|·(δv/(2(v + ε)) + 8u)) + u·(|y| + |b|), with
    δμ = γ_(3T+1)·max_t|μ_t| and δv = γ_(4T+3)·v + 4·σ·δμ (Chan's combination over T
    tiles: every term a deviation, so v's error is relative to v, not to μ²)."""
    z, g, b = (np.asarray(a, np.float64) for a in (z, g, b))
    mu = z.mean(-1, keepdims=True)
    var = ((z - mu) ** 2).mean(-1, keepdims=True)
    tile_means = z.reshape(*z.shape[:-1], tiles, -1).mean(-1)
    d_mu = gamma(3 * tiles + 1) * np.abs(tile_means).max(-1, keepdims=True)
    d_var = gamma(4 * tiles + 3) * var + 4 * np.sqrt(var) * d_mu
    r = 1 / np.sqrt(var + 1e-5)
    y = (z - mu) * r * g + b
    return np.abs(g) * r * (d_mu + np.abs(z - mu) * (d_var / (2 * (var + 1e-5)) + 8 * U32)) + U32 * (
        np.abs(y) + np.abs(b))


def test_layernorm_from_partial_moments_within_its_bound():
    """Rows 100 + N(0, 1): the mean's rounding dominates; a one-pass E[z²] − E[z]²
    would lose about 13 of f32's 24 bits of the variance."""
    rows, n, tile = 16, 768, 32
    text = layernorm_from_partials(rows, n, tile)
    lowered, _ = compile_graph(text)
    rng = np.random.default_rng(8)
    z = (100 + rng.standard_normal((rows, n))).astype(np.float32)
    g, b = rng.uniform(0.5, 1.5, n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    (got,) = simulate(lowered, [z, exact_partials(z, tile), g, b])
    mu = z.astype(np.float64).mean(-1, keepdims=True)
    var = ((z - mu) ** 2).mean(-1, keepdims=True)
    want = (z - mu) / np.sqrt(var + 1e-5) * g + b
    check_bound(np.abs(got - want), layernorm_bound(z, g, b, n // tile))


# -- a constant per-channel scale folded into conv weights (graph-canonicalize) ----------

def conv_scaled(weight: np.ndarray, scale: np.ndarray) -> str:
    x, w, y = tensor((1, 4, 10, 10), "f32"), tensor(weight.shape, "f32"), tensor((1, 3, 8, 8), "f32")
    s = tensor((3,), "f32")
    return f"""func.func @f(%x: {x}) -> {y} {{
  %w = graph.constant dense<{weight.tolist()}> : {w}
  %y = graph.conv %x, %w strides [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [1, 1] lhs_dilation [1, 1] groups 1 : ({x}, {w}) -> {y}
  %s = graph.constant dense<{scale.tolist()}> : {s}
  %sb = graph.broadcast %s dims [1] : ({s}) -> {y}
  %z = graph.mul %y, %sb : {y}
  func.return %z : {y}
}}"""


def test_conv_scale_folded_into_weights_within_its_bound():
    """conv(x, w)·s → conv(x, RN(w·s)): one rounding of each weight (u·|s|·(|x| ∗ |w|))
    replaces the rounding of each product (u·|y|); with the K = 36 FMAs:
    |ŷ − y| ≤ (γ_K + u)·|s|·(|x| ∗ |w|) + u·|y|."""
    rng = np.random.default_rng(9)
    weight = rng.uniform(0, 1, (3, 4, 3, 3)).astype(np.float32)
    scale = np.array([0.1, 3.3, -7.7], np.float32)
    text = conv_scaled(weight, scale)
    lowered, kernels = compile_graph(text, canonicalize=True)
    assert not any(op.name == "graph.mul" for k in kernels for op in k.walk())  # folded
    x = rng.uniform(0, 1, (1, 4, 10, 10)).astype(np.float32)
    (got,) = simulate(lowered, [x])
    (want,) = exact(text, [x])
    w64 = np.abs(weight.astype(np.float64))
    windows = np.lib.stride_tricks.sliding_window_view(np.abs(x.astype(np.float64)), (3, 3), axis=(2, 3))
    magnitude = np.einsum("bchwij,ocij->bohw", windows, w64) * np.abs(scale.astype(np.float64))[None, :, None, None]
    bound = (gamma(36) + U32) * magnitude + U32 * np.abs(want)
    check_bound(np.abs(got - want), bound)


# -- segment (bag) reductions (fsir/lowering/segments.py) ---------------------------------

def segment_sum(rows: int, segments: int, dim: int) -> str:
    d, o, r = tensor((rows, dim), "f32"), tensor((segments,), "i32"), tensor((segments, dim), "f32")
    return f"""func.func @f(%d: {d}, %o: {o}) -> {r} {{
  %b = graph.segment_reduce sum %d, %o : ({d}, {o}) -> {r}
  func.return %b : {r}
}}"""


@pytest.mark.parametrize("schedule", ["thread", "warp", "block"])
def test_segment_sum_within_gamma_of_its_depth(schedule):
    """|ŝ − s| ≤ γ_d·Σ|x|, d = ⌈L/lanes⌉ + log2(lanes) (+ the warps whose partials
    the first lane of a run longer than a warp adds in turn) for a bag of L rows."""
    rows, segments, dim = 4096, 8, 32
    text = segment_sum(rows, segments, dim)
    lowered, (kernel,) = compile_graph(text, rows=schedule)
    lanes = kernel.params.lanes
    length = rows // segments
    d = -(-length // lanes) + math.ceil(math.log2(lanes)) + (lanes // 32 if lanes > 32 else 0)
    data = np.random.default_rng(10).uniform(0, 1, (rows, dim)).astype(np.float32)
    offsets = np.arange(0, rows, length, dtype=np.int32)
    (got,) = simulate(lowered, [data, offsets])
    (want,) = exact(text, [data, offsets])
    magnitude = np.abs(data.astype(np.float64)).reshape(segments, length, dim).sum(1)
    check_bound(np.abs(got - want), gamma(d) * magnitude)


# -- fused GEMM epilogues and prologues ---------------------------------------------------

def fused(text: str) -> str:
    """`text` with its function's graph ops in one stitch.fusion: the kernel the
    explorer may choose, built whatever the latency-evaluator would say."""
    from fsir.dialects.stitch import make_fusion

    module = parse_module(text, "<test>")
    (func,) = module.ops
    make_fusion([op for op in func.body.block.ops if op.name.startswith("graph.")])  # type: ignore[attr-defined]
    return str(module)


def identity_dot_inputs(m: int, n: int, seed: int) -> list[np.ndarray]:
    """Rows 100 + N(0, 1) times an identity: each product is an FMA chain adding one
    exact product to zeros, so the GEMM is exact and what is measured is its epilogue."""
    x = (100 + np.random.default_rng(seed).standard_normal((m, n))).astype(np.float32)
    return [x, np.eye(n, dtype=np.float32)]


def centred_rows(m: int, n: int) -> str:
    """x·w minus its rows' means: the first half of a LayerNorm epilogue."""
    a, w, y, r = tensor((m, n), "f32"), tensor((n, n), "f32"), tensor((m, n), "f32"), tensor((m,), "f32")
    return f"""func.func @f(%x: {a}, %w: {w}) -> {y} {{
  %d = graph.dot %x, %w : ({a}, {w}) -> {y}
  %s = graph.reduce sum %d dims [1] : ({y}) -> {r}
  %cn = graph.constant dense<{float(n)}> : {r}
  %mean = graph.div %s, %cn : {r}
  %mb = graph.broadcast %mean dims [0] : ({r}) -> {y}
  %c = graph.sub %d, %mb : {y}
  func.return %c : {y}
}}"""


@pytest.mark.parametrize("gemm", ["auto", "16x64x16/1x8"])
def test_row_epilogue_sum_within_gamma_of_its_depth(gemm):
    """A row reduction in a GEMM epilogue (`fsir/lowering/row_epilogue.py`): a thread
    adds its tn columns, then log2(bn/tn) xor-shuffles, so |ŝ − s| ≤ γ_d·Σ|x| with
    d = tn + log2(bn/tn). Measured on x − mean(x) over rows 100 + N(0, 1) (an exact
    GEMM, n a power of two so the division is exact): the subtraction is exact
    (Sterbenz), so the centred value's error is the sum's error / n."""
    m, n = 32, 64
    text = centred_rows(m, n)
    lowered, (kernel,) = compile_graph(fused(text), fusion="none", gemm=gemm)
    p = kernel.params
    assert isinstance(p, GemmParamsAttr) and not p.tensor_cores and p.tile_n >= n  # the row epilogue
    lanes = p.tile_n // p.thread_n
    d = p.thread_n + int(math.log2(lanes))
    ins = identity_dot_inputs(m, n, 11)
    (got,) = simulate(lowered, ins)
    (want,) = exact(text, ins)
    magnitude = np.abs(ins[0].astype(np.float64)).sum(1, keepdims=True) / n
    check_bound(np.abs(got - want), gamma(d) * magnitude + U32 * np.abs(want))


def tile_moments_graph(m: int, n: int, w: int) -> str:
    a, sq, y, p = tensor((m, n), "f32"), tensor((n, n), "f32"), tensor((m, n), "f32"), tensor((m, n // w, 2), "f32")
    return f"""func.func @f(%x: {a}, %w: {sq}) -> ({y}, {p}) {{
  %d = graph.dot %x, %w : ({a}, {sq}) -> {y}
  %p = graph.tile_moments %d tile {w} : ({y}) -> {p}
  func.return %d, %p : {y}, {p}
}}"""


def test_gemm_partial_moments_within_gamma_of_their_depth():
    """The partial moments a GEMM epilogue writes (`fsir/lowering/ln_partials.py`): per
    tile of w columns a lane adds its w/s columns, then log2 s shuffles over the tile's
    s lanes, so d = w/s + log2 s and |m̂ − m| ≤ δm = γ_d·Σ|x|/w (w a power of two: the
    division is exact). M2 sums fma(x − m̂, x − m̂, ·) along the same tree; the
    deviations from m̂ add w·(m̂ − m)² to M2 and round twice, so
    |M̂2 − M2| ≤ γ_(d+2)·(M2 + w·δm²) + w·δm². Rows 100 + N(0, 1)."""
    m, n, w = 32, 128, 32
    text = tile_moments_graph(m, n, w)
    lowered, (kernel,) = compile_graph(fused(text), fusion="none", gemm="32x32x16/4x4")
    p = kernel.params
    assert isinstance(p, GemmParamsAttr) and not p.tensor_cores
    assert any(op.name == "graph.tile_moments" for op in kernel.walk())
    span = min(w, p.tile_n // p.thread_n)  # the lanes holding one tile (chunks of 1 or 4: the same here)
    d = w // span + int(math.log2(span))
    ins = identity_dot_inputs(m, n, 12)
    got = simulate(lowered, ins)[1]
    tiles = ins[0].astype(np.float64).reshape(m, n // w, w)
    mean = tiles.mean(-1)
    m2 = ((tiles - mean[..., None]) ** 2).sum(-1)
    d_mean = gamma(d) * np.abs(tiles).sum(-1) / w
    check_bound(np.abs(got[..., 0] - mean), d_mean)
    check_bound(np.abs(got[..., 1] - m2), gamma(d + 2) * (m2 + w * d_mean**2) + w * d_mean**2)


def bag_columns(batch: int, bags: tuple[int, ...], dims: tuple[int, ...], rows: int) -> str:
    """Embedding columns: column i gathers `bags[i]` rows of a [rows, dims[i]] table per
    batch row and sums them; the bags are concatenated (the `columns` mapping)."""
    args, body, names, types = [], [], [], []
    for i, (bag, dim) in enumerate(zip(bags, dims)):
        ids, table = tensor((batch, bag), "i32"), tensor((rows, dim), "f32")
        e, r = tensor((batch, bag, dim), "f32"), tensor((batch, dim), "f32")
        args += [f"%ids{i}: {ids}", f"%t{i}: {table}"]
        body += [f"%e{i} = graph.gather %t{i}, %ids{i} : ({table}, {ids}) -> {e}",
                 f"%r{i} = graph.reduce sum %e{i} dims [1] : ({e}) -> {r}"]
        names.append(f"%r{i}")
        types.append(r)
    out = tensor((batch, sum(dims)), "f32")
    body.append(f"%x = graph.concat {', '.join(names)} dim 1 : ({', '.join(types)}) -> {out}")
    lines = "\n  ".join(body)
    return f"func.func @f({', '.join(args)}) -> {out} {{\n  {lines}\n  func.return %x : {out}\n}}"


def test_column_bag_sums_within_gamma_of_their_depth():
    """Embedding bags in the `columns` kernel (`fsir/lowering/columns.py`): the lanes of
    a (row, element) walk the bag with stride `lanes`, then a butterfly, so
    |ŝ − s| ≤ γ_d·Σ|x| with d = ⌈L/lanes⌉ + log2 lanes for a bag of L rows. Tables
    100 + N(0, 1): the sums grow, and every rounding is of about the same size."""
    batch, bags, dims, rows = 8, (200, 64), (16, 8), 100
    text = bag_columns(batch, bags, dims, rows)
    lowered, (kernel,) = compile_graph(text)
    assert kernel.params.MAPPING.value == "columns"
    params = kernel.params
    assert isinstance(params, ColumnsParamsAttr)
    lanes = list(params.lanes)
    rng = np.random.default_rng(13)
    ins = []
    for bag, dim in zip(bags, dims):
        ins += [rng.integers(0, rows, (batch, bag)).astype(np.int32),
                (100 + rng.standard_normal((rows, dim))).astype(np.float32)]
    (got,) = simulate(lowered, ins)
    (want,) = exact(text, ins)
    bounds = []
    for i, (bag, lane) in enumerate(zip(bags, lanes)):
        d = -(-bag // lane) + int(math.log2(lane))
        magnitude = np.abs(ins[2 * i + 1].astype(np.float64))[ins[2 * i]].sum(1)
        bounds.append(gamma(d) * magnitude)
    check_bound(np.abs(got - want), np.concatenate(bounds, 1))


def normalised_dot(m: int, k: int, n: int) -> str:
    """LayerNorm(x)·w with the row statistics (mean, rstd) given: a GEMM prologue."""
    x, w, y, r, v = (tensor(s, "f32") for s in ((m, k), (k, n), (m, n), (m,), (k,)))
    return f"""func.func @f(%x: {x}, %mean: {r}, %rstd: {r}, %g: {v}, %b: {v}, %w: {w}) -> {y} {{
  %mb = graph.broadcast %mean dims [0] : ({r}) -> {x}
  %rb = graph.broadcast %rstd dims [0] : ({r}) -> {x}
  %gb = graph.broadcast %g dims [1] : ({v}) -> {x}
  %bb = graph.broadcast %b dims [1] : ({v}) -> {x}
  %xc = graph.sub %x, %mb : {x}
  %xn = graph.mul %xc, %rb : {x}
  %xg = graph.mul %xn, %gb : {x}
  %xb = graph.add %xg, %bb : {x}
  %d = graph.dot %xb, %w : ({x}, {w}) -> {y}
  func.return %d : {y}
}}"""


def dot_epilogue(m: int, k: int, n: int, t: str) -> str:
    """tanh(a·w + bias)·a scale: a GEMM epilogue."""
    a, w, y, v = (tensor(s, t) for s in ((m, k), (k, n), (m, n), (n,)))
    return f"""func.func @f(%a: {a}, %w: {w}, %bias: {v}) -> {y} {{
  %d = graph.dot %a, %w : ({a}, {w}) -> {y}
  %bb = graph.broadcast %bias dims [1] : ({v}) -> {y}
  %h = graph.add %d, %bb : {y}
  %e = graph.tanh %h : {y}
  %c = graph.constant dense<0.3> : {y}
  %o = graph.mul %e, %c : {y}
  func.return %o : {y}
}}"""


@pytest.mark.parametrize("case", ["prologue", "epilogue_f32_split_k", "epilogue_f16_split_k"])
def test_gemm_prologue_and_epilogue_give_the_unfused_bits(case):
    """A LayerNorm normalisation inlined into the A-tile loads with its row statistics
    hoisted before the k-loop (`fsir/lowering/prologue.py`), and consumers run on the
    rounded product (in the last of the split-K slices,
    `fsir/codegen/mappings/epilogue.py`), compute the same ops in the same order as
    separate kernels: the same GEMM config gives the same bits, fused or not."""
    rng = np.random.default_rng(14)
    if case == "prologue":
        m, k, n = 40, 64, 48
        text, gemm = normalised_dot(m, k, n), "32x32x16/4x4"
        x = (100 + rng.standard_normal((m, k))).astype(np.float32)
        mean = x.mean(1).astype(np.float32)
        rstd = (1 / x.std(1)).astype(np.float32)
        ins = [x, mean, rstd, rng.uniform(0.5, 1.5, k).astype(np.float32),
               rng.standard_normal(k).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)]
    else:
        # f32: another split or order would change most outputs' bits; f16: the product
        # is rounded before the epilogue, as the separate GEMM's stored output is
        t = case.split("_")[1]
        m, k, n = 24, 128, 40
        text, gemm = dot_epilogue(m, k, n, t), "16x16x8_2x2_s4"
        ins = [(rng.standard_normal(s) / 4).astype(DTYPE[t]) for s in ((m, k), (k, n), (n,))]
    fused_module, kernels = compile_graph(fused(text), fusion="none", gemm=gemm)
    (kernel,) = kernels
    ops = {op.name for op in kernel.walk()}
    assert isinstance(kernel.params, GemmParamsAttr) and "graph.dot" in ops
    if case == "prologue":
        from fsir.lowering.prologue import row_statistics

        (dot_op,) = [op for op in kernel.walk() if op.name == "graph.dot"]
        assert "graph.sub" in ops and row_statistics(dot_op, set(kernel.body.block.args))
    else:
        assert kernel.params.split_k == 4 and "graph.tanh" in ops
    separate, kernels = compile_graph(text, fusion="none", gemm=gemm)
    assert len(kernels) > 1
    (got,) = simulate(fused_module, ins)
    (want,) = simulate(separate, ins)
    assert np.array_equal(got, want)
