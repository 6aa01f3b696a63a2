"""Split-K GEMMs (`split_k = S`, fsir/lowering/split_k.py) on the simulator.

Each case runs block by block under several dispatch orders (the concurrent simulator,
`model_launches`) against the numpy reference, and its PTX assembles for sm_80 and
sm_90. Slices add their partial sums in k order whatever order blocks start in, so
results are bitwise the same under every order. Tolerances: f32 FMA kernels are exact
up to summation order (the reference sums every product in turn; a split kernel adds
S partial sums), so the default f32 comparison of `compare` holds (its relative and
absolute 1e-5-order tolerance, the same as unsplit kernels'); tf32 kernels are compared
with the reference whose dots round their operands to tf32 (as `fs-run --check`
does), then f32 up to summation order as well; f16 with f16's tolerance."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest
from xdsl.dialects import arith

from fsir.dialects import gpu
from fsir.dialects.graph import tf32_dots
from fsir.dialects.schedule import KernelOp
from fsir.lowering import split_k
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.compare import compare
from fsir.runtime.device import SimDevice
from fsir.runtime.executor import execute
from fsir.runtime.reference import run
from fsir.testing.pipeline import assemble_all, input_types, make_input

ORDERS = ["fifo", "reverse", "random:1", "random:7"]


def _t(shape: tuple[int, ...], t: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{t}>"


def dot(m: int, k: int, n: int, t: str = "f32", batch: tuple[int, ...] = (), rhs_batch: bool = False) -> str:
    a, b, c = _t((*batch, m, k), t), _t((*batch, k, n) if rhs_batch else (k, n), t), _t((*batch, m, n), t)
    return f"""
func.func @f(%a: {a}, %b: {b}) -> {c} {{
  %d = graph.dot %a, %b : ({a}, {b}) -> {c}
  func.return %d : {c}
}}
"""


def biased_gelu(m: int, k: int, n: int) -> str:
    """x·w + b through tanh-GELU: the epilogue the last slice applies."""
    x, w, b, y = _t((m, k), "f32"), _t((k, n), "f32"), _t((n,), "f32"), _t((m, n), "f32")
    return f"""
func.func @f(%x: {x}, %w: {w}, %b: {b}) -> {y} {{
  %d = graph.dot %x, %w : ({x}, {w}) -> {y}
  %bb = graph.broadcast %b dims [1] : ({b}) -> {y}
  %h = graph.add %d, %bb : {y}
  %c = graph.constant dense<0.5> : {y}
  %t = graph.tanh %h : {y}
  %y = graph.mul %t, %c : {y}
  func.return %y : {y}
}}
"""


def residual_bias(m: int, k: int, n: int, t: str = "f32") -> str:
    """x·w + b + r: a residual add and a bias in the epilogue."""
    x, w, b, y = _t((m, k), t), _t((k, n), t), _t((n,), t), _t((m, n), t)
    return f"""
func.func @f(%x: {x}, %w: {w}, %b: {b}, %r: {y}) -> {y} {{
  %d = graph.dot %x, %w : ({x}, {w}) -> {y}
  %bb = graph.broadcast %b dims [1] : ({b}) -> {y}
  %h = graph.add %d, %bb : {y}
  %y = graph.add %h, %r : {y}
  func.return %y : {y}
}}
"""


def kernel_arguments(text: str, gemm: str, precision: str = "fp32") -> list[str]:
    """The split kernel's argument names after lowering."""
    from fsir.dialects import gpu

    lowered = lower(parse_module(text, "<test>"), PipelineOptions(fusion="stitch", gemm=gemm, precision=precision))
    (f,) = [op for op in lowered.walk() if isinstance(op, gpu.FuncOp)]
    return [a.name_hint or "" for a in f.body.blocks[0].args]


