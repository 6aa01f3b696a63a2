"""Trigonometric, hyperbolic and rounding elementwise ops (fsir/lowering/scalar.py's
TrigBuilder) compiled to PTX and run on the simulator, against float64 numpy.

The sequences use f32 arithmetic only (plus exp/log/log1p/sqrt, whose accuracy
fsir/ptx/math_ops.py documents), so what the simulator measures is what a GPU computes.
Bounds: relative error (ulps of the exact result) where the function has no zero in
the range; near zeros of sin/cos/tan, absolute error relative to the argument's scale.
"""

from __future__ import annotations

import numpy as np
import pytest

from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.executor import execute
from fsir.testing.pipeline import assemble_all, have_ptxas

RNG = np.random.default_rng(7)
N = 4096


def sample(lo: float, hi: float) -> np.ndarray:
    return np.concatenate([np.linspace(lo, hi, N // 2), RNG.uniform(lo, hi, N // 2)]).astype(np.float32)


def run_op(name: str, x: np.ndarray, check_ptxas: bool = False) -> np.ndarray:
    text = (f"func.func @f(%x: tensor<{x.size}xf32>) -> tensor<{x.size}xf32> {{\n"
            f"  %y = graph.{name} %x : tensor<{x.size}xf32>\n  func.return %y : tensor<{x.size}xf32>\n}}\n")
    lowered = lower(parse_module(text, "<test>"), PipelineOptions(fusion="none"))
    if check_ptxas and have_ptxas():
        assemble_all(lowered)
    (y,), _ = execute(lowered, [x])
    return y


def ulps(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    ulp = np.maximum(np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64), 1.4e-45)
    return np.abs(y.astype(np.float64) - ref) / ulp


# name: (inputs, float64 reference, max ulp)
ULP_CASES = {
    "sin": (lambda: sample(-0.78, 0.78), np.sin, 2.0),
    "cos": (lambda: sample(-0.78, 0.78), np.cos, 2.0),
    "tan": (lambda: sample(-0.78, 0.78), np.tan, 3.0),
    "atan": (lambda: np.concatenate([sample(-4, 4), sample(-1e4, 1e4)]), np.arctan, 3.0),
    "asin": (lambda: sample(-0.999, 0.999), np.arcsin, 4.0),
    "acos": (lambda: sample(-0.999, 0.999), np.arccos, 4.0),
    "sinh": (lambda: sample(-20, 20), np.sinh, 4.0),
    "cosh": (lambda: sample(-20, 20), np.cosh, 4.0),
    "asinh": (lambda: np.concatenate([sample(-3, 3), sample(-1e6, 1e6)]), np.arcsinh, 4.0),
    "acosh": (lambda: np.concatenate([sample(1, 3), sample(3, 1e6)]), np.arccosh, 4.0),
    "atanh": (lambda: sample(-0.999, 0.999), np.arctanh, 4.0),
}


@pytest.mark.parametrize("name", sorted(ULP_CASES))
def test_relative_accuracy_in_ulps(name):
    make, ref, bound = ULP_CASES[name]
    x = make()
    y = run_op(name, x, check_ptxas=True)
    err = ulps(y, ref(x.astype(np.float64)))
    assert err.max() <= bound, f"{name}: {err.max():.2f} ulp at x = {x[err.argmax()]!r}"


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_large_arguments_are_reduced_accurately(name):
    """|x| up to 1e5: the reduction by π/2 in three parts keeps the absolute error at
    a few ulps of 1 (sin.approx on the raw argument would be off by far more)."""
    x = sample(-1e5, 1e5)
    y = run_op(name, x)
    ref = getattr(np, name)(x.astype(np.float64))
    assert np.abs(y - ref).max() < 4e-7


def test_tan_near_its_poles_keeps_relative_accuracy():
    x = (np.pi / 2 + np.array([-1e-3, -1e-4, 1e-4, 1e-3, 3 * np.pi / 2 - 1e-2]) * np.array([1, 1, 1, 1, 1]))
    x = x.astype(np.float32)
    y = run_op("tan", x)
    ref = np.tan(x.astype(np.float64))
    assert np.all(np.abs(y - ref) <= 4e-6 * np.abs(ref))


def test_special_values():
    x = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0], np.float32)
    with np.errstate(all="ignore"):
        for name, ref in (("atan", np.arctan), ("asin", np.arcsin), ("acos", np.arccos), ("asinh", np.arcsinh),
                          ("atanh", np.arctanh), ("sinh", np.sinh), ("cosh", np.cosh)):
            want = ref(x.astype(np.float64)).astype(np.float32)
            got = run_op(name, x)
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=0, equal_nan=True, err_msg=name)
            assert np.array_equal(np.signbit(got[:2]), np.signbit(want[:2])), f"{name}: sign of ±0"


def test_round_is_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, 1e8 + 2, 0.49999997], np.float32)
    assert np.array_equal(run_op("round", x, check_ptxas=True), np.rint(x))
