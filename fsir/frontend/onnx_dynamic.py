"""Symbolic sizes for the ONNX importer: what a `?` dim is, as far as import time knows.

A graph input's symbolic dim (`dim_param`, or a dim without a value) becomes a `?` dim
and a `Sym` named after its `dim_param`: two inputs' dims with the same `dim_param` are
one size (ONNX's meaning; the host checks it at run time where ops rely on it). The
sizes of other values follow from the graph ops' own shape rules (`reify_dims`) run in
the `SymbolicDims` algebra, so no shape rule is written twice.

`Shape` of a value with `?` dims is no longer a compile-time constant: the importer
gives it a placeholder constant whose folded value is a numpy object array of ints and
`Sym`s, so the usual shape chains (Shape -> Gather/Slice -> Unsqueeze -> Concat) fold
through the ops' references as before and a Reshape or Expand reads its target with
the symbolic entries. A placeholder still used as data at the end is refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.ir import Attribute, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import DYN, DimBuilder, shape_of
from fsir.frontend.builder import GraphBuilder, dense_i64

Size = Any  # int | Sym
_I64 = graph.IntegerType(64)


@dataclass(frozen=True)
class Sym:
    """A size known at run time only: ("param", name), ("unknown", n), or an arithmetic
    node ("add" | "sub" | "mul" | "div" | "rem", a, b) / ("select", cond, a, b)."""

    expr: tuple

    def __str__(self) -> str:
        kind = self.expr[0]
        if kind == "param":
            return str(self.expr[1])
        if kind == "unknown":
            return "?"
        if kind == "select":
            return f"select({', '.join(map(str, self.expr[1:]))})"
        op = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%"}[kind]
        return f"({self.expr[1]} {op} {self.expr[2]})"

    # Python arithmetic, so that shape arithmetic folds in numpy object arrays.
    def __add__(self, o): return SYMBOLIC.add(self, o)  # noqa: E704
    def __radd__(self, o): return SYMBOLIC.add(o, self)  # noqa: E704
    def __sub__(self, o): return SYMBOLIC.sub(self, o)  # noqa: E704
    def __rsub__(self, o): return SYMBOLIC.sub(o, self)  # noqa: E704
    def __mul__(self, o): return SYMBOLIC.mul(self, o)  # noqa: E704
    def __rmul__(self, o): return SYMBOLIC.mul(o, self)  # noqa: E704
    def __floordiv__(self, o): return SYMBOLIC.div(self, o)  # noqa: E704
    def __rfloordiv__(self, o): return SYMBOLIC.div(o, self)  # noqa: E704
    # sizes are whole: an integer Div of shape values (ONNX's, on int64) is a quotient
    def __truediv__(self, o): return SYMBOLIC.div(self, o)  # noqa: E704
    def __rtruediv__(self, o): return SYMBOLIC.div(o, self)  # noqa: E704
    def __mod__(self, o): return SYMBOLIC.rem(self, o)  # noqa: E704
    def __rmod__(self, o): return SYMBOLIC.rem(o, self)  # noqa: E704


class SymbolicDims(DimBuilder[Sym]):
    """`DimBuilder` over ints and `Sym`s: constants fold, equal expressions are equal."""

    _fresh = 0

    @classmethod
    def unknown(cls) -> Sym:
        cls._fresh += 1
        return Sym(("unknown", cls._fresh))

    def _node(self, kind: str, a: Size, b: Size) -> Size:
        return Sym((kind, a, b))

    def add(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if a == b:  # a concat of a value with itself: a product, which reshapes can split
            return self.mul(2, a)
        if a == 0:
            return b
        return a if b == 0 else self._node("add", a, b)

    def sub(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a - b
        return a if b == 0 else self._node("sub", a, b)

    def mul(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if a == 1:
            return b
        if b == 1:
            return a
        return 0 if 0 in (a, b) else self._node("mul", a, b)

    def div(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a // b if b else DYN
        if b == 1:
            return a
        if isinstance(a, Sym) and a.expr[0] == "mul" and b in a.expr[1:]:  # (x * y) / y
            return a.expr[1] if a.expr[2] == b else a.expr[2]
        return self._node("div", a, b)

    def rem(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a % b if b else DYN
        return 0 if b == 1 else self._node("rem", a, b)

    def eq(self, a, b):
        if a == b:
            return True
        return (a == b) if isinstance(a, int) and isinstance(b, int) else None

    def lt(self, a, b):
        return (a < b) if isinstance(a, int) and isinstance(b, int) else None

    def select(self, cond, a, b):
        if cond is None:
            return a if a == b else Sym(("select", cond, a, b))
        return a if cond else b


SYMBOLIC = SymbolicDims()


class SymbolicShapes:
    """`dims(v)`: the sizes of graph value `v` as ints and `Sym`s; leaves are bound."""

    def __init__(self) -> None:
        self.known: dict[SSAValue, list[Size]] = {}

    def bind(self, v: SSAValue, dims: Sequence[Size]) -> None:
        self.known[v] = list(dims)

    def dims(self, v: SSAValue) -> list[Size]:
        # an explicit stack: a chain of ops as long as the model costs no recursion depth
        stack = [v]
        while stack:
            top = stack[-1]
            if top in self.known:
                stack.pop()
                continue
            static = shape_of(top.type)
            op = top.owner
            if DYN in static and isinstance(op, graph.GraphOp):
                pending = [o for o in op.operands if o not in self.known]
                if pending:
                    stack.extend(pending)
                    continue
                derived = op.reify_dims(lambda x: self.known[x], SYMBOLIC)
            else:
                derived = list(static)
            self.known[top] = [s if s != DYN else (d if not (isinstance(d, int) and d == DYN) else SYMBOLIC.unknown())
                               for s, d in zip(static, derived)]
            stack.pop()
        return self.known[v]


def is_symbolic(x: Any) -> bool:
    return isinstance(x, Sym)


def argument_dims(sizes: Sequence[Size]) -> graph.DimsAttr | None:
    """The `#graph.dims` of a graph input whose sizes are ints and `param` symbols (its
    `dim_param`s, made identifiers), or None when all are static."""
    if all(isinstance(x, int) for x in sizes):
        return None
    names: list[int | str] = []
    for x in sizes:
        if isinstance(x, int):
            names.append(x)
            continue
        name = re.sub(r"\W", "_", str(x.expr[1]))
        names.append(name if re.match(r"[A-Za-z_]", name) else f"_{name}")
    return graph.DimsAttr(names)


class RunTimeSizes:
    """Shape values holding run-time sizes, computed at run time where a model uses one
    as data (transformers' masks and position ids multiply and compare `Shape(x)[k]`
    with tensors): each size is a scalar graph value, the size of a `?` dim being 1 +
    the largest element of an iota over that dim of a value that has it (a one-row
    reduction), and the arithmetic of `Sym`s the same graph ops. Where a shape value
    only feeds shapes, what this builds is dead and dropped at the end of the import."""

    def __init__(self, b: GraphBuilder, find: Callable[[Sym], tuple[SSAValue, int] | None]):
        self.b = b
        self.find = find  # a value with a dim of that run-time size, and the dim
        self.scalars: dict[Sym, SSAValue | None] = {}

    def value(self, sizes: np.ndarray, elem: Attribute) -> SSAValue | None:
        """A value of `elem` equal to `sizes` (ints and `Sym`s) at run time, or None where
        a size is no value's dim or the choice of an undecided comparison."""
        parts = []
        for size in sizes.reshape(-1):
            scalar = self.scalar(size if isinstance(size, Sym) else int(size))
            if scalar is None:
                return None
            parts.append(self.b.reshape(scalar, [1]))
        flat = self.b.concat(parts, 0)
        return self.b.convert(self.b.reshape(flat, list(sizes.shape)), elem)

    def scalar(self, size: Size) -> SSAValue | None:
        """`size` as a rank-0 i64 value, computed once per size."""
        b = self.b
        if not isinstance(size, Sym):
            return b.constant(np.array(size, np.int64), _I64)
        if size in self.scalars:
            return self.scalars[size]
        kind, result = size.expr[0], None
        found = self.find(size)  # any size, a product too, may be some value's dim
        if found is not None:
            v, axis = found
            iota = b.emit(graph.IotaOp, [v], graph.tensor(_I64, [DYN]), dim=graph.i64_attr(0),
                          like_dims=dense_i64([axis]))
            result = b.ew("add", b.reduce("max", iota, [0]), b.constant(np.array(1, np.int64), _I64))
        if result is None and kind in ("add", "sub", "mul", "div", "rem"):
            a, c = self.scalar(size.expr[1]), self.scalar(size.expr[2])
            if a is not None and c is not None:
                result = b.ew(kind, a, c)  # sizes are non-negative: div and rem as Python's
        self.scalars[size] = result
        return result


