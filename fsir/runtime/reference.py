"""The numpy reference interpreter: the oracle every other level is checked against.

It runs a module's function on its inputs (checked against the argument types) with
the numpy interpreter of the dialects (`fsir/interpreters/`: each op's semantics in one
place, apart from the op). f32 stays f32 throughout; f16/bf16 compute in f32 and round
per op.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation

from fsir.dialects.graph import DYN, fmt_shape, numpy_dtype
from fsir.errors import UserError
from fsir.interpreters import evaluate_op, run_block
from fsir.ir import location_of

__all__ = ["evaluate_op", "run_block"]

BlockRunner = Callable[[Block, Sequence[np.ndarray]], list[np.ndarray]]


def find_function(module: ModuleOp, entry: str | None = None) -> func.FuncOp:
    """The function named `entry`, or the module's only / first public function."""
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    if entry is not None:
        for f in funcs:
            if f.sym_name.data == entry:
                return f
        names = ", ".join(f"@{f.sym_name.data}" for f in funcs) or "none"
        raise UserError(f"no function @{entry} in the module (functions: {names})", location_of(module))
    if not funcs:
        raise UserError("the module has no function to run", location_of(module))
    return funcs[0]


def host_memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_memory(f: func.FuncOp) -> None:
    """Refuse, before anything is allocated, a function with a tensor (argument or op
    result, static shape) larger than this machine's memory: allocating it would fail or
    drive the machine into swapping."""
    limit = host_memory_bytes()
    # an argument is located at its function, or (imported functions have no location) at its first use
    values = [(a, location_of(f) or (location_of(next(iter(a.uses)).operation) if a.uses else None))
              for a in f.body.block.args]
    values += [(r, location_of(op)) for op in f.walk() for r in op.results]
    for v, loc in values:
        t = v.type
        if not isinstance(t, TensorType) or DYN in t.get_shape():
            continue
        size = math.prod(t.get_shape()) * numpy_dtype(t.element_type).itemsize
        if size > limit:
            what = f"'{v.owner.name}' result" if isinstance(v.owner, Operation) else "argument"
            raise UserError(f"{what} {t} needs {size} bytes, more than this machine's memory ({limit} bytes)", loc)


def arg_names(f: func.FuncOp) -> list[str]:
    """Argument names as written in the source (without %), or argN where unnamed."""
    return [a.name_hint or f"arg{i}" for i, a in enumerate(f.body.block.args)]


def check_inputs(f: func.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Validate count, dtype and shape of the inputs against the signature."""
    types = f.function_type.inputs.data
    names = arg_names(f)
    if len(inputs) != len(types):
        raise UserError(f"@{f.sym_name.data} takes {len(types)} arguments, got {len(inputs)}", location_of(f))
    out = []
    for name, t, x in zip(names, types, inputs):
        if not isinstance(t, TensorType):
            raise UserError(f"argument %{name} has non-tensor type {t}", location_of(f))
        x = np.asarray(x)
        dtype = numpy_dtype(t.element_type)
        shape = t.get_shape()
        if x.ndim != len(shape) or any(d != DYN and d != s for d, s in zip(shape, x.shape)):
            raise UserError(
                f"argument %{name}: expected shape {fmt_shape(shape)}, got {fmt_shape(x.shape)}",
                location_of(f),
            )
        if x.dtype != dtype:
            if x.dtype.kind != dtype.kind and not (dtype.kind == "V" or x.dtype.kind == "V"):
                raise UserError(
                    f"argument %{name}: expected element type {t.element_type} ({dtype}), got {x.dtype}",
                    location_of(f),
                )
            x = x.astype(dtype)
        out.append(x)
    return out


def run_function(f: func.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    return run_block(f.body.block, check_inputs(f, inputs))


def run(module: ModuleOp, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
        entry: str | None = None) -> list[np.ndarray]:
    """Run `entry` (default: the first function); inputs by position or by argument name."""
    f = find_function(module, entry)
    if isinstance(inputs, Mapping):
        inputs = [inputs[n] for n in arg_names(f)]
    return run_function(f, inputs)


def run_function_float64(f: func.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """`run_function` with every float held and computed in float64 (an error estimate
    for the f32 reference, used by comparisons)."""
    from fsir.dialects.graph import float64_reference

    with float64_reference():
        wide = [x.astype(np.float64) if x.dtype.kind == "f" or x.dtype.kind == "V" or x.dtype.name == "bfloat16"
                else x for x in inputs]
        return run_block(f.body.block, check_inputs(f, wide))
