"""Symbolic shapes that hold: random ONNX graphs whose inputs have the named run-time
dims `B`, `S` (x: [B, S, 4], ids: [B, S]) and `T` (y: [T, 4]), through every shape
rule that combines sizes, compiled ONCE per fusion mode and run at several (B, S, T) on
the simulator against the reference interpreter (of the imported graph), which is
itself checked against onnxruntime.

The rules drawn: elementwise broadcasting of a `?` dim against a static 1 and against a
keepdims reduction's 1, reductions over `?` axes (with and without keepdims, and of
every axis to a scalar), transposes, reshapes that merge `?` dims into products
(Shape-computed targets and 0 / -1 entries) and split them again (from the input's
Shape, and with -1), (Un)Squeeze, concat along `?` and static axes, Split of static
dims, slices (static dims, a `?` dim whole, a static buffer cut at a run-time end),
gathers (a table by `[B, S]` ids; one index, also -1 and `Shape(x)[k] - 1`, along a
`?` axis), MatMul with `?` batch and M and a batched `[.., S, D] x [.., D, S]`,
attention over keys of their own length T, Softmax over `?`-length rows,
LayerNormalization over rows of static and of `?` length, ArgMax/ArgMin over `?` axes,
Expand and ConstantOfShape of a Shape, masks from the ids and causal masks from Range,
and sizes used as data (`Shape(x)[k]` divided, reduced modulo, compared and cast;
`Range(0, S)`; BERT's flat index `arange(B)[:, None] * S + arange(S)`).

CI draws a small derandomised sample (`EXAMPLES`, one mode each); `pytest --full` runs
`FULL_EXAMPLES` random ones in every mode (`FSIR_SYMBOLIC_EXAMPLES` sets both).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import fsir
from fsir.errors import UserError
from fsir.frontend.onnx_import import import_onnx
from fsir.runtime.compare import compare
from fsir.runtime.reference import find_function, run_function, run_function_float64

EXAMPLES = int(os.environ.get("FSIR_SYMBOLIC_EXAMPLES", 25))
FULL_EXAMPLES = int(os.environ.get("FSIR_SYMBOLIC_EXAMPLES", 150))
MODES = ("stitch", "xla", "none")
D = 4  # the static feature dim of the input
VOCAB = 11
RULE_COUNT = (3, 7)  # rules drawn per graph
BUFFER = 64  # rows of the static buffer cut at a run-time end: S never exceeds it

Dim = tuple[int, tuple[str, ...]]  # coefficient times a product of symbols


def _dim(d: int | str) -> Dim:
    return (d, ()) if isinstance(d, int) else (1, (d,))


def _mul(a: Dim, b: Dim) -> Dim:
    return a[0] * b[0], tuple(sorted(a[1] + b[1]))


def _size(d: Dim, env: dict[str, int]) -> int:
    n = d[0]
    for s in d[1]:
        n *= env[s]
    return n


@dataclass
class Value:
    name: str
    dims: tuple[Dim, ...]

    @property
    def rank(self) -> int:
        return len(self.dims)

    def static(self, i: int) -> bool:
        return not self.dims[i][1]


@dataclass
class Graph:
    """An ONNX graph under construction; `pool` holds the f32 values drawn from."""

    draw: st.DrawFn
    nodes: list = field(default_factory=list)
    inits: list = field(default_factory=list)
    pool: list[Value] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    n: int = 0

    def fresh(self, hint: str) -> str:
        self.n += 1
        return f"{hint}{self.n}"

    def node(self, op: str, inputs: list[str], hint: str = "v", **attrs) -> str:
        out = self.fresh(hint)
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def const(self, array: np.ndarray, hint: str = "c") -> str:
        name = self.fresh(hint)
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def ints(self, *values: int) -> str:
        return self.const(np.array(values, np.int64), "k")

    def floats(self, shape: tuple[int, ...], scale: float = 0.5) -> str:
        rng = np.random.default_rng(self.n)
        return self.const((rng.standard_normal(shape) * scale).astype(np.float32), "w")

    def pick(self, where=lambda v: True) -> Value | None:
        options = [v for v in self.pool if where(v)]
        return self.draw(st.sampled_from(options)) if options else None

    def add(self, name: str, dims, rule: str) -> Value:
        v = Value(name, tuple(dims))
        self.pool.append(v)
        self.rules.append(rule)
        return v

    def size_of(self, sym: str) -> str:
        """A [1] i64 tensor holding the run-time size `sym` (Shape(x)[k], unsqueezed)."""
        k = np.array({"B": 0, "S": 1}[sym], np.int64)
        return self.node("Unsqueeze", [self.node("Gather", ["x_shape", self.const(k)], "g"), self.ints(0)], "n")

    def target(self, dims) -> str:
        """A shape tensor for `dims`, built as exporters do: Concat of Shape-derived
        sizes (products by Mul) and constants."""
        parts = []
        for coef, syms in dims:
            part = self.ints(coef) if not syms or coef != 1 else None
            for s in syms:
                part = self.size_of(s) if part is None else self.node("Mul", [part, self.size_of(s)], "m")
            parts.append(part)
        return self.node("Concat", parts, "t", axis=0)


# -- the rules: each adds a value to the pool, or does nothing where it does not apply --


def r_unary(g: Graph) -> None:
    v = g.pick()
    op = g.draw(st.sampled_from(["Tanh", "Neg", "Abs", "Sigmoid", "Relu"]))
    g.add(g.node(op, [v.name]), v.dims, op)


def r_binary_same(g: Graph) -> None:
    a = g.pick()
    b = g.pick(lambda v: v.dims == a.dims)
    op = g.draw(st.sampled_from(["Add", "Sub", "Mul", "Max"]))
    g.add(g.node(op, [a.name, b.name]), a.dims, f"{op} same")


def r_binary_const(g: Graph) -> None:
    """A constant broadcast against `?` dims: its dims there are 1 (or absent)."""
    v = g.pick()
    drop = g.draw(st.integers(0, v.rank - 1))
    shape = tuple(d[0] if v.static(i) and g.draw(st.booleans()) else 1 for i, d in enumerate(v.dims))[drop:]
    op = g.draw(st.sampled_from(["Add", "Mul"]))
    c = g.floats(shape)
    args = [v.name, c] if g.draw(st.booleans()) else [c, v.name]
    g.add(g.node(op, args), v.dims, f"{op} const {shape}")


def r_binary_keepdims(g: Graph) -> None:
    """x - mean(x, axis, keepdims): a `?` dim against a computed 1."""
    v = g.pick()
    axis = g.draw(st.integers(0, v.rank - 1))
    m = g.node("ReduceMean", [v.name], axes=[axis], keepdims=1)
    g.add(g.node("Sub", [v.name, m]), v.dims, f"sub keepdims mean {axis}")


def r_reduce(g: Graph) -> None:
    v = g.pick(lambda v: v.rank >= 2)
    if v is None:
        return
    axis = g.draw(st.integers(0, v.rank - 1))
    keep = g.draw(st.booleans())
    op = g.draw(st.sampled_from(["ReduceSum", "ReduceMax", "ReduceMean"]))
    if op == "ReduceSum":  # opset 13: axes as an input
        y = g.node(op, [v.name, g.ints(axis)], keepdims=int(keep))
    else:
        y = g.node(op, [v.name], axes=[axis], keepdims=int(keep))
    dims = [(1, ()) if i == axis else d for i, d in enumerate(v.dims)] if keep else \
        [d for i, d in enumerate(v.dims) if i != axis]
    g.add(y, dims, f"{op} {axis} keep={keep}")


def r_transpose(g: Graph) -> None:
    v = g.pick(lambda v: v.rank >= 2)
    if v is None:
        return
    perm = g.draw(st.permutations(range(v.rank)))
    g.add(g.node("Transpose", [v.name], perm=list(perm)), [v.dims[p] for p in perm], f"transpose {perm}")


def r_flatten(g: Graph) -> None:
    """Two adjacent dims merged: a Shape-computed target, or 0s and one -1."""
    v = g.pick(lambda v: v.rank >= 2)
    if v is None:
        return
    # half the time, where there is one, a run-time dim merged with a static one beside
    # another run-time dim (BLOOM's [B, 4, S] -> [4*B, S]: a reshape with dim groups)
    mixed = [j for j in range(v.rank - 1) if v.static(j) != v.static(j + 1)
             and any(not v.static(k) for k in range(v.rank) if k not in (j, j + 1))]
    i = g.draw(st.sampled_from(mixed)) if mixed and g.draw(st.booleans()) else g.draw(st.integers(0, v.rank - 2))
    dims = [*v.dims[:i], _mul(v.dims[i], v.dims[i + 1]), *v.dims[i + 2:]]
    if g.draw(st.booleans()):
        shape = g.target(dims)
        how = "shape"
    else:  # 0 copies a leading dim, -1 takes the merged one; static trailing dims written out
        if any(not v.static(j) for j in range(i + 2, v.rank)):
            return
        shape = g.ints(*([0] * i), -1, *(d[0] for d in v.dims[i + 2:]))
        how = "0/-1"
    g.add(g.node("Reshape", [v.name, shape]), dims, f"flatten {i} {how}")


def r_unflatten(g: Graph) -> None:
    """A dim that is a product of sizes split again, with a -1 or all sizes given."""
    v = g.pick(lambda v: any(d[0] * len(d[1]) > 1 or len(d[1]) > 1 for d in v.dims))
    if v is None:
        return
    i = next(j for j, d in enumerate(v.dims) if d[0] * len(d[1]) > 1 or len(d[1]) > 1)
    coef, syms = v.dims[i]
    parts: list[Dim] = [_dim(s) for s in syms]
    if coef != 1:
        parts.append((coef, ()))
    if len(parts) < 2:
        return
    parts = g.draw(st.permutations(parts))
    dims = [*v.dims[:i], *parts, *v.dims[i + 1:]]
    if g.draw(st.booleans()) or any(not v.static(j) for j in range(v.rank) if j != i):
        shape = g.target(dims)
        how = "shape"
    else:  # the first part as -1, the rest from Shape: [-1, S, D] of [B * S, D]
        rest = g.target(dims[i + 1:]) if dims[i + 1:] else None
        head = g.target(dims[:i]) if i else None
        shape = g.node("Concat", [p for p in (head, g.ints(-1), rest) if p], "t", axis=0)
        how = "-1"
    g.add(g.node("Reshape", [v.name, shape]), dims, f"unflatten {i} {how}")


def r_concat(g: Graph) -> None:
    a = g.pick()
    b = g.pick(lambda v: v.dims == a.dims)
    axis = g.draw(st.integers(0, a.rank - 1))
    dims = list(a.dims)
    dims[axis] = (dims[axis][0] * 2, dims[axis][1])
    g.add(g.node("Concat", [a.name, b.name], axis=axis), dims, f"concat {axis}")


def r_slice(g: Graph) -> None:
    v = g.pick()
    axis = g.draw(st.integers(0, v.rank - 1))
    size = v.dims[axis]
    if v.static(axis) and size[0] >= 2:
        start = g.draw(st.integers(0, size[0] - 1))
        step = g.draw(st.sampled_from([1, 2]))
        n = len(range(start, size[0], step))
        y = g.node("Slice", [v.name, g.ints(start), g.ints(size[0]), g.ints(axis), g.ints(step)])
        g.add(y, [(n, ()) if j == axis else d for j, d in enumerate(v.dims)], f"slice static {axis}")
    elif not v.static(axis):  # kept whole: to INT64_MAX or to its own Shape size
        if g.draw(st.booleans()):
            end = g.ints(2**63 - 1)
        else:
            end = g.node("Slice", [g.node("Shape", [v.name], "s"), g.ints(axis), g.ints(axis + 1)], "e")
        g.add(g.node("Slice", [v.name, g.ints(0), end, g.ints(axis)]), v.dims, f"slice whole {axis}")


def r_slice_buffer(g: Graph) -> None:
    """A static buffer's first S rows (`position_ids[:, :seq]`), added to a [.., S, D]."""
    v = g.pick(lambda v: v.rank >= 2 and v.dims[-2] == _dim("S") and v.static(v.rank - 1))
    if v is None:
        return
    buf = g.floats((BUFFER, v.dims[-1][0]))
    rows = g.node("Slice", [buf, g.ints(0), g.size_of("S"), g.ints(0)])
    g.add(g.node("Add", [v.name, rows]), v.dims, "slice buffer to S")


