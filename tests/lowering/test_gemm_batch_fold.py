"""A batch of matrices times one matrix ([B..., M, K] x [K, N]) is computed as one
(B... x M) x K product (`fsir/lowering/gemm.py`, `folds_batch`): block tiles span the
batch's consecutive rows, so the rhs is read once per row tile. Checked on the
simulator against numpy, on FMA and tensor-core tiles, with tiles straddling a batch
boundary, ragged edges and split-K."""

from __future__ import annotations

import numpy as np
import pytest

import fsir


def _source(b: int, m: int, n: int, k: int, batched_rhs: bool = False) -> str:
    a_t, out_t = f"tensor<{b}x{m}x{k}xf32>", f"tensor<{b}x{m}x{n}xf32>"
    w_t = f"tensor<{b}x{k}x{n}xf32>" if batched_rhs else f"tensor<{k}x{n}xf32>"
    return f"""func.func @f(%a: {a_t}, %w: {w_t}, %c: tensor<{n}xf32>) -> {out_t} {{
  %d = graph.dot %a, %w : ({a_t}, {w_t}) -> {out_t}
  %cb = graph.broadcast %c dims [2] : (tensor<{n}xf32>) -> {out_t}
  %e = graph.add %d, %cb : {out_t}
  func.return %e : {out_t}
}}"""


def _inputs(b: int, m: int, n: int, k: int, batched_rhs: bool = False) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    w_shape = (b, k, n) if batched_rhs else (k, n)
    return [rng.standard_normal((b, m, k)).astype(np.float32),
            (rng.standard_normal(w_shape) / np.sqrt(k)).astype(np.float32),
            rng.standard_normal(n).astype(np.float32)]


@pytest.mark.parametrize("b, m, n, k, precision, gemm, grid", [
    (2, 72, 96, 64, "fp32", "32x32x16/4x4", (3, 5, 1)),  # tiles straddle the boundary at row 72
    (3, 20, 40, 24, "fp32", "16x16x16/1x1", (3, 4, 1)),
    (2, 100, 72, 64, "fp32", "64x64x16/4x4/s2", (2, 4, 2)),  # split-K, ragged last row tile
    (2, 72, 96, 64, "tf32", "32x32x32/16x16/tf32", (3, 5, 1)),
    (2, 100, 72, 64, "tf32", "64x64x32/32x32/tf32/s2", (2, 4, 2)),
])
def test_folded_batch_matches_the_reference(b, m, n, k, precision, gemm, grid):
    ex = fsir.compile(_source(b, m, n, k), gpu="A100", precision=precision, gemm=gemm)
    (kernel,) = ex.kernels
    assert kernel.grid == grid  # rows: ceil(b * m / bm); z: the split only
    a, w, c = _inputs(b, m, n, k)
    (got,) = ex.run([a, w, c], device="sim")
    want = a @ w + c
    tol = 2e-3 if precision == "tf32" else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_a_batched_rhs_stays_on_grid_z():
    """(A computed in the kernel keeps it too: lit_tests/stitch-codegen/gemm.mlir.)"""
    b, m, n, k = 2, 40, 48, 32
    ex = fsir.compile(_source(b, m, n, k, batched_rhs=True), gpu="A100", gemm="32x32x16/4x4")
    (kernel,) = ex.kernels
    assert kernel.grid == (2, 2, 2)
    a, w, c = _inputs(b, m, n, k, batched_rhs=True)
    (got,) = ex.run([a, w, c], device="sim")
    want = a @ w + c
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
