"""Run nvcc-generated PTX (tests/sim/cuda/*.ptx, regenerate with regen.sh) on the simulator
and compare with numpy."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.errors import SimulatorError
from fsir.sim import run_ptx
from fsir.testing.paths import CUDA_PTX


def ptx(name: str) -> str:
    return (CUDA_PTX / f"{name}.ptx").read_text()


rng = np.random.default_rng(0)


def cdiv(a, b):
    return (a + b - 1) // b


@pytest.mark.parametrize("n,bs", [(1, 32), (1000, 256), (4097, 128), (300, 96)])
def test_vec_add(n, bs):
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.zeros(n, np.float32)
    run_ptx(ptx("vecadd"), "vec_add", (cdiv(n, bs),), (bs,), [a, b, c, n])
    np.testing.assert_array_equal(c, a + b)


@pytest.mark.parametrize("n,grid,bs", [(10000, 7, 128), (50, 4, 32), (1, 1, 64)])
def test_grid_stride(n, grid, bs):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    y0 = y.copy()
    run_ptx(ptx("grid_stride"), "saxpy_grid_stride", (grid,), (bs,), [n, 2.5, x, y])
    ref = (np.float64(np.float32(2.5)) * x + y0).astype(np.float32)  # nvcc contracts to fma
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("n,bs", [(1000, 256), (64, 64), (77, 96)])
def test_warp_sum_down(n, bs):
    x = rng.standard_normal(n).astype(np.float32)
    nthreads = cdiv(n, bs) * bs
    out = np.zeros(cdiv(nthreads, 32), np.float32)
    run_ptx(ptx("warp_shuffle"), "warp_sum_down", (cdiv(n, bs),), (bs,), [x, out, n])
    xp = np.zeros(out.size * 32, np.float32)
    xp[:n] = x
    np.testing.assert_allclose(out, xp.reshape(-1, 32).sum(1), rtol=1e-5, atol=1e-5)


def test_warp_max_xor():
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    run_ptx(ptx("warp_shuffle"), "warp_max_xor", (cdiv(n, 128),), (128,), [x, out, n])
    xp = np.full(cdiv(n, 32) * 32, -np.inf, np.float32)
    xp[:n] = x
    ref = np.repeat(xp.reshape(-1, 32).max(1), 32)[:n]
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("src", [0, 5, 31, 37])  # 37 wraps to lane 5 (only the low 5 bits count)
def test_warp_bcast_idx(src):
    n = 200
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    run_ptx(ptx("warp_shuffle"), "warp_bcast_idx", (cdiv(n, 64),), (64,), [x, out, src, n])
    xp = np.zeros(cdiv(n, 32) * 32, np.int32)
    xp[:n] = x
    np.testing.assert_array_equal(out, np.repeat(xp.reshape(-1, 32)[:, src % 32], 32)[:n])


def test_warp_scan_up():
    n = 333
    x = rng.integers(-50, 50, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    run_ptx(ptx("warp_shuffle"), "warp_scan_up", (cdiv(n, 64),), (64,), [x, out, n])
    xp = np.zeros(cdiv(n, 32) * 32, np.int32)
    xp[:n] = x
    np.testing.assert_array_equal(out, np.cumsum(xp.reshape(-1, 32), axis=1).reshape(-1)[:n])


def test_segment8_sum():
    n = 256
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    run_ptx(ptx("warp_shuffle"), "segment8_sum", (2,), (128,), [x, out])
    seg = x.reshape(-1, 8)
    # lane 0 of each 8-lane segment gets the segment's sum; a source past the segment end is
    # out of range, so lane 7 adds its own value three times (8 * x)
    np.testing.assert_allclose(out.reshape(-1, 8)[:, 0], seg.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out.reshape(-1, 8)[:, 7], seg[:, 7] * 8)


@pytest.mark.parametrize("n", [256, 1000, 5000])
def test_block_sum(n):
    x = rng.standard_normal(n).astype(np.float32)
    nb = cdiv(n, 256)
    partial = np.zeros(nb, np.float32)
    st = run_ptx(ptx("block_reduce"), "block_sum", (nb,), (256,), [x, partial, n])
    xp = np.zeros(nb * 256, np.float32)
    xp[:n] = x
    np.testing.assert_allclose(partial, xp.reshape(nb, 256).sum(1), rtol=1e-5, atol=1e-4)
    assert st.barriers >= 9 and st.shared_stores > 0


@pytest.mark.parametrize("rows,cols", [(3, 100), (5, 1000), (2, 7)])
def test_softmax(rows, cols):
    x = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
    y = np.zeros_like(x)
    run_ptx(ptx("softmax"), "softmax_rows", (rows,), (128,), [x, y, cols], shared_bytes=128 * 4)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_divergent():
    n = 1000
    x = rng.integers(-20, 40, n).astype(np.int32)
    y = np.full(n + 5, 12345, np.int32)
    run_ptx(ptx("divergent"), "divergent", (cdiv(n, 128),), (128,), [x, y, n])
    ref = np.where(x < 0, -1, np.where(x % 3 == 0, 2 * x, np.where(x % 3 == 1, x * (x - 1) // 2, x - 100)))
    np.testing.assert_array_equal(y[:n], ref)
    assert (y[n:] == 12345).all()


def test_histogram():
    n, nbins = 5000, 17
    x = rng.integers(0, 1000, n).astype(np.int32)
    bins = np.zeros(nbins, np.int32)
    run_ptx(ptx("atomics"), "histogram", (cdiv(n, 256),), (256,), [x, bins, nbins, n])
    np.testing.assert_array_equal(bins, np.bincount(x % nbins, minlength=nbins))


def test_float_sum_atomic():
    n = 3000
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(1, np.float32)
    run_ptx(ptx("atomics"), "float_sum", (cdiv(n, 256),), (256,), [x, out, n])
    np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-3)


def test_int_max_and_ticket():
    n = 777
    x = rng.integers(-10**6, 10**6, n).astype(np.int32)
    out = np.array([np.iinfo(np.int32).min], np.int32)
    ticket = np.zeros(n + 1, np.int32)
    run_ptx(ptx("atomics"), "int_max", (cdiv(n, 128),), (128,), [x, out, ticket, n])
    assert out[0] == x.max()
    assert ticket[n] == n
    assert sorted(ticket[:n]) == list(range(n))  # every thread saw a distinct old value


def test_float_max_cas_loop():
    n = 2000
    x = rng.standard_normal(n).astype(np.float32)
    out = np.array([-np.inf], np.float32)
    run_ptx(ptx("atomics"), "float_max_cas", (cdiv(n, 256),), (256,), [x, out, n])
    assert out[0] == x.max()


def test_half():
    n = 500
    x = (rng.standard_normal(n) * 10).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float16)
    out = np.zeros(n, np.float16)
    out32 = np.zeros(n, np.float32)
    a = 1.5
    run_ptx(ptx("half"), "half_axpy", (cdiv(n, 128),), (128,), [x, y, out, out32, a, n])
    hx = x.astype(np.float16)
    r = (np.float16(a) * hx).astype(np.float16) + y
    np.testing.assert_array_equal(out, r)
    np.testing.assert_array_equal(out32, r.astype(np.float32) + hx.astype(np.float32))


@pytest.mark.parametrize("M,N,K", [(16, 16, 16), (33, 17, 40), (5, 70, 3)])
def test_matmul_tiled(M, N, K):
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = np.zeros((M, N), np.float32)
    run_ptx(ptx("matmul_tiled"), "matmul_tiled", (cdiv(N, 16), cdiv(M, 16)), (16, 16), [A, B, C, M, N, K])
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


def test_collatz_nounroll():
    n = 300
    x = rng.integers(1, 2000, n).astype(np.uint32)
    steps = np.zeros(n, np.int32)
    run_ptx(ptx("nounroll"), "collatz_steps", (cdiv(n, 64),), (64,), [x, steps, n])

    def collatz(v):
        s = 0
        while v > 1:
            v = 3 * v + 1 if v & 1 else v >> 1
            s += 1
        return s
    assert steps.tolist() == [collatz(int(v)) for v in x]


def test_horner_nounroll():
    n, deg = 100, 6
    x = rng.uniform(-1, 1, n).astype(np.float32)
    coef = rng.standard_normal(deg + 1).astype(np.float32)
    y = np.zeros(n, np.float32)
    run_ptx(ptx("nounroll"), "horner", (2,), (64,), [x, coef, y, deg, n])
    np.testing.assert_allclose(y, np.polyval(coef[::-1].astype(np.float64), x), rtol=1e-5, atol=1e-5)


def test_layernorm():
    rows, cols = 6, 768
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    g = rng.standard_normal(cols).astype(np.float32)
    b = rng.standard_normal(cols).astype(np.float32)
    y = np.zeros_like(x)
    run_ptx(ptx("layernorm"), "layernorm", (rows,), (256,), [x, g, b, y, cols, 1e-5])
    xd = x.astype(np.float64)
    mu = xd.mean(1, keepdims=True)
    ref = (xd - mu) / np.sqrt(xd.var(1, keepdims=True) + 1e-5) * g + b
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)


def test_device_function_calls_are_inlined():
    n = 300
    x = rng.uniform(-2, 2, n).astype(np.float32)
    out = np.zeros(2 * n, np.float32)
    run_ptx(ptx("calls"), "calls", (cdiv(n, 128),), (128,), [x, out, n])
    ref_v = np.zeros(n, np.float32)
    for i in range(n):
        acc = np.float32(0)
        for k in range(i % 4 + 1):
            c = np.float32(np.clip(np.float32(x[i] * np.float32(k)), -1, 1))
            acc = np.float32(np.float64(acc) * np.float64(x[i]) + np.float64(c))  # fma
        ref_v[i] = acc
    np.testing.assert_allclose(out[0::2], ref_v, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out[1::2], np.clip(x, 0, 0.5) * 2)


def test_misc_trig_with_local_memory_slow_path():
    n = 500
    x = np.concatenate([rng.uniform(-10, 10, n - 4), [1e5, -3e7, 1e30, 0.0]]).astype(np.float32)
    s = np.zeros(n, np.float32)
    c = np.zeros(n, np.float32)
    run_ptx(ptx("misc"), "trig", (cdiv(n, 128),), (128,), [x, s, c, n])
    np.testing.assert_allclose(s, np.sin(x.astype(np.float64)), rtol=0, atol=3e-7)
    np.testing.assert_allclose(c, np.cos(x.astype(np.float64)), rtol=0, atol=3e-7)


def test_misc_double_math():
    n = 300
    x = rng.uniform(-5, 5, n)
    y = np.zeros(n)
    run_ptx(ptx("misc"), "dmath", (cdiv(n, 128),), (128,), [x, y, n])
    np.testing.assert_allclose(y, np.exp(x) / (1 + np.sqrt(np.abs(x))) + np.log(1 + x * x), rtol=1e-14)


def test_misc_integer_mix():
    n = 400
    a = rng.integers(-128, 128, n).astype(np.int8)
    b = rng.integers(0, 65536, n).astype(np.uint16)
    out = np.zeros(4 * n, np.int32)
    d, m = -7, 1000003
    run_ptx(ptx("misc"), "intmix", (cdiv(n, 128),), (128,), [a, b, out, d, m, n])
    v = a.astype(np.int64) * 1000 + b
    w = v * 123456789
    o = out.reshape(n, 4)
    np.testing.assert_array_equal(o[:, 0], np.trunc(v / d).astype(np.int64))
    np.testing.assert_array_equal(o[:, 1], np.fmod(v, d))
    np.testing.assert_array_equal(o[:, 2], np.fmod(w, m))
    hi = ((v.astype(np.uint64) & np.uint64(0xFFFFFFFF)) * np.uint64(0x9E3779B9)) >> np.uint64(32)
    m24 = ((v & 0xFFFFFF) ^ 0x800000) - 0x800000
    np.testing.assert_array_equal(o[:, 3].astype(np.uint32), ((hi.astype(np.int64) + m24 * 3) & 0xFFFFFFFF).astype(np.uint32))


def test_misc_bits_and_votes():
    n = 100
    x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    x[:5] = [0, 1, 7, 0x80000000, 0xFFFFFFFF]
    out = np.zeros(4 * n, np.uint32)
    run_ptx(ptx("misc"), "bits", (cdiv(n, 64),), (64,), [x, out, n])
    o = out.reshape(n, 4)
    xp = np.zeros(cdiv(n, 32) * 32, np.uint32)
    xp[:n] = x
    ballots = [(sum(int(v & 1) << k for k, v in enumerate(w))) for w in xp.reshape(-1, 32)]
    np.testing.assert_array_equal(o[:, 0], np.repeat(ballots, 32)[:n])
    popc = np.array([int(v).bit_count() for v in x])
    clz = np.array([32 - int(v).bit_length() for v in x])
    np.testing.assert_array_equal(o[:, 1], popc + 100 * clz)
    np.testing.assert_array_equal(o[:, 2], [int(f"{int(v):032b}"[::-1], 2) for v in x])
    ffs = np.array([(int(v) & -int(v)).bit_length() for v in x])
    any7 = np.repeat([int((w == 7).any()) for w in xp.reshape(-1, 32)], 32)[:n]
    np.testing.assert_array_equal(o[:, 3], ffs + 1000 * any7)


def test_misc_float4():
    n4 = 77
    x = rng.standard_normal(4 * n4).astype(np.float32)
    y = np.zeros_like(x)
    st = run_ptx(ptx("misc"), "scale4", (cdiv(n4, 32),), (32,), [x, y, 2.0, n4])
    v = x.reshape(-1, 4)
    np.testing.assert_array_equal(y.reshape(-1, 4), np.stack([2 * v[:, 0], 2 * v[:, 1] + 1, 2 * v[:, 2], v[:, 3] - 2], 1))
    assert st.global_load_bytes == 16 * n4 and st.global_load_sectors == cdiv(16 * n4, 32)


def test_misc_atomics():
    n = 100
    c = np.array([0, 1000], np.uint32)
    last = np.array([-1], np.int32)
    bitsv = np.array([0, 0xFFFFFFFF, 0], np.uint32)
    run_ptx(ptx("misc"), "atom_mix", (2,), (64,), [c, last, bitsv, n])
    assert c[0] == n % 10 and c[1] == 1000 - 2 * n and 0 <= last[0] < n
    assert bitsv[0] == 0xFFFFFFFF and bitsv[1] == 0 and bitsv[2] == np.bitwise_xor.reduce(np.arange(n))


def test_misc_half2_bf16():
    n = 64
    x = rng.standard_normal(2 * n).astype(np.float16)
    y = np.zeros_like(x)
    p = rng.standard_normal(n).astype(np.float32)
    pb = (p.view(np.uint32) >> 16).astype(np.uint16)  # truncated to bf16 bits
    q = np.zeros(n, np.float32)
    run_ptx(ptx("misc"), "h2math", (1,), (64,), [x, y, pb, q, n])
    np.testing.assert_array_equal(y, (x.astype(np.float64) * x + 1).astype(np.float16))
    pf = (pb.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(q, pf * np.float32(2) + x[0::2].astype(np.float32))


# ------------------------------------------------------------------ tensor cores (tensor_core.cu)


def _f16_bits(x):
    return x.astype(np.float16).view(np.uint16)


def _bf16(x):
    """float32 -> bf16 bits (round to nearest even) and the float32 values they hold."""
    u = x.astype(np.float32).view(np.uint32)
    b = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return b, (b.astype(np.uint32) << 16).view(np.float32)


def _tc_bound(A, B):
    """Tolerance of a tensor-core result against the float64 product: one f32 rounding per mma
    plus hardware's truncating accumulation (docs: the simulator's tensor-core model)."""
    return 2.0 ** -20 * (np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)))


@pytest.mark.parametrize("kernel", ["mma_f16_m16n8k16", "mma_bf16_m16n8k16"])
def test_nvcc_mma_m16n8k16(kernel):
    M, N, K = 32, 24, 64
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    if "bf16" in kernel:
        (a, A), (bt, Bt) = _bf16(A), _bf16(np.ascontiguousarray(B.T))
        B = Bt.T
    else:
        a, bt = _f16_bits(A), _f16_bits(np.ascontiguousarray(B.T))
        A, B = a.view(np.float16).astype(np.float32), bt.view(np.float16).astype(np.float32).T
    D = np.zeros((M, N), np.float32)
    run_ptx(ptx("tensor_core"), kernel, (N // 8, M // 16), (32,), [a, bt, D, K])
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert np.all(np.abs(D - ref) <= _tc_bound(A, B))
    # the accumulation: each mma rounds once to f32 (k = 16 per step)
    acc = np.zeros((M, N), np.float32)
    for k0 in range(0, K, 16):
        acc = (acc + A[:, k0:k0 + 16].astype(np.float64) @ B[k0:k0 + 16].astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(D, acc)


def test_nvcc_mma_m16n8k8_f16_accumulator():
    M, N, K = 16, 16, 32
    A = rng.integers(-3, 4, (M, K)).astype(np.float16)
    B = rng.integers(-3, 4, (K, N)).astype(np.float16)
    D = np.zeros((M, N), np.float16)
    run_ptx(ptx("tensor_core"), "mma_f16_m16n8k8_f16acc", (N // 8, M // 16), (32,),
            [A.view(np.uint16), np.ascontiguousarray(B.T).view(np.uint16), D.view(np.uint16), K])
    np.testing.assert_array_equal(D, (A.astype(np.float64) @ B).astype(np.float16))


@pytest.mark.parametrize("kernel,kstep", [("mma_tf32_m16n8k8", 8), ("mma_tf32_m16n8k4", 4)])
def test_nvcc_mma_tf32(kernel, kstep):
    M, N, K = 32, 16, 32
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    D = np.zeros((M, N), np.float32)
    run_ptx(ptx("tensor_core"), kernel, (N // 8, M // 16), (32,), [A, np.ascontiguousarray(B.T), D, K])

    def tf32(x):  # cvt.rna: nearest, ties away from zero, 10 mantissa bits
        return ((x.view(np.uint32) + 0x1000) & 0xFFFFE000).view(np.float32)
    acc = np.zeros((M, N), np.float32)
    At, Bt = tf32(A), tf32(B)
    for k0 in range(0, K, kstep):
        acc = (acc + At[:, k0:k0 + kstep].astype(np.float64) @ Bt[k0:k0 + kstep].astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(D, acc)
    # against the f32 product, tf32's documented tolerance: inputs rounded to 11 significant bits
    ref = A.astype(np.float64) @ B
    assert np.all(np.abs(D - ref) <= 2.0 ** -10 * (np.abs(A) @ np.abs(B)))


@pytest.mark.parametrize("M,N,K", [(64, 64, 32), (128, 64, 128)])
def test_nvcc_gemm_cp_async_ldmatrix_mma(M, N, K):
    """A real tensor-core GEMM: a 3-stage cp.async pipeline, ldmatrix.x4 / .x2.trans, mma.sync."""
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    C = np.zeros((M, N), np.float32)
    st = run_ptx(ptx("tensor_core"), "gemm_f16_cp_async_ldmatrix", (N // 64, M // 64), (128,), [A, B, C, M, N, K])
    acc = np.zeros((M, N), np.float32)
    for k0 in range(0, K, 16):
        acc = (acc + A[:, k0:k0 + 16].astype(np.float64) @ B[k0:k0 + 16].astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(C, acc)
    assert st.global_load_bytes == (M * K * (N // 64) + K * N * (M // 64)) * 2  # every tile once per block
    assert st.tensor_flops == 2 * M * N * K and st.mma_instructions == M * N * K // (16 * 8 * 16)


def test_nvcc_tensor_core_ptx_assembles():
    from fsir.ptx.ptxas import assemble, find_ptxas

    if not find_ptxas():
        pytest.skip("ptxas not available")
    # nvcc 13 stamps PTX ISA 9.0, which the CUDA 12 ptxas of the test wheel cannot read;
    # the kernels use nothing newer than ISA 7.8 (mma, ldmatrix, cp.async are sm_80 / 7.0+)
    text = ptx("tensor_core").replace(".version 9.0", ".version 7.8", 1)
    r = assemble(text, "sm_80")
    assert r.ok, r.errors


@pytest.mark.parametrize("edit,what", [
    # waiting for one group too few: the tile being read is still in flight
    (("cp.async.wait_group 1;", "cp.async.wait_group 2;"),
     r"ldmatrix.*shared-memory race in block \(0,0,0\): thread \(\d+,0,0\) reads shared memory at offset \d+ "
     r"\(_ZZ26gemm\w+E2As\+\d+\) that the cp.async of thread \(\d+,0,0\) at PTX line \d+ is still copying"),
    # no barrier after the wait: a warp reads rows that other warps' copies wrote
    (("cp.async.wait_group 1;\n\n\t// end inline asm\n\tbar.sync \t0;", "cp.async.wait_group 1;\n"),
     r"ldmatrix.*shared-memory race in block \(0,0,0\): thread \(\d+,0,0\) reads shared memory that thread "
     r"\(\d+,0,0\) of the same block wrote at PTX line \d+"),
])
def test_nvcc_gemm_pipeline_bugs_are_reported(edit, what):
    text = ptx("tensor_core")
    assert edit[0] in text
    text = text.replace(*edit, 1)
    M = N = 64
    K = 128
    args = [np.zeros((M, K), np.float16), np.zeros((K, N), np.float16), np.zeros((M, N), np.float32), M, N, K]
    with pytest.raises(SimulatorError, match=what):
        run_ptx(text, "gemm_f16_cp_async_ldmatrix", (1, 1), (128,), args)