def r_gather_table(g: Graph) -> None:
    table = g.floats((VOCAB, D), scale=1.0)
    g.add(g.node("Gather", [table, "ids"], axis=0), [_dim("B"), _dim("S"), _dim(D)], "gather table")


def r_gather_axis(g: Graph) -> None:
    """One index (0 or -1, counted from the end at run time) along any axis."""
    v = g.pick()
    axis = g.draw(st.integers(0, v.rank - 1))
    index = g.draw(st.sampled_from([0, -1]))
    keep = g.draw(st.booleans())
    ids = g.ints(index) if keep else g.const(np.array(index, np.int64), "k")
    dims = [(1, ()) if j == axis else d for j, d in enumerate(v.dims)] if keep else \
        [d for j, d in enumerate(v.dims) if j != axis]
    if not dims:
        return
    g.add(g.node("Gather", [v.name, ids], axis=axis), dims, f"gather {index} axis {axis}")


def r_matmul_weight(g: Graph) -> None:
    v = g.pick(lambda v: v.rank >= 2 and v.static(v.rank - 1))
    if v is None:
        return
    n = g.draw(st.sampled_from([3, 8]))
    w = g.floats((v.dims[-1][0], n))
    g.add(g.node("MatMul", [v.name, w]), [*v.dims[:-1], (n, ())], "matmul weight")


