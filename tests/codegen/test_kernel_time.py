"""The kernel-time model (fsir/codegen/kernel_time.py): max(memory, compute) + launch,
with the compute rates of fsir/gpuspec.py."""

import math

import pytest

from fsir.codegen.kernel_time import Launch, compute_time, kernel_time, memory_time, plan_time
from fsir.codegen.latency import estimate_summary
from fsir.codegen.summary import Summary
from fsir.gpuspec import gpu_spec

A100 = gpu_spec("A100")


@pytest.mark.parametrize("gpu, fp32, f16_tensor, tf32_tensor", [
    ("V100", 15.7, 125, 0), ("T4", 8.1, 65, 0), ("A100", 19.5, 312, 156), ("H100", 66.9, 989, 495)])
def test_peak_rates_reproduce_the_datasheets(gpu, fp32, f16_tensor, tf32_tensor):
    spec = gpu_spec(gpu)
    assert spec.peak_flops("fp32") / 1e12 == pytest.approx(fp32, rel=0.01)
    assert spec.peak_flops("tensor_f16") / 1e12 == pytest.approx(f16_tensor, rel=0.01)
    assert spec.peak_flops("tensor_tf32") / 1e12 == pytest.approx(tf32_tensor, rel=0.01)


def test_memory_bound_elementwise_kernel():
    """y = a + b over 16M f32: 192 MB at 2039 GB/s; its few instructions per element
    take a fraction of that on the FMA and load/store pipes."""
    n = 16 * 1024 * 1024
    launch = Launch(blocks=n // 256, threads_per_block=256, blocks_per_sm=8, bytes=12 * n,
                    instructions={"fp32": n, "int": 6 * n, "lsu": 3 * n})
    t = kernel_time(launch, A100)
    assert t.bound == "memory"
    assert t.memory == pytest.approx(12 * n / 2039e9)
    assert t.compute < t.memory / 2
    assert t.total == pytest.approx(t.memory + 1e-6)


