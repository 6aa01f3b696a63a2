"""ONNX element-type conversions and bit operations: Cast, CastLike, BitCast, BitShift,
Bitwise*.

Cast and CastLike between fsir's element types become `graph.convert` (float to integer
truncates toward zero and saturates, NaN gives 0; integer to integer wraps; to float
rounds to nearest even). ONNX's narrow types (float8, float4, e8m0, int4/uint4,
int2/uint2) are storage only (`onnx_storage`): their conversions are expanded here
into integer and float graph ops on the stored bytes, with the semantics of ONNX's
reference implementation (which the node tests' expected outputs come from):

- to a float8/float4 format: round to nearest even on the source's bits (f16/bf16
  widened to f32 exactly, so rounded once; f64 on its own 64 bits); results below the
  format's smallest normal are rounded as a multiple of its smallest denormal. Beyond
  the largest finite value (and ±inf): with `saturate` (the default) ±max; without,
  inf (E5M2) or NaN (E4M3FN, the fnuz types). FLOAT4E2M1 always saturates. NaN gives
  the format's NaN (sign kept for E4M3FN/E5M2, 0x80 for fnuz); FLOAT4E2M1 has no NaN:
  0, as ONNX's reference gives (its technical note says 6). fnuz has no −0: −0
  and negative results rounding to 0 give 0.
- to FLOAT8E8M0: the f32 exponent (the sign is dropped), rounded by `round_mode` (up:
  any mantissa bit rounds up, nearest: guard/round/sticky, down: truncated); with
  `saturate` the top exponent does not round up to NaN; inf and NaN give NaN (0xFF).
- to int4/uint4/int2/uint2: to an integer as to i32 (floats truncate), then wrapped
  to the type's bits (two's complement), as ONNX's reference does.
- from these types: decoded exactly to f32 (narrow ints: their values), then converted.
"""

from __future__ import annotations

from xdsl.ir import Attribute, SSAValue

from fsir.dialects import graph
from fsir.frontend import onnx_storage as st
from fsir.frontend.onnx_import import converter, elem_type

_BITWISE = {"BitwiseAnd": "and", "BitwiseOr": "or", "BitwiseXor": "xor"}
_I32, _I64 = graph.i32, graph.IntegerType(64)


@converter("Cast")
def cast(imp, node, attrs):
    x = imp.value(node.input[0])
    to = attrs["to"]
    target = to if st.is_narrow(to) else elem_type(to, imp.describe())
    return [_cast(imp, node, x, target, attrs)]


@converter("CastLike")
def cast_like(imp, node, attrs):
    """Cast to the element type of the second input (whose values are not read)."""
    x, like = imp.inputs(node)
    narrow = imp.storage.get(node.input[1])
    return [_cast(imp, node, x, narrow if narrow is not None else imp.b.elem(like), attrs)]


def _cast(imp, node, x: SSAValue, target: int | Attribute, attrs) -> SSAValue:
    """x cast to `target`: an fsir element type, or an ONNX narrow type (an int)."""
    source = imp.storage.get(node.input[0])
    if isinstance(target, int):
        imp.storage[node.output[0]] = target
    if source is not None and source == target:
        return x
    ops = _Ops(imp.b)
    if source in st.MINIFLOATS:
        x = ops.decode_minifloat(x, st.MINIFLOATS[source])
    elif source == st.E8M0:
        x = ops.decode_e8m0(x)
    if not isinstance(target, int):
        return imp.b.convert(x, target)
    saturate = bool(attrs.get("saturate", 1))
    if target in st.MINIFLOATS:
        return ops.encode_minifloat(ops.to_float(x), st.MINIFLOATS[target], saturate)
    if target == st.E8M0:
        mode = attrs.get("round_mode", b"up")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        if mode not in ("up", "down", "nearest"):
            raise imp.error(f"{imp.describe()}: round_mode must be up, down or nearest, got '{mode}'")
        return ops.encode_e8m0(imp.b.convert(x, graph.f32), saturate, mode)
    bits, signed = st.NARROW_INTS[target]
    storage = st.storage_type(target)
    assert storage is not None  # (a narrow type)
    return ops.wrap_int(x, bits, signed, storage)