def r_matmul_batched(g: Graph) -> None:
    """[.., M, K] x [.., K, M]: the second the first transposed (scores of attention)."""
    v = g.pick(lambda v: v.rank >= 2)
    if v is None:
        return
    perm = [*range(v.rank - 2), v.rank - 1, v.rank - 2]
    t = g.node("Transpose", [v.name], perm=perm)
    g.add(g.node("MatMul", [v.name, t]), [*v.dims[:-1], v.dims[-2]], "matmul batched")


def r_softmax(g: Graph) -> None:
    v = g.pick()
    axis = g.draw(st.integers(0, v.rank - 1))
    g.add(g.node("Softmax", [v.name], axis=axis), v.dims, f"softmax {axis}")


def r_layernorm(g: Graph) -> None:
    """Over the last dim: a static scale, or for a `?` row a scale of that length (a
    mean over the other dims, + 1)."""
    v = g.pick(lambda v: v.rank >= 2)
    if v is None:
        return
    if v.static(v.rank - 1):
        scale = g.floats((v.dims[-1][0],))
        scale = g.node("Add", [scale, g.const(np.array(1, np.float32))])
    else:
        mean = g.node("ReduceMean", [v.name], axes=list(range(v.rank - 1)), keepdims=0)
        scale = g.node("Add", [mean, g.const(np.array(1, np.float32))])
    g.add(g.node("LayerNormalization", [v.name, scale], axis=-1, epsilon=1e-5), v.dims, "layernorm")


