"""ONNX element-type conversions and bit operations: Cast, CastLike, BitCast, BitShift,
Bitwise*.

Cast and CastLike become `graph.convert` (float to integer truncates toward zero and
saturates, NaN gives 0; integer to integer wraps; to float rounds to nearest even).
Element types fsir has no tensors of (float8, float4, int4/uint4, int2/uint2, string)
are refused with the node's location, on the input or on the target type; so Cast's
`saturate` attribute, which only concerns float8 targets, never applies.
"""

from __future__ import annotations

from fsir.dialects import graph
from fsir.frontend.onnx_import import converter, elem_type

_BITWISE = {"BitwiseAnd": "and", "BitwiseOr": "or", "BitwiseXor": "xor"}


@converter("Cast")
def cast(imp, node, attrs):
    x = imp.value(node.input[0])
    return [imp.b.convert(x, elem_type(attrs["to"], imp.describe()))]


@converter("CastLike")
def cast_like(imp, node, attrs):
    """Cast to the element type of the second input (whose values are not read)."""
    x, like = imp.inputs(node)
    return [imp.b.convert(x, imp.b.elem(like))]


@converter("BitCast")
def bit_cast(imp, node, attrs):
    """The elements' bits read as the `to` type, which must have the same width."""
    x = imp.value(node.input[0])
    src, dst = imp.b.elem(x), elem_type(attrs["to"], imp.describe())
    if graph.bit_width(src) != graph.bit_width(dst):
        raise imp.error(f"{imp.describe()}: cannot reinterpret {src} as {dst}: the element widths differ")
    if src == dst:
        return [x]
    return [imp.b.emit(graph.BitcastOp, [x], graph.tensor(dst, graph.shape_of(x.type)))]


@converter("BitShift")
def bit_shift(imp, node, attrs):
    x, amount = imp.bcast(*imp.inputs(node))
    direction = attrs.get("direction", b"")
    direction = direction.decode() if isinstance(direction, bytes) else direction
    if direction not in ("LEFT", "RIGHT"):
        raise imp.error(f"{imp.describe()}: direction must be LEFT or RIGHT, got '{direction}'")
    _check_int(imp, x)
    return [imp.b.ew("shl" if direction == "LEFT" else "shr", x, amount)]


@converter(*_BITWISE)
def bitwise(imp, node, attrs):
    a, b = imp.bcast(*imp.inputs(node))
    _check_int(imp, a)
    return [imp.b.ew(_BITWISE[node.op_type], a, b)]


@converter("BitwiseNot")
def bitwise_not(imp, node, attrs):
    x = imp.value(node.input[0])
    _check_int(imp, x)
    return [imp.b.ew("not", x)]


def _check_int(imp, v) -> None:
    t = imp.b.elem(v)
    if not graph.is_int(t) or graph.is_bool(t):
        raise imp.error(f"{imp.describe()}: needs integer tensors, got element type {t}")