def run_split(text: str, gemm: str, precision: str = "fp32") -> tuple[KernelOp, np.ndarray]:
    """Compile with the forced configuration, run under every order of `ORDERS`,
    compare with the reference and check the orders agree bitwise; returns the kernel
    and the result."""
    options = PipelineOptions(fusion="stitch", gemm=gemm, precision=precision)
    scheduled = lower(parse_module(text, "<test>"), options, until="stitch-codegen")
    (kernel,) = [op for op in scheduled.walk() if isinstance(op, KernelOp)]
    module = parse_module(text, "<test>")
    rng = np.random.default_rng(0)
    inputs = [make_input(t.element_type, tuple(t.get_shape()), rng) for t in input_types(module)]
    lowered = lower(parse_module(text, "<test>"), options)
    with tf32_dots() if precision == "tf32" else nullcontext():  # the dots round their operands as the kernel
        (want,) = run(module, inputs)
    results = []
    for order in ORDERS:
        (got,), _ = execute(lowered, inputs, SimDevice(dispatch=order, model_launches=True))
        c = compare(got, want)
        assert c.ok, f"{order}: {c}"
        results.append(got)
    assert all(np.array_equal(r, results[0]) for r in results[1:])
    assemble_all(lowered)
    return kernel, results[0]


@pytest.mark.parametrize("gemm, split", [("16x16x8_2x2_s3", 3), ("16x16x8_2x2_s8", 8), ("32x32x8_4x4_s4", 4)])
def test_fma_split_matches_under_every_dispatch_order(gemm, split):
    """Ragged M and N (20 x 33), K = 64: 8 k-steps in 3 uneven slices, in 8 slices of
    one, and in 4 of two with vector fragments."""
    kernel, _ = run_split(dot(20, 64, 33), gemm)
    assert kernel.params.split_k == split
    grid, _ = kernel.launch()
    assert grid[2] == split


def test_more_slices_than_k_steps():
    """5 k-steps in 7 slices: the last two have none and add nothing."""
    run_split(dot(20, 40, 33), "16x16x8_2x2_s7")


def test_split_batched_dot():
    """Batch dims of a batched rhs on grid z with the slices: z = batch x S; with an
    unbatched rhs the batch is folded into the rows (`folds_batch`): 72 rows, z = S."""
    kernel, _ = run_split(dot(24, 48, 16, batch=(3,), rhs_batch=True), "16x16x8_2x2_s2")
    assert kernel.launch()[0][2] == 6
    kernel, _ = run_split(dot(24, 48, 16, batch=(3,)), "16x16x8_2x2_s2")
    assert kernel.launch()[0] == (1, 5, 2)


def test_split_with_fused_epilogue():
    """The bias and GELU run once, in the last slice, on the summed product."""
    kernel, _ = run_split(biased_gelu(20, 64, 33), "16x16x8_2x2_s4")
    assert {op.name for op in kernel.walk()} >= {"graph.dot", "graph.tanh", "graph.add"}


@pytest.mark.parametrize("text, gemm, precision", [
    (dot(32, 128, 64), "32x32x32_16x16_tf32_s2", "tf32"),  # cp.async pipeline, even slices
    (dot(40, 96, 48), "32x32x32_16x16_tf32_s2", "tf32"),  # ragged, staged by the threads
    (dot(40, 160, 48, "f16"), "32x32x32_16x16_f16_s3", "fp32"),  # 5 k-steps in 3 slices
])
def test_tensor_core_split(text, gemm, precision):
    kernel, _ = run_split(text, gemm, precision)
    assert kernel.params.tensor_cores and kernel.params.split_k > 1


def test_split_tiles_filling_the_static_shared_limit():
    """Three tf32 stages of 64x64x32 tiles fill the 48 KB of static shared memory ptxas
    accepts: the slice's ticket passes through the first tile's first word (no word of
    its own, which would make 48 KB + 4) and the kernel assembles and runs."""
    from fsir.ptx import print_ptx

    text = dot(64, 384, 64)
    run_split(text, "64x64x32_32x32_tf32_s4", "tf32")
    options = PipelineOptions(fusion="stitch", gemm="64x64x32_32x32_tf32_s4", precision="tf32")
    ptx = print_ptx(lower(parse_module(text, "<test>"), options), arch="sm_80")
    sizes = [int(line.rsplit("[", 1)[1].split("]")[0]) for line in ptx.splitlines() if line.strip().startswith(".shared")]
    assert sum(sizes) == 48 * 1024, sizes