def r_size_as_data(g: Graph) -> None:
    """Shape(v)[k] divided, reduced modulo, offset or compared (with a constant or with
    B or S), cast to f32, as a factor."""
    v = g.pick()
    k = g.draw(st.integers(0, v.rank - 1))
    n = g.node("Gather", [g.node("Shape", [v.name], "s"), g.const(np.array(k, np.int64))], "n")
    op = g.draw(st.sampled_from(["Div", "Mod", "Add", "Less", "Equal"]))
    if op in ("Less", "Equal", "Add") and g.draw(st.booleans()):  # against another run-time size
        other = g.node("Gather", ["x_shape", g.const(np.array(g.draw(st.sampled_from([0, 1])), np.int64))], "n")
    else:
        other = g.const(np.array(g.draw(st.sampled_from([1, 2, 3])), np.int64))
    y = g.node(op, [n, other])
    if op in ("Less", "Equal"):
        y = g.node("Cast", [y], to=TensorProto.INT64)
    y = g.node("Cast", [y], to=TensorProto.FLOAT)
    g.add(g.node("Mul", [v.name, y]), v.dims, f"size {k} {op}")


def r_range(g: Graph) -> None:
    """Range(0, Shape(v)[last]) (arange(seq)) added along the last dim."""
    v = g.pick()
    n = g.node("Gather", [g.node("Shape", [v.name], "s"), g.const(np.array(v.rank - 1, np.int64))], "n")
    r = g.node("Range", [g.const(np.array(0, np.int64)), n, g.const(np.array(1, np.int64))])
    r = g.node("Cast", [r], to=TensorProto.FLOAT)
    g.add(g.node("Add", [v.name, r]), v.dims, "range last")


def r_flat_index(g: Graph) -> None:
    """BERT's flat index arange(B)[:, None] * S + arange(S), as data, added to x."""
    zero, one = g.const(np.array(0, np.int64)), g.const(np.array(1, np.int64))
    b = g.node("Gather", ["x_shape", g.const(np.array(0, np.int64))], "n")
    s = g.node("Gather", ["x_shape", g.const(np.array(1, np.int64))], "n")
    rows = g.node("Unsqueeze", [g.node("Range", [zero, b, one]), g.ints(1)])
    cols = g.node("Range", [zero, s, one])
    flat = g.node("Add", [g.node("Mul", [rows, s]), cols])
    f = g.node("Cast", [g.node("Unsqueeze", [flat, g.ints(2)])], to=TensorProto.FLOAT)
    g.add(g.node("Add", ["x", g.node("Mul", [f, g.const(np.array(0.1, np.float32))])]),
          [_dim("B"), _dim("S"), _dim(D)], "flat index")


