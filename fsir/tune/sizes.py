"""Tuning a model with a symbolic dim for a list of sizes (`fs-tune MODEL --sizes
B=1,8,64`), and compiling it with a dispatch on the size.

A `?` dim's kernels are one kernel for every size (`docs/symbolic-shapes.md`), and
stitch-codegen gives them a rule's configuration: the latency-evaluator cannot count
waves of an unknown grid, so there is nothing to compare. What is known at a tuned size
is the whole problem, so the tuner tunes the model *specialised* to each size: the
symbol's dims made static (`specialize`: argument types rewritten, every op's result
type inferred again), whose fusions are ordinary static tasks with workload keys of
their own (the key holds the shapes, so records are per size by construction). Each
record also carries the sizes it was tuned at (`Record.sizes`).

`fsir.compile(model, tuning_log=...)` of such a model gives a `fsir.api.SizedExecutable`
(`dispatch_symbol` finds the symbol and its tuned sizes in the log): the symbolic
executable and one executable per tuned size (the model specialised to it, compiled
under the log on first use of the size), chosen at each run by the symbol's size in the
inputs (`size_in`): a tuned size runs its specialised, tuned kernels, any other size
the symbolic ones. Both compute the same function, so the dispatch is exact at every
size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, TensorType
from xdsl.rewriter import Rewriter

from fsir.dialects.graph import DYN, DimsAttr, tensor
from fsir.errors import UserError
from fsir.ir import location_of

DIMS_ATTR = "graph.dims"


@dataclass(frozen=True)
class SizeList:
    """`--sizes B=1,8,64`: a symbol and the sizes to tune it at."""

    symbol: str
    values: tuple[int, ...]

    @staticmethod
    def parse(text: str) -> SizeList:
        name, eq, values = text.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier():
            raise UserError(f"--sizes '{text}': expected SYMBOL=N,N,... (e.g. B=1,8,64)")
        try:
            sizes = tuple(int(v) for v in values.split(","))
        except ValueError:
            raise UserError(f"--sizes '{text}': the sizes must be integers") from None
        if not sizes or any(s < 1 for s in sizes):
            raise UserError(f"--sizes '{text}': the sizes must be positive")
        return SizeList(name, tuple(dict.fromkeys(sizes)))


def symbols(module: ModuleOp) -> dict[str, list[tuple[int, int]]]:
    """The symbols naming the `?` dims of the first function's arguments (after the
    `symbolic-dims` pass: user names, else `<arg>_d<dim>`), each with where its size is
    read: (argument, dim) pairs."""
    from xdsl.context import Context

    from fsir.transforms.symbolic_dims import SymbolicDimsPass, argument_names

    named = module.clone()
    SymbolicDimsPass().apply(Context(), named)
    f = _first_function(named)
    out: dict[str, list[tuple[int, int]]] = {}
    for i, names in enumerate(argument_names(f)):
        for d, n in enumerate(names or []):
            if isinstance(n, str) and "*" not in n:
                out.setdefault(n, []).append((i, d))
    return out


def specialize(module: ModuleOp, symbol: str, size: int) -> ModuleOp:
    """`module` with the dims its symbol `symbol` names made `size` (a new module):
    argument types rewritten, every graph op's result type inferred again; a
    `UserError` when the model has no such symbol."""
    from xdsl.context import Context

    from fsir.transforms.shape_inference import ShapeInferencePass
    from fsir.transforms.symbolic_dims import SymbolicDimsPass, argument_names

    found = symbols(module)
    if symbol not in found:
        known = ", ".join(sorted(found)) or "none: its arguments have no '?' dims"
        raise UserError(f"--sizes: the model has no symbolic dim '{symbol}' (its symbols: {known})",
                        location_of(_first_function(module)))
    out = module.clone()
    SymbolicDimsPass().apply(Context(), out)
    f = _first_function(out)
    names = argument_names(f)
    for op in f.body.walk():
        op.attributes.pop(DIMS_ATTR, None)  # the pass's analysis, stale once sizes are static
    attrs = []
    for i, arg in enumerate(list(f.args)):
        dims = names[i]
        assert isinstance(arg.type, TensorType) or dims is None
        if dims is not None and isinstance(arg.type, TensorType):
            sizes = [_value(d, symbol, size) for d in dims]
            shape = [s if s is not None else DYN for s in sizes]
            Rewriter.replace_value_with_new_type(arg, tensor(arg.type.element_type, shape))
            kept = [s if s is not None else d for s, d in zip(sizes, dims)]
            attrs.append(_without_dims(f, i, kept, sizes))
        else:
            attrs.append(_without_dims(f, i, None))
    f.arg_attrs = builtin.ArrayAttr(attrs)
    f.function_type = builtin.FunctionType.from_lists([a.type for a in f.args], f.function_type.outputs.data)
    ShapeInferencePass().apply(Context(), out)
    out.verify()
    return out


def _value(dim: int | str, symbol: str, size: int) -> int | None:
    """A dim's size with `symbol` = `size` (None: still unknown)."""
    if isinstance(dim, int):
        return dim
    total = 1
    for factor in dim.split("*"):
        if factor.isdigit():
            total *= int(factor)
        elif factor == symbol:
            total *= size
        else:
            return None
    return total


