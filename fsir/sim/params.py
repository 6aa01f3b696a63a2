"""The kernel parameter buffer: its layout (natural alignment, as the CUDA driver packs it) and
packing a launch's arguments into it. The simulator and the CUDA device share both, so a kernel
sees the same bytes on either."""

from __future__ import annotations

import numpy as np

from fsir.errors import SimulatorError
from fsir.sim.decoder import NP, UINT, to_bf16
from fsir.sim.parser import Param, type_size


def param_layout(params: list[Param]) -> tuple[dict[str, int], int]:
    """Byte offsets of kernel parameters in the parameter buffer (natural alignment) and its size."""
    offsets: dict[str, int] = {}
    off = 0
    for p in params:
        al = p.align or type_size(p.type)
        off = (off + al - 1) // al * al
        offsets[p.name] = off
        off += p.nbytes
    return offsets, off



def pack_params(kname: str, params: list[Param], offsets: dict[str, int], size: int, args: list,
                gm_addrs: dict[int, int]) -> np.ndarray:
    """The parameter buffer of a launch: `args[i]` converted to the type of `params[i]`; array
    arguments (indices in `gm_addrs`) become their device addresses. Raises on mismatches."""

    buf = np.zeros(max(size, 8) + 16, np.uint8)
    for i, (p, a) in enumerate(zip(params, args)):
        off = offsets[p.name]
        what = f"argument {i} ({p.name}: .{p.type}{''.join(f'[{d}]' for d in p.dims)})"
        if p.dims:  # by-value byte array (struct)
            if isinstance(a, (bytes, bytearray)):
                raw = np.frombuffer(bytes(a), np.uint8)
            elif isinstance(a, np.ndarray) and i in gm_addrs:
                raise SimulatorError(f"kernel '{kname}': {what} is passed by value; give bytes, not an array")
            else:
                raise SimulatorError(f"kernel '{kname}': {what} needs a bytes object of {p.nbytes} bytes")
            if raw.size != p.nbytes:
                raise SimulatorError(f"kernel '{kname}': {what} needs {p.nbytes} bytes, got {raw.size}")
            buf[off: off + raw.size] = raw
            continue
        dt = NP.get(p.type)
        if dt is None or dt == np.bool_:
            raise SimulatorError(f"kernel '{kname}': unsupported parameter type for {what}")
        if i in gm_addrs:
            if dt.itemsize != 8 or dt.kind == "f":
                raise SimulatorError(f"kernel '{kname}': {what} is not a 64-bit pointer parameter; "
                                     f"got a numpy array (arrays are device buffers)")
            v = np.array(gm_addrs[i], np.uint64)
        else:
            if isinstance(a, np.ndarray) and a.ndim == 0:
                a = a[()]
            if isinstance(a, (bool, np.bool_)):
                a = int(a)
            if dt.kind == "f" or p.type == "bf16":
                if not isinstance(a, (int, float, np.integer, np.floating)):
                    raise SimulatorError(f"kernel '{kname}': {what} needs a number, got {type(a).__name__}")
                v = np.array(a, np.float32 if p.type == "bf16" else dt)
                if p.type == "bf16":
                    v = to_bf16(v)
            else:
                if isinstance(a, (float, np.floating)):
                    raise SimulatorError(f"kernel '{kname}': {what} is an integer parameter, got float {a!r}")
                if not isinstance(a, (int, np.integer)):
                    raise SimulatorError(
                        f"kernel '{kname}': {what} needs an integer or a numpy array, got {type(a).__name__}"
                    )
                a = int(a)
                bits = dt.itemsize * 8
                # nvcc declares C `int` parameters .u32 too: any value with a two's-complement
                # representation in the parameter's width is accepted
                lo = -(1 << (bits - 1))
                hi = (1 << bits) - 1 if dt.kind == "u" else (1 << (bits - 1)) - 1
                if not lo <= a <= hi:
                    raise SimulatorError(f"kernel '{kname}': {what}: {a} does not fit .{p.type}")
                v = np.array(a & ((1 << bits) - 1), np.uint64).astype(UINT[dt.itemsize]).view(dt)
        raw = np.atleast_1d(v).view(np.uint8)
        buf[off: off + raw.size] = raw
    return buf

