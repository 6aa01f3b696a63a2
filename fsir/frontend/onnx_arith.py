"""ONNX converters of elementwise arithmetic and activations that are not plain table
rows (Sum, Mean, Clip, LeakyRelu, Softplus, HardSigmoid, Sign, Pow, Reciprocal, Relu,
IsNaN, Gelu, Where, Identity, Dropout, Tile) and of ArgMax, ArgMin and Trilu.
"""

from __future__ import annotations

import numpy as np
import onnx

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.frontend.onnx_import import OnnxImporter, converter


@converter("Sum")
def op_Sum(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    vs = imp.bcast(*imp.inputs(node))
    y = vs[0]
    for v in vs[1:]:
        y = imp.b.ew("add", y, v)
    return [y]


@converter("Mean")
def op_Mean(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    (y,) = op_Sum(imp, node, attrs)
    return [imp.b.ew("div", y, imp.b.scalar_like(len(node.input), y))]


@converter("Clip")
def op_Clip(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    lo, hi = imp.optional_input(node, 1), imp.optional_input(node, 2)
    if "min" in attrs:  # before opset 11
        lo = imp.b.scalar_like(attrs["min"], x)
    if "max" in attrs:
        hi = imp.b.scalar_like(attrs["max"], x)
    if lo is not None:
        x = imp.b.ew("max", *imp.bcast(x, lo))
    if hi is not None:
        x = imp.b.ew("min", *imp.bcast(x, hi))
    return [x]


@converter("LeakyRelu")
def op_LeakyRelu(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    scaled = imp.b.ew("mul", x, imp.b.scalar_like(attrs.get("alpha", 0.01), x))
    return [imp.b.select(imp.b.compare("ge", x, imp.b.scalar_like(0, x)), x, scaled)]


@converter("Softplus")
def op_Softplus(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])  # log(1 + exp(x))
    return [imp.b.ew("log", imp.b.ew("add", imp.b.ew("exp", x), imp.b.scalar_like(1, x)))]


@converter("HardSigmoid")
def op_HardSigmoid(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    b = imp.b
    y = b.ew("add", b.ew("mul", x, b.scalar_like(attrs.get("alpha", 0.2), x)),
             b.scalar_like(attrs.get("beta", 0.5), x))
    return [b.ew("min", b.ew("max", y, b.scalar_like(0, x)), b.scalar_like(1, x))]


@converter("Sign")
def op_Sign(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    b, zero = imp.b, imp.b.scalar_like(0, x)
    pos = b.convert(b.compare("gt", x, zero), b.elem(x))
    return [b.ew("sub", pos, b.convert(b.compare("lt", x, zero), b.elem(x)))]


@converter("Tile")
def op_Tile(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    reps = imp.ints(node.input[1], "repeats")
    s = shape_of(x.type)
    # [d0, d1] -> broadcast to [r0, d0, r1, d1] -> reshape [r0*d0, r1*d1]
    spread = [v for r, d in zip(reps, s) for v in (r, d)]
    y = imp.b.broadcast(x, spread, list(range(1, 2 * len(s), 2)))
    return [imp.b.reshape(y, [r * d for r, d in zip(reps, s)])]


@converter("Pow")
def op_Pow(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x, e = imp.inputs(node)
    xt, et = imp.b.elem(x), imp.b.elem(e)
    if graph.is_int(xt) and graph.is_float(et):
        return [imp.int_pow_float(*imp.bcast(x, e))]
    e = imp.b.convert(e, xt)
    folded = imp.b.fold(e)
    if folded is not None and folded.size == 1 and float(folded.reshape(-1)[0]) == 2.0:
        return [imp.b.ew("mul", x, x)]  # x*x: light, and exact
    x, e = imp.bcast(x, e)
    return [imp.b.ew("pow", x, e)]


@converter("Reciprocal")
def op_Reciprocal(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    return [imp.b.ew("div", imp.b.scalar_like(1, x), x)]


@converter("Relu")
def op_Relu(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    return [imp.b.ew("max", x, imp.b.scalar_like(0, x))]


@converter("IsNaN")
def op_IsNaN(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    return [imp.b.compare("ne", x, x)]


@converter("Gelu")
def op_Gelu(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    return [imp.gelu(imp.value(node.input[0]), attrs.get("approximate", b"none"))]


@converter("Where")
def op_Where(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    folded = [imp.b.fold(imp.value(n)) for n in node.input]
    if all(f is not None for f in folded) and any(np.asarray(f).dtype == object for f in folded[1:]):
        # a choice between shape values holding run-time sizes (the exporters' Expand
        # idiom: Where(Equal(shape, -1), 1, shape)) is a shape value too
        cond, a, x = (np.asarray(f) for f in folded)
        chosen = np.where(cond.astype(bool), a, x).astype(object)
        return [imp.shape_placeholder(chosen, imp.b.elem(imp.value(node.input[1])))]
    c, a, x = imp.bcast(*imp.inputs(node))
    return [imp.b.select(c, a, x)]


@converter("Identity")
def op_Identity(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    return [imp.value(node.input[0])]


@converter("Dropout")
def op_Dropout(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):  # inference: identity
    training = node.input[2] if len(node.input) > 2 and node.input[2] else None
    if training is not None and bool(imp.constant_value(training, "training_mode").any()):
        raise imp.error(f"{imp.describe()}: training mode (random dropout) is not supported")
    x = imp.value(node.input[0])
    return [x, imp.b.broadcast_to(imp.const(np.array(True), graph.i1), shape_of(x.type))]


@converter("ArgMax")
def op_ArgMax(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    return [imp.arg_reduce(node, attrs, "max")]


@converter("ArgMin")
def op_ArgMin(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    return [imp.arg_reduce(node, attrs, "min")]


@converter("Trilu")
def op_Trilu(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    k = imp.ints(node.input[1], "k")[0] if len(node.input) > 1 and node.input[1] else 0
    shape = shape_of(x.type)
    i64 = graph.IntegerType(64)
    b = imp.b
    sizes = imp.sym.dims(x)
    rows, cols = imp.iota(sizes, len(shape) - 2, i64), imp.iota(sizes, len(shape) - 1, i64)
    diff = b.ew("sub", cols, rows)  # keep j - i >= k (upper) or <= k (lower)
    keep = b.compare("ge" if attrs.get("upper", 1) else "le", diff, b.scalar_like(k, diff))
    return [b.select(keep, x, b.scalar_like(0, x))]
