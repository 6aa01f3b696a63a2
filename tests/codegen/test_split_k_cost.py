"""The latency-evaluator's split-K costs (`add_split_reduction`) against the
simulator's counters, and the choice it makes with them.

A split kernel's summary is one slice's product (K / S) plus the reduction: the
running sums' loads and stores (2 (S - 1) / S per output element, in the output for an
f32 output, in the workspace for a 16-bit one), the output stores of the last slice
only, the semaphores. Stated agreement: requested global bytes within 0.5% (the
ticket, waits, posts and resets are the rest), distinct bytes exact (operands, output,
the workspace if any and semaphores), load/store-unit instructions within 30% and all
instructions 1x to 2.5x the summary's, as for unsplit GEMMs (test_gemm_cost.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects import scf
from xdsl.dialects.builtin import StringAttr

from fsir.codegen.latency import estimate, estimate_summary
from fsir.codegen.mappings import mapping_of
from fsir.codegen.mappings.gemm import SPLITS, GemmConfig, split_candidates, split_wait_cycles
from fsir.dialects import gpu
from fsir.gpuspec import gpu_spec
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.testing.graphs import dot as _dot
from fsir.testing.pipeline import scheduled_kernel, simulate_kernel

A100 = gpu_spec("A100")


def scheduled_gemm(m: int, n: int, k: int, t: str, gemm: str = "auto", precision: str = "fp32"):
    """(schedule kernel, its summary) of one dot on an A100."""
    return scheduled_kernel(_dot(m, n, k, t), PipelineOptions(fusion="none", gemm=gemm, gpu="A100",
                                                                precision=precision))


def compile_gemm(m: int, n: int, k: int, t: str, gemm: str):
    """(schedule kernel, its summary, the lowered module, the launch's LaunchStats);
    `t` = tf32 is an f32 dot under precision=tf32."""
    precision, elem = ("tf32", "f32") if t == "tf32" else ("fp32", t)
    options = PipelineOptions(fusion="none", gemm=gemm, precision=precision, gpu="A100")
    return simulate_kernel(_dot(m, n, k, elem), options, [(m, k), (k, n)], np.float32)


@pytest.mark.parametrize("m,n,k,t,gemm", [
    (128, 128, 512, "f32", "64x64x16_8x8_s4"),
    (128, 96, 192, "f32", "64x32x16_4x2_s3"),
    (128, 128, 512, "f16", "64x64x16_8x8_s4"),  # a 16-bit output: the f32 workspace
    (128, 128, 512, "tf32", "64x32x32_32x16_tf32_s4"),
])
def test_split_summary_counts_agree_with_the_simulator(m, n, k, t, gemm):
    kernel, s, lowered, st = compile_gemm(m, n, k, t, gemm)
    grid, block = kernel.launch()
    threads = math.prod(grid) * math.prod(block)
    tiles = math.prod(grid) // kernel.params.split_k
    assert s.global_bytes * threads == pytest.approx(st.global_bytes, rel=5e-3)
    workspace = tiles * kernel.params.tile_m * kernel.params.tile_n * 4 if t == "f16" else 0
    semaphores = (1 + tiles) * 4
    elem = 2 if t == "f16" else 4
    assert s.distinct_bytes == st.global_unique_bytes == elem * (m * k + k * n + m * n) + workspace + semaphores
    assert s.counts["tensor"] * threads == st.tensor_instructions
    lsu = (s.counts["global"] + s.counts["smem"] + s.counts["shuffle"]) * threads
    assert 0.7 * st.lsu_instructions <= lsu <= 1.3 * st.lsu_instructions
    total = sum(s.counts.values()) * threads
    assert total <= st.instructions <= 2.5 * total
    # the summary's cycles against the lowered kernel's (which counts its gpu IR: one
    # thread's instructions, without the waits for the tile's earlier slices)
    (f,) = [op for op in lowered.walk() if isinstance(op, gpu.FuncOp)]
    est = estimate_summary(s, grid, block, A100, bandwidth=True)
    exact = estimate(f, grid, block, A100, bandwidth=True, ilp=True, distinct_bytes=s.distinct_bytes)
    waits = split_wait_cycles(kernel, A100)
    # within 40%: the tf32 slice's summary is 35% below its gpu IR (2168 against 3338
    # cycles, measured), which runs each prologue stage and each running-sum update in
    # a branch of its own; a debt of the split summary, not a settled figure
    assert est.warp_cycles - waits == pytest.approx(exact.warp_cycles, rel=0.4)
    assert est.seconds >= exact.seconds


def test_ffn2_is_split_to_fill_the_sms():
    """The BERT layer's FFN2 product (256x3072 · 3072x768, f32) on an A100: its 64x64
    tiles make 48 blocks for 108 SMs; the evaluator splits K so that the grid fills
    them (nearly: 96 blocks of 128 threads), and the chosen kernel's estimate is below the best unsplit one's."""
    kernel, _ = scheduled_gemm(256, 768, 3072, "f32")
    assert kernel.cost is not None
    config = kernel.cost.data["config"]
    assert isinstance(config, StringAttr)
    assert kernel.params.split_k > 1, config.data
    grid, _ = kernel.launch()
    assert math.prod(grid) >= 0.8 * A100.sms  # unsplit: at most 48 blocks
    chosen = mapping_of(kernel).summarize(kernel, A100)
    split_us = estimate_summary(chosen, grid, kernel.launch()[1], A100, bandwidth=True).seconds
    for text in ("64x32x16_4x4", "64x64x16_8x8", "32x32x16_4x4"):
        whole, s = scheduled_gemm(256, 768, 3072, "f32", text)
        g, b = whole.launch()
        assert estimate_summary(s, g, b, A100, bandwidth=True).seconds > split_us, text


def test_no_split_when_the_grid_fills_the_sms():
    configs = [GemmConfig(64, 64, 16, 8, 8), GemmConfig(32, 32, 16, 4, 4)]
    assert split_candidates(configs, 1024, 1024, 1024, 1, A100) == []  # 256 and 1024 tiles
    # too few k-steps for a slice of MIN_SLICE_STEPS
    assert split_candidates(configs, 64, 64, 96, 1, A100) == []
    got = split_candidates(configs, 256, 768, 3072, 1, A100)
    assert {c.split for c in got} == set(SPLITS) and {(c.bm, c.bn) for c in got} == {(64, 64)}


def test_ffn2_is_split_under_tf32():
    """Under tf32 FFN2's tensor-core tiles make 24 (128x64) or 12 (128x128) blocks for
    108 SMs; its slices stage their operands with the unsplit kernel's hoisted chunk
    offsets, and the evaluator splits K (one f32 output: no workspace) until the grid
    covers most SMs."""
    kernel, s = scheduled_gemm(256, 768, 3072, "f32", precision="tf32")
    assert kernel.params.tensor_cores and kernel.params.split_k > 1
    grid, block = kernel.launch()
    assert math.prod(grid) >= 0.85 * A100.sms
    tiles = math.prod(grid) // kernel.params.split_k
    assert s.distinct_bytes == 4 * (256 * 3072 + 3072 * 768 + 256 * 768) + 4 * (1 + tiles)
    split_us = estimate_summary(s, grid, block, A100, bandwidth=True).seconds
    for text in ("64x32x32_32x16_tf32", "128x64x32_64x32_tf32"):
        whole, ws = scheduled_gemm(256, 768, 3072, "f32", text, precision="tf32")
        assert estimate_summary(ws, *whole.launch(), A100, bandwidth=True).seconds > split_us, text


def test_tf32_slices_stage_like_the_unsplit_kernel():
    """A slice's first k-step is known only at run time, yet its cp.async chunk
    offsets (the transposed B tile's one per element) are computed once before the
    k-loop, as the unsplit kernel's: its k-loop has the unsplit loop's index
    arithmetic, plus the slice's start (without the hoisting: 256 against 60)."""
    def loop_ops(gemm: str) -> tuple[int, int]:
        options = PipelineOptions(fusion="none", gemm=gemm, precision="tf32")
        lowered = lower(parse_module(_dot(128, 128, 512, "f32"), "<test>"), options)
        (loop,) = [op for op in lowered.walk() if isinstance(op, scf.ForOp)]
        names = [op.name for op in loop.body.walk()]
        return sum(n.startswith("arith.") for n in names), names.count("gpu.cp_async")

    whole, split = loop_ops("64x32x32_32x16_tf32"), loop_ops("64x32x32_32x16_tf32_s4")
    assert split[1] == whole[1] > 0
    assert whole[0] <= split[0] <= whole[0] + 2


def test_equal_estimates_go_to_fewer_requested_bytes():
    """Between equal estimated times (both at a pipe or bandwidth floor) `Mapping.choose`
    keeps the candidate whose threads request fewer global bytes from the L2, then the
    one issuing fewer warp cycles. (FFN2 under tf32: 128x128 and 128x64 tiles in 8
    slices, 49.5 against 68.4 requested MB.)"""
    from dataclasses import replace

    from fsir.codegen.mappings.base import _order

    kernel, s = scheduled_gemm(256, 768, 3072, "f32", "128x128x16_64x32_tf32_s8", precision="tf32")
    est = estimate_summary(s, *kernel.launch(), A100, bandwidth=True)
    more_bytes = replace(est, requested_bytes=1.4 * est.requested_bytes, cycles=0.5 * est.cycles,
                         warp_cycles=0.5 * est.warp_cycles)
    assert _order(est) < _order(more_bytes)
    more_cycles = replace(est, warp_cycles=est.warp_cycles + 1)
    assert _order(est) < _order(more_cycles)
    slower = replace(est, seconds=est.seconds * 1.01, requested_bytes=0.5 * est.requested_bytes)
    assert _order(est) < _order(slower)
