"""f64 exp/exp2/log/log2/log10/log1p in real f64 arithmetic, on fsir's PTX simulator.

The kernels are lit_tests/ptx/math_f64.mlir (y[i] = op(x[i])). numpy's f64 functions
(glibc, < 1 ulp) are the reference; fsir/ptx/math_ops.py documents the sequences.
"""

from __future__ import annotations

import numpy as np
import pytest

from fsir import sim
from fsir.ptx import print_ptx
from fsir.testing.ptx import PTX_LIT, parse

RNG = np.random.default_rng(64)
N = 3000


@pytest.fixture(scope="module")
def sim_module():
    return sim.load_module(print_ptx(parse((PTX_LIT / "math_f64.mlir").read_text())))


def run(mod, kernel: str, x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, np.float64)
    y = np.zeros_like(x)
    sim.launch(mod, kernel, ((x.size + 255) // 256,), (256,), [x, y, np.uint64(x.size)])
    return y


def ulps(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.abs(y - ref) / np.maximum(np.spacing(np.abs(ref)), 5e-324)


def wide(lo_exp: float, hi_exp: float) -> np.ndarray:
    return np.exp(RNG.uniform(lo_exp, hi_exp, N))


CASES = {
    "exp": (lambda: np.concatenate([np.linspace(-745, 709.7, N), RNG.uniform(-2, 2, N)]), np.exp),
    "exp_denormal": (lambda: RNG.uniform(-745, -708, N), np.exp),
    "exp2": (lambda: np.concatenate([RNG.uniform(-1074, 1023.9, N), RNG.uniform(-1, 1, N)]), np.exp2),
    "log": (lambda: np.concatenate([RNG.uniform(0.5, 2, N), wide(-700, 700)]), np.log),
    "log_denormal": (lambda: RNG.uniform(1e-322, 2e-308, N), np.log),
    "log2": (lambda: np.concatenate([RNG.uniform(0.5, 2, N), wide(-700, 700)]), np.log2),
    "log10": (lambda: np.concatenate([RNG.uniform(0.5, 2, N), wide(-700, 700)]), np.log10),
    "log1p": (lambda: np.concatenate([RNG.uniform(-0.99, 3, N), wide(-700, 700), -wide(-700, -1)]), np.log1p),
}


@pytest.mark.parametrize("name", CASES)
def test_within_two_ulp(sim_module, name):
    """Measured: 1.0 ulp for every op over these ranges."""
    make, ref_fn = CASES[name]
    x = make()
    y = run(sim_module, name.split("_")[0], x)
    err = ulps(y, ref_fn(x))
    worst = int(np.argmax(err))
    assert err.max() <= 2.0, f"{name}: {err.max():.2f} ulp at x={x[worst]!r} (got {y[worst]!r})"


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 2.0, 0.5, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 1e300, -1e300,
                    709.78, 709.79, 710.0, -745.1, -745.2, -746.0, 1023.99, 1024.0, -1074.0, -1076.0, -1e-17])


@pytest.mark.parametrize("name", ["exp", "exp2", "log", "log2", "log10", "log1p"])
def test_special_values(sim_module, name):
    """Zeros, infinities, NaN, negative arguments of log, over/underflow at the range ends."""
    with np.errstate(all="ignore"):
        want = getattr(np, name)(SPECIAL)
    got = run(sim_module, name, SPECIAL)
    ok = (got == want) | (np.isnan(got) & np.isnan(want)) | (ulps(got, want) <= 2.0)
    assert ok.all(), list(zip(SPECIAL[~ok], got[~ok], want[~ok]))


def test_powers_of_two_are_exact(sim_module):
    k = np.arange(-1070, 1024, dtype=np.float64)
    assert (run(sim_module, "log2", np.exp2(k)) == k).all()
    assert (run(sim_module, "exp2", k) == np.exp2(k)).all()