def test_compute_bound_gemm():
    """A 4096^3 f32 GEMM with FMAs: 2·M·N·K at 19.5 TFLOP/s on an A100, far above the
    time its 201 MB of operands take; on the tensor cores (f16) 16x faster."""
    m = n = k = 4096
    fmas = m * n * k
    blocks = (m // 128) * (n // 128)
    launch = Launch(blocks, 256, 2, bytes=4 * (m * k + k * n + m * n), instructions={"fp32": fmas})
    t = kernel_time(launch, A100)
    assert t.bound == "compute"
    # 1024 blocks on 108 SMs: the busiest SM runs 10, not 9.48
    imbalance = 10 * 108 / 1024
    assert t.compute == pytest.approx(2 * fmas / A100.peak_flops("fp32") * imbalance)
    assert t.compute > 20 * t.memory
    tensor = Launch(blocks, 256, 2, bytes=2 * (m * k + k * n) + 4 * m * n, tensor_fmas={"f16": fmas})
    assert compute_time(tensor, A100) == pytest.approx(2 * fmas / A100.peak_flops("tensor_f16") * imbalance)
    assert compute_time(tensor, A100) == pytest.approx(t.compute / 16)
    tf32 = Launch(blocks, 256, 2, bytes=0, tensor_fmas={"tf32": fmas})
    assert compute_time(tf32, A100) == pytest.approx(t.compute / 8)
    assert compute_time(tf32, gpu_spec("V100")) == math.inf  # no tf32 tensor cores


def test_partial_wave_and_small_grids():
    """Per-block work w: a grid of blocks ≤ SMs takes one block's time, one more block
    than SMs two (the partial last wave), and time grows in steps of ⌈blocks ÷ SMs⌉
    whatever the occupancy."""
    w = 1_000_000  # fp32 thread-instructions per block

    def t(blocks, per_sm=4):
        return compute_time(Launch(blocks, 256, per_sm, 0, {"fp32": w * blocks}), A100)

    one = w / 64 / A100.clock_hz
    assert t(1) == pytest.approx(one)
    assert t(54) == pytest.approx(one)  # half the SMs idle: no faster per block
    assert t(108) == pytest.approx(one)
    assert t(109) == pytest.approx(2 * one)
    assert t(4 * 108) == pytest.approx(4 * one) == pytest.approx(t(4 * 108, per_sm=1))
    assert t(4 * 108 + 1) == pytest.approx(5 * one)


def test_few_warps_leave_sub_partitions_idle():
    """One warp per SM runs on one of its four sub-partitions: a quarter of the pipes."""
    w = 32 * 1000
    one_warp = compute_time(Launch(1, 32, 1, 0, {"fp32": w}), A100)
    assert one_warp == pytest.approx(4 * w / 64 / A100.clock_hz)
    assert compute_time(Launch(1, 128, 1, 0, {"fp32": w}), A100) == pytest.approx(one_warp / 4)


def test_pipes_overlap_and_issue_bounds_them():
    """Classes on different pipes run concurrently: FP32 and integer work of one size
    take the time of one of them. The schedulers' one warp-instruction per cycle per
    sub-partition bounds the total: f16 arithmetic (256 lanes per cycle) is issue-bound."""
    w = 108 * 1_000_000

    def t(**work):
        return compute_time(Launch(108, 256, 4, 0, work), A100)

    assert t(fp32=w, int=w) == pytest.approx(t(fp32=w))
    assert t(fp32=w, lsu=w) == pytest.approx(t(lsu=w)) == pytest.approx(2 * t(fp32=w))
    issue = w / 108 / 32 / 4 / A100.clock_hz
    assert issue > w / 108 / 256 / A100.clock_hz
    assert t(fp16=w) == pytest.approx(issue)
    assert t(fp32=w, int=w, fp16=2 * w) == pytest.approx(4 * issue)


def test_memory_share_of_few_warps():
    """Fewer resident warps than saturate HBM get a proportional share of its bandwidth."""
    full = memory_time(Launch(108 * 4, 128, 4, 1e6), A100)  # 16 warps per SM
    assert full == pytest.approx(1e6 / A100.hbm_bandwidth)
    assert memory_time(Launch(108, 128, 4, 1e6), A100) == pytest.approx(4 * full)


def test_plan_time_sums_kernels():
    a = kernel_time(Launch(108, 256, 8, 1e6), A100)
    b = kernel_time(Launch(108, 256, 8, 0, {"fp32": 1e9}), A100)
    assert plan_time([a, b]) == pytest.approx(a.total + b.total)
    assert plan_time([a, b]) == pytest.approx(a.memory + b.compute + 2e-6)


def test_latency_evaluator_sees_compute():
    """A GEMM configuration (scored by dependences) whose instructions exceed what the
    pipes issue in its dependence-bound time is timed by the compute floor: the same
    formula as fs-bench's model."""
    summary = Summary(registers=32, ilp_cycles=1000.0)
    summary.add({"alu": 4096, "smem": 2048})  # a register-blocked GEMM thread's k-loop
    grid, block = (216, 1, 1), (256, 1, 1)
    est = estimate_summary(summary, grid, block, A100)
    threads = 216 * 256
    floor = compute_time(Launch(216, 256, est.occupancy.blocks_per_sm, 0,
                                {"fp32": 4096 * threads, "lsu": 2048 * threads}), A100)
    assert est.compute_seconds == pytest.approx(floor)
    assert est.seconds == pytest.approx(floor)
    assert floor > 2 * 1000.0 / A100.clock_hz  # the floor decides


def test_l2_served_rereads_and_bytes_in_flight():
    """Requested bytes beyond the distinct ones are served by the L2 (A100: 5120 B per
    cycle, 7.2 TB/s); they bound the time once they take longer than the distinct bytes
    at the HBM bandwidth. Few warps reach a share of the bandwidth in proportion to the
    bytes they keep in flight (8 KB per SM saturate), never less than 16 per lane."""
    assert A100.l2_bandwidth == pytest.approx(5120 * 1.41e9)
    full = dict(blocks=108 * 4, threads_per_block=128, blocks_per_sm=4)  # 16 warps per SM
    hbm = memory_time(Launch(**full, bytes=10e6, requested_bytes=20e6), A100)
    assert hbm == pytest.approx(10e6 / 2039e9)
    l2 = memory_time(Launch(**full, bytes=10e6, requested_bytes=100e6), A100)
    assert l2 == pytest.approx(100e6 / A100.l2_bandwidth)
    one_block = dict(blocks=108, threads_per_block=128, blocks_per_sm=1)  # 4 warps per SM
    default = memory_time(Launch(**one_block, bytes=10e6), A100)
    assert default == pytest.approx(4 * hbm)
    staged = memory_time(Launch(**one_block, bytes=10e6, warp_bytes_in_flight=32 * 64), A100)
    assert staged == pytest.approx(hbm)  # 4 warps x 2 KB in flight saturate
    assert memory_time(Launch(**one_block, bytes=10e6, warp_bytes_in_flight=32 * 4), A100) == pytest.approx(default)