def r_flatten_all(g: Graph) -> None:
    v = g.pick(lambda v: v.rank >= 2)
    if v is None:
        return
    size: Dim = (1, ())
    for d in v.dims:
        size = _mul(size, d)
    g.add(g.node("Reshape", [v.name, g.ints(-1)]), [size], "flatten all")


def r_unsqueeze(g: Graph) -> None:
    """Unsqueeze at a random place, or Squeeze of a size-1 dim."""
    v = g.pick()
    ones = [i for i, d in enumerate(v.dims) if d == (1, ())]
    if ones and v.rank > 1 and g.draw(st.booleans()):
        i = g.draw(st.sampled_from(ones))
        g.add(g.node("Squeeze", [v.name, g.ints(i)]), [d for j, d in enumerate(v.dims) if j != i], f"squeeze {i}")
        return
    if v.rank >= 4:
        return
    i = g.draw(st.integers(0, v.rank))
    g.add(g.node("Unsqueeze", [v.name, g.ints(i)]), [*v.dims[:i], (1, ()), *v.dims[i:]], f"unsqueeze {i}")


def r_expand(g: Graph) -> None:
    """A [1, 1, D] constant (or a keepdims reduction) expanded to Shape(v)."""
    v = g.pick()
    if g.draw(st.booleans()):
        small = g.floats(tuple(1 if not v.static(i) else d[0] for i, d in enumerate(v.dims)))
    else:
        axis = g.draw(st.integers(0, v.rank - 1))
        small = g.node("ReduceMax", [v.name], axes=[axis], keepdims=1)
    g.add(g.node("Expand", [small, g.node("Shape", [v.name], "s")]), v.dims, "expand to Shape")


def r_constant_of_shape(g: Graph) -> None:
    v = g.pick()
    fill = numpy_helper.from_array(np.array([0.5], np.float32))
    c = g.node("ConstantOfShape", [g.node("Shape", [v.name], "s")], value=fill)
    g.add(g.node("Add", [v.name, c]), v.dims, "constant of shape")


def r_causal_mask(g: Graph) -> None:
    """Where(arange(n)[None, :] <= arange(n)[:, None], v, -1e4) on a [.., n, n] value, n
    its run-time last dim (transformers' causal mask)."""
    v = g.pick(lambda v: v.rank >= 2 and v.dims[-1] == v.dims[-2])
    if v is None:
        return
    n = g.node("Gather", [g.node("Shape", [v.name], "s"), g.const(np.array(v.rank - 1, np.int64))], "n")
    r = g.node("Range", [g.const(np.array(0, np.int64)), n, g.const(np.array(1, np.int64))])
    keep = g.node("LessOrEqual", [g.node("Unsqueeze", [r, g.ints(0)]), g.node("Unsqueeze", [r, g.ints(1)])])
    g.add(g.node("Where", [keep, v.name, g.const(np.array(-1e4, np.float32))]), v.dims, "causal mask")


def r_cross_attention(g: Graph) -> None:
    """softmax(v y^T) y for v [.., D] and the input y [T, D]: keys of their own run-time
    length T (rows of T scores)."""
    v = g.pick(lambda v: v.rank >= 2 and v.dims[-1] == _dim(D))
    if v is None:
        return
    scores = g.node("MatMul", [v.name, g.node("Transpose", ["y"], perm=[1, 0])])
    probs = g.node("Softmax", [scores], axis=-1)
    g.add(g.node("MatMul", [probs, "y"]), v.dims, "cross attention over T")


def r_argmax(g: Graph) -> None:
    v = g.pick()
    axis = g.draw(st.integers(0, v.rank - 1))
    op = g.draw(st.sampled_from(["ArgMax", "ArgMin"]))
    i = g.node(op, [v.name], axis=axis, keepdims=1)
    f = g.node("Cast", [i], to=TensorProto.FLOAT)
    g.add(g.node("Add", [v.name, f]), v.dims, f"{op} {axis} added")


def r_reduce_all(g: Graph) -> None:
    """A scalar (every axis reduced, `?` ones too) scaling a value."""
    v = g.pick()
    m = g.node("ReduceMax", [g.node("Abs", [v.name])], keepdims=0)
    w = g.pick()
    g.add(g.node("Div", [w.name, g.node("Add", [m, g.const(np.array(1, np.float32))])]), w.dims, "reduce all")


