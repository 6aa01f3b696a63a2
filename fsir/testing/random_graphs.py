"""Random *valid* graph-dialect functions, as MLIR text, for property tests and benchmarks.

    random_graph(seed, max_ops=12, dynamic=0.2) -> str        seeded, for benchmarks / CLI
    random_attention_graph(seed) -> str                        exporter-style attention / norms
    graphs(**options)                                          a hypothesis strategy of str
    random_inputs(func, rng) -> list[np.ndarray]               inputs that keep them valid

A graph mixes chains of every `ELEMENTWISE` op (read from the table, so new ops are
picked up), compare/select, convert, broadcast, reshape, transpose, slice, concat,
reduce, gather, dot, iota and constants, and returns several outputs; unreturned values
are left in as dead code for DCE. Sizes default small (dims 1..70 incl. sizes that do
not divide 32 and size-1 dims, at most 4096 elements per tensor) because the pipeline
tests run the graphs through PTX on a simulator.

The generator tracks every value's *runtime* shape next to its *declared* type, where
some dims may be `?` (option `dynamic`: the chance that an input dim, or a result dim
whose size is known, is declared `?`; shape inference should resolve the latter).
A dynamic input records its runtime shape as the argument attribute
`fsir.runtime_shape = array<i64: ...>`, which `random_inputs` honours.

Values stay in domain without depending on the inputs: the operand of an op that gives
NaN on negative numbers (found by probing the op's numpy reference, e.g. log, sqrt,
rsqrt, pow) is rewritten as abs(x) + 0.5; gather ids are inputs used only as ids, and
`random_inputs` draws them in range.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from fsir.dialects import graph
from fsir.runtime.inputs import RUNTIME_SHAPE_ATTR, random_inputs  # noqa: F401 - re-exported for tests

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


# ---------------------------------------------------------------------------
# Exporter-style attention and normalisation
# ---------------------------------------------------------------------------

NEG_INF = float("-inf")


class ExporterBuilder:
    """Attention and normalisation as ONNX exporters and ONNX's expanded functions write
    them, in random combinations: hidden states reshaped into heads and back, grouped
    K/V heads expanded (reshape, broadcast, reshape), scales computed in the graph from
    a constant shape (gather, convert, sqrt, div) and broadcast onto Q, K or the
    scores, `Cast` chains, max-subtracted softmax, guards (reduce max, compare, select)
    and modifiers (a mul) between a reduction and the next dot, LayerNorm/RMSNorm
    spelled out op by op in front of a projection. Row counts are rarely a multiple of
    a tile, batch and head counts are small, elements are f32 and sometimes f16.

    The ops' own generators (`GraphBuilder`) keep every value small; this builder only
    composes them, so a graph is a few dozen ops of at most a few thousand elements."""

    def __init__(self, ch: Chooser, options: GraphOptions):
        self.ch = ch
        self.g = GraphBuilder(ch, options)
        self.elem = "f16" if ch.prob(0.2) else "f32"
        self.outputs: list[Value] = []

    # -- one op each -----------------------------------------------------------

    def op(self, name: str, operands: Sequence[Value], tail: str = "", elem: str | None = None,
           shape: Sequence[int] | None = None) -> Value:
        like = operands[1] if name == "select" else operands[0]  # not the i1 condition
        elem = elem or like.elem
        shape = like.shape if shape is None else tuple(shape)
        elementwise = name in graph.ELEMENTWISE
        return self.g.emit(name, operands, tail, self.g.result(elem, shape, relax=False), short=elementwise)

    def const(self, value: float, shape: Sequence[int] = (), elem: str | None = None) -> Value:
        elem = elem or self.elem
        if value == NEG_INF:
            # log(0): the parser reads `dense<0xFF800000>` (how -inf is printed) as the
            # integer 4286578688 converted to float, and has no other spelling of -inf
            return self.op("log", [self.literal(elem, shape, f"{0.0:.8e}")])
        return self.literal(elem, shape, f"{value:.8e}")  # `1e-05` does not parse; `1.00000000e-05` does

    def shape_constant(self, shape: Sequence[int]) -> Value:
        """A constant holding a shape: what `Shape` of a static tensor folds to."""
        return self.literal("i64", (len(shape),), "[" + ", ".join(map(str, shape)) + "]")

    def literal(self, elem: str, shape: Sequence[int], text: str) -> Value:
        v = Value(self.g._name("c"), elem, tuple(shape), tuple(shape), is_const=True)
        self.g.lines.append(f"  %{v.name} = graph.constant dense<{text}> : {v.type}")
        return v

    def bcast(self, x: Value, shape: Sequence[int], dims: Sequence[int]) -> Value:
        return self.op("broadcast", [x], "dims [" + ", ".join(map(str, dims)) + "]", shape=shape)

    def bcast_trailing(self, x: Value, shape: Sequence[int]) -> Value:
        """numpy-style broadcast: x's dims aligned with the last ones of `shape`."""
        dims = range(len(shape) - len(x.shape), len(shape))
        return self.bcast(x, shape, list(dims))

    def reshape(self, x: Value, shape: Sequence[int]) -> Value:
        return self.op("reshape", [x], shape=shape)

    def transpose(self, x: Value, perm: Sequence[int]) -> Value:
        return self.op("transpose", [x], "perm [" + ", ".join(map(str, perm)) + "]",
                       shape=[x.shape[p] for p in perm])

    def swap_last(self, x: Value) -> Value:
        r = len(x.shape)
        return self.transpose(x, [*range(r - 2), r - 1, r - 2])

    def convert(self, x: Value, elem: str) -> Value:
        return self.op("convert", [x], elem=elem)

    def reduce(self, kind: str, x: Value, keepdims: bool = False) -> Value:
        """A reduction over the last dim; `keepdims` reshapes it back to rank (ONNX)."""
        r = self.op(f"reduce {kind}", [x], f"dims [{len(x.shape) - 1}]", shape=x.shape[:-1])
        return self.reshape(r, [*r.shape, 1]) if keepdims else r

    def spread(self, stat: Value, like: Value) -> Value:
        """A per-row statistic (kept dims or not) broadcast back over its row."""
        if len(stat.shape) == len(like.shape):
            return self.bcast(stat, like.shape, range(len(like.shape)))
        return self.bcast(stat, like.shape, range(len(stat.shape)))

    def dot(self, a: Value, b: Value) -> Value:
        shape = np.matmul(np.empty(a.shape, np.int8), np.empty(b.shape, np.int8)).shape
        return self.op("dot", [a, b], shape=shape)

    def input(self, shape: Sequence[int], elem: str | None = None) -> Value:
        return self.g.input(elem or self.elem, tuple(shape))

    # -- sizes -----------------------------------------------------------------

    def rows(self) -> int:
        """A row count: mostly not a multiple of any tile (1, primes, 2^k ± 1)."""
        return self.ch.choice((1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 20, 24, 31, 33))

    def head_dim(self) -> int:
        return self.ch.choice((4, 6, 8, 8, 12, 16))

    # -- scales computed from shapes ---------------------------------------------

    def shape_scale(self, shape: Sequence[int], root: bool) -> Value:
        """1/sqrt(shape[-1]) (or its square root, when Q and K each take a half) as the
        expanded ONNX functions compute it: a constant shape, a gather of its last
        entry, a convert, sqrt, a div. A scalar or a one-element tensor."""
        rank1 = self.ch.prob(0.5)
        dims = self.shape_constant(shape)
        at = self.g.constant("i64", (1,) if rank1 else (), splat=len(shape) - 1)
        size = self.op("gather", [dims, at], shape=at.shape)
        if self.ch.prob(0.3):  # exporters' Cast chains: i64 -> i32 -> f32
            size = self.convert(size, "i32")
        f = self.convert(size, "f32")
        s = self.op("div", [self.const(1.0, f.shape, "f32"), self.op("sqrt", [f])])
        if root:
            s = self.op("sqrt", [s])
        return self.convert(s, self.elem) if self.elem != "f32" else s

    def scale_value(self, shape: Sequence[int], batch: int, root: bool) -> Value:
        """A scale for operands of `shape`: computed from the shape, a constant, a scalar
        input, or one value per batch (an input of the leading dims)."""
        kind = self.ch.weighted((("shape", 4), ("const", 2), ("input", 1), ("batch", 1)))
        if kind == "shape":
            return self.shape_scale(shape, root)
        if kind == "const":
            c = self.const(self.ch.choice((0.125, 0.35355339, 0.5, 2.0)))
            return self.op("sqrt", [c]) if root else c
        if kind == "input":
            return self.g.positive(self.input(()))
        return self.g.positive(self.input(shape[:batch]))

    def apply_scale(self, x: Value, s: Value, batch: int) -> Value:
        """x * s (or x / s) with s broadcast as an importer writes it."""
        if len(s.shape) > 1 or (s.shape and s.shape[0] != 1):  # one per batch: leading dims
            b = self.bcast(s, x.shape, range(len(s.shape)))
        elif s.shape and self.ch.prob(0.5):  # tensor<1x..>: aligned with the last dim
            b = self.bcast(s, x.shape, [len(x.shape) - 1])
        elif self.ch.prob(0.3):  # kept dims: a 1x1 (x1...) source over the trailing dims
            ones = self.reshape(s, [1] * min(2, len(x.shape)))
            b = self.bcast_trailing(ones, x.shape)
        else:
            b = self.bcast(self.reshape(s, []) if s.shape else s, x.shape, [])
        return self.op("div" if self.ch.prob(0.15) else "mul", [x, b])

    # -- heads -------------------------------------------------------------------

    def heads_input(self, b: int, h: int, s: int, d: int, merged: bool) -> Value:
        """A (b, h, s, d) operand: an input, or hidden states (b, s, h*d) reshaped into
        heads and transposed."""
        if not merged:
            return self.input((b, h, s, d))
        x = self.input((b, s, h * d))
        return self.transpose(self.reshape(x, (b, s, h, d)), (0, 2, 1, 3))

    def merge_heads(self, x: Value) -> Value:
        b, h, s, d = x.shape
        return self.reshape(self.transpose(x, (0, 2, 1, 3)), (b, s, h * d))

    def expand_groups(self, kv: Value, groups: int) -> Value:
        """Grouped-query attention: each K/V head repeated for `groups` query heads."""
        b, h, s, d = kv.shape
        x = self.reshape(kv, (b, h, 1, s, d))
        x = self.bcast(x, (b, h, groups, s, d), range(5))
        return self.reshape(x, (b, h * groups, s, d))

    # -- cast chains, softmax, guards, modifiers -----------------------------------

    def cast_chain(self, x: Value) -> Value:
        """Casts an exporter leaves around mixed precision: there and back, or twice."""
        other = "f16" if x.elem == "f32" else "f32"
        if self.ch.prob(0.5):
            return self.convert(self.convert(x, other), x.elem)
        return self.convert(self.convert(self.convert(x, "f32"), "f32"), x.elem)

    def softmax(self, x: Value) -> Value:
        keep = self.ch.prob(0.5)
        m = self.reduce("max", x, keep)
        if self.ch.prob(0.3):  # the "safe softmax" guard: a row of -inf subtracts 0
            m = self.guard_infinite(m)
        e = self.op("exp", [self.op("sub", [x, self.spread(m, x)])])
        s = self.reduce("sum", e, keep)
        return self.op("div", [e, self.spread(s, e)])

    def guard_infinite(self, m: Value) -> Value:
        inf = self.const(NEG_INF, m.shape, m.elem)
        bad = self.op("compare eq", [m, inf], elem="i1")
        return self.op("select", [bad, self.const(0.0, m.shape, m.elem), m])

    def guard_rows(self, p: Value, mask: Value | None) -> Value:
        """ONNX Attention's guard: rows whose mask is all -inf give 0, not NaN."""
        if mask is None:
            mask = self.input(p.shape[-2:], p.elem)
        m = self.reduce("max", mask, keepdims=True)
        bad = self.op("compare eq", [m, self.const(NEG_INF, m.shape, m.elem)], elem="i1")
        bad = self.bcast_trailing(bad, p.shape)
        return self.op("select", [bad, self.const(0.0, p.shape, p.elem), p])

    def modifier(self, p: Value, batch: int) -> Value:
        """A mul between the softmax's reduction and the dot: a dropout-style constant,
        a probability modifier read from an input, or a computed scale."""
        kind = self.ch.choice(("const", "input", "scale", "threshold"))
        if kind == "const":
            return self.op("mul", [p, self.const(self.ch.choice((1.25, 0.5, 2.0)), p.shape, p.elem)])
        if kind == "input":
            return self.op("mul", [p, self.input(p.shape, p.elem)])
        if kind == "scale":
            return self.apply_scale(p, self.scale_value(p.shape, batch, root=False), batch)
        small = self.op("compare lt", [p, self.const(0.05, p.shape, p.elem)], elem="i1")
        return self.op("select", [small, self.const(0.0, p.shape, p.elem), p])

    def score_modifiers(self, s: Value, mask: Value | None) -> Value:
        if self.ch.prob(0.2):  # softcap: c * tanh(s / c)
            c = self.ch.choice((2.0, 5.0))
            s = self.op("div", [s, self.const(c, s.shape, s.elem)])
            s = self.op("mul", [self.op("tanh", [s]), self.const(c, s.shape, s.elem)])
        if mask is not None:
            s = self.op("add", [s, self.bcast_trailing(mask, s.shape)])
        return s

    # -- graphs ------------------------------------------------------------------

    def attention(self) -> Value:
        four_d = self.ch.prob(0.7)
        b = self.ch.choice((1, 1, 2, 3))
        groups = self.ch.choice((1, 1, 2, 3)) if four_d else 1
        hkv = self.ch.choice((1, 2)) if four_d else 1
        hq, sq, skv, d = hkv * groups, self.rows(), self.rows(), self.head_dim()
        while b * hq * max(sq, skv) * d > 3072:
            sq, skv = max(1, sq // 2), max(1, skv // 2)
        if four_d:
            merged = self.ch.prob(0.4)
            q = self.heads_input(b, hq, sq, d, merged)
            k = self.heads_input(b, hkv, skv, d, merged)
            v = self.heads_input(b, hkv, skv, d, merged)
            if groups > 1:
                k, v = self.expand_groups(k, groups), self.expand_groups(v, groups)
        else:
            q, k, v = self.input((b, sq, d)), self.input((b, skv, d)), self.input((b, skv, d))
        nb = len(q.shape) - 2
        if self.ch.prob(0.2):
            q, k = self.cast_chain(q), self.cast_chain(k)
        where = self.ch.weighted((("both", 4), ("q", 2), ("k", 1), ("scores", 2), ("none", 1)))
        s = self.scale_value(q.shape, nb, root=where == "both") if where != "none" else None
        transpose_first = self.ch.prob(0.5)
        kt = self.swap_last(k) if transpose_first else k
        if s is not None and where in ("both", "q"):
            q = self.apply_scale(q, s, nb)
        if s is not None and where in ("both", "k"):
            kt = self.apply_scale(kt, s, nb)
        if not transpose_first:
            kt = self.swap_last(kt)
        scores = self.dot(q, kt)
        if s is not None and where == "scores":
            scores = self.apply_scale(scores, s, nb)
        if self.ch.prob(0.3):
            self.outputs.append(scores)
        mask = self.input((sq, skv)) if self.ch.prob(0.4) else None
        scores = self.score_modifiers(scores, mask)
        wide = scores.elem == "f16" and self.ch.prob(0.5)
        p = self.softmax(self.convert(scores, "f32") if wide else scores)
        p = self.convert(p, scores.elem) if wide else p
        if self.ch.prob(0.4):
            p = self.guard_rows(p, mask)
        if self.ch.prob(0.5):
            p = self.modifier(p, nb)
        out = self.dot(p, v)
        if four_d and self.ch.prob(0.5):
            out = self.merge_heads(out)
        return out

    def normalisation(self) -> Value:
        """LayerNorm or RMSNorm spelled out, the mean's divisor computed from the shape,
        then a projection: the GEMM prologue's row statistics."""
        lead = (self.ch.choice((1, 2, 3)), self.rows()) if self.ch.prob(0.5) else (self.rows(),)
        h = self.ch.choice((8, 12, 16, 24, 32))
        x = self.input((*lead, h))
        if self.ch.prob(0.2):
            x = self.cast_chain(x)
        rms = self.ch.prob(0.4)
        n = self.shape_count(x.shape) if self.ch.prob(0.6) else self.const(float(h), elem=self.elem)
        c = x if rms else self.op("sub", [x, self.spread(self.mean(x, n), x)])
        var = self.mean(self.op("mul", [c, c]), n)
        eps = self.const(1e-5 if self.elem == "f32" else 1e-3, var.shape)
        std = self.op("sqrt", [self.op("add", [var, eps])])
        y = self.op("div", [c, self.spread(std, c)])
        y = self.op("mul", [y, self.bcast_trailing(self.input((h,)), y.shape)])
        if not rms:
            y = self.op("add", [y, self.bcast_trailing(self.input((h,)), y.shape)])
        if self.ch.prob(0.3):
            s = self.scale_value(y.shape, len(lead), root=False)
            y = self.apply_scale(y, s, len(lead))
        out = self.dot(y, self.input((h, self.ch.choice((4, 8, 12, 16, 33)))))
        if self.ch.prob(0.3):
            out = self.op("add", [out, self.bcast_trailing(self.input(out.shape[-1:]), out.shape)])
        return out

    def mean(self, x: Value, n: Value) -> Value:
        total = self.reduce("sum", x)
        return self.op("div", [total, self.bcast(n, total.shape, [])])

    def shape_count(self, shape: Sequence[int]) -> Value:
        """The last dim's size as a float scalar, gathered from a constant shape."""
        s = self.shape_scale(shape, root=False)  # 1/sqrt(n): squared and inverted gives n
        s = self.reshape(s, []) if s.shape else s
        return self.op("div", [self.const(1.0), self.op("mul", [s, s])])

    def build(self) -> str:
        kind = self.ch.weighted((("attention", 3), ("normalisation", 1), ("both", 1)))
        if kind == "attention":
            last = self.attention()
        elif kind == "normalisation":
            last = self.normalisation()
        else:
            self.outputs.append(self.normalisation())
            last = self.attention()
        return self.finish([*self.outputs, last])

    def finish(self, outputs: list[Value]) -> str:
        g = self.g
        args = ", ".join(f"%{a.name}: {a.type}" for a in g.args)
        types = ", ".join(v.type for v in outputs)
        results = types if len(outputs) == 1 else f"({types})"
        ret = ", ".join(f"%{v.name}" for v in outputs)
        return "\n".join([f"func.func @{g.o.name}({args}) -> {results} {{", *g.lines,
                          f"  func.return {ret} : {types}", "}"]) + "\n"


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


def random_graph(seed: int, **size_options) -> str:
    """A random valid graph function (MLIR text), the same for the same seed and options."""
    return GraphBuilder(RandomChooser(random.Random(seed)), GraphOptions(**size_options)).build()


def random_attention_graph(seed: int, name: str = "attention_graph") -> str:
    """A random exporter-style attention / normalisation graph (`ExporterBuilder`), the
    same for the same seed."""
    return ExporterBuilder(RandomChooser(random.Random(seed)), GraphOptions(name=name)).build()


def graphs(**size_options):
    """A hypothesis strategy of random valid graph functions (MLIR text)."""
    from hypothesis import strategies as st

    options = GraphOptions(**size_options)

    @st.composite
    def _graphs(draw) -> str:
        return GraphBuilder(DrawChooser(draw), options).build()

    return _graphs()


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m fsir.testing.random_graphs --seed 3 [--max-ops 12 ...]`: print one graph."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m fsir.testing.random_graphs", description=main.__doc__)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--count", type=int, default=1, help="graphs with seeds seed..seed+count-1, named @g<seed>")
    for field in ("max_ops", "max_dim", "max_rank", "max_elements"):
        p.add_argument("--" + field.replace("_", "-"), type=int, default=getattr(GraphOptions, field))
    p.add_argument("--dynamic", type=float, default=0.0, help="chance of a `?` dim (default 0: static)")
    p.add_argument("--attention", action="store_true",
                   help="exporter-style attention/normalisation graphs (random_attention_graph; sizes ignored)")
    args = p.parse_args(argv)
    if args.attention:
        for seed in range(args.seed, args.seed + args.count):
            print(random_attention_graph(seed, name="attention_graph" if args.count == 1 else f"g{seed}"))
        return
    sizes = dict(max_ops=args.max_ops, max_dim=args.max_dim, max_rank=args.max_rank,
                 max_elements=args.max_elements, dynamic=args.dynamic)
    for seed in range(args.seed, args.seed + args.count):
        name = "random_graph" if args.count == 1 else f"g{seed}"
        print(random_graph(seed, name=name, **sizes))


__all__ = ["GraphOptions", "graphs", "random_attention_graph", "random_graph", "random_inputs"]

if __name__ == "__main__":
    main()
