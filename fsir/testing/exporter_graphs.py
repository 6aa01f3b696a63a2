"""Exporter-style attention and normalisation graphs (`ExporterBuilder`), composed from
the op generators of `fsir.testing.graph_builder`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fsir.dialects import graph
from fsir.testing.graph_builder import Chooser, GraphBuilder, GraphOptions, Value

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