def r_where_ids(g: Graph) -> None:
    """A mask from the ids (`ids == 0`, [B, S]) unsqueezed against a [B, S, D] value."""
    v = g.pick(lambda v: v.dims == (_dim("B"), _dim("S"), _dim(D)))
    if v is None:
        return
    mask = g.node("Unsqueeze", [g.node("Equal", ["ids", g.const(np.array(0, np.int64))]), g.ints(2)])
    g.add(g.node("Where", [mask, g.const(np.array(0, np.float32)), v.name]), v.dims, "where ids")


def r_split(g: Graph) -> None:
    """Split of a static dim into two parts; the first is kept."""
    v = g.pick(lambda v: any(v.static(i) and v.dims[i][0] >= 2 for i in range(v.rank)))
    if v is None:
        return
    axis = next(i for i in range(v.rank) if v.static(i) and v.dims[i][0] >= 2)
    n = v.dims[axis][0]
    first, second = g.fresh("p"), g.fresh("q")
    g.nodes.append(helper.make_node("Split", [v.name, g.ints(1, n - 1)], [first, second], axis=axis))
    g.add(second, [(n - 1, ()) if j == axis else d for j, d in enumerate(v.dims)], f"split {axis}")


def r_gather_last(g: Graph) -> None:
    """The last element along a `?` axis, its index Shape(v)[k] - 1 (data from a size)."""
    v = g.pick(lambda v: any(not v.static(i) for i in range(v.rank)) and v.rank >= 2)
    if v is None:
        return
    k = next(i for i in range(v.rank) if not v.static(i))
    n = g.node("Gather", [g.node("Shape", [v.name], "s"), g.const(np.array(k, np.int64))], "n")
    last = g.node("Sub", [n, g.const(np.array(1, np.int64))])
    g.add(g.node("Gather", [v.name, last], axis=k), [d for j, d in enumerate(v.dims) if j != k], f"gather last {k}")


RULES = [r_unary, r_binary_same, r_binary_const, r_binary_keepdims, r_reduce, r_transpose, r_flatten, r_unflatten,
         r_concat, r_slice, r_slice_buffer, r_gather_table, r_gather_axis, r_matmul_weight, r_matmul_batched,
         r_softmax, r_layernorm, r_size_as_data, r_range, r_flat_index, r_flatten_all, r_unsqueeze, r_expand,
         r_constant_of_shape, r_causal_mask, r_gather_last, r_cross_attention, r_argmax, r_reduce_all, r_where_ids,
         r_split]


@st.composite
def symbolic_graphs(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    g = Graph(draw)
    g.nodes.append(helper.make_node("Shape", ["x"], ["x_shape"]))
    g.add("x", [_dim("B"), _dim("S"), _dim(D)], "input")
    for _ in range(draw(st.integers(*RULE_COUNT))):
        draw(st.sampled_from(RULES))(g)
    outs = [g.pool[-1]] + ([g.pick()] if g.draw(st.booleans()) else [])
    names = list(dict.fromkeys(v.name for v in outs))
    if names == ["x"]:  # nothing drawn applied: one op, so the graph computes something
        r_unary(g)
        names = [g.pool[-1].name]
    graph = helper.make_graph(
        g.nodes, "symbolic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", D]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, ["B", "S"]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["T", D])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString(), g.rules


SIZES = st.lists(st.tuples(st.integers(1, 4), st.integers(1, 12), st.integers(1, 9)), min_size=2, max_size=3,
                 unique=True)