def infer_minus_one(src: list, want: list) -> list:
    """A reshape target with its -1 entry computed where the run-time sizes cancel
    ([b, 16, 64] to [b, 16, -1, 16]: -1 is 4), else as given."""
    minus = [i for i, d in enumerate(want) if not is_symbolic(d) and d == -1]
    if len(minus) != 1:
        return want
    rest_src = [f for d in src for f in factors(d)]
    rest_want = [f for i, d in enumerate(want) if i != minus[0] for f in factors(d)]
    for d in [d for d in rest_want if is_symbolic(d)]:
        if d in rest_src:
            rest_src.remove(d)
            rest_want.remove(d)
    if any(is_symbolic(d) for d in rest_want):
        return want
    known = math.prod(rest_want)
    syms = [d for d in rest_src if is_symbolic(d)]
    if syms:  # [b, s] to [-1, s]: -1 is b; [b, 4] to [-1, 2]: 2 * b
        ints = math.prod(d for d in rest_src if not is_symbolic(d))
        if known <= 0 or ints % known:
            return want
        size = ints // known
        for d in syms:
            size = SYMBOLIC.mul(size, d)
        return [size if i == minus[0] else d for i, d in enumerate(want)]
    total = math.prod(rest_src)
    if known <= 0 or total % known:
        return want
    return [total // known if i == minus[0] else d for i, d in enumerate(want)]


def factors(size: Any) -> list:
    """A size as the factors of its products ((b * 4) * n: b, 4, n)."""
    if is_symbolic(size) and size.expr[0] == "mul":
        return [*factors(size.expr[1]), *factors(size.expr[2])]
    return [size]


def compare_sizes(op_type: str, a: Any, b: Any) -> bool | None:
    """An ONNX comparison of two sizes (ints, or `Sym`s: run-time sizes, never
    negative), or None where import time cannot tell."""
    if not is_symbolic(a) and not is_symbolic(b):
        return {"Equal": a == b, "Less": a < b, "Greater": a > b, "LessOrEqual": a <= b,
                "GreaterOrEqual": a >= b}[op_type]
    if a == b:  # the same expression
        return op_type in ("Equal", "LessOrEqual", "GreaterOrEqual")
    other, flipped = (b, False) if is_symbolic(a) else (a, True)
    if is_symbolic(other) or other >= 0:
        return None
    # a size against a negative constant: the size is the greater
    greater = {"Equal": False, "Less": False, "Greater": True, "LessOrEqual": False, "GreaterOrEqual": True}
    less = {"Equal": False, "Less": True, "Greater": False, "LessOrEqual": True, "GreaterOrEqual": False}
    return (less if flipped else greater)[op_type]


def as_size(x: Any) -> Any:
    """An entry of a shape value as a size: a `Sym`, or a Python int."""
    return x if is_symbolic(x) else int(x)


def _product_key(sizes: Sequence[Size]) -> tuple[int, tuple[str, ...]]:
    """A product of sizes as its int factor and its run-time factors (by expression)."""
    fs = [f for s in sizes for f in factors(s)]
    return (math.prod(f for f in fs if not is_symbolic(f)), tuple(sorted(str(f) for f in fs if is_symbolic(f))))


def reshape_groups(src: Sequence[Size], want: Sequence[Size]) -> list[int] | None:
    """A reshape's dims as consecutive groups of equal size (`graph.reshape_dim_groups`'s
    [n_in, n_out] pairs), each the fewest dims that agree, each group's result dims
    holding at most one run-time size: [b, 4, s] -> [4*b, 1, s] is [2, 1, 1, 2]. Size-1
    dims left at the end join the last group. None where sizes do not split so."""
    groups: list[int] = []
    i = j = 0
    while i < len(src) and j < len(want):
        span = next(((a, c) for total in range(2, len(src) - i + len(want) - j + 1)
                     for a in range(1, total) if i + a <= len(src) and j + total - a <= len(want)
                     for c in [total - a]
                     if _product_key(src[i:i + a]) == _product_key(want[j:j + c])), None)
        if span is None or sum(1 for d in want[j:j + span[1]] if is_symbolic(d)) > 1:
            return None
        groups += span
        i, j = i + span[0], j + span[1]
    if not groups or any(d != 1 for d in [*src[i:], *want[j:]]):
        return None
    groups[-2] += len(src) - i
    groups[-1] += len(want) - j
    return groups
