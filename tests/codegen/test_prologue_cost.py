"""The cost summary of a GEMM with a LayerNorm prologue (`fsir/codegen/mappings/prologue.py`)
against the simulator's counters: the statistics (mean, rstd) are loaded once per
staged A row before the k-loop and γ, β once per k-step, so the summary's requested
global bytes equal the simulator's exactly, on the FMA kernel and on the tensor cores
(staged synchronously), as for plain GEMMs (`test_gemm_cost.py`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fsir.codegen.mappings.prologue import prologue_loads
from fsir.gpuspec import gpu_spec
from fsir.pipeline import PipelineOptions
from fsir.testing.graphs import normalising_gemm
from fsir.testing.pipeline import simulate_kernel

A100 = gpu_spec("A100")


@pytest.mark.parametrize("t,gemm", [("f32", "64x32x16_4x2"), ("f16", "32x32x32_16x16_f16")])
def test_prologue_summary_bytes_agree_with_the_simulator(t, gemm):
    m, k, n = 128, 64, 64
    text = normalising_gemm((m, k), n, t)
    options = PipelineOptions(fusion="none", gemm=gemm, gpu="A100")
    dtype = {"f16": np.float16, "f32": np.float32}[t]
    shapes = [(m, k), (m,), (m,), (k,), (k,), (k, n)]
    kernel, s, _, st = simulate_kernel(text, options, shapes, dtype)

    # the summary knows the prologue's row statistics and column vectors
    (group,) = kernel.groups()
    (dot,) = [op for op in group.block.ops if op.name == "graph.dot"]
    pro = prologue_loads(dot.results[0], set(kernel.block.args))
    assert len(pro.rows) == 2 and len(pro.columns) == 2

    grid, block = kernel.launch()
    threads = math.prod(grid) * math.prod(block)
    assert s.global_bytes * threads == st.global_bytes
    assert s.distinct_bytes == st.global_unique_bytes
    lsu = (s.counts["global"] + s.counts["smem"] + s.counts["shuffle"]) * threads
    assert 0.7 * st.lsu_instructions <= lsu <= st.lsu_instructions