class _Ops:
    """The bit-level graph ops of the narrow types' conversions."""

    def __init__(self, b):
        self.b = b

    def k(self, value: float, like: SSAValue) -> SSAValue:
        return self.b.scalar_like(value, like)

    def ew(self, name: str, x: SSAValue, y: SSAValue | float) -> SSAValue:
        return self.b.ew(name, x, y if isinstance(y, SSAValue) else self.k(y, x))

    def cmp(self, direction: str, x: SSAValue, y: SSAValue | float) -> SSAValue:
        return self.b.compare(direction, x, y if isinstance(y, SSAValue) else self.k(y, x))

    def sel(self, c: SSAValue, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        like = a if isinstance(a, SSAValue) else b
        assert isinstance(like, SSAValue)
        return self.b.select(c, a if isinstance(a, SSAValue) else self.k(a, like),
                             b if isinstance(b, SSAValue) else self.k(b, like))

    def bitcast(self, x: SSAValue, t: Attribute) -> SSAValue:
        return self.b.emit(graph.BitcastOp, [x], graph.tensor(t, graph.shape_of(x.type)))

    def to_float(self, x: SSAValue) -> SSAValue:
        """x as f32 or f64, exactly for every float type (integers: rounded to f32)."""
        t = self.b.elem(x)
        return x if isinstance(t, graph.Float64Type) else self.b.convert(x, graph.f32)

    def encode_minifloat(self, x: SSAValue, fmt: st.Minifloat, saturate: bool) -> SSAValue:
        """The codes of f32/f64 x in `fmt`, rounded to nearest even (as ui8)."""
        wide = isinstance(self.b.elem(x), graph.Float64Type)
        it, width, mant, bias = (_I64, 64, 52, 1023) if wide else (_I32, 32, 23, 127)
        bits = self.bitcast(x, it)
        neg = self.cmp("lt", bits, 0)
        abs_bits = self.ew("and", bits, (1 << (width - 1)) - 1)
        nan = self.cmp("gt", abs_bits, ((1 << (width - 1 - mant)) - 1) << mant)
        # normal results: rebias the exponent, then shift the mantissa right by s bits
        # rounding to nearest even; a carry out of the mantissa increments the exponent
        s = mant - fmt.man_bits
        v = self.ew("sub", abs_bits, (bias - fmt.bias) << mant)
        lsb = self.ew("and", self.ew("shr", v, s), 1)
        normal = self.ew("shr", self.ew("add", self.ew("add", v, (1 << (s - 1)) - 1), lsb), s)
        # below the smallest normal: a multiple of the smallest denormal 2^(1-bias-man)
        scaled = self.ew("mul", self.b.ew("abs", x), 2.0 ** (fmt.bias - 1 + fmt.man_bits))
        denormal = self.b.convert(self.b.ew("round", scaled), it)
        mag = self.sel(self.cmp("lt", v, 1 << mant), denormal, normal)
        over = self.cmp("gt", mag, fmt.max_code)
        if saturate or fmt.nan == "none":
            mag = self.sel(over, fmt.max_code, mag)
        else:
            mag = self.sel(over, fmt.inf_code if fmt.inf_code is not None else _nan_code(fmt), mag)
        mag = self.sel(nan, _nan_code(fmt), mag)
        signed = self.ew("or", mag, 1 << fmt.sign_shift)
        if fmt.nan == "neg_zero":  # no −0: a zero magnitude stays 0 (0x80 is NaN)
            neg = self.b.ew("and", neg, self.cmp("ne", mag, 0))
        return self.b.convert(self.sel(neg, signed, mag), graph.unsigned(8))

    def decode_minifloat(self, code: SSAValue, fmt: st.Minifloat) -> SSAValue:
        """f32 values of `fmt` codes (exact)."""
        c = self.b.convert(code, _I32)
        mag = self.ew("and", c, (1 << fmt.sign_shift) - 1)
        e = self.ew("shr", mag, fmt.man_bits)
        m = self.ew("and", mag, (1 << fmt.man_bits) - 1)
        normal_bits = self.ew("or", self.ew("shl", self.ew("add", e, 127 - fmt.bias), 23),
                              self.ew("shl", m, 23 - fmt.man_bits))
        normal = self.bitcast(normal_bits, graph.f32)
        denormal = self.ew("mul", self.b.convert(m, graph.f32), 2.0 ** (1 - fmt.bias - fmt.man_bits))
        value = self.sel(self.cmp("eq", e, 0), denormal, normal)
        if fmt.inf_code is not None:
            value = self.sel(self.cmp("eq", mag, fmt.inf_code), float("inf"), value)
        neg = self.cmp("ne", self.ew("and", c, 1 << fmt.sign_shift), 0)
        value = self.sel(neg, self.b.ew("neg", value), value)
        if fmt.nan == "above_max":
            nan = self.cmp("gt", mag, fmt.inf_code if fmt.inf_code is not None else fmt.max_code)
        elif fmt.nan == "neg_zero":
            nan = self.cmp("eq", c, 0x80)
        else:
            return value
        return self.sel(nan, float("nan"), value)

    def encode_e8m0(self, x: SSAValue, saturate: bool, mode: str) -> SSAValue:
        bits = self.bitcast(x, _I32)
        exp = self.ew("and", self.ew("shr", bits, 23), 0xFF)
        special = self.cmp("eq", exp, 0xFF)
        if mode == "down":
            code = exp
        else:
            if mode == "up":
                up = self.cmp("ne", self.ew("and", bits, 0x7FFFFF), 0)
            else:  # guard bit and (round or sticky bits, or a nonzero exponent), as ONNX's reference
                rest = self.cmp("ne", self.ew("and", bits, 0x3FFFFF), 0)
                up = self.b.ew("and", self.cmp("ne", self.ew("and", bits, 0x400000), 0),
                               self.b.ew("or", rest, self.cmp("gt", exp, 0)))
            if saturate:
                up = self.b.ew("and", up, self.cmp("ne", exp, 0xFE))
            code = self.ew("add", exp, self.b.convert(up, _I32))
        return self.b.convert(self.sel(special, 0xFF, code), graph.unsigned(8))

    def decode_e8m0(self, code: SSAValue) -> SSAValue:
        """2^(code − 127); code 0 is the f32 denormal 2^-127, 0xFF NaN."""
        c = self.b.convert(code, _I32)
        bits = self.sel(self.cmp("eq", c, 0), 0x400000, self.ew("shl", c, 23))
        return self.sel(self.cmp("eq", c, 0xFF), float("nan"), self.bitcast(bits, graph.f32))

    def wrap_int(self, x: SSAValue, bits: int, signed: bool, storage: Attribute) -> SSAValue:
        v = self.b.convert(x, _I32)
        if signed:
            v = self.ew("shr", self.ew("shl", v, 32 - bits), 32 - bits)
        else:
            v = self.ew("and", v, (1 << bits) - 1)
        return self.b.convert(v, storage)


def _nan_code(fmt: st.Minifloat) -> int:
    """The magnitude code a NaN result takes: E5M2's quiet NaN (the top mantissa bit set,
    as IEEE formats), E4M3FN's only NaN, fnuz's 0x80, and 0 for FLOAT4E2M1 (no NaN)."""
    if fmt.nan == "above_max":
        return fmt.inf_code | 1 << (fmt.man_bits - 1) if fmt.inf_code is not None else (1 << fmt.sign_shift) - 1
    return 0x80 if fmt.nan == "neg_zero" else 0


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
