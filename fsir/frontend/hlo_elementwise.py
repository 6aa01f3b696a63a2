"""HLO elementwise instructions: the opcodes that are one graph elementwise op (ELEMENTWISE),
and compare, select, clamp, exponential-minus-one, log-plus-one, sign, is-finite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.errors import UserError

if TYPE_CHECKING:  # the importer calls these handlers; they only read its state
    from fsir.frontend.hlo import HloImporter


# HLO opcode -> graph elementwise op name
ELEMENTWISE = {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "maximum": "max",
    "minimum": "min", "power": "pow", "remainder": "rem", "and": "and", "or": "or", "xor": "xor",
    "negate": "neg", "abs": "abs", "exponential": "exp", "log": "log", "tanh": "tanh",
    "logistic": "sigmoid", "sqrt": "sqrt", "rsqrt": "rsqrt", "erf": "erf", "floor": "floor",
    "ceil": "ceil", "not": "not",
}


def compare(imp: HloImporter, instr, ops):
    direction = str(imp.attr(instr, "direction")).lower()
    if direction not in tuple(graph.CompareDirection):
        raise UserError(f"unknown comparison direction '{direction.upper()}'",
                        instr.attr_locs.get("direction", instr.loc))
    return imp.b.compare(direction, *ops)


def select(imp: HloImporter, instr, ops):
    c, a, x = ops
    if shape_of(c.type) != shape_of(a.type):
        c = imp.b.broadcast(c, shape_of(a.type), [])
    return imp.b.select(c, a, x)


def clamp(imp: HloImporter, instr, ops):
    lo, x, hi = ops
    shape = shape_of(x.type)
    lo = imp.b.broadcast(lo, shape, []) if shape_of(lo.type) != shape else lo
    hi = imp.b.broadcast(hi, shape, []) if shape_of(hi.type) != shape else hi
    return imp.b.ew("min", imp.b.ew("max", x, lo), hi)


def exponential_minus_one(imp: HloImporter, instr, ops):
    return imp.b.ew("sub", imp.b.ew("exp", ops[0]), imp.b.scalar_like(1, ops[0]))


def log_plus_one(imp: HloImporter, instr, ops):
    return imp.b.ew("log", imp.b.ew("add", ops[0], imp.b.scalar_like(1, ops[0])))


def sign(imp: HloImporter, instr, ops):
    x = ops[0]
    zero = imp.b.scalar_like(0, x)
    pos = imp.b.convert(imp.b.compare("gt", x, zero), imp.b.elem(x))
    neg = imp.b.convert(imp.b.compare("lt", x, zero), imp.b.elem(x))
    return imp.b.ew("sub", pos, neg)


def is_finite(imp: HloImporter, instr, ops):
    x = ops[0]  # x - x is 0 for finite x and NaN for inf and NaN
    return imp.b.compare("eq", imp.b.ew("sub", x, x), imp.b.scalar_like(0, x))