def check(model: bytes, rules: list[str], sizes: list[tuple[int, int, int]], modes: tuple[str, ...]) -> None:
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    f = find_function(import_onnx(model))
    exes = {mode: fsir.compile(model, fusion=mode) for mode in modes}  # once per mode, for every size
    rng = np.random.default_rng(0)
    for batch, seq, keys in sizes:
        inputs = [rng.standard_normal((batch, seq, D)).astype(np.float32),
                  rng.integers(0, VOCAB, (batch, seq), dtype=np.int64),
                  rng.standard_normal((keys, D)).astype(np.float32)]
        want = run_function(f, inputs)
        exact = run_function_float64(f, inputs)
        onnx_want = session.run(None, dict(zip(("x", "ids", "y"), inputs)))
        where = f"rules {rules} at (B, S, T) = {(batch, seq, keys)}"
        for i, (w, o) in enumerate(zip(want, onnx_want, strict=True)):
            np.testing.assert_allclose(w, o, rtol=1e-4, atol=1e-4, err_msg=f"output {i}: reference vs onnxruntime, {where}")
        for mode, exe in exes.items():
            got = exe.run(inputs, device="sim")
            assert len(got) == len(want)
            for i, (gv, w, e) in enumerate(zip(got, want, exact)):
                c = compare(gv, w, exact=e)
                assert c.ok, f"{mode} output {i}: {c}; {where}"


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(graph=symbolic_graphs(), sizes=SIZES, mode=st.sampled_from(MODES))
def test_symbolic_graph_one_compile_every_size(graph: tuple[bytes, list[str]], sizes: list[tuple[int, int, int]],
                                               mode: str):
    check(*graph, sizes, (mode,))


