"""The latency-evaluator's GEMM costs against the simulator's counters.

A GEMM configuration's summary (`GemmMapping.summarize`: `tiled_summary` on the FMA
pipes, `mma_summary` on the tensor cores) states per thread what the kernel does; the
simulator counts what the printed PTX does. Stated agreement, on FMA, f16 and tf32
kernels of small and large tiles:

- tensor-core instructions and their multiply-adds, global bytes requested and
  distinct global bytes: exact;
- load/store-unit instructions (global, shared, ldmatrix, cp.async and its commit and
  wait, 4-wide shared loads of the FMA kernel's vector fragments): within 30% (the
  simulator also counts the kernel parameters' loads);
- all instructions: the simulator's are 1x to 2.5x the summary's, since it runs the
  PTX as printed (register moves, 64-bit index arithmetic) where the summary counts
  what ptxas keeps;
- the modeled memory time of the summary equals the one fs-bench computes from the
  simulator's counters, and the compute times differ by that instruction factor only.

Then the choice: a 512x768x768 f16 GEMM on an A100 gets tiles larger than the smallest
candidate, whose operand re-reads (requested bytes) and instructions the simulator
shows to be several times higher.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import FloatAttr, StringAttr

from fsir.codegen.kernel_time import kernel_time, launch_from_stats
from fsir.codegen.latency import bytes_in_flight, estimate, estimate_summary, tensor_fma_counts
from fsir.codegen.mappings import mapping_of
from fsir.codegen.mappings.gemm import VECTOR_CANDIDATES, GemmConfig
from fsir.codegen.mappings.gemm_tc import tc_candidates
from fsir.dialects import gpu, graph
from fsir.dialects.schedule import GemmMath, KernelOp, Mapping
from fsir.gpuspec import gpu_spec
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.testing.graphs import dot as _dot
from fsir.testing.pipeline import scheduled_kernel, simulate_kernel

A100 = gpu_spec("A100")


def _concat_dot(m: int, widths: list[int], k: int, t: str) -> str:
    """A dot whose B is the concat of weights `widths` wide (merged sibling dots)."""
    n = sum(widths)
    a, b, c = (f"tensor<{x}x{y}x{t}>" for x, y in ((m, k), (k, n), (m, n)))
    ws = [f"tensor<{k}x{w}x{t}>" for w in widths]
    args = ", ".join(f"%w{i}: {w}" for i, w in enumerate(ws))
    return f"""
