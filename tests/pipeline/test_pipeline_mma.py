"""graph.dot on the tensor cores (`fsir/lowering/mma.py`): f16, bf16 and tf32, static
multiples of the tiles and ragged sizes, cp.async-staged and synchronously staged
operands, batches; every kernel runs on the simulator with race checking, matches the
exact product within docs/simulator.md's tolerance (plus the rounding of the output to
its element type) and assembles with ptxas for sm_80 and sm_90."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fsir.codegen.mappings.gemm import GemmConfig, shared_bytes
from fsir.codegen.mappings.gemm_tc import TC_CANDIDATES, tc_candidates
from fsir.dialects import gpu
from fsir.dialects.schedule import GemmMath, KernelOp
from fsir.errors import UserError
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute
from fsir.testing.pipeline import assemble_all

DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}
# relative half-unit of the output's rounding
OUT_ROUNDING = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24}


def _dot(a: tuple[int, ...], b: tuple[int, ...], t: str, out: tuple[int, ...]) -> str:
    def ty(s):
        return f"tensor<{'x'.join(map(str, s))}x{t}>"

    return f"""
func.func @f(%a: {ty(a)}, %b: {ty(b)}) -> {ty(out)} {{
  %d = graph.dot %a, %b : ({ty(a)}, {ty(b)}) -> {ty(out)}
  func.return %d : {ty(out)}
}}
"""


def run_mma(a_shape, b_shape, t: str, precision: str = "fp32", gemm: str = "auto", seed: int = 0):
    """Compile and run a dot; check it against the float64 product within the
    tolerance of its math; return the lowered module and the launch's counters."""
    out_shape = np.broadcast_shapes(a_shape[:-2], b_shape[:-2]) + (a_shape[-2], b_shape[-1])
    module = parse_module(_dot(a_shape, b_shape, t, out_shape), "<test>")
    lowered = lower(module, PipelineOptions(fusion="none", precision=precision, gemm=gemm))
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(a_shape).astype(DTYPES[t])
    b = rng.standard_normal(b_shape).astype(DTYPES[t])
    (got,), stats = execute(lowered, [a, b])
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = np.matmul(a64, b64)
    magnitude = np.matmul(np.abs(a64), np.abs(b64))
    k = a_shape[-1]
    if t == "f32":
        bound = 2.0**-10 * magnitude  # operands rounded to tf32
    else:
        bound = -(-k // 16) * 2.0**-22 * magnitude
    bound = bound + OUT_ROUNDING[t] * np.abs(exact) * 1.01 + 1e-30
    err = np.abs(got.astype(np.float64) - exact)
    assert got.shape == exact.shape
    assert (err <= bound).all(), f"max error {err.max()} (bound there {bound.ravel()[err.argmax()]})"
    return lowered, stats


def kernel_ops(lowered) -> set[str]:
    return {op.name for op in lowered.walk() if op.name.startswith("gpu.")}


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (40, 24, 48), (33, 17, 20), (16, 8, 16)])
def test_half_types(t, m, n, k):
    lowered, stats = run_mma((m, k), (k, n), t)
    ops = kernel_ops(lowered)
    assert {"gpu.mma_sync", "gpu.ldmatrix"} <= ops
    # rows of 16-byte chunks (K and N multiples of 8) are copied by cp.async
    assert ("gpu.cp_async" in ops) == (k % 8 == 0 and n % 8 == 0)
    assert stats.mma_instructions > 0
    assemble_all(lowered)


@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (70, 72, 96), (20, 12, 10)])
def test_tf32(m, n, k):
    lowered, stats = run_mma((m, k), (k, n), "f32", precision="tf32")
    ops = kernel_ops(lowered)
    assert {"gpu.mma_sync", "gpu.round_tf32"} <= ops
    assert ("gpu.cp_async" in ops) == (k % 4 == 0 and n % 4 == 0)
    assert stats.mma_instructions > 0
    assemble_all(lowered)


def test_f32_keeps_fma_by_default():
    lowered, stats = run_mma((32, 32), (32, 32), "f32")
    assert "gpu.mma_sync" not in kernel_ops(lowered)
    assert stats.mma_instructions == 0


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_batched(t):
    lowered, _ = run_mma((3, 40, 32), (3, 32, 24), t)
    assert "gpu.cp_async" in kernel_ops(lowered)
    run_mma((2, 1, 24, 16), (3, 16, 40), t)  # broadcast batch dims