@pytest.mark.full
@settings(max_examples=FULL_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(graph=symbolic_graphs(), sizes=SIZES)
def test_symbolic_graph_every_mode_many(graph: tuple[bytes, list[str]], sizes: list[tuple[int, int, int]]):
    check(*graph, sizes, MODES)


def _reshape_model(x_dims: list, nodes: list, inits: list) -> bytes:
    graph = helper.make_graph(
        nodes, "reshape", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _check_reshape(model: bytes, shapes: list[tuple[int, ...]]) -> None:
    """Every mode, compiled once, against onnxruntime and the reference interpreter."""
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    f = find_function(import_onnx(model))
    exes = {mode: fsir.compile(model, fusion=mode) for mode in MODES}
    for shape in shapes:
        x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        np.testing.assert_allclose(run_function(f, [x])[0], want, rtol=1e-5, atol=1e-6, err_msg=f"reference at {shape}")
        for mode, exe in exes.items():
            (got,) = exe.run([x], device="sim")
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{mode} at {shape}")


def test_flatten_to_two_products():
    """[B, S, 4] to [B, 4 * S] then a Softmax over the merged rows: two run-time sizes,
    one of them a new product; graph.reshape states it with dim groups ([B] -> [B],
    [S, 4] -> [4*S])."""
    model = _reshape_model(["B", "S", D], [helper.make_node("Reshape", ["x", "target"], ["y"], name="merge"),
                                           helper.make_node("Softmax", ["y"], ["z"], axis=1)],
                           [("target", [0, -1])])
    assert "groups = array<i64: 1, 1, 2, 1>" in str(import_onnx(model))
    _check_reshape(model, [(1, 1, D), (2, 3, D), (3, 7, D)])


def test_bloom_heads_merged_into_the_batch_and_split_back():
    """BLOOM's attention: [B, 4, S] -> [B*4, 1, S] (targets from Shape gathers), a
    Softmax over S, then back to [B, 4, S] and a Softmax over the heads."""
    nodes = [helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("Gather", ["sh", "i0"], ["b"]), helper.make_node("Gather", ["sh", "i2"], ["s"]),
             helper.make_node("Mul", ["b", "four"], ["b4"]),
             helper.make_node("Concat", ["b4", "one", "s"], ["t"], axis=0),
             helper.make_node("Reshape", ["x", "t"], ["f"]),
             helper.make_node("Softmax", ["f"], ["e"], axis=2),
             helper.make_node("Concat", ["b", "four", "s"], ["t2"], axis=0),
             helper.make_node("Reshape", ["e", "t2"], ["z0"]),
             helper.make_node("Softmax", ["z0"], ["z"], axis=1)]
    model = _reshape_model(["B", 4, "S"], nodes, [("i0", [0]), ("i2", [2]), ("four", [4]), ("one", [1])])
    text = str(import_onnx(model))
    assert "groups = array<i64: 2, 1, 1, 2>" in text and "groups = array<i64: 1, 2, 2, 1>" in text
    _check_reshape(model, [(1, 4, 1), (2, 4, 3), (3, 4, 7)])


def test_reshape_swapping_run_time_sizes_refused():
    """[B, S, 4] to [S, B, 4] (a target from Shape gathers): the two run-time sizes are
    one group of two `?` dims, which no size determines, so it is refused at the node."""
    nodes = [helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("Gather", ["sh", "i0"], ["b"]), helper.make_node("Gather", ["sh", "i1"], ["s"]),
             helper.make_node("Concat", ["s", "b", "four"], ["t"], axis=0),
             helper.make_node("Reshape", ["x", "t"], ["z"], name="swap")]
    model = _reshape_model(["B", "S", D], nodes, [("i0", [0]), ("i1", [1]), ("four", [D])])
    with pytest.raises(UserError, match=r"node 'swap' \(Reshape\): cannot reshape \?x\?x4 to \[S, B, 4\]"):
        fsir.compile(model)


def test_gather_at_a_size_minus_one():
    """`x[:, Shape(x)[1] - 1]`: an index computed from a run-time size is data (it
    folds to no constant), gathered at run time in every mode."""
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Gather", ["shape", "one"], ["seq"]),
             helper.make_node("Sub", ["seq", "one"], ["last"]),
             helper.make_node("Gather", ["x", "last"], ["y"], axis=1)]
    graph = helper.make_graph(
        nodes, "last", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", D])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(1, np.int64), "one")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    for mode in MODES:
        exe = fsir.compile(model, fusion=mode)
        for batch, seq in [(1, 1), (3, 5)]:
            x = np.random.default_rng(seq).standard_normal((batch, seq, D)).astype(np.float32)
            (got,) = exe.run([x], device="sim")
            np.testing.assert_array_equal(got, x[:, -1], err_msg=f"{mode} at {(batch, seq)}")


MIDDLE = """
func.func @f(%x: tensor<?x?x4xf32>) -> tensor<1x?x4xf32> {
  %i = graph.constant dense<1> : tensor<1xi64>
  %g = graph.gather %x, %i : (tensor<?x?x4xf32>, tensor<1xi64>) -> tensor<1x?x4xf32>
  %m = graph.reduce max %g dims [1] : (tensor<1x?x4xf32>) -> tensor<1x4xf32>
  %mb = graph.broadcast %m dims [0, 2] like %g : (tensor<1x4xf32>, tensor<1x?x4xf32>) -> tensor<1x?x4xf32>
  %d = graph.sub %g, %mb : tensor<1x?x4xf32>
  func.return %d : tensor<1x?x4xf32>
}
"""


def test_max_over_a_middle_run_time_dim_then_its_broadcast():
    """x[1] - max(x[1], axis 0) on [1, ?, 4] (a Softmax over the sequence of one
    sample, as the property test drew it): stitch fused the subtraction into the row
    kernel of the reduction, pairing the `?` dim with the rows' size-1 dim, and wrote
    inf past the first sequence position."""
    for mode in MODES:
        exe = fsir.compile(MIDDLE, fusion=mode)
        for seq in (1, 3, 40):
            x = np.random.default_rng(seq).standard_normal((2, seq, D)).astype(np.float32)
            (got,) = exe.run([x], device="sim")
            np.testing.assert_allclose(got, x[1:] - x[1:].max(axis=1, keepdims=True), rtol=1e-6, atol=1e-6,
                                       err_msg=f"{mode} at seq {seq}")


GQA = """
func.func @f(%x: tensor<?x2x2x?x4xf32>) -> tensor<?x4x?x4xf32> {
  %e = graph.exp %x : tensor<?x2x2x?x4xf32>
  %m = graph.reshape %e : (tensor<?x2x2x?x4xf32>) -> tensor<?x4x?x4xf32>
  %s = graph.reduce sum %m dims [3] : (tensor<?x4x?x4xf32>) -> tensor<?x4x?xf32>
  %sb = graph.broadcast %s dims [0, 1, 2] like %m : (tensor<?x4x?xf32>, tensor<?x4x?x4xf32>) -> tensor<?x4x?x4xf32>
  %y = graph.div %m, %sb : tensor<?x4x?x4xf32>
  func.return %y : tensor<?x4x?x4xf32>
}
"""


def test_reshape_keeps_run_time_dims_around_static_merges():
    """[B, 2, 2, S, 4] -> [B, 4, S, 4] (LLaMA's grouped key/value heads merged): the
    `?` dims keep their sizes, the static dims between them merge; every mode, two
    sizes of each `?` dim."""
    for mode in MODES:
        exe = fsir.compile(GQA, fusion=mode)
        for batch, seq in [(1, 5), (3, 2)]:
            x = np.random.default_rng(seq).standard_normal((batch, 2, 2, seq, D)).astype(np.float32)
            (got,) = exe.run([x], device="sim")
            e = np.exp(x).reshape(batch, 4, seq, D)
            np.testing.assert_allclose(got, e / e.sum(axis=3, keepdims=True), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{mode} at {(batch, seq)}")
