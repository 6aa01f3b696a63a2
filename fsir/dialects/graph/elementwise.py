"""Elementwise ops: one table (`ELEMENTWISE`), one generated op class per row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, result_def, traits_def, var_operand_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from fsir.dialects.graph.base import (
    ExpensiveElementwise,
    GraphCanonicalization,
    GraphOp,
    LightElementwise,
    OpClassTrait,
    operand_tensor_types,
    same_index_rule,
    same_shape_agreement,
    same_shape_dims,
)
from fsir.dialects.graph.types import (
    STATIC,
    fmt_shape,
    is_bool,
    is_float,
    is_int,
    join_shapes,
    shape_of,
    shapes_compatible,
    static_dims,
    tensor,
)

# ---------------------------------------------------------------------------
# Elementwise ops: one table
# ---------------------------------------------------------------------------

# Which element types an elementwise op accepts (INTEGER includes i1, INT does not).
FLOAT, NUMERIC, INTEGER, INT, ANY = "float", "numeric", "integer", "int", "any"


def _accepts(kind: str, t: Attribute) -> bool:
    if kind == FLOAT:
        return is_float(t)
    if kind == NUMERIC:
        return is_float(t) or (is_int(t) and not is_bool(t))
    if kind == INTEGER:
        return is_int(t)
    if kind == INT:
        return is_int(t) and not is_bool(t)
    return True


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C/PTX integer division: truncates toward zero; x / 0 is defined as 0 here."""
    safe = np.where(b == 0, 1, b).astype(a.dtype)
    with np.errstate(over="ignore"):  # (INT_MIN / -1 wraps, as in PTX)
        q = a // safe  # numpy floors; |a| would overflow at INT_MIN
        inexact = a - q * safe != 0
    q = np.where(inexact & ((a < 0) != (safe < 0)), q + 1, q).astype(a.dtype)
    return np.where(b == 0, 0, q).astype(a.dtype)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        return _int_div(a, b)
    return a / b


def _rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        return (a - _int_div(a, b) * np.where(b == 0, 0, b)).astype(a.dtype)
    return np.fmod(a, b)


