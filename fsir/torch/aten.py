"""Core ATen FX graphs to the graph dialect: one converter per ATen op (`ATEN_TO_GRAPH`).

AOTAutograd hands `fsir.torch.fsir_backend` an FX graph of core ATen ops (after
`torch._decomp.core_aten_decompositions()`); `convert_graph` walks it once, node by node,
and emits graph ops through `GraphBuilder` (the ONNX and HLO importers' helper). A
converter gets the context, the node's arguments with FX nodes replaced by their graph
values, and its keyword arguments; it returns the node's value, or a tuple of values for
ops with several results (`operator.getitem` picks one). Result shapes and element types
come from the node's FakeTensor (`node.meta["val"]`), so type promotion and `-1` sizes
are PyTorch's own. Sizes dynamo made symbolic (`dynamic=True`) become `?` dims named by
their symbol (`#graph.dims<[s0, 64]>` on the arguments).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import fx
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, IntegerType, ModuleOp
from xdsl.ir import Attribute, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import DYN, shape_of, tensor
from fsir.frontend.builder import GraphBuilder
from fsir.transforms.symbolic_dims import set_argument_dims

__all__ = ["ATEN_TO_GRAPH", "Unsupported", "convert_graph", "unsupported_ops"]

aten = torch.ops.aten

ELEMENT_TYPES: dict[torch.dtype, Attribute] = {
    torch.float32: Float32Type(),
    torch.float16: Float16Type(),
    torch.bfloat16: BFloat16Type(),
    torch.float64: Float64Type(),
    torch.int64: IntegerType(64),
    torch.int32: IntegerType(32),
    torch.bool: IntegerType(1),
}

Result = SSAValue | tuple[SSAValue | None, ...]
Converter = Callable[["Ctx", tuple[Any, ...], dict[str, Any]], Result]


class Unsupported(Exception):
    """The FX graph holds something fsir cannot compile; `what` names it."""

    def __init__(self, what: str, why: str = ""):
        super().__init__(f"{what}{': ' + why if why else ''}")
        self.what = what


@dataclass
class Ctx:
    """The builder and the FX node being converted (its FakeTensor gives the result type)."""

    b: GraphBuilder
    node: fx.Node | None = None
    values: dict[fx.Node, Any] = field(default_factory=dict)

    @property
    def val(self) -> Any:
        assert self.node is not None
        return self.node.meta["val"]

    def out_elem(self, index: int = 0) -> Attribute:
        v = self.val
        return element_type((v[index] if isinstance(v, (tuple, list)) else v).dtype)

    def out_shape(self, index: int = 0) -> list[int]:
        v = self.val
        return sizes((v[index] if isinstance(v, (tuple, list)) else v).shape)


def element_type(dtype: torch.dtype) -> Attribute:
    if dtype not in ELEMENT_TYPES:
        raise Unsupported(f"dtype {dtype}")
    return ELEMENT_TYPES[dtype]


def sizes(shape: Sequence[Any]) -> list[int]:
    """A FakeTensor's shape with symbolic sizes as `?`."""
    return [int(d) if isinstance(d, int) else DYN for d in shape]


def symbols(shape: Sequence[Any]) -> list[int | str] | None:
    """The shape with each symbolic size as its symbol's name (None when static or when
    a size is an expression rather than one symbol)."""
    out: list[int | str] = []
    for d in shape:
        if isinstance(d, int):
            out.append(d)
            continue
        expr = d.node.expr
        if not expr.is_Symbol:
            return None
        out.append(str(expr))
    return out if any(isinstance(d, str) for d in out) else None


# -- helpers ---------------------------------------------------------------------------

def is_half_precision(b: GraphBuilder, x: SSAValue) -> bool:
    e = b.elem(x)
    return isinstance(e, (Float16Type, BFloat16Type))


def _in_f32(fn: Callable[[GraphBuilder, SSAValue], SSAValue]) -> Callable[[GraphBuilder, SSAValue], SSAValue]:
    """`fn` computed in f32 for f16/bf16 inputs and rounded once (as PyTorch's kernels do)."""

    def run(b: GraphBuilder, x: SSAValue) -> SSAValue:
        if not is_half_precision(b, x):
            return fn(b, x)
        return b.convert(fn(b, b.convert(x, graph.f32)), b.elem(x))

    return run


