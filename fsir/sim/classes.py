"""Instruction classes of executed PTX, for the throughput model (fsir/codegen/kernel_time.py).

The engine counts, per chunk, the lanes that executed each instruction of the kernel's
code; `add_class_counts` folds those counts into the `LaunchStats` fields of the pipe
each instruction runs on (`fsir.gpuspec.LANE_CLASSES`):

  fp32 / fp16 / fp64   floating-point add, mul, fma, min, max, compare... by type (bf16 is fp16)
  sfu                  ex2, lg2, rcp, rsqrt, sqrt, sin, cos, tanh, f32 division, and
                       conversions involving a float type (the CUDA guide rates them alike)
  lsu                  ld, st, atom, red, shfl, ldmatrix, stmatrix, cp.async
  tensor               mma / wmma (their multiply-adds also go to the tensor counters)
  int                  everything else: integer and logic arithmetic, moves and selects
                       (of any type), branches, barriers

A PTX instruction counts once, on its pipe, except where ptxas makes several machine
instructions of it on other pipes (`expansion`: a rounding to tf32 is a float compare
and an integer add, `fsir.gpuspec.TF32_ROUNDING`); the class counters then sum
to more than `instructions`.

`fma_instructions` counts the floating-point fma/mad among them (two FLOPs each).
"""

from __future__ import annotations

import re
from weakref import WeakKeyDictionary

from fsir.gpuspec import TF32_ROUNDING
from fsir.sim.stats import LaunchStats

CLASS_FIELDS = ("fp32_instructions", "fp16_instructions", "fp64_instructions", "sfu_instructions",
                "int_instructions", "lsu_instructions", "tensor_instructions")
FP32, FP16, FP64, SFU, INT, LSU, TENSOR = range(len(CLASS_FIELDS))

_LSU = {"ld", "ldu", "st", "atom", "red", "shfl", "ldmatrix", "stmatrix", "cp", "prefetch", "prefetchu"}
_SFU = {"ex2", "lg2", "rcp", "rsqrt", "sqrt", "sin", "cos", "tanh"}
_MOVES = {"mov", "selp"}  # data movement whatever the type: no arithmetic, no FLOP
_FLOAT = {"f32": FP32, "f16": FP16, "f16x2": FP16, "bf16": FP16, "bf16x2": FP16, "f64": FP64}
_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")


def classify(opcode: str) -> int:
    """The class (an index into CLASS_FIELDS) of one PTX opcode."""
    parts = opcode.split(".")
    base = parts[0]
    if base in ("mma", "wmma"):
        return TENSOR
    if base in _LSU:
        return LSU
    if base in _SFU:
        return SFU
    if base in _MOVES:
        return INT
    floats = [_FLOAT[p] for p in parts[1:] if p in _FLOAT]
    if base == "cvt":
        return SFU if floats else INT
    if base == "div" and floats:
        return SFU
    return floats[0] if floats else INT


def expansion(opcode: str) -> tuple[tuple[int, int], ...]:
    """(class, machine instructions) of one PTX opcode: `classify`'s class once, or the
    pipes ptxas spreads it over."""
    parts = opcode.split(".")
    if parts[0] == "cvt" and "tf32" in parts[1:]:
        return tuple((CLASS_FIELDS.index(f"{cls}_instructions"), n) for cls, n in TF32_ROUNDING.items())
    return ((classify(opcode), 1),)


def mma_fmas(opcode: str) -> tuple[str, int] | None:
    """(precision, multiply-adds per warp) of an mma opcode; None for other opcodes."""
    parts = opcode.split(".")
    if parts[0] != "mma":
        return None
    shape = next((m for p in parts if (m := _SHAPE.fullmatch(p))), None)
    if shape is None:
        return None
    m, n, k = (int(g) for g in shape.groups())
    precision = "tf32" if "tf32" in parts else "f16"
    return precision, m * n * k


_CLASSES: WeakKeyDictionary = WeakKeyDictionary()  # a kernel layout's classes, by instruction


def add_class_counts(stats: LaunchStats, layout, lanes: list[int]) -> None:
    """Add `lanes[pc]` (lanes that executed instruction pc) to `stats` by class."""
    classes = _CLASSES.get(layout)
    if classes is None:
        classes = _CLASSES[layout] = [expansion(i.opcode) for i in layout.instrs]
    totals = [0] * len(CLASS_FIELDS)
    tf32 = fmas = 0
    for pc, n in enumerate(lanes):
        if n:
            spread = classes[pc]
            for c, times in spread:
                totals[c] += n * times
            c = spread[0][0]
            if c in (FP32, FP16, FP64) and layout.instrs[pc].opcode.startswith(("fma.", "mad.")):
                fmas += n
            elif c == TENSOR:
                mma = mma_fmas(layout.instrs[pc].opcode)
                if mma is not None and mma[0] == "tf32":
                    tf32 += 2 * mma[1] * (n // 32)
    for name, n in zip(CLASS_FIELDS, totals):
        setattr(stats, name, getattr(stats, name) + n)
    stats.tf32_tensor_flops += tf32
    stats.fma_instructions += fmas
