"""GEMM kernels with a stitched epilogue (`fsir/codegen/mappings/epilogue.py`): the
elementwise consumers of a dot's result (bias add of a broadcast vector, GELU in its
tanh and erf forms, residual add, scale) are computed on the accumulators of the dot's
kernel, on the FMA path (f32) and on the tensor cores (f16, bf16). Each case runs on the
simulator against the numpy reference and its PTX assembles with ptxas."""

from __future__ import annotations

import pytest

from fsir.codegen.mappings.gemm import CANDIDATES
from fsir.dialects.schedule import KernelOp
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.testing.graphs import normalising_gemm
from fsir.testing.pipeline import check


def _t(shape: tuple[int, ...], t: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{t}>"


def layer(epilogue: str, t: str = "f32", m: int = 20, k: int = 40, n: int = 33) -> str:
    """x·w + b through `epilogue` (ops on %h, the biased product, ending in %y; %r is a
    residual of the result's shape)."""
    x, w, b, y = _t((2, m, k), t), _t((k, n), t), _t((n,), t), _t((2, m, n), t)
    body = "\n".join(f"  {line.strip()}" for line in epilogue.strip().splitlines()).replace("T", y)
    return f"""
func.func @f(%x: {x}, %w: {w}, %b: {b}, %r: {y}) -> {y} {{
  %d = graph.dot %x, %w : ({x}, {w}) -> {y}
  %bb = graph.broadcast %b dims [2] : ({b}) -> {y}
  %h = graph.add %d, %bb : {y}
{body}
  func.return %y : {y}
}}
"""


GELU_TANH = """
%c3 = graph.constant dense<0.044715> : T
%c1 = graph.constant dense<1.0> : T
%ch = graph.constant dense<0.5> : T
%cs = graph.constant dense<0.7978845608> : T
%h2 = graph.mul %h, %h : T
%h3 = graph.mul %h2, %h : T
%a = graph.mul %h3, %c3 : T
%i = graph.add %h, %a : T
%s = graph.mul %i, %cs : T
%th = graph.tanh %s : T
%o = graph.add %th, %c1 : T
%g = graph.mul %h, %o : T
%y = graph.mul %g, %ch : T
"""

GELU_ERF = """
%c1 = graph.constant dense<1.0> : T
%ch = graph.constant dense<0.5> : T
%cr = graph.constant dense<0.7071067811865476> : T
%s = graph.mul %h, %cr : T
%e = graph.erf %s : T
%o = graph.add %e, %c1 : T
%g = graph.mul %h, %o : T
%y = graph.mul %g, %ch : T
"""

RESIDUAL_SCALE = """
%c = graph.constant dense<0.125> : T
%s = graph.mul %h, %c : T
%y = graph.add %s, %r : T
"""

BIAS_ONLY = """
%y = graph.add %h, %r : T
"""

EPILOGUES = {"gelu_tanh": GELU_TANH, "gelu_erf": GELU_ERF, "residual_scale": RESIDUAL_SCALE}


def kernels(lowered) -> list:
    return [op for op in lowered.walk() if op.name == "gpu.launch_func"]


def planned(text: str, fusion: str = "stitch", **options) -> list[KernelOp]:
    module = lower(parse_module(text, "<test>"), PipelineOptions(fusion=fusion, **options), until="stitch-codegen")
    return [op for op in module.walk() if isinstance(op, KernelOp)]


@pytest.mark.parametrize("name", sorted(EPILOGUES))
def test_fma_epilogue_is_one_kernel_and_matches(name):
    text = layer(EPILOGUES[name])
    (k,) = planned(text)
    assert k.params.MAPPING == "gemm"
    assert any(op.name == "graph.dot" for op in k.walk())
    lowered = check(text, fusion="stitch")
    assert len(kernels(lowered)) == 1


@pytest.mark.parametrize("config", CANDIDATES[:3], ids=lambda c: c.text())
def test_fma_epilogue_every_configuration(config):
    """Ragged M and N (20 x 33): the epilogue runs only for the stored outputs."""
    lowered = check(layer(GELU_ERF), fusion="stitch", gemm=config.text().replace("/", "_"))
    assert len(kernels(lowered)) == 1


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("name", ["gelu_erf", "residual_scale"])
def test_tensor_core_epilogue(t, name):
    """The f32 accumulators of mma.sync go through the epilogue (the product rounded to
    the element type first, as the reference rounds the dot's result)."""
    text = layer(EPILOGUES[name], t, m=40, k=32, n=24)
    (k,) = planned(text)
    assert k.params.MAPPING == "gemm" and k.params.tensor_cores
    lowered = check(text, fusion="stitch")
    assert len(kernels(lowered)) == 1
    assert any(op.name == "gpu.mma_sync" for op in lowered.walk())


def test_xla_mode_keeps_the_dot_alone():
    """XLA's rules: a GEMM is a library call, its epilogue a second kernel."""
    text = layer(GELU_TANH)
    assert len(planned(text, fusion="xla")) == 2
    lowered = check(text, fusion="xla")
    assert len(kernels(lowered)) == 2


def test_a_dot_result_read_twice_stays_an_output():
    """The biased product also leaves the function: a GEMM kernel has one output, so
    the epilogue cannot absorb it."""
    y = _t((2, 20, 33), "f32")
    text = layer(BIAS_ONLY).replace(f"func.return %y : {y}", f"func.return %y, %h : {y}, {y}").replace(
        f"-> {y} {{", f"-> ({y}, {y}) {{")
    ks = planned(text)
    assert len(ks) == 2
    check(text, fusion="stitch")


RESHAPED = """
func.func @f(%x: tensor<40x24xf32>, %w: tensor<24x36xf32>, %b: tensor<36xf32>) -> tensor<2x20x36xf32> {
  %d = graph.dot %x, %w : (tensor<40x24xf32>, tensor<24x36xf32>) -> tensor<40x36xf32>
  %r = graph.reshape %d : (tensor<40x36xf32>) -> tensor<2x20x36xf32>
  %bb = graph.broadcast %b dims [2] : (tensor<36xf32>) -> tensor<2x20x36xf32>
  %h = graph.add %r, %bb : tensor<2x20x36xf32>
  %t = graph.tanh %h : tensor<2x20x36xf32>
  %y = graph.mul %h, %t : tensor<2x20x36xf32>
  func.return %y : tensor<2x20x36xf32>
}
"""


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_reshape_in_the_epilogue(t):
    """An [M, N] product reshaped to [B, S, N] before its bias (as HLO and ONNX exports
    write it): each output element is stored at its own row-major position."""
    text = RESHAPED.replace("f32", t)
    (k,) = planned(text)
    assert k.params.MAPPING == "gemm"
    lowered = check(text, fusion="stitch")
    assert len(kernels(lowered)) == 1


def test_reshape_to_another_order_is_refused():
    """A transpose between the product and the epilogue reads another element: the
    explorer keeps the dot's kernel apart."""
    text = RESHAPED.replace(
        "%r = graph.reshape %d : (tensor<40x36xf32>) -> tensor<2x20x36xf32>",
        "%q = graph.transpose %d perm [1, 0] : (tensor<40x36xf32>) -> tensor<36x40xf32>\n"
        "  %r = graph.reshape %q : (tensor<36x40xf32>) -> tensor<2x20x36xf32>")
    assert len(planned(text)) == 2
    check(text, fusion="stitch")


def prologue_layer(t: str, m: int = 40, k: int = 48, n: int = 24) -> str:
    """LayerNorm → dot as a statistics kernel (mean, rstd per row) and a GEMM that
    normalises its A tiles while loading them, with a bias + ReLU epilogue."""
    x, w, v, r, o = _t((m, k), t), _t((k, n), t), _t((k,), t), _t((m,), t), _t((m, n), t)
    bn = _t((n,), t)
    return f"""
func.func @f(%x: {x}, %gamma: {v}, %beta: {v}, %w: {w}, %b: {bn}) -> {o} {{
  %mean, %rstd = stitch.fusion (%x) : ({x}) -> ({r}, {r}) {{
  ^bb0(%xa: {x}):
    %n = graph.constant dense<{k}.0> : {r}
    %eps = graph.constant dense<1.0e-05> : {r}
    %sum = graph.reduce sum %xa dims [1] : ({x}) -> {r}
    %mu = graph.div %sum, %n : {r}
    %mu_b = graph.broadcast %mu dims [0] : ({r}) -> {x}
    %xc = graph.sub %xa, %mu_b : {x}
    %sq = graph.mul %xc, %xc : {x}
    %sqsum = graph.reduce sum %sq dims [1] : ({x}) -> {r}
    %var = graph.div %sqsum, %n : {r}
    %ve = graph.add %var, %eps : {r}
    %rs = graph.rsqrt %ve : {r}
    stitch.yield %mu, %rs : {r}, {r}
  }}
  %y = stitch.fusion (%x, %mean, %rstd, %gamma, %beta, %w, %b) : ({x}, {r}, {r}, {v}, {v}, {w}, {bn}) -> {o} {{
  ^bb0(%xa: {x}, %mu: {r}, %rs: {r}, %ga: {v}, %be: {v}, %wa: {w}, %ba: {bn}):
    %mu_b = graph.broadcast %mu dims [0] : ({r}) -> {x}
    %xc = graph.sub %xa, %mu_b : {x}
    %rs_b = graph.broadcast %rs dims [0] : ({r}) -> {x}
    %xn = graph.mul %xc, %rs_b : {x}
    %ga_b = graph.broadcast %ga dims [1] : ({v}) -> {x}
    %g = graph.mul %xn, %ga_b : {x}
    %be_b = graph.broadcast %be dims [1] : ({v}) -> {x}
    %a = graph.add %g, %be_b : {x}
    %d = graph.dot %a, %wa : ({x}, {w}) -> {o}
    %bb = graph.broadcast %ba dims [1] : ({bn}) -> {o}
    %h = graph.add %d, %bb : {o}
    %z = graph.constant dense<0.0> : {o}
    %relu = graph.max %h, %z : {o}
    stitch.yield %relu : {o}
  }}
  func.return %y : {o}
}}
"""


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_layernorm_prologue(t):
    """The GEMM kernel applies (x - mean[row]) * rstd[row] * gamma + beta to each
    element of its A tiles (f32: the FMA kernel; f16: staged synchronously for the
    tensor cores) and its bias + ReLU epilogue to the accumulators."""
    lowered = check(prologue_layer(t))
    assert len(kernels(lowered)) == 2
    assert (t == "f16") == any(op.name == "gpu.mma_sync" for op in lowered.walk())


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_layernorm_prologue_hoisted_statistics(t):
    """Tile-aligned sizes (no guards): the GEMM loads mean and rstd once per staged
    row before its k-loop (none inside it), γ and β once per k-step, and matches the
    reference (f32: FMA kernel; f16: tensor cores, staged synchronously)."""
    from xdsl.dialects import memref, scf

    lowered = check(prologue_layer(t, m=128, k=64, n=64))
    (gemm,) = [op for op in lowered.walk() if op.name == "gpu.func" and op.sym_name.data == "f_k1"]
    args = gemm.body.blocks[0].args
    stats, vectors = set(args[1:3]), set(args[3:5])
    (loop,) = [op for op in gemm.walk() if isinstance(op, scf.ForOp)]
    inside = [op for op in loop.walk() if isinstance(op, memref.LoadOp)]
    hoisted = [op for op in gemm.walk() if isinstance(op, memref.LoadOp) and op.memref in stats]
    assert hoisted and not [op for op in inside if op.memref in stats]
    columns = [op for op in inside if op.memref in vectors]
    assert len(columns) == 2  # γ and β, shared by the thread's staged elements


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_layernorm_prologue_batched(t):
    """A [2, 40, 64] activation normalised by [2, 40] statistics (the BERT layer's
    layout, the batch on the dot's rows or grid z): each statistic is read at the
    element's batch and row, loaded before the k-loop, and the result matches."""
    from xdsl.dialects import memref, scf

    text = normalising_gemm((2, 40, 64), 24, t)
    lowered = check(text)
    (gemm,) = [op for op in lowered.walk() if op.name == "gpu.func"]
    stats = set(gemm.body.blocks[0].args[1:3])
    (loop,) = [op for op in gemm.walk() if isinstance(op, scf.ForOp)]
    assert [op for op in gemm.walk() if isinstance(op, memref.LoadOp) and op.memref in stats]
    assert not [op for op in loop.walk() if isinstance(op, memref.LoadOp) and op.memref in stats]


def test_tf32_epilogue():
    """precision=tf32 puts the f32 dot on the tensor cores (m16n8k8); its epilogue reads
    the f32 accumulators. Operands rounded to tf32: relative error ~2^-11 per product."""
    import numpy as np

    from fsir.runtime.executor import execute
    from fsir.runtime.reference import run

    text = layer(RESIDUAL_SCALE, m=32, k=32, n=24)
    module = parse_module(text, "<test>")
    lowered = lower(parse_module(text, "<test>"), PipelineOptions(fusion="stitch", precision="tf32"))
    assert len(kernels(lowered)) == 1 and any(op.name == "gpu.mma_sync" for op in lowered.walk())
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in ((2, 32, 32), (32, 24), (24,), (2, 32, 24))]
    (got,), _ = execute(lowered, inputs)
    (want,) = run(module, inputs)
    np.testing.assert_allclose(got, want, rtol=0, atol=32 * 2.0**-10 * 0.125 * 4)