def _as_value(cx: Ctx, v: Any, elem: Attribute, like: SSAValue | None) -> SSAValue:
    """A graph value from a converter argument: a value (converted to `elem`) or a Python
    scalar (a constant of `elem`)."""
    if isinstance(v, SSAValue):
        return cx.b.convert(v, elem)
    if isinstance(v, (bool, int, float)):
        return cx.b.constant(torch.tensor(v).numpy(), elem) if like is None else _scalar(cx.b, v, elem, like)
    raise Unsupported(f"operand {v!r}")


def _scalar(b: GraphBuilder, v: float, elem: Attribute, like: SSAValue) -> SSAValue:
    import numpy as np

    return b.constant(np.array(v), elem) if not shape_of(like.type) else b.scalar_like(v, b.convert(like, elem))


def _bcast_to(cx: Ctx, v: SSAValue, shape: list[int], peers: Sequence[SSAValue]) -> SSAValue:
    """`v` broadcast (numpy rules) to `shape`; a `?` dim takes its size from a peer of
    that shape."""
    if list(shape_of(v.type)) == shape:
        return v
    like = None
    if DYN in shape:
        like = next((p for p in peers if list(shape_of(p.type)) == shape), None)
        if like is None:
            raise Unsupported(_name(cx), "a broadcast to a shape with `?` dims that no operand has")
    return cx.b.broadcast_to(v, shape, like)


def _name(cx: Ctx) -> str:
    return str(cx.node.target) if cx.node is not None else "?"


def _elementwise(cx: Ctx, name: str, *args: Any) -> SSAValue:
    """graph op `name` on `args` (values or scalars) in the node's result type, broadcast
    to its result shape."""
    elem, shape = cx.out_elem(), cx.out_shape()
    like = next((a for a in args if isinstance(a, SSAValue) and list(shape_of(a.type)) == shape), None)
    vs = [_as_value(cx, a, elem, like) for a in args]
    vs = [_bcast_to(cx, v, shape, vs) for v in vs]
    return cx.b.ew(name, *vs)


