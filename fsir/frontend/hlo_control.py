"""HLO structure: tuples, call and fusion (inlined, so fusion decisions are fsir's own), and
while loops (unrolled when the trip count folds to a constant).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.ir import SSAValue

from fsir.errors import UserError

if TYPE_CHECKING:  # the importer calls these handlers; they only read its state
    from fsir.frontend.hlo import HloImporter


MAX_WHILE_TRIPS = 64  # a while is unrolled: longer loops are refused


def tuple_(imp: HloImporter, instr, ops):
    return list(ops)


def get_tuple_element(imp: HloImporter, instr, ops):
    index = imp.ints(instr, "index")[0]
    if not isinstance(ops[0], list) or not 0 <= index < len(ops[0]):
        raise UserError(f"get-tuple-element index {index} is out of range", instr.loc)
    return ops[0][index]


def call(imp: HloImporter, instr, ops):
    return _inline(imp, instr, "to_apply", ops)


def fusion(imp: HloImporter, instr, ops):
    return _inline(imp, instr, "calls", ops)


def _inline(imp: HloImporter, instr, attr, ops):
    comp = imp.computation_attr(instr, attr)
    try:
        return imp.run_computation(comp, ops)
    finally:
        imp.b.loc = instr.loc


def while_(imp: HloImporter, instr, ops):
    """A loop whose trip count is known at import time (a counter in the loop tuple
    compared against a constant, as jax's fori_loop and scan emit), unrolled: the
    condition is evaluated on constants before every iteration; at most
    MAX_WHILE_TRIPS iterations."""
    cond = imp.computation_attr(instr, "condition")
    body = imp.computation_attr(instr, "body")
    state = ops[0]
    for _ in range(MAX_WHILE_TRIPS + 1):
        go = _inline_computation(imp, instr, cond, [state])
        value = imp.b.fold(go) if isinstance(go, SSAValue) else None
        if value is None or value.size != 1:
            raise imp.unsupported(instr, "while whose condition is not computed from constants (its trip "
                                          "count must be static)")
        if not bool(value.reshape(-1)[0]):
            return state
        state = _inline_computation(imp, instr, body, [state])
    raise imp.unsupported(instr, f"while of more than {MAX_WHILE_TRIPS} iterations (it is unrolled)")


def _inline_computation(imp: HloImporter, instr, comp, ops):
    try:
        return imp.run_computation(comp, ops)
    finally:
        imp.b.loc = instr.loc
