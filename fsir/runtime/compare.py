"""Comparing results with the reference interpreter, with documented tolerances.

A result matches when |got - want| <= atol + rtol * |want| + 4 * e elementwise (NaN
matches NaN, inf matches the same inf). The tolerances cover the PTX math sequences'
error bounds (fsir/ptx) and reassociated reductions; integers and booleans must be
exact. `e` is the f32 reference's own largest error against a float64 evaluation of
the same graph (0 when not given): a device's f32 result may differ from the f32
reference by a few times that, and on ill-conditioned models (LayerNorm of large
activations, long dot products) it dominates.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

# dtype name -> (rtol, atol)
TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-9, 1e-12),
    "float32": (2e-4, 2e-5),
    "float16": (2e-2, 2e-3),
    "bfloat16": (4e-2, 1e-2),
}


@dataclass(frozen=True)
class Comparison:
    max_abs: float
    max_rel: float
    ok: bool
    mismatches: int
    slack: float = 0.0

    def __str__(self) -> str:
        verdict = "ok" if self.ok else f"MISMATCH ({self.mismatches} elements beyond tolerance)"
        extra = f" (f32 reference error allowance {self.slack:.1e})" if self.slack else ""
        return f"max abs err {self.max_abs:.3e}, max rel err {self.max_rel:.3e}{extra}: {verdict}"


# How many times the f32 reference's own error a device result may be off by.
REFERENCE_ERROR_FACTOR = 4.0


def compare(got: np.ndarray, want: np.ndarray, scale: float = 1.0,
            exact: np.ndarray | None = None) -> Comparison:
    """Compare one output; `scale` widens the float tolerances; `exact` is the float64
    evaluation of `want` (see the module docstring)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return Comparison(float("inf"), float("inf"), False, max(got.size, want.size))
    if want.dtype.kind in "biu":
        bad = got != want
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        return Comparison(float(diff.max(initial=0)), 0.0, not bad.any(), int(bad.sum()))
    name = "bfloat16" if want.dtype == ml_dtypes.bfloat16 else want.dtype.name
    rtol, atol = TOLERANCES.get(name, TOLERANCES["float32"])
    g, w = got.astype(np.float64), want.astype(np.float64)
    slack = 0.0
    if exact is not None:
        e = np.abs(w - np.asarray(exact, dtype=np.float64))
        e = e[np.isfinite(e)]
        slack = REFERENCE_ERROR_FACTOR * float(e.max(initial=0.0))
    both_nan = np.isnan(g) & np.isnan(w)
    same_inf = np.isinf(w) & (g == w)
    with np.errstate(invalid="ignore"):
        diff = np.where(both_nan | same_inf, 0.0, np.abs(g - w))
        diff = np.where(np.isnan(diff), np.inf, diff)
        rel = diff / np.maximum(np.abs(w), 1e-30)
        bad = diff > (atol + rtol * np.abs(np.where(np.isfinite(w), w, 0.0))) * scale + slack
    return Comparison(float(diff.max(initial=0)), float(np.where(np.abs(w) > atol, rel, 0).max(initial=0)),
                      not bad.any(), int(bad.sum()), slack)
