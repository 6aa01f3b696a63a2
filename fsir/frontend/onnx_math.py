"""ONNX converters of reductions (ReduceSum ... ReduceLogSumExp), matrix products (MatMul,
Gemm), Softmax, LogSoftmax and LayerNormalization."""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.frontend.onnx_import import OnnxImporter, converter

_REDUCE = {"ReduceSum": "sum", "ReduceMean": "sum", "ReduceMax": "max", "ReduceMin": "min",
           "ReduceProd": "prod", "ReduceSumSquare": "sum", "ReduceL2": "sum", "ReduceL1": "sum",
           "ReduceLogSum": "sum", "ReduceLogSumExp": "sum"}
# The opset from which each reduction takes its axes as an input instead of an attribute.
_AXES_INPUT_SINCE = {"ReduceSum": 13, "ReduceMean": 18, "ReduceMax": 18, "ReduceMin": 18, "ReduceProd": 18,
                     "ReduceSumSquare": 18, "ReduceL2": 18, "ReduceL1": 18, "ReduceLogSum": 18,
                     "ReduceLogSumExp": 18}


@converter("LayerNormalization")
def op_LayerNormalization(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x, scale, bias = imp.value(node.input[0]), imp.value(node.input[1]), imp.optional_input(node, 2)
    rank = imp.rank(x)
    first = imp.axis(attrs.get("axis", -1), rank)
    axes = list(range(first, rank))
    eps = attrs.get("epsilon", 1e-5)
    shape = shape_of(x.type)
    b = imp.b
    orig = b.elem(x)
    if attrs.get("stash_type", 1) == 1:
        x = b.convert(x, graph.f32)
    # the scale and bias apply in the stash type too, and the result is cast to X's
    # type once (as onnxruntime does); that also takes the f16 scale the TorchScript
    # exporter leaves on an X it promoted to f32 (the result keeps X's type)
    scale = b.convert(scale, b.elem(x))
    bias = None if bias is None else b.convert(bias, b.elem(x))
    keep = list(range(first))
    total = b.reduce("sum", x, axes)
    count = imp.count(x, axes, total)
    mean = b.ew("div", total, count)
    xc = b.ew("sub", x, b.broadcast(mean, shape, keep, like=x))
    var = b.ew("div", b.reduce("sum", b.ew("mul", xc, xc), axes), count)
    rstd = b.ew("rsqrt", b.ew("add", var, b.scalar_like(eps, var)))
    y = b.ew("mul", xc, b.broadcast(rstd, shape, keep, like=x))
    y = b.ew("mul", *imp.bcast(y, scale))
    if bias is not None:
        y = b.ew("add", *imp.bcast(y, bias))
    return [b.convert(y, orig), imp.keep_dims(mean, shape, axes), imp.keep_dims(rstd, shape, axes)]


@converter("Softmax")
def op_Softmax(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    return [imp.softmax(node, attrs, log=False)]


@converter("LogSoftmax")
def op_LogSoftmax(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    return [imp.softmax(node, attrs, log=True)]


@converter("MatMul")
def op_MatMul(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    a, c = imp.inputs(node)
    return [imp.b.dot(a, c)]


@converter("Gemm")
def op_Gemm(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    a, c, bias = imp.value(node.input[0]), imp.value(node.input[1]), imp.optional_input(node, 2)
    b = imp.b
    if attrs.get("transA", 0):
        a = b.transpose(a, [1, 0])
    if attrs.get("transB", 0):
        c = b.transpose(c, [1, 0])
    y = b.dot(a, c)
    if attrs.get("alpha", 1.0) != 1.0:
        y = b.ew("mul", y, b.scalar_like(attrs["alpha"], y))
    if bias is not None:
        if attrs.get("beta", 1.0) != 1.0:
            bias = b.ew("mul", bias, b.scalar_like(attrs["beta"], bias))
        y = b.ew("add", *imp.bcast(y, bias))
    return [y]


@converter(*_REDUCE)
def reduction(imp: OnnxImporter, node: onnx.NodeProto, attrs: dict):
    x = imp.value(node.input[0])
    rank = imp.rank(x)
    if imp.opset >= _AXES_INPUT_SINCE[node.op_type]:
        axes = imp.ints(node.input[1], "axes") if len(node.input) > 1 and node.input[1] else []
    else:
        axes = list(attrs.get("axes", []))
    if not axes:
        if attrs.get("noop_with_empty_axes", 0):
            return [x]
        axes = list(range(rank))
    axes = sorted({imp.axis(a, rank) for a in axes})
    kind = _REDUCE[node.op_type]
    b, op = imp.b, node.op_type
    shape = shape_of(x.type)
    shift: SSAValue | None = None
    if op in ("ReduceSumSquare", "ReduceL2"):
        x = b.ew("mul", x, x)
    elif op == "ReduceL1":
        x = b.ew("abs", x)
    elif op == "ReduceLogSumExp":  # max + log(sum(exp(x - max))): no overflow
        keep = [d for d in range(rank) if d not in axes]
        top = b.reduce("max", x, axes)
        shift = b.select(b.compare("eq", b.ew("abs", top), b.scalar_like(np.inf, top)), b.scalar_like(0, top), top)
        x = b.ew("exp", b.ew("sub", x, b.broadcast(shift, shape, keep)))
    if graph.is_bool(b.elem(x)) and kind in ("max", "min"):  # any / all (false / true if empty)
        y = b.reduce(kind, b.convert(x, graph.i32), axes)
        y = b.compare("gt", y, b.scalar_like(0, y))
    else:
        y = b.reduce(kind, x, axes)
    if op == "ReduceL2":
        y = b.ew("sqrt", y)
    elif op == "ReduceLogSum":
        y = b.ew("log", y)
    if shift is not None:
        y = b.ew("add", b.ew("log", y), shift)
    if node.op_type == "ReduceMean":
        y = imp.b.ew("div", y, imp.count(x, axes, y))
    if attrs.get("keepdims", 1):
        y = imp.keep_dims(y, shape_of(x.type), axes)
    return [y]