@pytest.mark.parametrize("gemm", ["128x128x32_64x32_tf32", "128x128x32_64x32_tf32_s2", "256x64x32_64x32_tf32_s2"])
def test_tiles_beyond_the_static_limit_are_dynamic_shared_memory(gemm):
    """Two tf32 stages of 128x128x32 (64 KB) or 256x64x32 (80 KB) tiles are more than
    static arrays may hold: they are views of the launch's dynamic shared memory, the
    split slices' ticket keeps a static word of its own, and the kernel runs under
    every dispatch order (the SMs' shared memory counting the launch's bytes) and
    assembles."""
    from fsir.ptx import print_ptx

    text = dot(256, 256, 256)
    run_split(text, gemm, "tf32")
    options = PipelineOptions(fusion="stitch", gemm=gemm, precision="tf32")
    lowered = lower(parse_module(text, "<test>"), options)
    (launch,) = [op for op in lowered.walk() if isinstance(op, gpu.LaunchFuncOp) and "wait" not in str(op.kernel)]
    size = launch.dynamicSharedMemorySize
    assert size is not None and isinstance(size.owner, arith.ConstantOp)
    bm, bn, bk = (int(x) for x in gemm.split("_")[0].split("x"))
    assert size.owner.value.value.data == 2 * (bm + bn) * bk * 4
    ptx = print_ptx(lowered, arch="sm_80")
    static = [line.split()[-1] for line in ptx.splitlines() if line.strip().startswith(".shared")]
    assert static == ([f"{launch.kernel.nested_references.data[-1].data}_tile0[1];"] if gemm.endswith("_s2")
                      else []), static
    assert ".extern .shared .align 16 .b8 __fsir_dynamic_smem[];" in ptx


def test_split_result_equals_the_partial_sums_in_k_order():
    """The f32 result is exactly the slices' partial sums added in k order (slice 0
    first), each slice's sum accumulated as the unsplit kernel does."""
    text = dot(16, 32, 16)
    _, got = run_split(text, "16x16x8_1x1_s2")
    module = parse_module(text, "<test>")
    rng = np.random.default_rng(0)
    a, b = [make_input(t.element_type, tuple(t.get_shape()), rng) for t in input_types(module)]
    halves = []
    for lo in (0, 16):
        acc = np.zeros((16, 16), np.float32)
        for kk in range(lo, lo + 16):  # one fused multiply-add per k, in order
            acc = (acc.astype(np.float64) + a[:, kk:kk + 1].astype(np.float64) * b[kk:kk + 1, :]).astype(np.float32)
        halves.append(acc)
    assert np.array_equal(got, (np.float32(0) + halves[0]) + halves[1])


@pytest.mark.parametrize("text, gemm, precision", [
    (biased_gelu(20, 64, 33), "16x16x8_2x2_s4", "fp32"),
    (residual_bias(20, 64, 33), "16x16x8_2x2_s3", "fp32"),
    (residual_bias(40, 128, 48), "32x32x32_16x16_tf32_s2", "tf32"),  # ragged, staged by the threads
    (residual_bias(32, 256, 64), "32x32x32_16x16_tf32_s4", "tf32"),  # the cp.async pipeline
    (biased_gelu(32, 256, 64), "32x32x32_16x16_tf32_s2", "tf32"),
])
def test_serial_split_reduces_in_the_output(text, gemm, precision):
    """One f32 output: the slices' running sums live in the output (no workspace
    argument), the epilogue (bias, GELU, residual) runs once in the last slice; the
    same result under every dispatch order."""
    kernel, _ = run_split(text, gemm, precision)
    assert kernel.params.split_k > 1
    args = kernel_arguments(text, gemm, precision)
    assert "sems" in args and "workspace" not in args


@pytest.mark.parametrize("text, gemm, precision", [
    (residual_bias(20, 64, 33), "16x16x8_2x2_s3", "fp32"),
    (residual_bias(32, 256, 64), "32x32x32_16x16_tf32_s4", "tf32"),
])
def test_serial_split_equals_the_workspace_form(text, gemm, precision, monkeypatch):
    """The running sums in the output are the f32 values the workspace would hold:
    the same kernel with its sums in a workspace (the form 16-bit outputs take) gives
    bitwise the same result."""
    _, serial = run_split(text, gemm, precision)
    monkeypatch.setattr(split_k, "in_output", lambda k: False)
    assert "workspace" in kernel_arguments(text, gemm, precision)
    _, workspace = run_split(text, gemm, precision)
    assert np.array_equal(serial, workspace)


def test_a_16_bit_output_keeps_the_workspace():
    assert "workspace" in kernel_arguments(dot(20, 64, 33, "f16"), "16x16x8_2x2_s4")
