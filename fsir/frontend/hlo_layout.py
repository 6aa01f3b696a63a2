"""HLO instructions that make or move data without arithmetic: constant, iota, copy, convert,
bitcast-convert, reshape, bitcast (through both layouts), broadcast, transpose, slice,
dynamic-slice, dynamic-update-slice, concatenate, pad, reverse.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.errors import UserError
from fsir.frontend.builder import dense_i64
from fsir.frontend.hlo_parse import ArrayShape, Instr, Item, Operand

if TYPE_CHECKING:  # the importer calls these handlers; they only read its state
    from fsir.frontend.hlo import HloImporter


def constant(imp: HloImporter, instr: Instr, ops):
    t = imp.type_of(instr.shape, instr)
    if len(instr.operands) != 1:
        raise UserError(f"constant '{instr.name}' needs one literal", instr.loc)
    flat = _flatten_literal(instr.operands[0], instr)
    shape = shape_of(t)
    if len(flat) != math.prod(shape):
        raise UserError(f"constant '{instr.name}' has {len(flat)} values but shape {fmt_shape(instr.shape)}",
                        instr.loc)
    dtype = graph.numpy_dtype(t.element_type)
    try:
        array = np.array(flat, dtype=np.float64 if dtype.kind == "f" or dtype.kind == "V" else dtype)
    except (OverflowError, ValueError) as err:
        raise UserError(f"constant '{instr.name}' has a value out of range for {instr.shape.elem}: {err}",
                        instr.loc) from None
    return imp.b.constant(array.reshape(shape), t.element_type)


def iota(imp: HloImporter, instr, ops):
    t = imp.type_of(instr.shape, instr)
    return imp.b.iota(shape_of(t), imp.ints(instr, "iota_dimension")[0], t.element_type)


def copy(imp: HloImporter, instr, ops):
    return ops[0]  # layouts are physical; the logical value is unchanged


def convert(imp: HloImporter, instr, ops):
    return imp.b.convert(ops[0], imp.type_of(instr.shape, instr).element_type)


def bitcast_convert(imp: HloImporter, instr, ops):
    t = imp.type_of(instr.shape, instr)
    src = imp.b.elem(ops[0])
    if graph.bit_width(src) != graph.bit_width(t.element_type) or shape_of(t) != shape_of(ops[0].type):
        raise imp.unsupported(instr, "bitcast-convert between element types of different widths")
    return imp.b.emit(graph.BitcastOp, [ops[0]], t)


def reshape(imp: HloImporter, instr, ops):
    return imp.b.reshape(ops[0], imp.type_of(instr.shape, instr).get_shape())


def bitcast(imp: HloImporter, instr, ops):
    # A bitcast reinterprets the physical buffer: with non-default layouts it can be a
    # transpose. Go through the physical (major-to-minor) order of both shapes.
    src = _operand_shape(imp, instr, 0)
    dst = instr.shape
    if src is None or not isinstance(dst, ArrayShape):
        raise imp.unsupported(instr, "bitcast without known layouts")
    if src.elem != dst.elem:
        raise imp.unsupported(instr, "bitcast between element types")
    x = imp.b.transpose(ops[0], _major_to_minor(src))
    phys = _major_to_minor(dst)
    x = imp.b.reshape(x, [dst.dims[d] for d in phys])
    return imp.b.transpose(x, list(np.argsort(phys)))


def _operand_shape(imp: HloImporter, instr: Instr, index: int) -> ArrayShape | None:
    operand = instr.operands[index]
    return imp.shapes.get(operand.name) if isinstance(operand, Operand) else None


def broadcast(imp: HloImporter, instr, ops):
    t = imp.type_of(instr.shape, instr)
    return imp.b.broadcast(ops[0], t.get_shape(), imp.ints(instr, "dimensions"))


def transpose(imp: HloImporter, instr, ops):
    return imp.b.transpose(ops[0], imp.ints(instr, "dimensions"))


def slice_(imp: HloImporter, instr, ops):
    ranges = imp.attr(instr, "slice")
    start, limit, strides = [], [], []
    for r in ranges if isinstance(ranges, list) else []:
        parts = r[0].values if isinstance(r, list) and len(r) == 1 and isinstance(r[0], Item) else None
        if not parts or not all(isinstance(p, int) for p in parts) or len(parts) not in (2, 3):
            raise UserError(f"cannot read slice={{...}} of '{instr.name}' (expected [start:limit:stride])",
                            instr.attr_locs.get("slice", instr.loc))
        start.append(parts[0])
        limit.append(parts[1])
        strides.append(parts[2] if len(parts) == 3 else 1)
    return imp.b.slice(ops[0], start, limit, strides)


def dynamic_slice(imp: HloImporter, instr, ops):
    x, *idx = ops
    sizes = imp.ints(instr, "dynamic_slice_sizes")
    shape = shape_of(x.type)
    if len(idx) != len(shape) or len(sizes) != len(shape) or any(not 0 <= n <= s for n, s in zip(sizes, shape)):
        raise UserError(f"dynamic-slice '{instr.name}' needs a start index and a size within bounds per dim of "
                        f"its rank-{len(shape)} operand", instr.loc)
    start = []
    for d, v in enumerate(idx):
        value = imp.b.fold(v)
        if value is None:
            raise imp.unsupported(instr, "dynamic-slice with non-constant start indices")
        # XLA clamps start indices so the slice stays in bounds.
        start.append(int(np.clip(int(value.reshape(-1)[0]), 0, shape[d] - sizes[d])))
    return imp.b.slice(x, start, [s + n for s, n in zip(start, sizes)])


def dynamic_update_slice(imp: HloImporter, instr, ops):
    x, update, *idx = ops
    shape, ushape = shape_of(x.type), shape_of(update.type)
    if len(idx) != len(shape) or len(ushape) != len(shape) or any(u > s for u, s in zip(ushape, shape)):
        raise UserError(f"dynamic-update-slice '{instr.name}' needs an update no larger than its operand and "
                        "a start index per dim", instr.loc)
    start = []
    for d, v in enumerate(idx):
        value = imp.b.fold(v)
        if value is None:
            raise imp.unsupported(instr, "dynamic-update-slice with non-constant start indices")
        start.append(int(np.clip(int(value.reshape(-1)[0]), 0, shape[d] - ushape[d])))

    def place(x: SSAValue, dim: int) -> SSAValue:
        """x with the update written at `start`, built dim by dim from slices of x."""
        if dim == len(shape):
            return update
        s = list(shape_of(x.type))
        lo, hi = start[dim], start[dim] + ushape[dim]
        cut = lambda a, b: imp.b.slice(x, [0] * dim + [a] + [0] * (len(s) - dim - 1),  # noqa: E731
                                        s[:dim] + [b] + s[dim + 1:])
        parts = ([cut(0, lo)] if lo > 0 else []) + [place(cut(lo, hi), dim + 1)] \
            + ([cut(hi, s[dim])] if hi < s[dim] else [])
        return imp.b.concat(parts, dim)

    return place(x, 0)


def concatenate(imp: HloImporter, instr, ops):
    return imp.b.concat(ops, imp.ints(instr, "dimensions")[0])


def pad(imp: HloImporter, instr, ops):
    """graph.pad in constant mode: low_high[_interior] per dim (negative: removed)."""
    x, value = ops
    spec = imp.attr(instr, "padding")
    text = str(spec)
    dims = [[int(v) for v in d.split("_")] for d in text.split("x")] if not isinstance(spec, int) else None
    if not dims or any(len(d) not in (2, 3) for d in dims) or len(dims) != len(shape_of(x.type)):
        raise UserError(f"cannot read padding={text} of '{instr.name}' (expected low_high[_interior] per dim)",
                        instr.attr_locs.get("padding", instr.loc))
    low, high, interior = ([d[i] if i < len(d) else 0 for d in dims] for i in range(3))
    if not any(low) and not any(high) and not any(interior):
        return x
    return imp.b.emit(graph.PadOp, [x, value], mode=graph.PadModeAttr(graph.PadMode.CONSTANT),
                       low=dense_i64(low), high=dense_i64(high), interior=dense_i64(interior))


def reverse(imp: HloImporter, instr, ops):
    x = ops[0]
    for d in imp.ints(instr, "dimensions"):
        n = shape_of(x.type)[d]
        x = imp.b.take(x, imp.b.constant(np.arange(n - 1, -1, -1), graph.i32), d)
    return x


def _flatten_literal(lit, instr: Instr) -> list:
    out = []

    def walk(v):
        if isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, (int, float)):
            out.append(v)
        elif str(v) in ("true", "false"):
            out.append(str(v) == "true")
        elif str(v) == "...":
            raise UserError(f"constant '{instr.name}' was printed elided ({{...}}), so its values are not in "
                            "the file; JAX's compile().as_text() elides large constants: use "
                            "lower(...).as_text(dialect=\"hlo\") or pass the array as an argument", instr.loc)
        else:
            raise UserError(f"cannot read the literal '{v}' of constant '{instr.name}'", instr.loc)

    if isinstance(lit, Operand):  # `constant(true)` parses as a name
        lit = lit.name
    walk(lit)
    return out


def _major_to_minor(s: ArrayShape) -> list[int]:
    layout = s.layout if s.layout else tuple(reversed(range(len(s.dims))))
    return list(reversed(layout))


def fmt_shape(s) -> str:
    if isinstance(s, ArrayShape):
        return f"{s.elem}[{','.join(map(str, s.dims))}]"
    return "(" + ", ".join(fmt_shape(x) for x in s.shapes) + ")"