def ew(name: str) -> Converter:
    def convert(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
        return _elementwise(cx, name, *args)

    return convert


def scaled(name: str) -> Converter:
    """add/sub with `alpha`: a op (alpha * b)."""

    def convert(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
        a, c = args[0], args[1]
        alpha = kw.get("alpha", args[2] if len(args) > 2 else 1)
        if alpha != 1:
            c = _elementwise(cx, "mul", c, alpha) if isinstance(c, SSAValue) else c * alpha
        return _elementwise(cx, name, a, c)

    return convert


def unary(fn: Callable[[GraphBuilder, SSAValue], SSAValue]) -> Converter:
    def convert(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
        return fn(cx.b, args[0])

    return convert


def _relu(b: GraphBuilder, x: SSAValue) -> SSAValue:
    return b.ew("max", x, b.scalar_like(0, x))


@_in_f32
def _gelu_erf(b: GraphBuilder, x: SSAValue) -> SSAValue:
    t = b.ew("erf", b.ew("mul", x, b.scalar_like(1 / math.sqrt(2), x)))
    return b.ew("mul", b.ew("mul", x, b.scalar_like(0.5, x)), b.ew("add", t, b.scalar_like(1, x)))


@_in_f32
def _gelu_tanh(b: GraphBuilder, x: SSAValue) -> SSAValue:
    cube = b.ew("mul", b.ew("mul", x, x), x)
    inner = b.ew("add", x, b.ew("mul", cube, b.scalar_like(0.044715, x)))
    t = b.ew("tanh", b.ew("mul", inner, b.scalar_like(math.sqrt(2 / math.pi), x)))
    return b.ew("mul", b.ew("mul", x, b.scalar_like(0.5, x)), b.ew("add", t, b.scalar_like(1, x)))


def gelu(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    x, rest = args[0], args[1:]
    approximate = kw.get("approximate", rest[0] if rest else "none")
    return (_gelu_tanh if approximate == "tanh" else _gelu_erf)(cx.b, x)


def _dims(dims: int | Sequence[int] | None, rank: int) -> list[int]:
    if dims is None:
        return list(range(rank))
    return sorted(d % rank for d in ([dims] if isinstance(dims, int) else dims)) or list(range(rank))


def _keep(cx: Ctx, r: SSAValue, shape: Sequence[int], dims: Sequence[int], like: SSAValue) -> SSAValue:
    """A reduction's result with its reduced dims back as 1s (keepdim)."""
    out = [1 if d in dims else s for d, s in enumerate(shape)]
    if DYN not in out:
        return cx.b.reshape(r, out)
    return cx.b.emit(graph.ReshapeOp, [r], tensor(cx.b.elem(r), out))


def _back(cx: Ctx, r: SSAValue, x: SSAValue, dims: Sequence[int]) -> SSAValue:
    """A reduction of `x` over `dims` broadcast back to `x`'s shape."""
    shape = shape_of(x.type)
    keep = [d for d in range(len(shape)) if d not in dims]
    return cx.b.broadcast(r, shape, keep, like=x if DYN in shape else None)


def _count(cx: Ctx, x: SSAValue, dims: Sequence[int], like: SSAValue) -> SSAValue:
    shape = shape_of(x.type)
    if DYN in [shape[d] for d in dims]:
        raise Unsupported(_name(cx), "a mean over a `?` dim")
    return cx.b.scalar_like(math.prod(shape[d] for d in dims), like)


def reduction(kind: str, mean: bool = False) -> Converter:
    """amax/amin/sum/mean over dims (keepdim), in the node's result type."""

    def convert(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
        x = args[0]
        rank = len(shape_of(x.type))
        dims = _dims(kw.get("dim", args[1] if len(args) > 1 else None), rank)
        keepdim = kw.get("keepdim", args[2] if len(args) > 2 else False)
        elem = cx.out_elem()
        acc = graph.f32 if is_half_precision(cx.b, x) or (mean and not graph.is_float(cx.b.elem(x))) else elem
        xv = cx.b.convert(x, acc)
        r = cx.b.reduce(kind, xv, dims)
        if mean:
            r = cx.b.ew("div", r, _count(cx, xv, dims, r))
        r = cx.b.convert(r, elem)
        return _keep(cx, r, shape_of(x.type), dims, x) if keepdim else r

    return convert


def softmax(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    x, dim = args[0], args[1]
    dims = _dims(dim, len(shape_of(x.type)))

    @_in_f32
    def run(b: GraphBuilder, x: SSAValue) -> SSAValue:
        e = b.ew("exp", b.ew("sub", x, _back(cx, b.reduce("max", x, dims), x, dims)))
        return b.ew("div", e, _back(cx, b.reduce("sum", e, dims), x, dims))

    return cx.b.convert(run(cx.b, x), cx.out_elem())


def layer_norm(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    """native_layer_norm(x, normalized_shape, weight, bias, eps) -> (y, mean, rstd)."""
    x, normalized, weight, bias, eps = args
    b = cx.b
    shape = list(shape_of(x.type))
    dims = list(range(len(shape) - len(normalized), len(shape)))
    xf = b.convert(x, graph.f32) if is_half_precision(b, x) else x
    mean = b.ew("div", b.reduce("sum", xf, dims), _count(cx, xf, dims, b.reduce("sum", xf, dims)))
    xc = b.ew("sub", xf, _back(cx, mean, xf, dims))
    var = b.reduce("sum", b.ew("mul", xc, xc), dims)
    var = b.ew("div", var, _count(cx, xf, dims, var))
    rstd = b.ew("rsqrt", b.ew("add", var, b.scalar_like(eps, var)))
    y = b.ew("mul", xc, _back(cx, rstd, xf, dims))
    for param, name in ((weight, "mul"), (bias, "add")):
        if param is not None:
            y = b.ew(name, y, _bcast_to(cx, b.convert(param, b.elem(y)), shape, [y]))
    y = b.convert(y, b.elem(x))
    stat_elem = cx.out_elem(1)
    return (y, b.convert(_keep(cx, mean, shape, dims, x), stat_elem),
            b.convert(_keep(cx, rstd, shape, dims, x), stat_elem))


def channel_vector(cx: Ctx, v: SSAValue, like: SSAValue) -> SSAValue:
    """A per-channel vector [C] broadcast along dim 1 of `like` ([N, C, ...])."""
    shape = shape_of(like.type)
    return cx.b.broadcast(cx.b.convert(v, cx.b.elem(like)), shape, [1], like=like if DYN in shape else None)


def batch_norm_eval(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    """_native_batch_norm_legit_no_training(x, weight, bias, running_mean, running_var,
    momentum, eps) -> (y, empty, empty): (x - mean) * rsqrt(var + eps) * weight + bias."""
    x, weight, bias, mean, var, _momentum, eps = args
    b = cx.b
    xf = b.convert(x, graph.f32) if is_half_precision(b, x) else x
    scale = b.ew("rsqrt", b.ew("add", b.convert(var, b.elem(xf)), b.scalar_like(eps, b.convert(var, b.elem(xf)))))
    if weight is not None:
        scale = b.ew("mul", scale, b.convert(weight, b.elem(xf)))
    y = b.ew("mul", b.ew("sub", xf, channel_vector(cx, mean, xf)), channel_vector(cx, scale, xf))
    if bias is not None:
        y = b.ew("add", y, channel_vector(cx, bias, xf))
    return (b.convert(y, b.elem(x)), None, None)


def convolution(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    """convolution(x, w, bias, stride, padding, dilation, transposed, output_padding, groups)."""
    x, w, bias, stride, padding, dilation, transposed, _output_padding, groups = args
    if transposed:
        raise Unsupported("aten.convolution.default", "transposed convolutions")
    n = len(stride)
    y = cx.b.conv(x, w, stride, padding, padding, dilation, [1] * n, groups)
    return y if bias is None else cx.b.ew("add", y, channel_vector(cx, bias, y))


def _dot(cx: Ctx, a: SSAValue, c: SSAValue) -> SSAValue:
    return cx.b.convert(cx.b.dot(a, c), cx.out_elem())


def mm(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    return _dot(cx, args[0], args[1])


def addmm(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    """addmm(bias, a, b, beta=1, alpha=1) = beta * bias + alpha * (a @ b)."""
    bias, a, c = args[:3]
    beta, alpha = kw.get("beta", 1), kw.get("alpha", 1)
    y = _dot(cx, a, c)
    if alpha != 1:
        y = _elementwise(cx, "mul", y, alpha)
    if beta != 0:
        y = _elementwise(cx, "add", y, bias if beta == 1 else _elementwise(cx, "mul", bias, beta))
    return y


def reshape(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    shape = cx.out_shape()
    x = args[0]
    if DYN in shape:
        return cx.b.emit(graph.ReshapeOp, [x], tensor(cx.b.elem(x), shape))
    return cx.b.reshape(x, shape)


def expand(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    return _bcast_to(cx, args[0], cx.out_shape(), [])


def permute(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    x, perm = args[0], args[1]
    return cx.b.transpose(x, [p % len(shape_of(x.type)) for p in perm])


def transpose(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    x = args[0]
    rank = len(shape_of(x.type))
    perm = list(range(rank))
    if rank >= 2:
        d0, d1 = (args[1] % rank, args[2] % rank) if len(args) > 2 else (0, 1)
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return cx.b.transpose(x, perm)


def identity(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    return args[0]


def to_copy(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    return cx.b.convert(args[0], cx.out_elem())


def _static(cx: Ctx, x: SSAValue, dim: int) -> int:
    size = shape_of(x.type)[dim]
    if size == DYN:
        raise Unsupported(_name(cx), "slicing a `?` dim")
    return size


def slice_(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    """slice.Tensor(x, dim=0, start=None, end=None, step=1)."""
    x = args[0]
    rank = len(shape_of(x.type))
    dim, start, end, step = (list(args[1:]) + [0, None, None, 1][len(args) - 1:])[:4]
    dim %= rank
    size = _static(cx, x, dim)
    lo, hi, st = slice(start, end, step).indices(size)
    start_, limit, strides = [0] * rank, list(shape_of(x.type)), [1] * rank
    if DYN in shape_of(x.type):  # graph.slice is static: rows of the sliced dim by a gather (as ONNX Slice)
        import numpy as np

        return cx.b.take(x, cx.b.constant(np.arange(lo, max(hi, lo), st), IntegerType(64)), dim)
    start_[dim], limit[dim], strides[dim] = lo, max(hi, lo), st
    return cx.b.slice(x, start_, limit, strides)


def split_with_sizes(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    x, parts = args[0], args[1]
    rank = len(shape_of(x.type))
    dim = (args[2] if len(args) > 2 else kw.get("dim", 0)) % rank
    out, at = [], 0
    for n in parts:
        out.append(slice_(cx, (x, dim, at, at + n, 1), {}))
        at += n
    return tuple(out)


def cat(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    vs = [cx.b.convert(v, cx.out_elem()) for v in args[0] if 0 not in shape_of(v.type)]
    dim = args[1] if len(args) > 1 else kw.get("dim", 0)
    return cx.b.concat(vs, dim % len(cx.out_shape()))


def where(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    c, a, x = args
    shape, elem = cx.out_shape(), cx.out_elem()
    like = next((v for v in args if isinstance(v, SSAValue) and list(shape_of(v.type)) == shape), None)
    vs = [_as_value(cx, v, elem, like) for v in (a, x)]
    c = _bcast_to(cx, c, shape, vs)
    return cx.b.select(c, *(_bcast_to(cx, v, shape, [c, *vs]) for v in vs))


def compare(direction: str) -> Converter:
    def convert(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
        a, c = args
        shape = cx.out_shape()
        elem = next(cx.b.elem(v) for v in args if isinstance(v, SSAValue))
        like = next((v for v in args if isinstance(v, SSAValue) and list(shape_of(v.type)) == shape), None)
        vs = [_as_value(cx, v, elem, like) for v in (a, c)]
        return cx.b.compare(direction, *(_bcast_to(cx, v, shape, vs) for v in vs))

    return convert


def full(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    import numpy as np

    shape = cx.out_shape()
    if DYN in shape:
        raise Unsupported(_name(cx), "a constant of symbolic shape")
    value = args[-1]  # full(size, value) or scalar_tensor(value)
    return cx.b.constant(np.full(shape, value), cx.out_elem())


def embedding(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    return cx.b.gather(args[0], args[1])


_BAG_KINDS = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    """_embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
    per_sample_weights, include_last_offset, padding_idx) -> (bags, offset2bag,
    bag_size, max_indices): a gather of the rows and a segment reduction over offsets."""
    names = ("scale_grad_by_freq", "mode", "sparse", "per_sample_weights", "include_last_offset", "padding_idx")
    extra = dict(zip(names, args[3:])) | kw
    weight, ids, offsets = args[:3]
    if extra.get("per_sample_weights") is not None or extra.get("padding_idx", -1) not in (-1, None):
        raise Unsupported("aten._embedding_bag.default", "per_sample_weights or padding_idx")
    if len(shape_of(ids.type)) != 1:
        raise Unsupported("aten._embedding_bag.default", "2-D indices")
    b = cx.b
    if extra.get("include_last_offset", False):
        n = _static(cx, offsets, 0)
        offsets = b.slice(offsets, [0], [n - 1])
    kind = _BAG_KINDS[int(extra.get("mode", 0))]
    return (b.emit(graph.SegmentReduceOp, [b.gather(weight, ids), offsets],
                   kind=graph.SegmentKindAttr(graph.SegmentKind(kind))), None, None, None)


def getitem(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    parts, i = args
    v = parts[i]
    if v is None:
        source = cx.node.args[0] if cx.node is not None else None
        raise Unsupported(f"{source.target if isinstance(source, fx.Node) else '?'} result {i}")
    return v


def sym_size(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """Arithmetic on symbolic sizes (view sizes under `dynamic=True`): the SymInt itself,
    read only as a `?` size (shapes come from the FakeTensors)."""
    return cx.val


def pow_(cx: Ctx, args: tuple[Any, ...], kw: dict[str, Any]) -> Result:
    x, e = args
    if e == 2:
        return _elementwise(cx, "mul", x, x)
    if e == 0.5:
        return unary(lambda b, v: b.ew("sqrt", v))(cx, (x,), {})
    return _elementwise(cx, "pow", x, float(e))


ATEN_TO_GRAPH: dict[Any, Converter] = {
    # matrix products
    aten.mm.default: mm,
    aten.bmm.default: mm,
    aten.matmul.default: mm,
    aten.addmm.default: addmm,
    aten.convolution.default: convolution,
    # elementwise (numpy broadcasting, PyTorch's type promotion via the node's FakeTensor)
    aten.add.Tensor: scaled("add"),
    aten.add.Scalar: scaled("add"),
    aten.sub.Tensor: scaled("sub"),
    aten.sub.Scalar: scaled("sub"),
    aten.rsub.Scalar: lambda cx, a, kw: _elementwise(cx, "sub", a[1], a[0]),
    aten.mul.Tensor: ew("mul"),
    aten.mul.Scalar: ew("mul"),
    aten.div.Tensor: ew("div"),
    aten.div.Scalar: ew("div"),
    aten.maximum.default: ew("max"),
    aten.minimum.default: ew("min"),
    aten.pow.Tensor_Scalar: pow_,
    aten.neg.default: unary(lambda b, x: b.ew("neg", x)),
    aten.abs.default: unary(lambda b, x: b.ew("abs", x)),
    aten.exp.default: unary(_in_f32(lambda b, x: b.ew("exp", x))),
    aten.log.default: unary(_in_f32(lambda b, x: b.ew("log", x))),
    aten.tanh.default: unary(_in_f32(lambda b, x: b.ew("tanh", x))),
    aten.erf.default: unary(_in_f32(lambda b, x: b.ew("erf", x))),
    aten.sqrt.default: unary(_in_f32(lambda b, x: b.ew("sqrt", x))),
    aten.rsqrt.default: unary(_in_f32(lambda b, x: b.ew("rsqrt", x))),
    aten.sigmoid.default: unary(_in_f32(lambda b, x: b.ew("sigmoid", x))),
    aten.relu.default: unary(_relu),
    aten.gelu.default: gelu,
    aten.where.self: where,
    aten.eq.Tensor: compare("eq"),
    aten.eq.Scalar: compare("eq"),
    aten.ne.Scalar: compare("ne"),
    aten.lt.Scalar: compare("lt"),
    aten.gt.Scalar: compare("gt"),
    aten._to_copy.default: to_copy,
    # reductions and normalizations
    aten.amax.default: reduction("max"),
    aten.amin.default: reduction("min"),
    aten.sum.dim_IntList: reduction("sum"),
    aten.mean.dim: reduction("sum", mean=True),
    aten._softmax.default: softmax,
    aten.native_layer_norm.default: layer_norm,
    aten._native_batch_norm_legit_no_training.default: batch_norm_eval,
    # layout
    aten.view.default: reshape,
    aten._unsafe_view.default: reshape,
    aten.reshape.default: reshape,
    aten.unsqueeze.default: reshape,
    aten.squeeze.dim: reshape,
    aten.squeeze.dims: reshape,
    aten.expand.default: expand,
    aten.permute.default: permute,
    aten.transpose.int: transpose,
    aten.t.default: transpose,
    aten.clone.default: identity,
    aten.alias.default: identity,
    aten.detach.default: identity,
    aten.slice.Tensor: slice_,
    aten.split_with_sizes.default: split_with_sizes,
    aten.cat.default: cat,
    # constants and lookups
    aten.full.default: full,
    aten.scalar_tensor.default: full,
    aten.embedding.default: embedding,
    aten._embedding_bag.default: embedding_bag,
    operator.getitem: getitem,
    # symbolic sizes (dynamic=True)
    aten.sym_size.int: sym_size,
    operator.mul: sym_size,
    operator.add: sym_size,
    operator.sub: sym_size,
    operator.floordiv: sym_size,
}


def op_name(target: Any) -> str:
    """`aten.gelu.default` for an OpOverload, the function's name otherwise."""
    return str(target) if isinstance(target, torch._ops.OpOverload) else getattr(target, "__name__", str(target))


def unsupported_ops(gm: fx.GraphModule) -> list[str]:
    """The ops of `gm` that no converter handles, in graph order, each once."""
    seen: dict[str, None] = {}
    for n in gm.graph.nodes:
        if n.op in ("call_module", "call_method") or (n.op == "call_function" and n.target not in ATEN_TO_GRAPH):
            seen[op_name(n.target)] = None
    return list(seen)


def _map(a: Any, values: dict[fx.Node, Any]) -> Any:
    if isinstance(a, fx.Node):
        return values[a]
    if isinstance(a, (list, tuple)):
        return type(a)(_map(x, values) for x in a)
    return a


def _concrete(a: Any) -> Any:
    """Sizes in a node's arguments: SymInts stand for `?` dims (their values are read
    from the FakeTensors, never from here)."""
    if isinstance(a, torch.SymInt):
        return DYN
    if isinstance(a, (list, tuple)):
        return type(a)(_concrete(x) for x in a)
    return a


@dataclass(frozen=True)
class Converted:
    """A graph module: the fsir module, which placeholders are its arguments (the others
    are SymInts dynamo passes for symbolic sizes) and where each FX output comes from."""

    module: ModuleOp
    tensor_args: tuple[int, ...]
    outputs: tuple[int | None, ...]  # FX output i is fsir result outputs[i] (None: a None output)


def convert_graph(gm: fx.GraphModule, name: str = "main") -> Converted:
    """`gm` as a graph-dialect module; raises `Unsupported` naming the first op that
    cannot be converted."""
    cx = Ctx(GraphBuilder("<torch.fx>"))
    arg_dims: list[graph.DimsAttr | None] = []
    tensor_args: list[int] = []
    results: list[SSAValue | None] = []
    placeholders = 0
    for node in gm.graph.nodes:
        cx.node = node
        if node.op == "placeholder":
            val = node.meta.get("val")
            if isinstance(val, torch.Tensor):
                cx.values[node] = cx.b.add_arg(tensor(element_type(val.dtype), sizes(val.shape)), node.name)
                tensor_args.append(placeholders)
                names = symbols(val.shape)
                arg_dims.append(graph.DimsAttr(names) if names else None)
            elif isinstance(val, (torch.SymInt, int)):
                cx.values[node] = val
            else:
                raise Unsupported(f"input {node.name} of type {type(val).__name__}")
            placeholders += 1
        elif node.op == "call_function":
            fn = ATEN_TO_GRAPH.get(node.target)
            if fn is None:
                raise Unsupported(op_name(node.target))
            args = _concrete(_map(node.args, cx.values))
            kwargs = {k: _concrete(_map(v, cx.values)) for k, v in node.kwargs.items()}
            try:
                cx.values[node] = fn(cx, args, kwargs)
            except Unsupported:
                raise
            except Exception as err:  # a converter's or a verifier's complaint: that op is not supported
                raise Unsupported(op_name(node.target), str(err)) from err
        elif node.op == "output":
            outs = node.args[0]
            for o in outs if isinstance(outs, (list, tuple)) else [outs]:
                if o is None:  # a backward graph's gradient of an input that needs none
                    results.append(None)
                    continue
                v = cx.values.get(o) if isinstance(o, fx.Node) else None
                if not isinstance(v, SSAValue):
                    raise Unsupported(f"output {o}")
                results.append(v)
        else:
            raise Unsupported(f"FX node {node.op} {node.target}")
    unique: list[SSAValue] = list(dict.fromkeys(r for r in results if r is not None))
    module = cx.b.finish(name, unique)
    set_argument_dims(module, arg_dims)
    return Converted(module, tuple(tensor_args), tuple(None if r is None else unique.index(r) for r in results))


# The rows of training graphs (batch statistics, convolution gradients) stand apart in
# aten_training.py, which builds on this module's helpers.
from fsir.torch.aten_training import TRAINING_ROWS  # noqa: E402

ATEN_TO_GRAPH.update(TRAINING_ROWS)