@pytest.mark.parametrize("config", [GemmConfig(*c) for c in TC_CANDIDATES])
def test_every_candidate(config):
    """Each configuration, forced, on a problem with ragged edges in every dim; it
    assembles for sm_80 and sm_90."""
    lowered, _ = run_mma((150, 64), (64, 136), "f16", gemm=f"{config.text()}/f16".replace("/", "_"))
    ks = [op for op in lowered.walk() if isinstance(op, gpu.FuncOp) and op.is_kernel]
    assert ks
    assemble_all(lowered)


@pytest.mark.parametrize("config", [GemmConfig(*c, math=GemmMath.TF32) for c in tc_candidates(GemmMath.TF32)])
def test_tf32_candidates_pipeline_their_stages(config):
    """The tf32 candidates hold as many pipeline stages as fit 48 KB, up to four (3 for
    64x64x32: 48 KB; 4 for 64x32x32), and at least two: those beyond the 48 KB of
    static shared arrays (two stages of 128x128x32: 64 KB) are dynamic shared memory.
    Each runs with ragged edges and assembles."""
    from fsir.codegen.mappings.gemm import shared_bytes, tile_stages

    text = config.text().replace("/", "_")
    per_stage = (config.bm + config.bn) * config.bk * 4
    assert tile_stages(config) == max(2, min(4, 48 * 1024 // per_stage))
    lowered, _ = run_mma((150, 96), (96, 136), "f32", precision="tf32", gemm=text)
    (k,) = [op for op in lowered.walk() if isinstance(op, gpu.FuncOp) and op.is_kernel]
    dynamic = [op for op in k.walk() if isinstance(op, gpu.DynamicSharedMemoryOp)]
    assert (len(dynamic), len(k.workgroup_buffers)) == ((1, 0) if shared_bytes(config, 4) > 48 * 1024 else (0, 2))
    waits = [op.pending.value.data for op in k.walk() if isinstance(op, gpu.CpAsyncWaitGroupOp)]
    # each step waits for its own group only: the stages - 2 after it may be in flight
    assert waits == [tile_stages(config) - 2, 0]
    # one barrier per k-step (it publishes a stage and frees the one computed before)
    (loop,) = [op for op in k.walk() if op.name == "scf.for"]
    assert sum(isinstance(op, gpu.BarrierOp) for op in loop.walk()) == 1
    assemble_all(lowered)


def test_schedule_params():
    module = parse_module(_dot((64, 64), (64, 64), "f16", (64, 64)), "<test>")
    sched = lower(module, PipelineOptions(fusion="none"), until="stitch-codegen")
    (k,) = [op for op in sched.walk() if isinstance(op, KernelOp)]
    assert k.params.math == GemmMath.F16  # type: ignore[attr-defined]
    assert k.params.threads == k.launch()[1][0]


def test_forced_math_applies_to_its_dots():
    """A forced f16 configuration leaves an f32 dot to the FMA kernel."""
    lowered, _ = run_mma((16, 16), (16, 16), "f32", gemm="32x32x32_16x16_f16")
    assert "gpu.mma_sync" not in kernel_ops(lowered)


def test_bad_precision():
    module = parse_module(_dot((16, 16), (16, 16), "f32", (16, 16)), "<test>")
    with pytest.raises(UserError, match="precision=fp16"):
        lower(module, PipelineOptions(fusion="none", precision="fp16"))


def test_fs_run_precision(tmp_path, capsys):
    """`fs-run --precision tf32 --check` runs the tf32 kernel and checks it against the
    reference whose dots round their operands to tf32 as the kernel does."""
    from fsir.tools.fs_run import main_impl

    src = tmp_path / "mm.mlir"
    src.write_text(_dot((48, 64), (64, 40), "f32", (48, 40)))
    ptx = tmp_path / "mm.ptx"
    assert main_impl([str(src), "--device", "sim", "--precision", "tf32", "--check", "--dump-ptx", str(ptx)]) == 0
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx.read_text()
    assert ": ok" in capsys.readouterr().out
    assert main_impl([str(src), "--device", "sim", "--check", "--dump-ptx", str(ptx)]) == 0
    assert "mma.sync" not in ptx.read_text()


def test_reference_tf32_rounding():
    from fsir.dialects.graph import round_tf32

    x = np.array([1.0, 1.0 + 2.0**-11, 1.0 + 2.0**-10 + 2.0**-11, np.inf, -3.0e38], dtype=np.float32)
    # ties away from zero; the carry into the exponent is kept
    assert list(round_tf32(x)[:4]) == [1.0, 1.0 + 2.0**-10, 1.0 + 2.0**-9, np.inf]
    assert np.isfinite(round_tf32(x)[4])


def test_inlined_producers():
    """Producers inlined into the tile loads (here a transpose and an elementwise op)
    are staged synchronously; the result matches the reference interpreter."""
    from fsir.testing.pipeline import check

    lowered = check("""
func.func @f(%a: tensor<40x32xf16>, %b: tensor<24x32xf16>) -> tensor<40x24xf16> {
  %d = stitch.fusion (%a, %b) : (tensor<40x32xf16>, tensor<24x32xf16>) -> tensor<40x24xf16> {
  ^bb0(%x: tensor<40x32xf16>, %y: tensor<24x32xf16>):
    %e = graph.tanh %x : tensor<40x32xf16>
    %t = graph.transpose %y perm [1, 0] : (tensor<24x32xf16>) -> tensor<32x24xf16>
    %r = graph.dot %e, %t : (tensor<40x32xf16>, tensor<32x24xf16>) -> tensor<40x24xf16>
    stitch.yield %r : tensor<40x24xf16>
  }
  func.return %d : tensor<40x24xf16>
}
""")
    ops = kernel_ops(lowered)
    assert "gpu.mma_sync" in ops and "gpu.cp_async" not in ops


@pytest.mark.parametrize("row_chunks", [2, 4, 8, 16])
def test_swizzle_is_conflict_free(row_chunks):
    """The eight rows an ldmatrix matrix reads (rows 8i..8i+7 at one logical chunk) land
    in eight different 16-byte bank groups of a 128-byte line, for tiles whose rows are
    2 to 16 chunks wide (16 to 128 halves, 8 to 64 floats); the swizzle permutes chunks
    within their line."""
    from fsir.lowering.mma import swizzle

    rows = 64
    for first in range(0, rows, 8):
        for c in range(row_chunks):
            banks = {swizzle(r * row_chunks + c, row_chunks) % 8 for r in range(first, first + 8)}
            assert len(banks) == 8
    chunks = range(rows * row_chunks)
    assert sorted(swizzle(q, row_chunks) for q in chunks) == list(chunks)
    assert all(swizzle(q, row_chunks) // 8 == q // 8 for q in chunks)



@pytest.mark.parametrize("bk,bn", [(32, 16), (32, 32), (32, 64), (16, 64), (32, 128)])
def test_tf32_b_columns_are_conflict_free(bk, bn):
    """tf32's B tile is row-major (bk rows of bn floats) with the swizzle spread 2: the
    32 scalar loads of a warp's b0 (lane l: k = l%4, n = l/4 of an 8-column tile; b1
    four rows further) read 32 different banks, at every k-step row and column tile;
    the swizzle keeps each chunk in its 128-byte line and repeats every
    `swizzle_period` rows."""
    from fsir.lowering.mma import swizzle, swizzle_period

    row_chunks = bn // 4

    def word(k: int, n: int) -> int:  # the element's 4-byte word in the shared tile
        return swizzle(k * row_chunks + n // 4, row_chunks, spread=2) * 4 + n % 4

    for k0 in range(0, bk, 4):
        for n0 in range(0, bn, 8):
            banks = {word(k0 + lane % 4, n0 + lane // 4) % 32 for lane in range(32)}
            assert len(banks) == 32, (k0, n0)
    chunks = range(bk * row_chunks)
    assert sorted(swizzle(q, row_chunks, 2) for q in chunks) == list(chunks)
    assert all(swizzle(q, row_chunks, 2) // 8 == q // 8 for q in chunks)
    period = swizzle_period(row_chunks, 2)
    assert all(word(k + period, n) == word(k, n) + period * bn for k in range(bk - period) for n in range(bn))


@pytest.mark.parametrize("a,b,gemm", [((37, 21), (21, 19), "32x16x16_16x16_tf32"),
                                       ((64, 30), (30, 48), "32x16x32_16x16_tf32")])
def test_tf32_narrow_b_tiles(a, b, gemm):
    """A forced tf32 tile 16 columns wide: B's rows are half a 128-byte line, its swizzle
    repeats every 8 rows, so a lane keeps a fragment offset for k rows 0-3 and 4-7 of
    the period (`b_row_phases`); ragged edges, on the simulator."""
    lowered, _ = run_mma(a, b, "f32", precision="tf32", gemm=gemm)
    assemble_all(lowered)


def test_dynamic_sizes():
    """`?` sizes: the default tensor-core configuration, synchronously staged (row
    lengths unknown at compile time), guarded at every edge."""
    from fsir.testing.pipeline import check

    src = """
func.func @f(%a: tensor<?x?xf16>, %b: tensor<?x40xf16>) -> tensor<?x40xf16> {
  %d = graph.dot %a, %b : (tensor<?x?xf16>, tensor<?x40xf16>) -> tensor<?x40xf16>
  func.return %d : tensor<?x40xf16>
}
"""
    lowered = check(src, shapes=[(37, 24), (24, 40)])
    assert "gpu.mma_sync" in kernel_ops(lowered)


def _tf32_identity_product(values: np.ndarray, values_in_b: bool) -> np.ndarray:
    """A 64x64 tf32 GEMM of `values` with the identity (on the side `values_in_b`
    says): its result is the tf32 rounding of each value, whichever fragment register
    of whichever warp holds it."""
    eye = np.eye(64, dtype=np.float32)
    a, b = (eye, values) if values_in_b else (values, eye)
    lowered = lower(parse_module(_dot((64, 64), (64, 64), "f32", (64, 64)), "<test>"),
                    PipelineOptions(fusion="none", precision="tf32", gemm="64x64x32_32x32_tf32"))
    (got,), _ = execute(lowered, [a, b])
    return got


@pytest.mark.parametrize("values_in_b", [False, True])
def test_tf32_rounding_of_every_fragment_register_is_cvt_rna(values_in_b):
    """Finite values (ties, near-ties, subnormals, the largest tf32) come out exactly as
    cvt.rna.tf32.f32 rounds them (any other rounding of the fragments, e.g. integer
    arithmetic without its carries handled, or none, fails here); a NaN whose
    payload's top bits are all ones (the GPU's canonical 0x7fffffff, and its
    negative) stays a NaN."""
    from fsir.sim.decoder.tensorcore import to_tf32

    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2**32, (64, 64), dtype=np.uint64).astype(np.uint32)
    bits &= np.uint32(0xBFFFFFFF)  # finite, below 2: no product overflows
    bits[::3] = (bits[::3] & np.uint32(0xFFFFE000)) | np.uint32(0x1000)  # exact ties
    bits[1::7] &= np.uint32(0x807FFFFF)  # subnormals
    bits[2, :8] = [0x3F801000, 0xBF801000, 0x3F800FFF, 0x7F7FEFFF, 0x7F7FE000, 0x00001000, 0x80000FFF, 0x3FFFF000]
    values = bits.view(np.float32)
    got = _tf32_identity_product(values, values_in_b)
    # (as floats: a product's zero is +0 whatever the sign of the operand's zero)
    np.testing.assert_array_equal(got, to_tf32(values).view(np.float32))

    nans = np.ones((64, 64), np.float32)
    nans[5, 9], nans[40, 33] = np.array([0x7FFFFFFF, 0xFFFFFFFF], np.uint32).view(np.float32)
    got = _tf32_identity_product(nans, values_in_b)
    # a NaN operand poisons its row of the product (A) or its column (B)
    poisoned = np.zeros((64, 64), bool)
    for r, c in ((5, 9), (40, 33)):
        if values_in_b:
            poisoned[:, c] = True
        else:
            poisoned[r, :] = True
    assert np.isnan(got[poisoned]).all()
    assert np.isfinite(got[~poisoned]).all()


# the candidates the mapping may choose: those whose tiles fit the static shared arrays
# (test_tf32_candidates_fit_static_shared_memory)
CHOOSABLE = [c for c in [GemmConfig(*t, math=GemmMath.F16) for t in TC_CANDIDATES]
             + [GemmConfig(*t, math=GemmMath.TF32) for t in tc_candidates(GemmMath.TF32)]
             if shared_bytes(c, 4) <= 48 * 1024]


@pytest.mark.parametrize("config", CHOOSABLE, ids=GemmConfig.text)
def test_candidates_do_not_spill(config):
    """Every tensor-core candidate the evaluator may choose keeps its accumulators,
    fragments and cached copy offsets in registers (ptxas -v for sm_80 and sm_90: no
    spill), on a problem of whole tiles, where each copy's offsets are computed once
    before the k-loop (the most registers)."""
    from fsir.ptx import print_ptx
    from fsir.ptx.ptxas import assemble

    t = "f32" if config.math == GemmMath.TF32 else "f16"
    lowered = lower(parse_module(_dot((256, 512), (512, 256), t, (256, 256)), "<test>"),
                    PipelineOptions(fusion="none", precision="tf32" if t == "f32" else "fp32",
                                    gemm=config.text().replace("/", "_")))
    for arch in ("sm_80", "sm_90"):
        result = assemble(print_ptx(lowered, arch=arch), arch)
        assert result.ok, result.errors
        (usage,) = result.kernels.values()
        assert usage.spill_stores == usage.spill_loads == 0, (arch, usage)
