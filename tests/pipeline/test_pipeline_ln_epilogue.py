"""A LayerNorm fused into the epilogue of the GEMM producing its input, when a block
tile spans the whole row (`fsir/lowering/row_epilogue.py`): x·w + bias (+ residual)
normalised over the rows is one kernel, on the simulator against the reference in f32
and f16, with a large mean offset (+100) so a statistic that cancelled would show,
and its PTX assembles with ptxas."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.dialects.schedule import GemmMath, GemmParamsAttr, KernelOp
from fsir.dialects.stitch import make_fusion
from fsir.errors import UserError
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.testing.pipeline import check


def _t(shape: tuple[int, ...], t: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{t}>"


def dot_layernorm(m: int, k: int, n: int, t: str = "f32", batch: int = 2) -> str:
    """LayerNorm(x·w + b + r) over the last dim (n), with γ and β."""
    x, w, v, y, r = _t((batch, m, k), t), _t((k, n), t), _t((n,), t), _t((batch, m, n), t), _t((batch, m), t)
    return f"""
func.func @f(%x: {x}, %w: {w}, %b: {v}, %res: {y}, %gamma: {v}, %beta: {v}) -> {y} {{
  %d = graph.dot %x, %w : ({x}, {w}) -> {y}
  %bb = graph.broadcast %b dims [2] : ({v}) -> {y}
  %h = graph.add %d, %bb : {y}
  %z = graph.add %h, %res : {y}
  %cn = graph.constant dense<{float(n)}> : {r}
  %eps = graph.constant dense<1.0e-05> : {r}
  %sum = graph.reduce sum %z dims [2] : ({y}) -> {r}
  %mean = graph.div %sum, %cn : {r}
  %mean_b = graph.broadcast %mean dims [0, 1] : ({r}) -> {y}
  %xc = graph.sub %z, %mean_b : {y}
  %sq = graph.mul %xc, %xc : {y}
  %sqsum = graph.reduce sum %sq dims [2] : ({y}) -> {r}
  %var = graph.div %sqsum, %cn : {r}
  %ve = graph.add %var, %eps : {r}
  %rstd = graph.rsqrt %ve : {r}
  %rstd_b = graph.broadcast %rstd dims [0, 1] : ({r}) -> {y}
  %xn = graph.mul %xc, %rstd_b : {y}
  %gb = graph.broadcast %gamma dims [2] : ({v}) -> {y}
  %g = graph.mul %xn, %gb : {y}
  %beb = graph.broadcast %beta dims [2] : ({v}) -> {y}
  %out = graph.add %g, %beb : {y}
  func.return %out : {y}
}}
"""


def _inputs(m: int, k: int, n: int, dtype, offset: float, batch: int = 2, seed: int = 0):
    """Small products plus a residual around `offset`: the normalised rows' mean is
    about `offset`, their spread about 1."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((batch, m, k)) / np.sqrt(k)).astype(dtype)
    w = rng.standard_normal((k, n)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    res = (offset + rng.standard_normal((batch, m, n))).astype(dtype)
    gamma = (1 + 0.1 * rng.standard_normal(n)).astype(dtype)
    beta = (0.1 * rng.standard_normal(n)).astype(dtype)
    return [x, w, b, res, gamma, beta]


def _kernels(lowered) -> list[str]:
    from fsir.dialects import gpu

    return [op.sym_name.data for op in lowered.walk() if isinstance(op, gpu.FuncOp)]


def fused(text: str) -> str:
    """`text` with its function's graph ops in one stitch.fusion (the kernel the
    explorer may choose, built whatever the latency-evaluator would say)."""
    module = parse_module(text, "<test>")
    (func,) = module.ops
    make_fusion([op for op in func.body.block.ops if op.name.startswith("graph.")])  # type: ignore[attr-defined]
    return str(module)


@pytest.mark.parametrize("t,dtype", [("f32", np.float32), ("f16", np.float16)])
@pytest.mark.parametrize("m,k,n", [(32, 48, 64), (20, 40, 33), (16, 32, 100)])
def test_layernorm_epilogue_kernel_matches(t, dtype, m, k, n):
    """Rows of 64 (a 64-wide tile), 33 (a guarded tile column) and 100 (a 128-wide
    tile); 20 rows guard the tile's rows. The product's rows have mean ≈ 100."""
    lowered = check(fused(dot_layernorm(m, k, n, t)), inputs=_inputs(m, k, n, dtype, 100.0))
    assert len(_kernels(lowered)) == 1


def test_explorer_chooses_the_layernorm_epilogue():
    """With 128 rows of 64 the latency-evaluator prefers the one kernel to the GEMM and
    a row kernel (the lit test gemm-ln-epilogue.mlir shows the fusion)."""
    lowered = check(dot_layernorm(64, 48, 64), fusion="stitch", inputs=_inputs(64, 48, 64, np.float32, 100.0))
    assert len(_kernels(lowered)) == 1


def test_layernorm_epilogue_schedule():
    """The kernel is a gemm whose block tile spans the row, on the FMA path also for
    f16 (the tensor-core tiles do not take a row-reducing epilogue)."""
    for t in ("f32", "f16"):
        scheduled = lower(parse_module(fused(dot_layernorm(32, 48, 64, t)), "<test>"),
                          PipelineOptions(fusion="none"), until="stitch-codegen")
        (kernel,) = [op for op in scheduled.walk() if isinstance(op, KernelOp)]
        assert kernel.mapping.data.value == "gemm"
        p = kernel.params
        assert isinstance(p, GemmParamsAttr) and p.tile_n >= 64 and p.math == GemmMath.FMA


def test_forced_narrow_tile_is_refused():
    """A forced configuration whose tile does not span the row: a located error."""
    text = fused(dot_layernorm(32, 48, 64))
    with pytest.raises(UserError, match="must span the 64 columns of a row"):
        lower(parse_module(text, "<test>"), PipelineOptions(fusion="none", gemm="32x32x16_2x2"),
              until="stitch-codegen")


def test_layernorm_after_a_reshape(  # HLO and ONNX exports multiply [B·S, K] matrices
):
    """The product [B·S, N] reshaped to [B, S, N] before the bias and the LayerNorm: the
    rows are kept, so the epilogue still normalises them in the GEMM kernel."""
    text = dot_layernorm(16, 48, 64).replace(
        "%d = graph.dot %x, %w : (tensor<2x16x48xf32>, tensor<48x64xf32>) -> tensor<2x16x64xf32>",
        "%x2 = graph.reshape %x : (tensor<2x16x48xf32>) -> tensor<32x48xf32>\n"
        "  %d2 = graph.dot %x2, %w : (tensor<32x48xf32>, tensor<48x64xf32>) -> tensor<32x64xf32>\n"
        "  %d = graph.reshape %d2 : (tensor<32x64xf32>) -> tensor<2x16x64xf32>")
    assert "%d2 = graph.dot" in text
    lowered = check(fused(text), inputs=_inputs(16, 48, 64, np.float32, 100.0))
    assert len(_kernels(lowered)) == 1


@pytest.mark.parametrize("m,k,n", [(32, 48, 64), (16, 32, 100)])
def test_summary_agrees_with_the_simulator(m, k, n):
    """The cost summary of the kernel (`tiled_summary` with the row reductions'
    shuffles, `row_reduction_counts`) against the simulator's counters: distinct bytes
    exact, requested bytes exact where no tile column is guarded, load/store/shuffle
    instructions within 5%."""
    import math

    from fsir.codegen.mappings import mapping_of
    from fsir.gpuspec import gpu_spec
    from fsir.runtime.executor import execute

    text = fused(dot_layernorm(m, k, n))
    options = PipelineOptions(fusion="none", gpu="A100")
    scheduled = lower(parse_module(text, "<test>"), options, until="stitch-codegen")
    (kernel,) = [op for op in scheduled.walk() if isinstance(op, KernelOp)]
    s = mapping_of(kernel).summarize(kernel, gpu_spec("A100"))
    assert s.counts["shuffle"] > 0
    _, st = execute(lower(parse_module(text, "<test>"), options), _inputs(m, k, n, np.float32, 100.0))
    grid, block = kernel.launch()
    threads = math.prod(grid) * math.prod(block)
    assert s.distinct_bytes == st.global_unique_bytes
    if n % 64 == 0:
        assert s.global_bytes * threads == st.global_bytes
    lsu = (s.counts["global"] + s.counts["smem"] + s.counts["shuffle"]) * threads
    assert 0.95 * st.lsu_instructions <= lsu <= 1.05 * st.lsu_instructions


@pytest.mark.parametrize("n", [64, 33])
def test_softmax_epilogue(n):
    """Any row reduction kind: softmax(x·w) over rows of 64 and 33 (the guarded tile
    columns contribute max's identity, -inf, and sum's, 0)."""
    m, k = 24, 16
    x, w, y, r = _t((m, k), "f32"), _t((k, n), "f32"), _t((m, n), "f32"), _t((m,), "f32")
    text = f"""
func.func @f(%x: {x}, %w: {w}) -> {y} {{
  %d = graph.dot %x, %w : ({x}, {w}) -> {y}
  %mx = graph.reduce max %d dims [1] : ({y}) -> {r}
  %mxb = graph.broadcast %mx dims [0] : ({r}) -> {y}
  %s = graph.sub %d, %mxb : {y}
  %e = graph.exp %s : {y}
  %sum = graph.reduce sum %e dims [1] : ({y}) -> {r}
  %sb = graph.broadcast %sum dims [0] : ({r}) -> {y}
  %p = graph.div %e, %sb : {y}
  func.return %p : {y}
}}
"""
    lowered = check(fused(text))
    assert len(_kernels(lowered)) == 1
