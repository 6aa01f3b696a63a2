"""The kernel parameter buffer: its layout (natural alignment, as the CUDA driver packs it) and
packing a launch's arguments into it. The simulator and the CUDA device share both, so a kernel
sees the same bytes on either."""

from __future__ import annotations

import numpy as np

from fsir.errors import Location, SimulatorError
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


# The bytes of a kernel's parameter buffer: 4352 for every target (PTX ISA before 8.1 or
# before sm_70; host code keeps to 4096 to leave room for the driver's own layout),
# 32764 for PTX ISA 8.1+ on sm_70 and later (CUDA 12.1).
PARAM_LIMIT = 4352
PARAM_LIMIT_LARGE = 32764


def param_limit(version: str | None, target: list[str]) -> int:
    """The parameter-space limit of a module of PTX `version` for `target`."""
    try:
        major, minor = (int(x) for x in (version or "0.0").split(".")[:2])
    except ValueError:
        return PARAM_LIMIT
    sm = next((t for t in target if t.startswith("sm_")), "")
    digits = "".join(c for c in sm[3:] if c.isdigit())
    if (major, minor) >= (8, 1) and digits and int(digits) >= 70:
        return PARAM_LIMIT_LARGE
    return PARAM_LIMIT


def check_param_space(kname: str, size: int, version: str | None, target: list[str], line: int) -> None:
    """Refuses a kernel whose parameters take more bytes than its target allows (ptxas
    refuses it too), located at the kernel's `.entry`."""
    limit = param_limit(version, target)
    if size > limit:
        where = "/".join([f"PTX ISA {version}", *target]) if version else "/".join(target) or "the target"
        raise SimulatorError(
            f"kernel '{kname}', PTX line {line}: its parameters take {size} bytes, more than the "
            f"{limit} bytes of parameter space {where} allows",
            Location("<ptx>", line, 1))


class AddressTable:
    """A launch argument: a table of `values` (64-bit immediates) then the device
    addresses of `arrays` (u64 each), built in global memory for the launch; the kernel
    parameter is the table's address. Kernels whose buffers would overflow the
    parameter space take them this way, and a `columns` kernel its columns' rows."""

    def __init__(self, arrays: list[np.ndarray], values: list[int] | None = None):
        self.arrays = arrays
        self.values = list(values or [])


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