def _without_dims(f: func.FuncOp, i: int, dims: list[int | str] | None,
                  sizes: Sequence[int | None] = ()) -> DictionaryAttr:
    """Argument i's attributes with `#graph.dims` set to `dims` (dropped when all
    static) and its random inputs' sizes (`fsir.runtime_shape`) at `sizes` where known."""
    from fsir.runtime.inputs import RUNTIME_SHAPE_ATTR

    old = f.arg_attrs.data[i] if f.arg_attrs is not None else None
    base = dict(old.data) if isinstance(old, DictionaryAttr) else {}
    base.pop(DIMS_ATTR, None)
    dynamic = dims is not None and any(isinstance(d, str) for d in dims)
    if dynamic:
        assert dims is not None
        base[DIMS_ATTR] = DimsAttr(dims)
    hint = base.pop(RUNTIME_SHAPE_ATTR, None)
    if dynamic and isinstance(hint, builtin.DenseArrayBase):
        given = hint.get_values()
        base[RUNTIME_SHAPE_ATTR] = builtin.DenseArrayBase.from_list(
            builtin.i64, [s if s is not None else int(g) for s, g in zip(sizes, given)])
    return DictionaryAttr(base)


def _first_function(module: ModuleOp) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and not op.is_declaration:
            return op
    raise UserError("the model has no function")


def tuned_sizes(records: Sequence[Any], symbol: str) -> list[int]:
    """The sizes of `symbol` that records (`database.Record`) were tuned at."""
    return sorted({dict(r.sizes)[symbol] for r in records if symbol in dict(r.sizes)})


def size_in(inputs: Sequence[Any], where: tuple[int, int]) -> int:
    """The size of dim `where[1]` of input `where[0]` (inputs in argument order)."""
    import numpy as np

    arg, dim = where
    if arg >= len(inputs):
        raise UserError(f"the model takes at least {arg + 1} inputs, got {len(inputs)}")
    shape = np.shape(inputs[arg])
    if dim >= len(shape):
        raise UserError(f"input {arg} has rank {len(shape)}; the model's symbolic dim is its dim {dim}")
    return int(shape[dim])


def dispatch_symbol(module: ModuleOp, records: Sequence[Any]) -> tuple[str, tuple[int, int], tuple[int, ...]] | None:
    """The symbol of `module` that `records` were tuned at sizes of (the first such),
    where its size is read from the inputs, and those sizes; None without one."""
    if not any(r.sizes for r in records):
        return None
    for symbol, where in symbols(module).items():
        sizes = tuned_sizes(records, symbol)
        if sizes:
            return symbol, where[0], tuple(sizes)
    return None


def specialized_for(module: ModuleOp, records: Sequence[Any], inputs: Sequence[Any]) -> tuple[ModuleOp, int | None]:
    """`module` specialised to the size its inputs give the symbol `records` were tuned
    at, when they tuned that size (with the size), else `module` itself (with None):
    what a run on known inputs compiles (`fs-run --tuning-log`)."""
    found = dispatch_symbol(module, records)
    if found is None:
        return module, None
    symbol, where, sizes = found
    size = size_in(inputs, where)
    return (specialize(module, symbol, size), size) if size in sizes else (module, None)
