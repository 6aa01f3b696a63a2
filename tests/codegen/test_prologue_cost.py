"""The cost summary of a GEMM with a LayerNorm prologue (`fsir/codegen/mappings/prologue.py`)
against the simulator's counters: the statistics (mean, rstd) are loaded once per
staged A row before the k-loop and γ, β once per k-step, so the summary's requested
global bytes equal the simulator's exactly, on the FMA kernel and on the tensor cores
(staged synchronously), as for plain GEMMs (`test_gemm_cost.py`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fsir.codegen.mappings import mapping_of
from fsir.codegen.mappings.prologue import prologue_loads
from fsir.dialects.schedule import KernelOp
from fsir.gpuspec import gpu_spec
from fsir.ir import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute

A100 = gpu_spec("A100")


def normalising_gemm(m: int, k: int, n: int, t: str) -> str:
    """The GEMM kernel of a statistics kernel + normalising GEMM plan: x·w with
    x normalised by per-row mean and rstd and per-column γ and β while loading."""
    x, w, v, r, o = (f"tensor<{s}x{t}>" for s in (f"{m}x{k}", f"{k}x{n}", k, m, f"{m}x{n}"))
    return f"""
func.func @f(%x: {x}, %mean: {r}, %rstd: {r}, %gamma: {v}, %beta: {v}, %w: {w}) -> {o} {{
  %y = stitch.fusion (%x, %mean, %rstd, %gamma, %beta, %w) : ({x}, {r}, {r}, {v}, {v}, {w}) -> {o} {{
  ^bb0(%xa: {x}, %mu: {r}, %rs: {r}, %ga: {v}, %be: {v}, %wa: {w}):
    %mu_b = graph.broadcast %mu dims [0] : ({r}) -> {x}
    %xc = graph.sub %xa, %mu_b : {x}
    %rs_b = graph.broadcast %rs dims [0] : ({r}) -> {x}
    %xn = graph.mul %xc, %rs_b : {x}
    %ga_b = graph.broadcast %ga dims [1] : ({v}) -> {x}
    %g = graph.mul %xn, %ga_b : {x}
    %be_b = graph.broadcast %be dims [1] : ({v}) -> {x}
    %a = graph.add %g, %be_b : {x}
    %d = graph.dot %a, %wa : ({x}, {w}) -> {o}
    stitch.yield %d : {o}
  }}
  func.return %y : {o}
}}
"""


@pytest.mark.parametrize("t,gemm", [("f32", "64x32x16_4x2"), ("f16", "32x32x32_16x16_f16")])
def test_prologue_summary_bytes_agree_with_the_simulator(t, gemm):
    m, k, n = 128, 64, 64
    text = normalising_gemm(m, k, n, t)
    options = PipelineOptions(fusion="none", gemm=gemm, gpu="A100")
    scheduled = lower(parse_module(text, "<test>"), options, until="stitch-codegen")
    (kernel,) = [op for op in scheduled.walk() if isinstance(op, KernelOp)]
    s = mapping_of(kernel).summarize(kernel, A100)

    # the summary knows the prologue's row statistics and column vectors
    (group,) = kernel.groups()
    (dot,) = [op for op in group.block.ops if op.name == "graph.dot"]
    pro = prologue_loads(dot.results[0], set(kernel.block.args))
    assert len(pro.rows) == 2 and len(pro.columns) == 2

    lowered = lower(parse_module(text, "<test>"), options)
    dtype = {"f16": np.float16, "f32": np.float32}[t]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape in ((m, k), (m,), (m,), (k,), (k,), (k, n))]
    _, st = execute(lowered, inputs)
    grid, block = kernel.launch()
    threads = math.prod(grid) * math.prod(block)
    assert s.global_bytes * threads == st.global_bytes
    assert s.distinct_bytes == st.global_unique_bytes
    lsu = (s.counts["global"] + s.counts["smem"] + s.counts["shuffle"]) * threads
    assert 0.7 * st.lsu_instructions <= lsu <= st.lsu_instructions
