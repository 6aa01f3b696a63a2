"""ONNX's narrow element types, held by fsir as storage only.

fsir's tensors, code generator and runtime have no float8, float4, e8m0, int4 or int2
elements (xDSL 0.74 has the float types, but no GPU of fsir's targets converts them
natively below sm_89/sm_100). As XLA does on GPUs without native float8 support, such
values are *stored* in a byte per element and their conversions are expanded into
integer and float graph ops (fsir/frontend/onnx_cast.py):

| ONNX type                                   | storage | a byte holds                 |
|---------------------------------------------|---------|------------------------------|
| FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2,   | ui8     | the format's code            |
| FLOAT8E5M2FNUZ, FLOAT4E2M1, FLOAT8E8M0      |         | (float4: in the low 4 bits)  |
| INT4, INT2                                  | i8      | the value (-8..7, -2..1)     |
| UINT4, UINT2                                | ui8     | the value (0..15, 0..3)      |

Only Cast and CastLike read or make such values (the importer refuses any other op on
them, with its location); graph inputs, initializers and outputs may have them. ONNX's
packing of 4-bit and 2-bit values (two or four per byte in a TensorProto) is undone by
`onnx.numpy_helper.to_array`, which gives ml_dtypes arrays (one element per byte);
`to_storage` / `from_storage` convert between those and fsir's storage arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from xdsl.ir import Attribute

from fsir.dialects import graph

TP = onnx.TensorProto


@dataclass(frozen=True)
class Minifloat:
    """A sign/exponent/mantissa float of at most 8 bits (OCP float8/float4, the fnuz
    variants). Codes are sign << (exp_bits + man_bits) | magnitude."""

    exp_bits: int
    man_bits: int
    bias: int
    max_code: int  # magnitude code of the largest finite value
    inf_code: int | None  # magnitude code of infinity (E5M2 only)
    nan: str  # "above_max": magnitudes above max (and not inf) are NaN; "neg_zero": 0x80; "none"

    @property
    def sign_shift(self) -> int:
        return self.exp_bits + self.man_bits


MINIFLOATS: dict[int, Minifloat] = {
    TP.FLOAT8E4M3FN: Minifloat(4, 3, 7, 0x7E, None, "above_max"),
    TP.FLOAT8E4M3FNUZ: Minifloat(4, 3, 8, 0x7F, None, "neg_zero"),
    TP.FLOAT8E5M2: Minifloat(5, 2, 15, 0x7B, 0x7C, "above_max"),
    TP.FLOAT8E5M2FNUZ: Minifloat(5, 2, 16, 0x7F, None, "neg_zero"),
    TP.FLOAT4E2M1: Minifloat(2, 1, 1, 0x7, None, "none"),
}
E8M0 = TP.FLOAT8E8M0  # 2^(code − 127), 0xFF NaN: exponent bits only
STORAGE_OPS = frozenset({"Cast", "CastLike"})  # the only ops that read narrow values
NARROW_INTS: dict[int, tuple[int, bool]] = {  # bits, signed
    TP.INT4: (4, True), TP.UINT4: (4, False), TP.INT2: (2, True), TP.UINT2: (2, False),
}


def storage_type(onnx_type: int) -> Attribute | None:
    """The element type fsir stores an ONNX narrow type in; None for other types."""
    if onnx_type in MINIFLOATS or onnx_type == E8M0:
        return graph.unsigned(8)
    if onnx_type in NARROW_INTS:
        return graph.IntegerType(8) if NARROW_INTS[onnx_type][1] else graph.unsigned(8)
    return None


def type_name(onnx_type: int) -> str:
    if onnx_type not in TP.DataType.values():
        return f"{onnx_type} (not an ONNX data type)"
    return TP.DataType.Name(TP.DataType.ValueType(onnx_type))


def _ml_dtype(onnx_type: int) -> np.dtype:
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(onnx_type))


def to_storage(array: np.ndarray, onnx_type: int) -> np.ndarray:
    """An array of the ONNX type (ml_dtypes, or already storage) as fsir's storage array."""
    array = np.asarray(array)
    if onnx_type in NARROW_INTS:
        return array.astype(np.int8 if NARROW_INTS[onnx_type][1] else np.uint8)  # (the values)
    if array.dtype == np.uint8:
        return array
    return np.ascontiguousarray(array.astype(_ml_dtype(onnx_type))).view(np.uint8)


def from_storage(array: np.ndarray, onnx_type: int) -> np.ndarray:
    """fsir's storage array as an array of the ONNX type's ml_dtypes dtype."""
    array = np.asarray(array)
    if onnx_type in NARROW_INTS:
        return array.astype(_ml_dtype(onnx_type))
    return np.ascontiguousarray(array, dtype=np.uint8).view(_ml_dtype(onnx_type))


def is_narrow(onnx_type: int) -> bool:
    return storage_type(onnx_type) is not None
