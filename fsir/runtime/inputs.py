"""Inputs for running a function: from an .npz file or random but reproducible."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, TensorType

from fsir.dialects.graph import DYN, GatherOp, fmt_shape, numpy_dtype, shape_of
from fsir.errors import UserError
from fsir.ir import location_of
from fsir.runtime.reference import arg_names

RUNTIME_SHAPE_ATTR = "fsir.runtime_shape"


def random_inputs(f: func.FuncOp | ModuleOp, rng: np.random.Generator | int = 0,
                  dynamic_size: int | None = None) -> list[np.ndarray]:
    """Random inputs for `f` (or a module's first function), the same on every machine
    for the same seed: standard-normal floats, fair booleans, integers in [-5, 5] except
    gather ids, which stay within the table's rows. A `?` dim takes its size from the
    argument attribute `fsir.runtime_shape = array<i64: ...>` if present, else
    `dynamic_size`, else a random size in 1..8."""
    if isinstance(f, ModuleOp):
        f = next(op for op in f.ops if isinstance(op, func.FuncOp))
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    args = f.body.block.args
    arg_attrs = f.arg_attrs.data if f.arg_attrs is not None else [None] * len(args)
    out = []
    for arg, attrs in zip(args, arg_attrs):
        t = arg.type
        if not isinstance(t, TensorType):
            raise UserError(f"argument %{arg.name_hint or arg.index} has non-tensor type {t}", location_of(f))
        shape = list(t.get_shape())
        recorded = attrs.data.get(RUNTIME_SHAPE_ATTR) if attrs is not None else None
        if isinstance(recorded, DenseArrayBase):
            shape = list(recorded.get_values())
        shape = [(dynamic_size or int(rng.integers(1, 9))) if d == DYN else d for d in shape]
        dtype = numpy_dtype(t.element_type)
        if dtype == np.bool_:
            value = rng.random(shape) < 0.5
        elif dtype.kind in "iu":
            rows = _gather_rows(arg)
            value = rng.integers(0, rows, shape) if rows else rng.integers(-5, 6, shape)
        else:
            value = rng.standard_normal(shape)
        out.append(np.asarray(value).astype(dtype))
    return out


def _gather_rows(arg) -> int | None:
    """The table row count if `arg` is used as gather ids (static row counts only)."""
    for use in arg.uses:
        op = use.operation
        if isinstance(op, GatherOp) and use.index == 1:
            rows = shape_of(op.table.type)[0]
            if rows != DYN:
                return rows
    return None


def load_inputs(f: func.FuncOp, path: str, seed: int = 0, dynamic_size: int = 8) -> list[np.ndarray]:
    """Inputs by argument name (as in the source, without %) or by position (arg0, ...)."""
    try:
        data = np.load(path)
    except FileNotFoundError:
        raise UserError(f"cannot open inputs '{path}': no such file") from None
    except Exception as err:  # numpy raises several types for non-npz files
        raise UserError(f"cannot read inputs '{path}': {err}") from None
    return inputs_by_name(f, data, path)


def inputs_by_name(f: func.FuncOp, arrays: Mapping[str, Any], where: str) -> list[np.ndarray]:
    """`f`'s inputs in argument order from arrays by argument name (as in the source,
    without %) or by position (arg0, ...); missing or unknown names are user errors
    (`where` names the source of the arrays in the message)."""
    names = arg_names(f)
    missing = [n for i, n in enumerate(names) if n not in arrays and f"arg{i}" not in arrays]
    if missing:
        raise UserError(
            f"{where} has no input for argument(s) {', '.join('%' + n for n in missing)} "
            f"(it has: {', '.join(map(str, arrays)) or 'nothing'})",
            location_of(f),
        )
    known = set(names) | {f"arg{i}" for i in range(len(names))}
    extra = [k for k in arrays if k not in known]
    if extra:
        raise UserError(
            f"{where} has arrays for no argument of @{f.sym_name.data}: {', '.join(map(str, extra))}", location_of(f)
        )
    return [np.asarray(arrays[n] if n in arrays else arrays[f"arg{i}"]) for i, n in enumerate(names)]


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
