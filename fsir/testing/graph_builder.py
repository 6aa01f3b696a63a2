"""The random graph generator's parts (`fsir.testing.random_graphs` describes the graphs):
size options, choices over `random.Random` or hypothesis' `draw`, values that track
their runtime shape next to their declared type, and `GraphBuilder`, one generator per
op family."""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from fsir.dialects import graph
from fsir.runtime.inputs import RUNTIME_SHAPE_ATTR

_T = TypeVar("_T")

FLOATS = ("f32", "f16", "bf16")
INTS = ("i32", "i64")
ELEMENT_TYPES = FLOATS + INTS + ("i1",)


@dataclass(frozen=True)
class GraphOptions:
    """Size knobs; every generated tensor respects them."""

    max_ops: int = 12
    max_dim: int = 70
    max_rank: int = 3
    max_elements: int = 4096
    dynamic: float = 0.0  # chance that an input dim / a known result dim is declared `?`
    float_types: tuple[str, ...] = ("f32", "f32", "f32", "f16", "bf16")  # for fresh float inputs
    name: str = "random_graph"


# ---------------------------------------------------------------------------
# Choices: one interface over `random.Random` and hypothesis' `draw`
# ---------------------------------------------------------------------------


class Chooser:
    def int(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def prob(self, p: float) -> bool:
        # True on the high end, so hypothesis (which shrinks toward 0) shrinks to "no".
        return p > 0 and self.int(0, 999) >= (1 - p) * 1000

    def choice(self, seq: Sequence):
        return seq[self.int(0, len(seq) - 1)]

    def weighted(self, table: Sequence[tuple[_T, int]]) -> _T:
        total = sum(w for _, w in table)
        x = self.int(0, total - 1)
        for item, w in table:
            if x < w:
                return item
            x -= w
        raise AssertionError

    def subset(self, seq: Sequence, k: int) -> list:
        pool = list(seq)
        return [pool.pop(self.int(0, len(pool) - 1)) for _ in range(k)]


class RandomChooser(Chooser):
    def __init__(self, rng: random.Random):
        self.rng = rng

    def int(self, lo, hi):
        return self.rng.randint(lo, hi)


class DrawChooser(Chooser):
    """Hypothesis draws shrink toward `lo`: small shapes, few ops, the first choices."""

    def __init__(self, draw):
        from hypothesis import strategies as st

        self.draw, self.st = draw, st

    def int(self, lo, hi):
        return self.draw(self.st.integers(lo, hi))


# ---------------------------------------------------------------------------
# Values and types
# ---------------------------------------------------------------------------

Dims = tuple[int | None, ...]  # declared dims: None is `?`


@dataclass
class Value:
    name: str
    elem: str
    shape: tuple[int, ...]  # runtime sizes
    decl: Dims  # declared sizes
    is_const: bool = False
    uses: int = 0

    @property
    def type(self) -> str:
        return tensor_type(self.elem, self.decl)


def tensor_type(elem: str, dims: Sequence[int | None]) -> str:
    return "tensor<" + "".join(("?" if d is None else str(d)) + "x" for d in dims) + elem + ">"


def _accepts(kind: str, elem: str) -> bool:
    if kind == graph.FLOAT:
        return elem in FLOATS
    if kind == graph.NUMERIC:
        return elem in FLOATS + INTS
    if kind == graph.INTEGER:
        return elem in INTS + ("i1",)
    if kind == graph.INT:
        return elem in INTS
    return True


# Shifts (INT) are not drawn but stand in for `and`/`or` on non-boolean integers of
# even rank, with the same operands: drawing them would change the graph each seed
# stands for (tests pick seeds that yield a rare structure, e.g.
# tests/codegen/test_subroots.py's sub-root).
_DRAWN_ELEMENTWISE = sorted(n for n, spec in graph.ELEMENTWISE.items() if spec.types != graph.INT)
_SHIFT_FOR = {"and": "shl", "or": "shr"}


@functools.cache
def _needs_positive(name: str) -> bool:
    """True if the op's reference gives NaN for negative (first) operands."""
    spec = graph.ELEMENTWISE[name]
    if spec.types not in (graph.FLOAT, graph.NUMERIC):
        return False
    x = np.array([-2.0, -0.5], dtype=np.float32)
    args = [x] + [np.full(2, 0.5, dtype=np.float32)] * (spec.arity - 1)
    with np.errstate(all="ignore"):
        return bool(np.isnan(spec.ref(*args)).any())


def _join(*decls: Dims) -> Dims:
    """Declared dims of an elementwise result: static where any operand is static."""
    return tuple(next((d for d in ds if d is not None), None) for ds in zip(*decls))


def _fmt_scalar(elem: str, v) -> str:
    if elem == "i1":
        return "true" if v else "false"
    if elem in INTS:
        return str(int(v))
    return repr(float(v))


def _fmt_dense(elem: str, arr) -> str:
    """Nested-list literal of an object array of python scalars."""
    if not isinstance(arr, np.ndarray):
        return _fmt_scalar(elem, arr)
    return "[" + ", ".join(_fmt_dense(elem, a) for a in arr) + "]"


# ---------------------------------------------------------------------------
# The builder
# ---------------------------------------------------------------------------


class GraphBuilder:
    def __init__(self, ch: Chooser, options: GraphOptions):
        self.ch, self.o = ch, options
        self.args: list[Value] = []
        self.pool: list[Value] = []  # values ops may consume (args, op results)
        self.lines: list[str] = []
        self.n = 0

    # -- naming, emitting ----------------------------------------------------

    def _name(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, op: str, operands: Sequence[Value], tail: str, result: Value, short: bool = False) -> Value:
        """Append `%r = graph.OP operands tail : types`; `short` prints `: T` when types agree."""
        for v in operands:
            v.uses += 1
        types = [v.type for v in operands]
        if short and all(t == result.type for t in types):
            sig = result.type
        else:
            sig = f"({', '.join(types)}) -> {result.type}"
        ops = ", ".join(f"%{v.name}" for v in operands)
        parts = [p for p in (f"graph.{op}", ops, tail) if p]
        self.lines.append(f"  %{result.name} = {' '.join(parts)} : {sig}")
        self.pool.append(result)
        return result

    def result(self, elem: str, shape: Sequence[int], decl: Sequence[int | None] | None = None,
               relax: bool = True) -> Value:
        """A fresh op result; `relax` may declare known dims as `?`."""
        decl = tuple(shape) if decl is None else tuple(decl)
        if relax:
            decl = tuple(None if self.ch.prob(self.o.dynamic / 2) else d for d in decl)
        return Value(self._name("v"), elem, tuple(shape), decl)

    # -- shapes --------------------------------------------------------------

    def dim(self, limit: int | None = None) -> int:
        hi = max(1, min(self.o.max_dim, limit or self.o.max_dim))
        kind = self.ch.int(0, 3)
        if kind == 0:
            return self.ch.int(1, min(hi, 8))
        if kind == 1:  # around warp multiples, where tiling bugs live
            near = [s for s in (1, 31, 32, 33, 63, 64, 65) if s <= hi]
            return self.ch.choice(near)
        return self.ch.int(1, hi)

    def shape(self, rank: int | None = None, budget: int | None = None) -> tuple[int, ...]:
        if rank is None:  # rank 0 and rank > 2 are rarer than in real models, but present
            rank = min(self.o.max_rank, self.ch.weighted(((0, 1), (1, 3), (2, 4), (3, 2), (4, 1))))
        budget = budget or self.o.max_elements
        out = []
        for _ in range(rank):
            d = self.dim(budget)
            budget = max(1, budget // d)
            out.append(d)
        return tuple(out)

    # -- leaves --------------------------------------------------------------

    def input(self, elem: str, shape: Sequence[int]) -> Value:
        decl = tuple(None if self.ch.prob(self.o.dynamic) else d for d in shape)
        v = Value(self._name("a"), elem, tuple(shape), decl)
        self.args.append(v)
        self.pool.append(v)
        return v

    def constant(self, elem: str, shape: Sequence[int], splat=None) -> Value:
        shape = tuple(shape)
        size = math.prod(shape)
        if splat is not None:
            text = _fmt_scalar(elem, splat)
        elif 1 <= size <= 16 and shape and self.ch.prob(0.4):
            arr = np.array([self._scalar(elem) for _ in range(size)], dtype=object).reshape(shape)
            text = _fmt_dense(elem, arr)
        else:
            text = _fmt_scalar(elem, self._scalar(elem))
        v = Value(self._name("c"), elem, shape, shape, is_const=True)
        self.lines.append(f"  %{v.name} = graph.constant dense<{text}> : {v.type}")
        return v

    def _scalar(self, elem: str):
        if elem == "i1":
            return self.ch.prob(0.5)
        if elem in INTS:
            return self.ch.int(-4, 4)
        return self.ch.choice((0.0, 0.5, 1.0, -1.0, 2.0, -0.25, 3.0, 0.125))

    # -- picking operands ----------------------------------------------------

    def pick(self, ok: Callable[[Value], bool]) -> Value | None:
        """A pool value satisfying `ok`, preferring recent ones so chains form."""
        cands = [v for v in self.pool if ok(v)]
        if not cands:
            return None
        if self.ch.prob(0.6):
            return cands[-1 - self.ch.int(0, min(2, len(cands) - 1))]
        return self.ch.choice(cands)

    def operand(self, ok: Callable[[str], bool], make_elem: str) -> Value:
        v = self.pick(lambda v: ok(v.elem))
        if v is None or self.ch.prob(0.1):
            v = self.input(make_elem, self.shape())
        return v

    def partner(self, v: Value, elem: str | None = None) -> Value:
        """A second operand of v's runtime shape (and element type)."""
        elem = elem or v.elem
        choice = self.ch.int(0, 9)
        if choice < 3:
            same = self.pick(lambda w: w is not v and w.elem == elem and w.shape == v.shape)
            if same is not None:
                return same
        if choice < 5:
            return self.input(elem, v.shape)
        if choice < 7 or not v.shape:
            return self.constant(elem, v.shape)
        # A lower-rank input broadcast up: the bias / scale pattern of real models.
        kept = sorted(self.ch.subset(range(len(v.shape)), self.ch.int(0, len(v.shape) - 1)))
        small = self.input(elem, [v.shape[d] for d in kept])
        dims = "dims [" + ", ".join(map(str, kept)) + "]"
        return self.emit("broadcast", [small], dims, self.result(elem, v.shape, relax=False))

    def positive(self, v: Value) -> Value:
        """abs(v) + 0.5: keeps log/sqrt/rsqrt/pow operands in their domain."""
        a = self.emit("abs", [v], "", self.result(v.elem, v.shape, v.decl, relax=False), short=True)
        half = self.constant(v.elem, v.shape, splat=0.5 if v.elem in FLOATS else 1)
        return self.emit("add", [a, half], "", self.result(v.elem, v.shape, _join(a.decl, half.decl)), short=True)

    # -- ops -----------------------------------------------------------------

    def elementwise(self) -> Value:
        name = self.ch.choice(_DRAWN_ELEMENTWISE)
        spec = graph.ELEMENTWISE[name]
        make = "i32" if spec.types in (graph.INTEGER, graph.INT) else self.ch.choice(self.o.float_types)
        x = self.operand(lambda e: _accepts(spec.types, e), make)
        if _needs_positive(name):
            x = self.positive(x)
        args = [x] + [self.partner(x) for _ in range(spec.arity - 1)]
        r = self.result(x.elem, x.shape, _join(*(a.decl for a in args)))
        if name in _SHIFT_FOR and x.elem in INTS and len(x.shape) % 2 == 0:
            name = _SHIFT_FOR[name]
        return self.emit(name, args, "", r, short=True)

    def compare(self) -> Value:
        x = self.operand(lambda e: e != "i1", "f32")
        y = self.partner(x)
        direction = self.ch.choice(tuple(graph.CompareDirection))
        return self.emit(f"compare {direction}", [x, y], "", self.result("i1", x.shape, _join(x.decl, y.decl)))

    def select(self) -> Value:
        a = self.operand(lambda e: True, "f32")
        b = self.partner(a)
        cond = self.pick(lambda v: v.elem == "i1" and v.shape == a.shape)
        if cond is None:
            x = a if a.elem != "i1" else self.input("f32", a.shape)
            y = self.partner(x)
            cond = self.emit("compare " + self.ch.choice(tuple(graph.CompareDirection)), [x, y], "",
                             self.result("i1", x.shape, _join(x.decl, y.decl)))
        r = self.result(a.elem, a.shape, _join(cond.decl, a.decl, b.decl))
        return self.emit("select", [cond, a, b], "", r)

    def convert(self) -> Value:
        x = self.operand(lambda e: True, "f32")
        elem = self.ch.choice(("f32", "f16", "bf16", "i32", "i64", "i1", "f32"))
        return self.emit("convert", [x], "", self.result(elem, x.shape, x.decl))

    def broadcast(self) -> Value:
        x = self.operand(lambda e: True, "f32")
        rank = len(x.shape)
        out_rank = max(rank, min(self.o.max_rank + 1, rank + self.ch.int(0, 2)))
        dims = sorted(self.ch.subset(range(out_rank), rank))
        budget = self.o.max_elements // max(1, math.prod(x.shape))
        shape: list[int] = []
        decl: list[int | None] = []
        for d in range(out_rank):
            if d in dims:
                i = dims.index(d)
                size = x.shape[i]
                if size == 1 and self.ch.prob(0.5):
                    size = self.dim(budget)
                    budget = max(1, budget // size)
                # A `?` result dim takes the operand's size at run time: only where they agree.
                keep_dyn = size == x.shape[i] and (x.decl[i] is None or self.ch.prob(self.o.dynamic / 2))
                decl.append(None if keep_dyn else size)
            else:
                size = self.dim(budget)
                budget = max(1, budget // size)
                decl.append(size)
            shape.append(size)
        tail = "dims [" + ", ".join(map(str, dims)) + "]"
        return self.emit("broadcast", [x], tail, self.result(x.elem, shape, decl, relax=False))

    def reshape(self) -> Value:
        x = self.operand(lambda e: True, "f32")
        n = math.prod(x.shape)
        factors = _prime_factors(n)
        rank = self.ch.int(0 if n == 1 else 1, self.o.max_rank)
        shape = [1] * rank
        for p in factors:
            shape[self.ch.int(0, rank - 1)] *= p
        decl: list[int | None] = list(shape)
        if shape and self.ch.prob(0.5 if None in x.decl else self.o.dynamic):
            decl[self.ch.int(0, rank - 1)] = None  # one `?` is resolvable from the element count
        return self.emit("reshape", [x], "", self.result(x.elem, shape, decl, relax=False))

    def transpose(self) -> Value:
        x = self.pick(lambda v: len(v.shape) >= 2) or self.input("f32", self.shape(2))
        perm = self.ch.subset(range(len(x.shape)), len(x.shape))
        r = self.result(x.elem, [x.shape[p] for p in perm], [x.decl[p] for p in perm])
        return self.emit("transpose", [x], "perm [" + ", ".join(map(str, perm)) + "]", r)

    def slice(self) -> Value:
        x = self.pick(lambda v: len(v.shape) >= 1) or self.input("f32", self.shape(self.ch.int(1, 3)))
        start, limit, strides = [], [], []
        prefix = self.ch.prob(0.3)  # [0, limit) with stride 1: looks like an identity, may not be
        for size in x.shape:
            s = 0 if prefix else self.ch.int(0, size - 1)
            start.append(s)
            limit.append(self.ch.int(s + 1, size))
            strides.append(1 if prefix else self.ch.choice((1, 1, 1, 2, 3)))
        shape = [-(-(l - s) // k) for s, l, k in zip(start, limit, strides)]
        # A frontend that does not know the operand's size writes `?` for the result too.
        decl = [None if d is None and self.ch.prob(0.5) else n for d, n in zip(x.decl, shape)]
        tail = " ".join(f"{kw} [{', '.join(map(str, vals))}]" for kw, vals in
                        (("start", start), ("limit", limit), ("strides", strides)))
        return self.emit("slice", [x], tail, self.result(x.elem, shape, decl))

    def concat(self) -> Value:
        x = self.pick(lambda v: len(v.shape) >= 1) or self.input("f32", self.shape(self.ch.int(1, 3)))
        d = self.ch.int(0, len(x.shape) - 1)
        parts = [x]
        others = math.prod(x.shape) // x.shape[d]
        for _ in range(self.ch.int(1, 2)):
            room = self.o.max_elements // others - sum(p.shape[d] for p in parts)
            if room < 1:
                break
            if x.shape[d] <= room and self.ch.prob(0.3):
                parts.append(x)
                continue
            shape = list(x.shape)
            shape[d] = self.dim(room)
            parts.append(self.input(x.elem, shape) if self.ch.prob(0.7) else self.constant(x.elem, shape))
        shape = list(x.shape)
        shape[d] = sum(p.shape[d] for p in parts)
        decl = list(_join(*(p.decl for p in parts)))
        decl[d] = None if any(p.decl[d] is None for p in parts) else shape[d]
        return self.emit("concat", parts, f"dim {d}", self.result(x.elem, shape, decl))

    def reduce(self) -> Value:
        x = self.operand(lambda e: e != "i1", "f32")
        rank = len(x.shape)
        dims = self.ch.subset(range(rank), self.ch.int(min(1, rank), rank))
        if self.ch.prob(0.7):
            dims.sort()
        kind = self.ch.choice([k.value for k in graph.ReduceKind])
        keep = [i for i in range(rank) if i not in dims]
        r = self.result(x.elem, [x.shape[i] for i in keep], [x.decl[i] for i in keep])
        return self.emit(f"reduce {kind}", [x], "dims [" + ", ".join(map(str, dims)) + "]", r)

    def gather(self) -> Value:
        table = self.pick(lambda v: len(v.shape) >= 1 and v.decl[0] is not None and v.shape[0] > 1)
        if table is None or self.ch.prob(0.3):
            table = self.input(self.ch.choice(self.o.float_types), (self.dim(), self.dim(64)))
            table.decl = (table.shape[0],) + table.decl[1:]  # ids are drawn below the row count
        row = math.prod(table.shape[1:])
        ids = self.input(self.ch.choice(INTS), self.shape(self.ch.int(0, 2), max(1, self.o.max_elements // row)))
        r = self.result(table.elem, ids.shape + table.shape[1:], ids.decl + table.decl[1:])
        return self.emit("gather", [table, ids], "", r)

    def dot(self) -> Value:
        x = self.pick(lambda v: v.elem != "i1" and 1 <= len(v.shape) <= 3)
        if x is None or self.ch.prob(0.2):
            x = self.input(self.ch.choice(self.o.float_types), self.shape(self.ch.int(1, 3)))
        k = x.shape[-1]
        batch = x.shape[0] if len(x.shape) == 3 and self.ch.prob(0.5) else None
        # n bounds both the weight (batch*k*n) and the result (rows of x times n).
        n = self.dim(max(1, self.o.max_elements // max(k * (batch or 1), math.prod(x.shape[:-1]))))
        if batch is not None:
            w_shape: tuple[int, ...] = (batch, k, n)
        elif len(x.shape) == 2 and self.ch.prob(0.2):
            w_shape = (k,)
        else:
            w_shape = (k, n)
        w = self.pick(lambda v: v is not x and v.elem == x.elem and v.shape == w_shape) or self.input(x.elem, w_shape)
        shape = np.matmul(np.empty(x.shape, np.int8), np.empty(w_shape, np.int8)).shape

        def dyn(d: Dims) -> tuple[int, ...]:
            return tuple(graph.DYN if s is None else s for s in d)

        decl = tuple(None if s == graph.DYN else s for s in graph.matmul_shape(dyn(x.decl), dyn(w.decl)))
        return self.emit("dot", [x, w], "", self.result(x.elem, shape, decl))

    def iota(self) -> Value:
        shape = self.shape(self.ch.int(1, self.o.max_rank))
        r = self.result(self.ch.choice(("i32", "i64", "f32")), shape, relax=False)
        return self.emit("iota", [], f"dim {self.ch.int(0, len(shape) - 1)}", r, short=True)

    OPS: tuple[tuple[str, int], ...] = (
        ("elementwise", 10), ("compare", 1), ("select", 2), ("convert", 2), ("broadcast", 2),
        ("reshape", 2), ("transpose", 2), ("slice", 2), ("concat", 2), ("reduce", 3),
        ("gather", 1), ("dot", 2), ("iota", 1),
    )

    # -- the function ----------------------------------------------------------

    def build(self) -> str:
        n_ops = self.ch.int(1, self.o.max_ops)
        self.input(self.ch.choice(self.o.float_types), self.shape())
        last = None
        while len(self.lines) < n_ops:
            last = getattr(self, str(self.ch.weighted(self.OPS)))()
        assert last is not None
        outputs = [last] + [v for v in self.pool if v.uses == 0 and v is not last and v not in self.args
                            and self.ch.prob(0.7)]
        args = ", ".join(f"%{a.name}: {a.type}" + self._arg_attr(a) for a in self.args)
        results = ", ".join(v.type for v in outputs)
        results = results if len(outputs) == 1 else f"({results})"
        ret = ", ".join(f"%{v.name}" for v in outputs)
        return "\n".join([
            f"func.func @{self.o.name}({args}) -> {results} {{",
            *self.lines,
            f"  func.return {ret} : {', '.join(v.type for v in outputs)}",
            "}",
        ]) + "\n"

    @staticmethod
    def _arg_attr(a: Value) -> str:
        if None not in a.decl:
            return ""
        sizes = ", ".join(map(str, a.shape))
        return f" {{{RUNTIME_SHAPE_ATTR} = array<i64: {sizes}>}}"


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out
