"""The instructions the PTX printer emits for one op, by the pipe each runs on.

    printed_mix("math.erf", "f32")   # {"fp32": 28, "int": 11, "sfu": 4}

A math function is a sequence of instructions (fsir/ptx/math_ops.py gives each); the
latency-evaluator charges an op what its sequence issues rather than a figure of its
own, so the two cannot drift apart. The sequence is printed once per op and element
type in a one-op kernel and its instructions are classed as the simulator classes
executed ones (`fsir.sim.classes.expansion`); a branchy sequence counts both sides.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from xdsl.dialects import memref
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, bf16, f16, f32, f64
from xdsl.ir import Attribute, Block, Operation, Region

from fsir.dialects import gpu
from fsir.errors import UserError

_TYPES: dict[str, Attribute] = {"f16": f16, "bf16": bf16, "f32": f32, "f64": f64}


def _kernel(op_name: str | None, t: Attribute, operands: int) -> gpu.FuncOp:
    """gpu.func @k(%x: memref<2xT>) { x[0] = op(x[0], x[1]...) } (no op: x[0] = x[0])."""
    body = Block(arg_types=[MemRefType(t, [2])])
    buf = body.args[0]
    ops: list[Operation] = []
    values = []
    for i in range(operands):
        at = ConstantOp(IntegerAttr(i, IndexType()))
        load = memref.LoadOp.get(buf, [at.result])
        ops += [at, load]
        values.append(load.res)
    result = values[0]
    if op_name is not None:
        from fsir.ptx.module import LOWERINGS

        cls = next(c for c in LOWERINGS if getattr(c, "name", None) == op_name)
        op = cls.create(operands=values, result_types=[t])
        ops.append(op)
        result = op.results[0]
    ops.append(memref.StoreOp.get(result, buf, [ops[0].results[0]]))
    ops.append(gpu.ReturnOp([]))
    body.add_ops(ops)
    return gpu.FuncOp("k", ([MemRefType(t, [2])], []), Region(body), kernel=True)


def _count(text: str) -> Counter[str]:
    from fsir.sim.classes import CLASS_FIELDS, expansion

    counts: Counter[str] = Counter()
    for line in text.splitlines():
        if not line.startswith("\t") or not line.endswith(";") or line.startswith("\t."):
            continue
        words = line.split()
        opcode = words[1] if words[0].startswith("@") else words[0]
        for cls, n in expansion(opcode.rstrip(";")):
            counts[CLASS_FIELDS[cls].removesuffix("_instructions")] += n
    return counts


@cache
def printed_mix(op_name: str, element: str, operands: int = 1) -> Mapping[str, int]:
    """Instructions by lane class (`fsir.gpuspec.LANE_CLASSES`) the printer emits for one
    `op_name` on `element` operands (f16, bf16, f32, f64), beyond loading its operands
    and storing its result."""
    from fsir.ptx.kernel import KernelEmitter
    from fsir.ptx.module import LOWERINGS

    t = _TYPES[element]
    try:
        with_op = _count(KernelEmitter(_kernel(op_name, t, operands), LOWERINGS).emit())
    except UserError:  # no sequence for this type (the code generator refuses it earlier)
        return printed_mix(op_name, "f32", operands) if element != "f32" else MappingProxyType({})
    without = _count(KernelEmitter(_kernel(None, t, operands), LOWERINGS).emit())
    with_op.subtract(without)
    return MappingProxyType({cls: n for cls, n in with_op.items() if n > 0})