func.func @f(%a: {a}, {args}) -> {c} {{
  %b = graph.concat {", ".join(f"%w{i}" for i in range(len(ws)))} dim 1 : ({", ".join(ws)}) -> {b}
  %d = graph.dot %a, %b : ({a}, {b}) -> {c}
  func.return %d : {c}
}}
"""


def compile_gemm(m: int, n: int | list[int], k: int, t: str, gemm: str = "auto"):
    """(schedule kernel, its summary, the lowered module, the launch's LaunchStats) of
    one dot; `t` = tf32 is an f32 dot under precision=tf32; `n` a list of widths: B is
    the concat of weights that wide, inlined into the GEMM (stitch mode)."""
    precision = "tf32" if t == "tf32" else "fp32"
    elem = "f32" if t == "tf32" else t
    widths = n if isinstance(n, list) else [n]
    text = _concat_dot(m, widths, k, elem) if isinstance(n, list) else _dot(m, n, k, elem)
    options = PipelineOptions(fusion="stitch" if isinstance(n, list) else "none", gemm=gemm, precision=precision,
                              gpu="A100")
    dtype = {"f16": np.float16, "f32": np.float32}[elem]
    return simulate_kernel(text, options, [(m, k), *((k, w) for w in widths)], dtype)


CASES = [
    (128, 96, 64, "f32", "64x32x16_4x2"),
    (128, 128, 128, "f32", "64x64x16_4x4"),
    (128, 128, 128, "f32", "64x64x16_8x8"),  # vector fragments, transposed A tile
    (128, 64, 64, "f32", "32x32x16_4x4"),  # vector fragments, 64 threads
    (256, 256, 128, "f16", "32x32x32_16x16_f16"),
    (128, 256, 128, "f16", "128x128x32_64x64_f16"),
    (128, 128, 64, "tf32", "64x64x32_32x32_tf32"),  # three cp.async stages (48 KB)
    (128, 128, 256, "tf32", "128x64x32_64x32_tf32"),  # two stages (48 KB)
    (128, 96, 64, "tf32", "64x32x32_32x16_tf32"),  # tf32's tall tile
    # B concatenated from three weights (merged Q, K, V): each tile from one weight ...
    (128, [64, 64, 64], 64, "f32", "64x64x16_4x4"),
    (128, [64, 64, 64], 64, "f32", "64x64x16_8x8"),  # vector fragments
    (128, [64, 64, 64], 64, "tf32", "64x64x32_32x32_tf32"),  # cp.async from the tile's weight
    # ... or, where tiles straddle the weights, each element searching them
    (128, [48, 48, 96], 64, "f32", "64x32x16_4x2"),
]


@pytest.mark.parametrize("m,n,k,t,gemm", CASES)
def test_summary_counts_agree_with_the_simulator(m, n, k, t, gemm):
    kernel, s, lowered, st = compile_gemm(m, n, k, t, gemm)
    grid, block = kernel.launch()
    threads = math.prod(grid) * math.prod(block)
    assert s.counts["tensor"] * threads == st.tensor_instructions
    assert sum(s.tensor_fmas.values()) * threads == st.tensor_flops // 2
    assert (s.tensor_fmas["tf32"] > 0) == (t == "tf32")
    assert s.global_bytes * threads == st.global_bytes
    assert s.distinct_bytes == st.global_unique_bytes
    lsu = (s.counts["global"] + s.counts["smem"] + s.counts["shuffle"]) * threads
    assert 0.7 * st.lsu_instructions <= lsu <= st.lsu_instructions
    total = sum(s.counts.values()) * threads
    assert total <= st.instructions <= 2.5 * total

    # the gpu IR's tensor multiply-adds (what `estimate` reads off the lowered kernel)
    (f,) = [op for op in lowered.walk() if isinstance(op, gpu.FuncOp)]
    ops = f.body.blocks[0].ops
    assert {p: n * threads for p, n in tensor_fma_counts(ops).items()} == {
        p: n * threads for p, n in s.tensor_fmas.items() if n}

    # the summary's modeled time against fs-bench's (the simulator's counters)
    est = estimate_summary(s, grid, block, A100, bandwidth=True)
    sim = kernel_time(launch_from_stats(st, math.prod(grid), math.prod(block), est.occupancy.blocks_per_sm,
                                        bytes_in_flight(ops) * A100.warp_size), A100)
    assert est.memory_seconds == pytest.approx(sim.memory, rel=0.01)
    assert est.compute_seconds <= sim.compute <= 2.5 * est.compute_seconds
    lowered_est = estimate(f, grid, block, A100, bandwidth=True, ilp=True, distinct_bytes=s.distinct_bytes)
    if lowered_est.occupancy == est.occupancy:  # (registers estimated apart may differ)
        assert lowered_est.memory_seconds == pytest.approx(est.memory_seconds, rel=0.01)


def scheduled_gemm(m: int, n: int, k: int, t: str, gemm: str = "auto"):
    """(schedule kernel, its summary) of one dot, without lowering or running it."""
    return scheduled_kernel(_dot(m, n, k, t), PipelineOptions(fusion="none", gemm=gemm, gpu="A100"))


@pytest.mark.parametrize("gemm", [GemmConfig(*t, math=GemmMath.TF32).text().replace("/", "_")
                                  for t in tc_candidates(GemmMath.TF32)])
def test_tf32_registers_match_ptxas(gemm):
    """A tf32 candidate's summary registers (which set its occupancy) are within 8 of
    ptxas -v's for its sm_80 code (FFN2's 256x3072x768 product; measured within 7 on
    every candidate, `mma_summary`)."""
    from fsir.ptx import print_ptx
    from fsir.ptx.ptxas import assemble

    options = PipelineOptions(fusion="none", gemm=gemm, gpu="A100", precision="tf32")
    text = _dot(256, 768, 3072, "f32")
    _, summary = scheduled_kernel(text, options)
    result = assemble(print_ptx(lower(parse_module(text, "<test>"), options), arch="sm_80"), "sm_80")
    assert result.ok, result.errors
    (kernel,) = result.kernels.values()
    assert abs(kernel.registers - summary.registers) <= 8, (kernel.registers, summary.registers)


def test_tensor_core_tiles_chosen_by_compute_and_reuse():
    """512x768x768 f16 on an A100: the smallest tensor-core tile (32x32, 16x16 warp
    tiles) re-reads A 24 and B 16 times and issues about twice the instructions of a
    64x64 tile for the same multiply-adds, while its 384 blocks keep the tensor cores
    no busier than 96 do; the evaluator picks a larger tile (the simulator counts 122M
    thread instructions and 37.7 MB of requested loads for 32x32, 60M and 18.9 MB for
    64x64; the summaries' requested bytes are exact, see above)."""
    kernel, chosen = scheduled_gemm(512, 768, 768, "f16")
    assert kernel.cost is not None
    config = kernel.cost.data["config"]
    assert isinstance(config, StringAttr)
    assert config.data == "gemm/64x64x32/32x32/f16"
    small_kernel, small = scheduled_gemm(512, 768, 768, "f16", "32x32x32_16x16_f16")

    def launch_bytes(k: KernelOp, s) -> int:
        grid, block = k.launch()
        return s.global_bytes * math.prod(grid) * math.prod(block)

    def launch_instructions(k: KernelOp, s) -> int:
        grid, block = k.launch()
        return sum(s.counts.values()) * math.prod(grid) * math.prod(block)

    assert launch_bytes(small_kernel, small) >= 1.9 * launch_bytes(kernel, chosen)
    assert launch_instructions(small_kernel, small) >= 1.5 * launch_instructions(kernel, chosen)
    assert chosen.distinct_bytes == small.distinct_bytes == 2 * (512 * 768 + 768 * 768 + 512 * 768)


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("precision, peak", [("fp32", "fp32"), ("tf32", "tensor_tf32")])
def test_bert_layer_gemms_cost_their_flops(precision, peak):
    """The BERT layer's GEMM kernels (stitch mode, A100): each estimate is at least its
    multiply-adds at the pipes' peak (a compute-bound GEMM is not free) and within 5x
    of it on the FMA pipes (the kernels' addressing and shared-memory traffic)."""
    options = PipelineOptions(fusion="stitch", gpu="A100", precision=precision)
    module = lower(parse_module((EXAMPLES / "bert_layer.mlir").read_text(), "bert_layer.mlir"), options,
                   until="stitch-codegen")
    seen = 0
    for k in module.walk():
        if not isinstance(k, KernelOp) or mapping_of(k).name != Mapping.GEMM:
            continue
        dot = next(op for op in k.walk() if isinstance(op, graph.DotOp))
        p = dot.problem(graph.static_dims, graph.STATIC)
        flops = 2 * p.m * p.n * p.k * math.prod(p.batch)
        assert k.cost is not None
        est = k.cost.data["estimate_us"]
        assert isinstance(est, FloatAttr)
        ideal = flops / A100.peak_flops(peak if not p.lhs_vector and p.m > 1 else "fp32")
        # (the cost attribute keeps 3 decimals of a µs: a grid filling every SM sits on the peak)
        assert (est.value.data + 5e-4) * 1e-6 >= ideal, (p, est.value.data)
        if precision == "fp32":
            assert est.value.data * 1e-6 <= 5 * ideal, (p, est.value.data)
        seen += 1
    assert seen >= 4


def test_vector_fragments_raise_the_fma_to_load_ratio():
    """The FMA kernel's 8x8 micro-tile reads each k's 16 fragment values as 4 vector
    loads: the simulator counts at least 6x the multiply-adds per load/store-unit
    instruction of the scalar 4x4 tile (whose ratio is 16 per 8 loads plus staging),
    for the same multiply-adds and requested bytes."""
    _, _, _, scalar = compile_gemm(128, 128, 128, "f32", "64x64x16_4x2")
    _, _, _, vector = compile_gemm(128, 128, 128, "f32", "64x64x16_8x8")
    assert scalar.fp32_instructions == vector.fp32_instructions == 128 * 128 * 128
    assert vector.global_bytes <= scalar.global_bytes
    ratio = (vector.fp32_instructions / vector.lsu_instructions) / (scalar.fp32_instructions / scalar.lsu_instructions)
    assert ratio >= 4, ratio


@pytest.mark.parametrize("gemm", [c.text().replace("/", "_") for c in VECTOR_CANDIDATES])
def test_vector_candidates_registers_match_ptxas(gemm):
    """The vector-fragment candidates' register estimate (which sets their occupancy)
    is within 8 of what ptxas -v reports for their sm_80 code (256x768x768 f32)."""
    from fsir.ptx import print_ptx
    from fsir.ptx.ptxas import assemble

    options = PipelineOptions(fusion="none", gemm=gemm, gpu="A100")
    text = _dot(256, 768, 768, "f32")
    _, summary = scheduled_gemm(256, 768, 768, "f32", gemm)
    result = assemble(print_ptx(lower(parse_module(text, "<test>"), options), arch="sm_80"), "sm_80")
    assert result.ok, result.errors
    (kernel,) = result.kernels.values()
    assert abs(kernel.registers - summary.registers) <= 8, (kernel.registers, summary.registers)
