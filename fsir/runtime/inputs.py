"""Inputs for running a function: from an .npz file or random but reproducible."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType

from fsir.dialects.graph import DYN, fmt_shape, numpy_dtype
from fsir.errors import UserError
from fsir.ir import location_of
from fsir.runtime.reference import arg_names


def random_inputs(f: func.FuncOp, seed: int = 0, dynamic_size: int = 8) -> list[np.ndarray]:
    """Standard-normal floats, small non-negative ints, fair booleans; `?` dims get
    `dynamic_size`. The same seed gives the same inputs on every machine."""
    rng = np.random.default_rng(seed)
    out = []
    for t in f.function_type.inputs.data:
        assert isinstance(t, TensorType)
        shape = [dynamic_size if d == DYN else d for d in t.get_shape()]
        dtype = numpy_dtype(t.element_type)
        if dtype == np.bool_:
            x = rng.random(shape) < 0.5
        elif dtype.kind in "iu":
            x = rng.integers(0, 100, size=shape).astype(dtype)
        else:
            x = rng.standard_normal(shape, dtype=np.float32).astype(dtype)
        out.append(np.asarray(x))
    return out


def load_inputs(f: func.FuncOp, path: str, seed: int = 0, dynamic_size: int = 8) -> list[np.ndarray]:
    """Inputs by argument name (as in the source, without %) or by position (arg0, ...)."""
    try:
        data = np.load(path)
    except FileNotFoundError:
        raise UserError(f"cannot open inputs '{path}': no such file") from None
    except Exception as err:  # numpy raises several types for non-npz files
        raise UserError(f"cannot read inputs '{path}': {err}") from None
    names = arg_names(f)
    missing = [n for i, n in enumerate(names) if n not in data and f"arg{i}" not in data]
    if missing:
        raise UserError(
            f"{path} has no input for argument(s) {', '.join('%' + n for n in missing)} "
            f"(it has: {', '.join(data.files) or 'nothing'})",
            location_of(f),
        )
    known = set(names) | {f"arg{i}" for i in range(len(names))}
    extra = [k for k in data.files if k not in known]
    if extra:
        raise UserError(f"{path} has arrays for no argument of @{f.sym_name.data}: {', '.join(extra)}", location_of(f))
    return [np.asarray(data[n] if n in data else data[f"arg{i}"]) for i, n in enumerate(names)]


def describe(x: np.ndarray) -> str:
    """Shape, dtype and a checksum that is stable across devices to a tolerance."""
    xs = np.asarray(x)
    as64 = xs.astype(np.float64)
    finite = np.isfinite(as64)
    extra = "" if finite.all() else f" nonfinite={int((~finite).sum())}"
    return (
        f"{fmt_shape(xs.shape)} {xs.dtype} sum={as64[finite].sum():.6e} "
        f"mean_abs={np.abs(as64[finite]).mean() if finite.any() else 0.0:.6e}{extra}"
    )
