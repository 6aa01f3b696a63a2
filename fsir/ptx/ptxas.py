"""Run ptxas on printed PTX: does it assemble, and what does each kernel use.

ptxas comes from the `nvidia-cuda-nvcc-cu12` wheel (found by `cuda.pathfinder`), else
`/usr/local/bin/ptxas`, else PATH. No GPU is needed.

    result = assemble(ptx, "sm_80")
    result.ok, result.errors, result.kernels["k"].registers
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

from fsir.errors import UserError
from fsir.stats import count as tally


@dataclass(frozen=True)
class KernelUsage:
    """What `ptxas -v` reports for one kernel."""

    name: str
    registers: int
    shared_bytes: int  # static shared memory
    spill_stores: int
    spill_loads: int
    stack_bytes: int
    barriers: int


@dataclass(frozen=True)
class AssembleResult:
    ok: bool
    errors: list[str]  # "line N: message" for each ptxas error
    kernels: dict[str, KernelUsage] = field(default_factory=dict)
    log: str = ""  # everything ptxas printed


@functools.cache
def find_ptxas() -> str | None:
    """The path of a ptxas executable, or None."""
    try:
        from cuda.pathfinder import find_nvidia_binary_utility

        path = find_nvidia_binary_utility("ptxas")
        if path:
            return str(path)
    except Exception:  # noqa: BLE001 - pathfinder missing or wheel absent
        pass
    if os.access("/usr/local/bin/ptxas", os.X_OK):
        return "/usr/local/bin/ptxas"
    return shutil.which("ptxas")


_ERROR = re.compile(r"ptxas[^,]*, line (\d+); error\s*:\s*(.*)")
_FATAL = re.compile(r"ptxas fatal\s*:\s*(.*)")
_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_verbose(log: str) -> dict[str, KernelUsage]:
    """Per-kernel usage from `ptxas -v` output."""
    kernels: dict[str, KernelUsage] = {}
    current: dict[str, int | str] | None = None

    def flush() -> None:
        if current is not None and "registers" in current:
            kernels[str(current["name"])] = KernelUsage(
                name=str(current["name"]),
                registers=int(current.get("registers", 0)),
                shared_bytes=int(current.get("smem", 0)),
                spill_stores=int(current.get("spill_stores", 0)),
                spill_loads=int(current.get("spill_loads", 0)),
                stack_bytes=int(current.get("stack", 0)),
                barriers=int(current.get("barriers", 0)),
            )

    for line in log.splitlines():
        if m := _ENTRY.search(line):
            flush()
            current = {"name": m.group(1)}
            continue
        if current is None:
            continue
        if m := _FRAME.search(line):
            current["stack"], current["spill_stores"], current["spill_loads"] = (
                int(m.group(1)), int(m.group(2)), int(m.group(3)),
            )  # fmt: skip
        if m := _USED.search(line):
            current["registers"] = int(m.group(1))
            if b := _BARRIERS.search(line):
                current["barriers"] = int(b.group(1))
            if s := _SMEM.search(line):
                current["smem"] = int(s.group(1))
    flush()
    return kernels


def assemble(ptx: str, arch: str = "sm_80", timeout: float = 120.0) -> AssembleResult:
    """Assemble `ptx` for `arch` with `ptxas -v`; never raises for bad PTX."""
    tally("ptxas_calls")
    ptxas = find_ptxas()
    if ptxas is None:
        raise UserError(
            "ptxas not found: pip install nvidia-cuda-nvcc-cu12, or put ptxas on PATH"
        )
    with tempfile.TemporaryDirectory(prefix="fsir-ptxas-") as tmp:
        src = os.path.join(tmp, "kernel.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        proc = subprocess.run(
            [ptxas, "-v", f"-arch={arch}", src, "-o", os.path.join(tmp, "kernel.cubin")],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    log = proc.stdout + proc.stderr
    errors = [f"line {m.group(1)}: {m.group(2).strip()}" for m in _ERROR.finditer(log)]
    errors += [m.group(1).strip() for m in _FATAL.finditer(log)]
    if proc.returncode != 0 and not errors:
        errors.append(log.strip() or f"ptxas exited with {proc.returncode}")
    return AssembleResult(
        ok=proc.returncode == 0,
        errors=errors,
        kernels=parse_verbose(log) if proc.returncode == 0 else {},
        log=log,
    )
