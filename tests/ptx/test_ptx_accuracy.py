"""Numerical accuracy of the PTX printer's math sequences, run on fsir's PTX simulator.

The kernels are lit_tests/ptx/math.mlir (y[i] = op(x[i])). The simulator evaluates
ex2/lg2/sin/cos.approx exactly, so these bounds check fsir's range reduction and
polynomials; fsir/ptx/math_ops.py documents the bound on a GPU (these + the HW error).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fsir import sim
from fsir.ptx import print_ptx
from fsir.testing.ptx import PTX_LIT, parse

N = 100_000
RNG = np.random.default_rng(1234)


@pytest.fixture(scope="module")
def sim_module():
    return sim.load_module(print_ptx(parse((PTX_LIT / "math.mlir").read_text())))


def run(mod, kernel: str, x, z=None) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    z = x if z is None else np.ascontiguousarray(z, dtype=np.float32)
    y = np.zeros(x.size, np.float32)
    sim.launch(mod, kernel, ((x.size + 255) // 256,), (256,), [x, z, y, np.uint64(x.size)])
    return y


def sample(lo: float, hi: float, n: int = N) -> np.ndarray:
    return np.concatenate([np.linspace(lo, hi, n), RNG.uniform(lo, hi, n)]).astype(np.float32)


def log_sample(lo_exp: float, hi_exp: float) -> np.ndarray:
    return np.exp(sample(lo_exp, hi_exp)).astype(np.float32)


def ulps(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    ulp = np.maximum(ulp, float(np.spacing(np.float32(1.1754944e-38))))  # denormal ulp
    return np.abs(y.astype(np.float64) - ref) / ulp


_erf = np.vectorize(math.erf, otypes=[float])

# op: (inputs, float64 reference, max ulp)  -- measured values in math_ops.py
ULP_CASES = {
    "exp": (lambda: sample(-87.3, 88.7), np.exp, 1.5),
    "exp_denormal": (lambda: sample(-103.0, -87.4), np.exp, 1.5),
    "exp2": (lambda: sample(-126, 127.9), np.exp2, 1.2),
    "log": (lambda: np.concatenate([sample(0.3, 3), log_sample(-87, 88)]), np.log, 2.5),
    "log_denormal": (lambda: sample(1e-44, 1e-38), np.log, 2.5),
    "log2": (lambda: np.concatenate([sample(0.3, 3), log_sample(-87, 88)]), np.log2, 2.5),
    "log10": (lambda: np.concatenate([sample(0.3, 3), log_sample(-87, 88)]), np.log10, 3.5),
    "log1p": (lambda: np.concatenate([sample(-0.99, 3), log_sample(-20, 80)]), np.log1p, 3.5),
    "tanh": (lambda: np.concatenate([sample(-10, 10), sample(-0.01, 0.01)]), np.tanh, 1.5),
    "erf": (lambda: np.concatenate([sample(-5, 5), sample(-0.01, 0.01)]), _erf, 4.0),
    "sqrt": (lambda: log_sample(-87, 88), np.sqrt, 0.5),
    "rsqrt": (lambda: log_sample(-87, 88), lambda v: 1 / np.sqrt(v), 1.5),
}


@pytest.mark.parametrize("name", ULP_CASES)
def test_ulp_bound(sim_module, name):
    make, ref_fn, bound = ULP_CASES[name]
    x = make()
    y = run(sim_module, name.split("_")[0], x)
    ref = ref_fn(x.astype(np.float64))
    err = ulps(y, ref)
    worst = int(np.argmax(err))
    assert err.max() <= bound, f"{name}: {err.max():.2f} ulp at x={x[worst]!r} (got {y[worst]!r}, want {ref[worst]!r})"


def test_erf_absolute(sim_module):
    x = sample(-6, 6)
    err = np.abs(run(sim_module, "erf", x) - _erf(x.astype(np.float64)))
    assert err.max() <= 3e-7


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sincos_absolute(sim_module, name):
    x = sample(-1e4, 1e4)
    err = np.abs(run(sim_module, name, x) - getattr(np, name)(x.astype(np.float64)))
    assert err.max() <= 6e-7


def test_divf_correctly_rounded(sim_module):
    x, z = sample(-1e3, 1e3), RNG.uniform(-1e3, 1e3, 2 * N).astype(np.float32)
    y = run(sim_module, "divf", x, z)
    assert ulps(y, x.astype(np.float64) / z).max() <= 0.5


def pow_bound(y: np.ndarray) -> np.ndarray:
    """The documented relative bound of powf (simulator, i.e. without the HW term)."""
    return 2.4e-7 + 8e-8 * np.abs(y)


@pytest.mark.parametrize(
    "case",
    ["positive", "integer_powers_of_negatives", "near_one_large_y"],
)
def test_powf_accuracy(sim_module, case):
    n = 2 * N
    if case == "positive":
        x, y = RNG.uniform(0, 10, n), RNG.uniform(-8, 8, n)
    elif case == "integer_powers_of_negatives":
        x, y = RNG.uniform(-3, 3, n), RNG.integers(-20, 21, n).astype(float)
    else:
        x, y = RNG.uniform(0.99, 1.01, n), RNG.uniform(-3000, 3000, n)
    x, y = x.astype(np.float32), y.astype(np.float32)
    got = run(sim_module, "powf", x, y)
    ref = np.power(x.astype(np.float64), y.astype(np.float64))
    ok = (np.abs(ref) < 3e38) & (np.abs(ref) > 1.2e-38)
    rel = np.abs(got[ok] - ref[ok]) / np.abs(ref[ok])
    assert (rel <= pow_bound(y[ok])).all(), rel.max()


SPECIAL = np.array(
    [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 1e30, 2.5, -2.5],
    np.float32,
)


def _same(got: np.ndarray, ref: np.ndarray, rel: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        close = np.abs(got.astype(np.float64) - ref) <= rel * np.abs(ref)
    both_nan = np.isnan(got) & np.isnan(ref)
    exact = (got == ref) & (np.signbit(got) == np.signbit(ref))
    return exact | both_nan | (close & np.isfinite(ref))


def test_powf_special_values(sim_module):
    """C `pow` rules: zeros, infinities, NaN, negative bases, signed zero results."""
    x, y = (a.ravel() for a in np.meshgrid(SPECIAL, SPECIAL, indexing="ij"))
    got = run(sim_module, "powf", x, y)
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    ok = _same(got, ref.astype(np.float64), 4e-7)
    assert ok.all(), [(a, b, g, r) for a, b, g, r in zip(x[~ok], y[~ok], got[~ok], ref[~ok])]


@pytest.mark.parametrize(
    "name,ref",
    [
        ("exp", np.exp), ("exp2", np.exp2), ("log", np.log), ("log2", np.log2), ("log10", np.log10),
        ("log1p", np.log1p), ("tanh", np.tanh), ("erf", _erf), ("sqrt", np.sqrt),
        ("rsqrt", lambda v: 1 / np.sqrt(v)), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc),
        ("roundeven", np.round), ("round", lambda v: np.trunc(v + np.copysign(0.5, v))), ("absf", np.abs),
    ],
)  # fmt: skip
def test_special_values(sim_module, name, ref):
    x = np.concatenate([SPECIAL, np.array([-88.0, -95.5, -103.0, -104.5, 88.7, 89.0, -1e30, 100.0, -100.0], np.float32)])
    got = run(sim_module, name, x)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(np.float32)
    ok = _same(got, want.astype(np.float64), 5e-7) | ((np.abs(want) < 1.2e-38) & (np.abs(got) < 1.2e-38))
    assert ok.all(), [(a, g, w) for a, g, w in zip(x[~ok], got[~ok], want[~ok])]
