"""PTX types as numpy dtypes, the decoder's two exceptions, and the value conversions every
instruction family shares (register reinterpretation, bf16, rounding modes, flush-to-zero).
"""

from __future__ import annotations

import numpy as np

NP = {
    "pred": np.dtype(np.bool_), "b8": np.dtype(np.uint8), "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8),
    "b16": np.dtype(np.uint16), "u16": np.dtype(np.uint16), "s16": np.dtype(np.int16),
    "f16": np.dtype(np.float16), "bf16": np.dtype(np.uint16),
    "b32": np.dtype(np.uint32), "u32": np.dtype(np.uint32), "s32": np.dtype(np.int32), "f32": np.dtype(np.float32),
    "f16x2": np.dtype(np.uint32), "bf16x2": np.dtype(np.uint32), "tf32": np.dtype(np.uint32),
    "b64": np.dtype(np.uint64), "u64": np.dtype(np.uint64), "s64": np.dtype(np.int64), "f64": np.dtype(np.float64),
}
TYPES = set(NP)
UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
SINT = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
FLOAT = {"f16", "bf16", "f32", "f64"}
SIGNED = {"s8", "s16", "s32", "s64"}
LOG2 = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4, 32: 5}
F32_MIN_NORMAL = np.float32(np.finfo(np.float32).tiny)
I64 = np.dtype(np.int64)


def kind(t: str) -> str:
    if t == "pred":
        return "pred"
    if t in FLOAT:
        return "f"
    if t in ("f16x2", "bf16x2"):
        return "fx2"
    return t[0]  # b, u, s


class Fault(Exception):
    """An invalid access found while executing; the engine adds kernel and PTX line."""


class DecodeError(Exception):
    """Unsupported or malformed instruction; the decoder adds kernel and PTX line."""


# ------------------------------------------------------------------------ conversions


def reinterpret(v, dst: np.dtype, src_signed: bool):
    """Reinterpret/extend/truncate value array `v` into dtype `dst` by PTX register rules."""
    sd = v.dtype
    if sd == dst:
        return v
    if dst == np.bool_:
        return v != 0
    if sd == np.bool_:
        return v.astype(dst)
    if sd.itemsize == dst.itemsize:
        return v.view(dst)
    if sd.itemsize > dst.itemsize:  # truncate: keep the low bits
        return v.view(UINT[sd.itemsize]).astype(UINT[dst.itemsize]).view(dst)
    if src_signed and sd.kind == "i":
        return v.astype(SINT[dst.itemsize]).view(dst)
    return v.view(UINT[sd.itemsize]).astype(UINT[dst.itemsize]).view(dst)


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bits (uint16), round to nearest even, NaN stays NaN."""
    x = np.asarray(x, np.float32)
    u = x.view(np.uint32)
    r = ((u >> np.uint32(16)) & np.uint32(1)) + np.uint32(0x7FFF)
    out = ((u + r) >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(x)
    if np.any(nan):
        out = np.where(nan, np.uint16(0x7FC0) | ((u >> np.uint32(16)).astype(np.uint16) & np.uint16(0x8000)), out)
    return out


def from_bf16(b) -> np.ndarray:
    return (np.asarray(b).astype(np.uint32) << np.uint32(16)).view(np.float32)


def round_f32(x64, mode: str):
    """Round float64 values to float32 with PTX rounding mode rn/rz/rm/rp."""
    y = np.asarray(x64).astype(np.float32)
    if mode in ("rn", "", "rna"):
        return y
    y64 = y.astype(np.float64)
    x64 = np.asarray(x64)
    if mode == "rz":
        adj = np.abs(y64) > np.abs(x64)
        toward = np.float32(0)
    elif mode == "rm":
        adj = y64 > x64
        toward = np.float32(-np.inf)
    else:  # rp
        adj = y64 < x64
        toward = np.float32(np.inf)
    if np.ndim(y) == 0:
        return np.nextafter(y, toward) if adj else y
    if adj.any():
        y = np.where(adj, np.nextafter(y, toward), y)
    return y


def ftz32(x):
    """Flush float32 subnormals to sign-preserving zero."""
    if np.ndim(x) == 0:
        return x if not (0 < abs(x) < F32_MIN_NORMAL) else np.copysign(np.float32(0), x)
    sub = (np.abs(x) < F32_MIN_NORMAL) & (x != 0)
    if sub.any():
        x = np.where(sub, np.copysign(np.float32(0), x), x)
    return x


def sat01(x):
    """`.sat` for floats: clamp to [0, 1], NaN -> 0."""
    x = np.where(np.isnan(x), x.dtype.type(0) if hasattr(x, "dtype") else 0, x)
    return np.clip(x, 0, 1).astype(np.asarray(x).dtype)
