"""The numpy interpreter of fsir's dialects: what each op computes, apart from the ops.

`evaluate_op` finds an op's implementation in its dialect's table (`graph.GRAPH`: one
function per op, `regions.REGIONS`: ops that hold blocks) and checks that the results
keep the static dims their types promise. The reference interpreter
(`fsir/runtime/reference.py`) runs whole functions with it; constant folding
(`fsir/transforms/canonicalize.py`, the frontends' builder) evaluates single ops. f32
stays f32 throughout; f16/bf16 compute in f32 and round per op.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

from fsir.dialects.graph import fmt_shape, shapes_compatible
from fsir.errors import UserError
from fsir.interpreters.graph import GRAPH
from fsir.interpreters.regions import REGIONS
from fsir.ir import location_of


def run_block(block: Block, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Evaluate a block; returns the operands of its terminator."""
    env: dict[SSAValue, np.ndarray] = dict(zip(block.args, args))
    for op in block.ops:
        if op is block.last_op and op.has_trait(IsTerminator):
            return [env[v] for v in op.operands]
        values = [env[v] for v in op.operands]
        results = evaluate_op(op, values)
        for r, v in zip(op.results, results):
            env[r] = v
    return []


def evaluate_op(op: Operation, values: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The op's results from its operands' values (a `UserError` at the op when its
    operands break its type's promises, or when no table implements it)."""
    # Overflow to inf and NaN from invalid inputs are results, as on the GPU (often in a
    # branch a select discards), not conditions to warn about.
    with np.errstate(all="ignore"):
        return _evaluate_op(op, values)


def _evaluate_op(op: Operation, values: Sequence[np.ndarray]) -> list[np.ndarray]:
    try:
        region_impl = REGIONS.lookup(type(op))
        if region_impl is not None:
            return list(region_impl(op, run_block, evaluate_op, values))
        impl = GRAPH.lookup(type(op))
        if impl is not None:
            out = impl(op, *values)
            results = [np.asarray(out)] if len(op.results) == 1 else list(out)
            _check_result_shapes(op, results)
            return results
    except VerifyException as err:
        raise UserError(f"'{op.name}' op {err}", location_of(op)) from None
    raise UserError(f"the reference interpreter cannot evaluate '{op.name}'", location_of(op))


def _check_result_shapes(op: Operation, results: Sequence[np.ndarray]) -> None:
    """Static dims are promises: with `?` inputs of the wrong size a result can break them."""
    for r, value in zip(op.results, results):
        if isinstance(r.type, TensorType) and not shapes_compatible(value.shape, r.type.get_shape()):
            raise VerifyException(
                f"result has shape {fmt_shape(value.shape)} at run time but type {r.type} "
                "(check the sizes of the `?` inputs)"
            )


def graph_value(op: Operation, values: Sequence[np.ndarray]) -> np.ndarray:
    """The value of a one-result graph op from its operands' values, as its
    implementation computes it (constant folding; errors propagate as raised)."""
    impl = GRAPH.lookup(type(op))
    if impl is None:
        raise UserError(f"the reference interpreter cannot evaluate '{op.name}'", location_of(op))
    return np.asarray(impl(op, *values))