def _shift_amount(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(whether the amount is at least the width, the amount clamped below it): amounts
    are read as unsigned, so a negative one is a huge shift (as PTX clamps them)."""
    bits = a.dtype.itemsize * 8
    amount = b.astype(a.dtype).view(f"u{a.dtype.itemsize}")
    return amount >= bits, np.minimum(amount, bits - 1).astype(a.dtype)


def _shl(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a << b; amounts of at least the width give 0."""
    wide, amount = _shift_amount(a, b)
    return np.where(wide, a.dtype.type(0), np.left_shift(a, amount)).astype(a.dtype)


def _shr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a >> b: arithmetic for signed types (amounts of at least the width fill with the
    sign), logical for unsigned ones (they give 0)."""
    wide, amount = _shift_amount(a, b)
    shifted = np.right_shift(a, amount)
    if a.dtype.kind == "u":
        return np.where(wide, a.dtype.type(0), shifted).astype(a.dtype)
    return shifted.astype(a.dtype)  # a >> (width - 1) already is the sign fill


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.power(a, b)
    # square and multiply over the exponent's bits, wrapping like the integer type
    acc = np.ones_like(a)
    base = a.copy()
    bits = np.where(b < 0, 0, b).astype(f"u{a.dtype.itemsize}")
    with np.errstate(over="ignore"):
        for _ in range(a.dtype.itemsize * 8):
            acc = np.where(bits & 1, acc * base, acc)
            base = base * base
            bits = bits >> 1
    if a.dtype.kind == "u":
        return acc
    # 1 / x^n truncated: +-1 for x = +-1, else 0 (x = 0 included: x / 0 is 0 here)
    odd = (b & 1).astype(bool)
    inverse = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(a.dtype)
    return np.where(b < 0, inverse, acc).astype(a.dtype)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    one = x.dtype.type(1)
    return one / (one + np.exp(-x))


def _erf(x: np.ndarray) -> np.ndarray:
    # scipy is imported on first use: it is most of `import fsir.dialects.graph`'s time
    from scipy import special

    return special.erf(x)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return x.dtype.type(1) / np.sqrt(x)


@dataclass(frozen=True)
class Elementwise:
    """One elementwise op: arity, op class, accepted element types, numpy reference.

    `lower` builds the scalar code of one element at the gpu level: it gets a
    `fsir.lowering.scalar.ScalarBuilder` and the operand scalars (f16/bf16 already
    widened to f32) and returns the result scalar.
    """

    arity: int
    op_class: type[OpClassTrait]
    types: str
    ref: Callable[..., np.ndarray]
    lower: Callable[..., SSAValue]
    doc: str = ""


L, E = LightElementwise, ExpensiveElementwise

# fmt: off
ELEMENTWISE: dict[str, Elementwise] = {
    # unary
    "neg":     Elementwise(1, L, NUMERIC, np.negative,  lambda b, x: b.neg(x)),
    "abs":     Elementwise(1, L, NUMERIC, np.abs,       lambda b, x: b.abs(x)),
    "not":     Elementwise(1, L, INTEGER, np.invert,    lambda b, x: b.not_(x), "bitwise not (logical on i1)"),
    "floor":   Elementwise(1, L, FLOAT,   np.floor,     lambda b, x: b.math("floor", x)),
    "ceil":    Elementwise(1, L, FLOAT,   np.ceil,      lambda b, x: b.math("ceil", x)),
    "exp":     Elementwise(1, E, FLOAT,   np.exp,       lambda b, x: b.math("exp", x)),
    "log":     Elementwise(1, E, FLOAT,   np.log,       lambda b, x: b.math("log", x)),
    "tanh":    Elementwise(1, E, FLOAT,   np.tanh,      lambda b, x: b.math("tanh", x)),
    "erf":     Elementwise(1, E, FLOAT,   _erf,         lambda b, x: b.math("erf", x)),
    "sqrt":    Elementwise(1, E, FLOAT,   np.sqrt,      lambda b, x: b.math("sqrt", x)),
    "rsqrt":   Elementwise(1, E, FLOAT,   _rsqrt,       lambda b, x: b.math("rsqrt", x)),
    "sigmoid": Elementwise(1, E, FLOAT,   _sigmoid,     lambda b, x: b.sigmoid(x), "1 / (1 + exp(-x))"),
    "round":   Elementwise(1, L, FLOAT,   np.rint,      lambda b, x: b.round_even(x), "half to even"),
    "sin":     Elementwise(1, E, FLOAT,   np.sin,       lambda b, x: b.trig("sin", x)),
    "cos":     Elementwise(1, E, FLOAT,   np.cos,       lambda b, x: b.trig("cos", x)),
    "tan":     Elementwise(1, E, FLOAT,   np.tan,       lambda b, x: b.trig("tan", x)),
    "asin":    Elementwise(1, E, FLOAT,   np.arcsin,    lambda b, x: b.trig("asin", x)),
    "acos":    Elementwise(1, E, FLOAT,   np.arccos,    lambda b, x: b.trig("acos", x)),
    "atan":    Elementwise(1, E, FLOAT,   np.arctan,    lambda b, x: b.trig("atan", x)),
    "sinh":    Elementwise(1, E, FLOAT,   np.sinh,      lambda b, x: b.trig("sinh", x)),
    "cosh":    Elementwise(1, E, FLOAT,   np.cosh,      lambda b, x: b.trig("cosh", x)),
    "asinh":   Elementwise(1, E, FLOAT,   np.arcsinh,   lambda b, x: b.trig("asinh", x)),
    "acosh":   Elementwise(1, E, FLOAT,   np.arccosh,   lambda b, x: b.trig("acosh", x)),
    "atanh":   Elementwise(1, E, FLOAT,   np.arctanh,   lambda b, x: b.trig("atanh", x)),
    # binary
    "add":     Elementwise(2, L, NUMERIC, np.add,       lambda b, x, y: b.arith("add", x, y)),
    "sub":     Elementwise(2, L, NUMERIC, np.subtract,  lambda b, x, y: b.arith("sub", x, y)),
    "mul":     Elementwise(2, L, NUMERIC, np.multiply,  lambda b, x, y: b.arith("mul", x, y)),
    "max":     Elementwise(2, L, NUMERIC, np.maximum,   lambda b, x, y: b.max(x, y), "NaN-propagating"),
    "min":     Elementwise(2, L, NUMERIC, np.minimum,   lambda b, x, y: b.min(x, y), "NaN-propagating"),
    "and":     Elementwise(2, L, INTEGER, np.bitwise_and, lambda b, x, y: b.arith("and", x, y)),
    "or":      Elementwise(2, L, INTEGER, np.bitwise_or,  lambda b, x, y: b.arith("or", x, y)),
    "xor":     Elementwise(2, L, INTEGER, np.bitwise_xor, lambda b, x, y: b.arith("xor", x, y)),
    "shl":     Elementwise(2, L, INT,     _shl,         lambda b, x, y: b.shift("shl", x, y),
                           "amounts read as unsigned; at least the width gives 0"),
    "shr":     Elementwise(2, L, INT,     _shr,         lambda b, x, y: b.shift("shr", x, y),
                           "arithmetic on signed, logical on unsigned types"),
    "div":     Elementwise(2, E, NUMERIC, _div,         lambda b, x, y: b.arith("div", x, y),
                           "integers truncate toward zero"),
    "rem":     Elementwise(2, E, NUMERIC, _rem,         lambda b, x, y: b.arith("rem", x, y), "sign of the dividend"),
    "pow":     Elementwise(2, E, NUMERIC, _pow,         lambda b, x, y: b.pow(x, y),
                           "integers: exact and wrapping, x^-n is 1 / x^n truncated toward zero"),
}
# fmt: on


class ElementwiseOp(GraphOp):
    """Base of the ops generated from `ELEMENTWISE`."""

    SPEC: ClassVar[Elementwise]
    SHORT_TYPE: ClassVar = True
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), GraphCanonicalization())

    @classmethod
    def _group_operands(cls, operands):
        return [operands]

    def infer_type(self) -> TensorType:
        spec = self.SPEC
        types = operand_tensor_types(self)
        if len(types) != spec.arity:
            raise VerifyException(f"expected {spec.arity} operands, got {len(types)}")
        elem = types[0].element_type
        if not _accepts(spec.types, elem):
            raise VerifyException(f"does not accept element type {elem} ({spec.types} types only)")
        shape = shape_of(types[0])
        for t in types[1:]:
            if t.element_type != elem:
                raise VerifyException(f"operand element types differ: {elem} and {t.element_type}")
            if not shapes_compatible(shape, shape_of(t)):
                raise VerifyException(
                    f"operand shapes differ: {fmt_shape(shape)} and {fmt_shape(shape_of(t))} "
                    "(broadcast explicitly with graph.broadcast)"
                )
            shape = join_shapes(shape, shape_of(t))
        return tensor(elem, self.reify_dims(static_dims, STATIC))

    reify_dims = same_shape_dims
    operand_indices = same_index_rule
    agreeing_dims = same_shape_agreement


def make_elementwise(name: str, spec: Elementwise) -> type[ElementwiseOp]:
    operands = ", ".join(["%x", "%w"][: spec.arity])
    note = f" ({spec.doc})" if spec.doc else ""
    doc = (
        f"Elementwise {name}{note}; {spec.op_class.kind} op on {spec.types} tensors.\n\n"
        f"    %y = graph.{name} {operands} : tensor<4x8xf32>\n"
    )
    cls_name = "".join(p.capitalize() for p in name.split("_")) + "Op"
    cls = type(cls_name, (ElementwiseOp,), {
        "__doc__": doc, "__module__": __name__, "__qualname__": cls_name,
        "name": f"graph.{name}", "SPEC": spec, "__annotations__": {"SPEC": "ClassVar[Elementwise]"},
        "traits": traits_def(Pure(), GraphCanonicalization(), spec.op_class()),
    })
    return irdl_op_definition(cls)


ELEMENTWISE_OPS: dict[str, type[ElementwiseOp]] = {
    name: make_elementwise(name, spec) for name, spec in ELEMENTWISE.items()
}
globals().update({cls.__name__: cls for cls in ELEMENTWISE_OPS.values()})
