"""Throughput of fsir's PTX simulator in thread-instructions per second.

    python benchmarks/sim_throughput.py [--quick]

Runs nvcc-generated kernels (tests/sim/cuda/*.ptx) on the simulator: an elementwise kernel,
a shared-memory block reduction, warp-shuffle reductions, a tiled matmul, a LayerNorm of
4096x768 (4096 blocks of 256 threads = 1M threads), a row softmax and a tensor-core GEMM
(cp.async pipeline, ldmatrix, mma.sync). Prints wall time, dynamic thread-instructions
and thread-instructions per second for each (best of --repeat runs, after one warm-up that also
parses and decodes the PTX).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from fsir.sim import run_ptx

CUDA = Path(__file__).resolve().parent.parent / "tests" / "sim" / "cuda"


def ptx(name):
    return (CUDA / f"{name}.ptx").read_text()


def cases(scale: float):
    rng = np.random.default_rng(0)
    n = int((1 << 22) * scale)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.zeros(n, np.float32)
    yield "elementwise (vec_add)", f"n={n}", ptx("vecadd"), "vec_add", ((n + 255) // 256,), (256,), [a, b, c, n], 0

    nb = (n + 255) // 256
    yield "block reduction (smem + bar.sync)", f"n={n}", ptx("block_reduce"), "block_sum", (nb,), (256,), \
        [a, np.zeros(nb, np.float32), n], 0

    yield "warp-shuffle reduction (shfl.down)", f"n={n}", ptx("warp_shuffle"), "warp_sum_down", (nb,), (256,), \
        [a, np.zeros(nb * 8, np.float32), n], 0

    rows = int(4096 * scale)
    x = rng.standard_normal((rows, 768)).astype(np.float32)
    g = rng.standard_normal(768).astype(np.float32)
    yield "LayerNorm (shfl.bfly + smem)", f"{rows}x768", ptx("layernorm"), "layernorm", (rows,), (256,), \
        [x, g, g, np.zeros_like(x), 768, 1e-5], 0

    m = int(256 * max(scale, 0.25))
    A = rng.standard_normal((m, m)).astype(np.float32)
    yield "tiled matmul (smem tiles)", f"{m}x{m}x{m}", ptx("matmul_tiled"), "matmul_tiled", \
        ((m + 15) // 16, (m + 15) // 16), (16, 16), [A, A, np.zeros_like(A), m, m, m], 0

    rows = int(4096 * scale)
    x = rng.standard_normal((rows, 768)).astype(np.float32)
    yield "row softmax (expf, divergence)", f"{rows}x768", ptx("softmax"), "softmax_rows", (rows,), (128,), \
        [x, np.zeros_like(x), 768], 128 * 4

    m = 64 * max(1, int(8 * scale))
    A = rng.standard_normal((m, m)).astype(np.float16)
    yield "tensor-core GEMM (cp.async, ldmatrix, mma)", f"{m}x{m}x{m}", ptx("tensor_core"), \
        "gemm_f16_cp_async_ldmatrix", (m // 64, m // 64), (128,), [A, A, np.zeros((m, m), np.float32), m, m, m], 0


def main():
    ap = argparse.ArgumentParser(description=(__doc__ or "").strip().splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller problems (1/8)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-race-check", action="store_true", help="disable shared-memory race detection")
    args = ap.parse_args()
    scale = 0.125 if args.quick else 1.0
    print(f"{'kernel':36} {'size':>12} {'threads':>9} {'thread-instr':>13} {'time':>8} {'instr/s':>10}")
    for title, size, text, kernel, grid, block, kargs, smem in cases(scale):
        st = run_ptx(text, kernel, grid, block, kargs, smem, check_races=not args.no_race_check)  # warm-up
        best = math.inf
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            st = run_ptx(text, kernel, grid, block, kargs, smem, check_races=not args.no_race_check)
            best = min(best, time.perf_counter() - t0)
        print(f"{title:36} {size:>12} {st.threads:>9} {st.instructions:>13,} {best:>7.2f}s "
              f"{st.instructions / best / 1e6:>8.0f} M")


if __name__ == "__main__":
    main()
