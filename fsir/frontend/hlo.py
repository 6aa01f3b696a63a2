"""XLA HLO text → graph dialect.

    fs-opt model.hlo            # by extension
    fs-opt dump.txt -f hlo

Reads what JAX prints with `jax.jit(f).lower(...).as_text(dialect="hlo")` and the
optimized `....compile().as_text()` (fusions, layouts, metadata). `hlo_parse` turns the
text into small records (grammar: `hlo.lark`); this module emits graph ops instruction
by instruction, inlining `call` and `fusion` computations so fusion
decisions are fsir's own, not XLA's. Anything not understood is a UserError at the
`file:line:col` of the offending instruction.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import DYN, shape_of, tensor
from fsir.errors import Location, UserError
from fsir.frontend.builder import GraphBuilder, dense_i64
from fsir.frontend.hlo_parse import ArrayShape, Computation, Instr, Item, Operand, TupleShape, parse_hlo
from fsir.frontend.hlo_parse import clean_name as _clean
from fsir.ir import verify
from fsir.transforms.symbolic_dims import set_argument_dims

# ---------------------------------------------------------------------------
# Records → graph ops
# ---------------------------------------------------------------------------

_ELEM = {
    "pred": graph.i1, "s8": graph.IntegerType(8), "s16": graph.IntegerType(16), "s32": graph.i32,
    "s64": graph.IntegerType(64), "f16": graph.f16, "bf16": graph.bf16, "f32": graph.f32,
    "f64": graph.Float64Type(),
    # unsigned integers (element types)
    "u8": graph.unsigned(8), "u16": graph.unsigned(16), "u32": graph.unsigned(32), "u64": graph.unsigned(64),
}

# HLO opcode -> graph elementwise op name
_ELEMENTWISE = {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "maximum": "max",
    "minimum": "min", "power": "pow", "remainder": "rem", "and": "and", "or": "or", "xor": "xor",
    "negate": "neg", "abs": "abs", "exponential": "exp", "log": "log", "tanh": "tanh",
    "logistic": "sigmoid", "sqrt": "sqrt", "rsqrt": "rsqrt", "erf": "erf", "floor": "floor",
    "ceil": "ceil", "not": "not",
}

_MANY = 1 << 30
# (fewest, most) operands of each opcode the importer reads, checked before its handler runs
_ELEMENTWISE_ARITY = {op: (graph.ELEMENTWISE[name].arity,) * 2 for op, name in _ELEMENTWISE.items()}
_ARITY = {
    "constant": (0, 0), "iota": (0, 0), "copy": (1, 1), "convert": (1, 1), "reshape": (1, 1), "bitcast": (1, 1),
    "broadcast": (1, 1), "transpose": (1, 1), "slice": (1, 1), "dynamic-slice": (1, _MANY),
    "dynamic-update-slice": (2, _MANY), "concatenate": (1, _MANY), "pad": (2, 2), "compare": (2, 2),
    "select": (3, 3), "clamp": (3, 3), "exponential-minus-one": (1, 1), "log-plus-one": (1, 1), "sign": (1, 1),
    "is-finite": (1, 1), "reverse": (1, 1), "get-tuple-element": (1, 1), "reduce": (2, _MANY),
    "reduce-window": (2, _MANY), "dot": (2, 2), "gather": (2, 2), "convolution": (2, 2), "bitcast-convert": (1, 1),
    "scatter": (3, _MANY), "sort": (1, _MANY), "while": (1, 1),
}
_TUPLE_OPERANDS = ("tuple", "get-tuple-element", "call", "fusion", "while")  # opcodes that take tuples
MAX_WHILE_TRIPS = 64  # a while is unrolled: longer loops are refused

# to_apply root opcode -> graph.reduce kind (its identity: graph.reduce_identity)
_REDUCERS = {"add": graph.ReduceKind.SUM, "maximum": graph.ReduceKind.MAX, "minimum": graph.ReduceKind.MIN,
             "multiply": graph.ReduceKind.PROD}


Value = Any  # SSAValue, or a list of Values for tuples


class HloImporter:
    def __init__(self, comps: list[Computation], filename: str):
        self.comps = {c.name: c for c in comps}
        self.filename = filename
        self.b = GraphBuilder(filename)
        self._shapes: dict[str, Any] = {}  # declared shapes (with layouts) of the current computation

    # -- entry point -----------------------------------------------------------

    def run(self) -> ModuleOp:
        if not self.comps:
            raise UserError("the HLO module has no computations", Location(self.filename, 1, 1))
        entries = [c for c in self.comps.values() if c.entry]
        entry = entries[0] if entries else list(self.comps.values())[-1]
        params = sorted((i for i in entry.instrs if i.opcode == "parameter"), key=self._param_number)
        args = []
        for i in params:
            self.b.loc = i.loc
            args.append(self.b.add_arg(self._type(i.shape, i), _arg_name(i.name)))
        out = self.run_computation(entry, args)
        results = out if isinstance(out, list) else [out]
        if any(isinstance(r, list) for r in results):
            raise UserError("nested tuples as results are not supported", entry.root.loc)
        name = entry.name.rsplit(".", 1)[0] if entry.name.rsplit(".", 1)[-1].isdigit() else entry.name
        self.b.loc = entry.root.loc
        module = self.b.finish(name, results)
        set_argument_dims(module, [_argument_dims(i) for i in params])
        return module

    def _param_number(self, i: Instr) -> int:
        if len(i.operands) != 1 or not isinstance(i.operands[0], int):
            raise UserError(f"parameter '{i.name}' needs one integer operand", i.loc)
        return i.operands[0]

    def run_computation(self, comp: Computation, args: list[Value]) -> Value:
        saved = self._shapes
        self._shapes = {i.name: i.shape for i in comp.instrs}
        try:
            return self._run_computation(comp, args)
        finally:
            self._shapes = saved

    def _run_computation(self, comp: Computation, args: list[Value]) -> Value:
        env: dict[str, Value] = {}
        for instr in comp.instrs:
            self.b.loc = instr.loc
            if instr.opcode == "parameter":
                n = self._param_number(instr)
                if not 0 <= n < len(args):
                    raise UserError(f"parameter({n}) but computation '{comp.name}' gets {len(args)} operands",
                                    instr.loc)
                env[instr.name] = args[n]
                continue
            operands = []
            for o in instr.operands:
                if isinstance(o, Operand) and instr.opcode != "constant":  # constant(true)
                    if o.name not in env:
                        raise UserError(f"'{o.name}' is not defined before its use", o.loc)
                    operands.append(env[o.name])
            value = self.instruction(instr, operands)
            self._check_shape(instr, value)
            env[instr.name] = value
        return env[comp.root.name]

    # -- helpers ---------------------------------------------------------------

    def _type(self, shape, instr: Instr):
        if not isinstance(shape, ArrayShape):
            raise UserError(f"'{instr.name}': tuple-shaped {instr.opcode} is not supported here", instr.loc)
        if shape.elem not in _ELEM:
            raise UserError(f"element type '{shape.elem}' is not supported "
                            f"(fsir supports {', '.join(_ELEM)})", shape.loc)
        return tensor(_ELEM[shape.elem], shape.dims)

    def _check_shape(self, instr: Instr, value: Value) -> None:
        if isinstance(instr.shape, ArrayShape) and isinstance(value, SSAValue):
            want = self._type(instr.shape, instr)
            if value.type != want:
                raise UserError(f"'{instr.name}' is declared {_fmt(instr.shape)} but its {instr.opcode} "
                                f"computes {value.type}", instr.loc)

    def attr(self, instr: Instr, name: str, default: Any = ...) -> Any:
        if name in instr.attrs:
            return instr.attrs[name]
        if default is ...:
            raise UserError(f"{instr.opcode} '{instr.name}' needs the attribute '{name}'", instr.loc)
        return default

    def ints(self, instr: Instr, name: str, default: Any = ...) -> list[int]:
        value = self.attr(instr, name, default)
        values = [value] if isinstance(value, int) else value
        if isinstance(values, list) and all(isinstance(v, int) and -(1 << 63) <= v < 1 << 63 for v in values):
            return list(values)
        raise UserError(f"attribute '{name}' of '{instr.name}' must be a list of 64-bit integers like {{0,1}}",
                        instr.attr_locs.get(name, instr.loc))

    def computation_attr(self, instr: Instr, name: str) -> Computation:
        target = _clean(str(self.attr(instr, name)))
        if target not in self.comps:
            raise UserError(f"'{instr.name}' refers to unknown computation '{target}'",
                            instr.attr_locs.get(name, instr.loc))
        return self.comps[target]

    def unsupported(self, instr: Instr, what: str | None = None) -> UserError:
        what = what or f"HLO instruction '{instr.opcode}'"
        return UserError(f"{what} is not supported by the HLO importer ('{instr.name}')", instr.loc)

    # -- instructions ----------------------------------------------------------

    def instruction(self, instr: Instr, ops: list[Value]) -> Value:
        op = instr.opcode
        b = self.b
        handler = getattr(self, "op_" + op.replace("-", "_"), None)
        if handler is None and op not in _ELEMENTWISE:
            if op == "custom-call":
                target = self.attr(instr, "custom_call_target", "?")
                raise self.unsupported(instr, f"custom-call to '{target}'")
            raise self.unsupported(instr)
        arity = _ELEMENTWISE_ARITY.get(op) if op in _ELEMENTWISE else _ARITY.get(op)
        if arity is not None and not arity[0] <= len(ops) <= arity[1]:
            expected = str(arity[0]) if arity[0] == arity[1] else \
                f"{arity[0]} to {arity[1]}" if arity[1] < _MANY else f"at least {arity[0]}"
            raise UserError(f"{op} '{instr.name}' takes {expected} operands, got {len(ops)}", instr.loc)
        if any(isinstance(v, list) for v in ops) and op not in _TUPLE_OPERANDS:
            raise UserError(f"'{instr.name}': {op} of a tuple operand is not supported", instr.loc)
        if op in _ELEMENTWISE:
            return b.ew(_ELEMENTWISE[op], *ops)
        assert handler is not None  # an op that is not elementwise was checked to have one
        return handler(instr, ops)

    def op_constant(self, instr: Instr, ops):
        t = self._type(instr.shape, instr)
        if len(instr.operands) != 1:
            raise UserError(f"constant '{instr.name}' needs one literal", instr.loc)
        flat = _flatten_literal(instr.operands[0], instr)
        shape = shape_of(t)
        if len(flat) != math.prod(shape):
            raise UserError(f"constant '{instr.name}' has {len(flat)} values but shape {_fmt(instr.shape)}",
                            instr.loc)
        dtype = graph.numpy_dtype(t.element_type)
        try:
            array = np.array(flat, dtype=np.float64 if dtype.kind == "f" or dtype.kind == "V" else dtype)
        except (OverflowError, ValueError) as err:
            raise UserError(f"constant '{instr.name}' has a value out of range for {instr.shape.elem}: {err}",
                            instr.loc) from None
        return self.b.constant(array.reshape(shape), t.element_type)

    def op_iota(self, instr, ops):
        t = self._type(instr.shape, instr)
        return self.b.iota(shape_of(t), self.ints(instr, "iota_dimension")[0], t.element_type)

    def op_copy(self, instr, ops):
        return ops[0]  # layouts are physical; the logical value is unchanged

    def op_convert(self, instr, ops):
        return self.b.convert(ops[0], self._type(instr.shape, instr).element_type)

    def op_bitcast_convert(self, instr, ops):
        t = self._type(instr.shape, instr)
        src = self.b.elem(ops[0])
        if graph.bit_width(src) != graph.bit_width(t.element_type) or shape_of(t) != shape_of(ops[0].type):
            raise self.unsupported(instr, "bitcast-convert between element types of different widths")
        return self.b.emit(graph.BitcastOp, [ops[0]], t)

    def op_reshape(self, instr, ops):
        return self.b.reshape(ops[0], self._type(instr.shape, instr).get_shape())

    def op_bitcast(self, instr, ops):
        # A bitcast reinterprets the physical buffer: with non-default layouts it can be a
        # transpose. Go through the physical (major-to-minor) order of both shapes.
        src = self._operand_shape(instr, 0)
        dst = instr.shape
        if src is None or not isinstance(dst, ArrayShape):
            raise self.unsupported(instr, "bitcast without known layouts")
        if src.elem != dst.elem:
            raise self.unsupported(instr, "bitcast between element types")
        x = self.b.transpose(ops[0], _major_to_minor(src))
        phys = _major_to_minor(dst)
        x = self.b.reshape(x, [dst.dims[d] for d in phys])
        return self.b.transpose(x, list(np.argsort(phys)))

    def _operand_shape(self, instr: Instr, index: int) -> ArrayShape | None:
        operand = instr.operands[index]
        return self._shapes.get(operand.name) if isinstance(operand, Operand) else None

    def op_broadcast(self, instr, ops):
        t = self._type(instr.shape, instr)
        return self.b.broadcast(ops[0], t.get_shape(), self.ints(instr, "dimensions"))

    def op_transpose(self, instr, ops):
        return self.b.transpose(ops[0], self.ints(instr, "dimensions"))

    def op_slice(self, instr, ops):
        ranges = self.attr(instr, "slice")
        start, limit, strides = [], [], []
        for r in ranges if isinstance(ranges, list) else []:
            parts = r[0].values if isinstance(r, list) and len(r) == 1 and isinstance(r[0], Item) else None
            if not parts or not all(isinstance(p, int) for p in parts) or len(parts) not in (2, 3):
                raise UserError(f"cannot read slice={{...}} of '{instr.name}' (expected [start:limit:stride])",
                                instr.attr_locs.get("slice", instr.loc))
            start.append(parts[0])
            limit.append(parts[1])
            strides.append(parts[2] if len(parts) == 3 else 1)
        return self.b.slice(ops[0], start, limit, strides)

    def op_dynamic_slice(self, instr, ops):
        x, *idx = ops
        sizes = self.ints(instr, "dynamic_slice_sizes")
        shape = shape_of(x.type)
        if len(idx) != len(shape) or len(sizes) != len(shape) or any(not 0 <= n <= s for n, s in zip(sizes, shape)):
            raise UserError(f"dynamic-slice '{instr.name}' needs a start index and a size within bounds per dim of "
                            f"its rank-{len(shape)} operand", instr.loc)
        start = []
        for d, v in enumerate(idx):
            value = self.b.fold(v)
            if value is None:
                raise self.unsupported(instr, "dynamic-slice with non-constant start indices")
            # XLA clamps start indices so the slice stays in bounds.
            start.append(int(np.clip(int(value.reshape(-1)[0]), 0, shape[d] - sizes[d])))
        return self.b.slice(x, start, [s + n for s, n in zip(start, sizes)])

    def op_dynamic_update_slice(self, instr, ops):
        x, update, *idx = ops
        shape, ushape = shape_of(x.type), shape_of(update.type)
        if len(idx) != len(shape) or len(ushape) != len(shape) or any(u > s for u, s in zip(ushape, shape)):
            raise UserError(f"dynamic-update-slice '{instr.name}' needs an update no larger than its operand and "
                            "a start index per dim", instr.loc)
        start = []
        for d, v in enumerate(idx):
            value = self.b.fold(v)
            if value is None:
                raise self.unsupported(instr, "dynamic-update-slice with non-constant start indices")
            start.append(int(np.clip(int(value.reshape(-1)[0]), 0, shape[d] - ushape[d])))

        def place(x: SSAValue, dim: int) -> SSAValue:
            """x with the update written at `start`, built dim by dim from slices of x."""
            if dim == len(shape):
                return update
            s = list(shape_of(x.type))
            lo, hi = start[dim], start[dim] + ushape[dim]
            cut = lambda a, b: self.b.slice(x, [0] * dim + [a] + [0] * (len(s) - dim - 1),  # noqa: E731
                                            s[:dim] + [b] + s[dim + 1:])
            parts = ([cut(0, lo)] if lo > 0 else []) + [place(cut(lo, hi), dim + 1)] \
                + ([cut(hi, s[dim])] if hi < s[dim] else [])
            return self.b.concat(parts, dim)

        return place(x, 0)

    def op_concatenate(self, instr, ops):
        return self.b.concat(ops, self.ints(instr, "dimensions")[0])

    def op_pad(self, instr, ops):
        """graph.pad in constant mode: low_high[_interior] per dim (negative: removed)."""
        x, value = ops
        spec = self.attr(instr, "padding")
        text = str(spec)
        dims = [[int(v) for v in d.split("_")] for d in text.split("x")] if not isinstance(spec, int) else None
        if not dims or any(len(d) not in (2, 3) for d in dims) or len(dims) != len(shape_of(x.type)):
            raise UserError(f"cannot read padding={text} of '{instr.name}' (expected low_high[_interior] per dim)",
                            instr.attr_locs.get("padding", instr.loc))
        low, high, interior = ([d[i] if i < len(d) else 0 for d in dims] for i in range(3))
        if not any(low) and not any(high) and not any(interior):
            return x
        return self.b.emit(graph.PadOp, [x, value], mode=graph.PadModeAttr(graph.PadMode.CONSTANT),
                           low=dense_i64(low), high=dense_i64(high), interior=dense_i64(interior))

    def op_compare(self, instr, ops):
        direction = str(self.attr(instr, "direction")).lower()
        if direction not in tuple(graph.CompareDirection):
            raise UserError(f"unknown comparison direction '{direction.upper()}'",
                            instr.attr_locs.get("direction", instr.loc))
        return self.b.compare(direction, *ops)

    def op_select(self, instr, ops):
        c, a, x = ops
        if shape_of(c.type) != shape_of(a.type):
            c = self.b.broadcast(c, shape_of(a.type), [])
        return self.b.select(c, a, x)

    def op_clamp(self, instr, ops):
        lo, x, hi = ops
        shape = shape_of(x.type)
        lo = self.b.broadcast(lo, shape, []) if shape_of(lo.type) != shape else lo
        hi = self.b.broadcast(hi, shape, []) if shape_of(hi.type) != shape else hi
        return self.b.ew("min", self.b.ew("max", x, lo), hi)

    def op_exponential_minus_one(self, instr, ops):
        return self.b.ew("sub", self.b.ew("exp", ops[0]), self.b.scalar_like(1, ops[0]))

    def op_log_plus_one(self, instr, ops):
        return self.b.ew("log", self.b.ew("add", ops[0], self.b.scalar_like(1, ops[0])))

    def op_sign(self, instr, ops):
        x = ops[0]
        zero = self.b.scalar_like(0, x)
        pos = self.b.convert(self.b.compare("gt", x, zero), self.b.elem(x))
        neg = self.b.convert(self.b.compare("lt", x, zero), self.b.elem(x))
        return self.b.ew("sub", pos, neg)

    def op_is_finite(self, instr, ops):
        x = ops[0]  # x - x is 0 for finite x and NaN for inf and NaN
        return self.b.compare("eq", self.b.ew("sub", x, x), self.b.scalar_like(0, x))

    def op_reverse(self, instr, ops):
        x = ops[0]
        for d in self.ints(instr, "dimensions"):
            n = shape_of(x.type)[d]
            x = self.b.take(x, self.b.constant(np.arange(n - 1, -1, -1), graph.i32), d)
        return x

    def op_tuple(self, instr, ops):
        return list(ops)

    def op_get_tuple_element(self, instr, ops):
        index = self.ints(instr, "index")[0]
        if not isinstance(ops[0], list) or not 0 <= index < len(ops[0]):
            raise UserError(f"get-tuple-element index {index} is out of range", instr.loc)
        return ops[0][index]

    def op_call(self, instr, ops):
        return self._inline(instr, "to_apply", ops)

    def op_fusion(self, instr, ops):
        return self._inline(instr, "calls", ops)

    def _inline(self, instr, attr, ops):
        comp = self.computation_attr(instr, attr)
        try:
            return self.run_computation(comp, ops)
        finally:
            self.b.loc = instr.loc

    def op_reduce(self, instr, ops):
        n = len(ops) // 2
        inputs, inits = ops[:n], ops[n:]
        dims = self.ints(instr, "dimensions")
        if any(not 0 <= d < len(shape_of(x.type)) for x in inputs for d in dims) or len(set(dims)) != len(dims):
            raise UserError(f"reduce '{instr.name}': dimensions {dims} must be distinct dims of its operands",
                            instr.attr_locs.get("dimensions", instr.loc))
        region = self.computation_attr(instr, "to_apply")
        if n == 2:
            return self._arg_reduce(instr, region, inputs, inits, dims)
        if n != 1:
            raise self.unsupported(instr, f"variadic reduce of {n} operands")
        return self._reduce_one(instr, inputs[0], inits[0], dims)

    def _reduce_one(self, instr, x, init, dims):
        region = self.computation_attr(instr, "to_apply")
        root = region.root
        params = {i.name: self._param_number(i) for i in region.instrs if i.opcode == "parameter"}
        args = [o.name for o in root.operands if isinstance(o, Operand)]
        if root.opcode not in (*_REDUCERS, "and", "or") or sorted(params.get(a, -1) for a in args) != [0, 1]:
            raise self.unsupported(instr, f"{instr.opcode} whose to_apply computation '{region.name}' is "
                                          "not a single add/maximum/minimum/multiply/and/or of its parameters")
        if graph.is_bool(self.b.elem(x)) and root.opcode in ("and", "or"):
            # all / any: min / max over 0-1 integers
            kind = graph.ReduceKind.MIN if root.opcode == "and" else graph.ReduceKind.MAX
            as_int = self.b.reduce(kind, self.b.convert(x, graph.i32), dims)
            out = self.b.compare("ne", as_int, self.b.scalar_like(0, as_int))
            return self.b.ew(root.opcode, out, self.b.broadcast(init, shape_of(out.type), []))
        kind = _REDUCERS[root.opcode]
        x, dims = _merge_tiled_reduce(kind, x, dims)
        out = self.b.reduce(kind, x, dims)
        init_value = self.b.fold(init)
        dtype = graph.numpy_dtype(self.b.elem(x))
        if init_value is None or init_value.reshape(-1)[0] != graph.reduce_identity(kind, dtype):
            # A non-identity init takes part in the reduction once.
            out = self.b.ew(_REDUCE_EW[kind], out,
                            self.b.broadcast(init, shape_of(out.type), []))
        return out

    def op_reduce_window(self, instr, ops):
        """graph.reduce_window (size, stride, window dilation `rhs_dilate`, padding `pad`
        low_high per dim, negative padding removed first). Non-overlapping tiles without
        padding become a reshape and a reduce: XLA's CPU pipeline splits long row
        reductions into such a reduce-window and a reduce, which `_reduce_one` merges
        back into the row reduction."""
        if len(ops) != 2:
            raise self.unsupported(instr, "variadic reduce-window")
        x, init = ops
        window = self.attr(instr, "window")
        fields = {str(i.values[0]): str(i.values[1]) for i in window if isinstance(i, Item) and i.seps == ["="]}
        shape = shape_of(x.type)
        rank = len(shape)
        loc = instr.attr_locs.get("window", instr.loc)

        def field(name: str, default: list[int]) -> list[list[int]]:
            text = fields.get(name)
            if text is None:
                return [default] * rank
            try:
                values = [[int(v) for v in d.split("_")] for d in text.split("x")]
            except ValueError:
                values = []
            if len(values) != rank:
                raise UserError(f"cannot read {name}={text} in window={{...}} of '{instr.name}' "
                                f"({rank} entries expected)", loc)
            return values

        unknown = set(fields) - {"size", "stride", "pad", "rhs_dilate", "lhs_dilate"}
        if "size" not in fields or unknown:
            raise self.unsupported(instr, f"reduce-window with window fields {sorted(unknown) or 'without size'}")
        size = [v[0] for v in field("size", [1])]
        stride = [v[0] for v in field("stride", [1])]
        dilate = [v[0] for v in field("rhs_dilate", [1])]
        pad = field("pad", [0, 0])
        if any(v[0] != 1 for v in field("lhs_dilate", [1])):
            raise self.unsupported(instr, "reduce-window with base dilation (lhs_dilate)")
        if any(len(p) != 2 for p in pad):
            raise UserError(f"cannot read pad={fields.get('pad')} of '{instr.name}' (expected low_high per dim)", loc)
        low, high = [p[0] for p in pad], [p[1] for p in pad]
        if (stride == size and set(dilate) == {1} and not any(low) and not any(high)
                and not any(n % k for n, k in zip(shape, size))):
            tiled, dims = [], []
            for n, k in zip(shape, size):
                tiled += [n // k, k] if k > 1 else [n]
                if k > 1:
                    dims.append(len(tiled) - 1)
            return self._reduce_one(instr, self.b.reshape(x, tiled), init, dims)
        kind = self._reducer_kind(instr, x)
        if min(low) < 0 or min(high) < 0:
            x = self.b.slice(x, [max(-lo, 0) for lo in low], [n - max(-hi, 0) for n, hi in zip(shape, high)])
            low, high = [max(lo, 0) for lo in low], [max(hi, 0) for hi in high]
        init_value = self.b.fold(init)
        dtype = graph.numpy_dtype(self.b.elem(x))
        identity = init_value is not None and init_value.reshape(-1)[0] == graph.reduce_identity(kind, dtype)
        if not identity and kind in (graph.ReduceKind.SUM, graph.ReduceKind.PROD) and (any(low) or any(high)):
            # padded positions hold the init value, which would count once per position
            raise self.unsupported(instr, f"padded reduce-window whose init value is not the {kind}'s identity")
        out = self.b.emit(graph.ReduceWindowOp, [x], kind=graph.ReduceKindAttr(kind),
                          window=dense_i64(size), strides=dense_i64(stride), dilations=dense_i64(dilate),
                          low=dense_i64(low), high=dense_i64(high))
        if not identity:  # a non-identity init takes part in every window once
            out = self.b.ew(_REDUCE_EW[kind], out, self.b.broadcast(init, shape_of(out.type), []))
        # JAX's average pool counts each window's elements by a reduce-window over ones
        folded = self.b.fold(out)
        return out if folded is None else self.b.constant(folded, self.b.elem(out))

    def _reducer_kind(self, instr, x) -> graph.ReduceKind:
        """The graph reduction kind of a to_apply computation that is a single
        add/maximum/minimum/multiply of its two parameters."""
        region = self.computation_attr(instr, "to_apply")
        root = region.root
        params = {i.name: self._param_number(i) for i in region.instrs if i.opcode == "parameter"}
        args = [o.name for o in root.operands if isinstance(o, Operand)]
        if root.opcode not in _REDUCERS or sorted(params.get(a, -1) for a in args) != [0, 1] \
                or graph.is_bool(self.b.elem(x)):
            raise self.unsupported(instr, f"{instr.opcode} whose to_apply computation '{region.name}' is "
                                          "not a single add/maximum/minimum/multiply of its parameters")
        return _REDUCERS[root.opcode]

    def _arg_reduce(self, instr, region, inputs, inits, dims):
        """JAX's argmax/argmin: a reduce over (values, indices) whose comparator keeps the
        larger (smaller) value and, on ties, the smaller index. Lowered to a max (min)
        reduce, then a min reduce over the indices where the value equals it."""
        compares = [i for i in region.instrs if i.opcode == "compare"]
        names = {i.name: self._param_number(i) for i in region.instrs if i.opcode == "parameter"}
        kind = None
        for c in compares:
            args = [names.get(o.name) for o in c.operands if isinstance(o, Operand)]
            direction = str(c.attrs.get("direction", ""))
            if args == [0, 2] and direction in ("GT", "LT"):
                kind = graph.ReduceKind.MAX if direction == "GT" else graph.ReduceKind.MIN
        if kind is None or not isinstance(region.root.shape, TupleShape):
            raise self.unsupported(instr, "variadic reduce (other than argmax/argmin)")
        values, indices = inputs
        best = self.b.reduce(kind, values, dims)
        keep = [d for d in range(len(shape_of(values.type))) if d not in dims]
        full = self.b.broadcast(best, shape_of(values.type), keep)
        hit = self.b.compare("eq", values, full)
        idx_dtype = graph.numpy_dtype(self.b.elem(indices))
        big = self.b.scalar_like(np.iinfo(idx_dtype).max, indices)
        index = self.b.reduce("min", self.b.select(hit, indices, big), dims)
        return [best, index]

    def op_dot(self, instr, ops):
        a, c = ops
        out_elem = self._type(instr.shape, instr).element_type
        a, c = self.b.convert(a, out_elem), self.b.convert(c, out_elem)
        lb, lc = self.ints(instr, "lhs_batch_dims", []), self.ints(instr, "lhs_contracting_dims", [])
        rb, rc = self.ints(instr, "rhs_batch_dims", []), self.ints(instr, "rhs_contracting_dims", [])
        return self.b.dot_general(a, c, lb, lc, rb, rc)

    # -- convolution ------------------------------------------------------------

    def op_convolution(self, instr, ops):
        """XLA's convolution (`dim_labels=b01f_01io->b01f`, `window={size= stride= pad=
        lhs_dilate= rhs_dilate=}`, `feature_group_count`) as one graph.conv in its
        [batch, feature, spatial...] layout, with transposes to and from the labelled
        layouts."""
        x, w = ops
        out_elem = self._type(instr.shape, instr).element_type
        x, w = self.b.convert(x, out_elem), self.b.convert(w, out_elem)
        rank = len(shape_of(x.type))
        where = instr.attr_locs.get("dim_labels", instr.loc)
        labels = str(self.attr(instr, "dim_labels"))
        lhs, _, rest = labels.partition("_")
        rhs, _, out = rest.partition("->")
        spatial = [str(i) for i in range(rank - 2)]
        for text, need in ((lhs, ["b", "f", *spatial]), (rhs, ["i", "o", *spatial]), (out, ["b", "f", *spatial])):
            if sorted(text) != sorted(need):
                raise UserError(f"cannot read dim_labels={labels} of '{instr.name}' for rank-{rank} operands "
                                "(expected e.g. b01f_01io->b01f)", where)
        if int(self.attr(instr, "batch_group_count", 1)) != 1:
            raise self.unsupported(instr, "convolution with batch_group_count")
        groups = int(self.attr(instr, "feature_group_count", 1))
        x = self.b.transpose(x, [lhs.index(c) for c in ["b", "f", *spatial]])
        w = self.b.transpose(w, [rhs.index(c) for c in ["o", "i", *spatial]])
        kernel = list(shape_of(w.type)[2:])
        window = self.attr(instr, "window", None)
        fields = {str(i.values[0]): str(i.values[1]) for i in window or []
                  if isinstance(i, Item) and i.seps == ["="]}
        unknown = set(fields) - {"size", "stride", "pad", "lhs_dilate", "rhs_dilate"}
        if unknown:
            raise self.unsupported(instr, f"convolution window field(s) {', '.join(sorted(unknown))}")

        def sizes(name: str, default: int) -> list[int]:
            text = fields.get(name)
            values = [default] * len(kernel) if text is None else [int(v) for v in text.split("x")]
            if len(values) != len(kernel):
                raise UserError(f"window {name}={text} of '{instr.name}' needs {len(kernel)} sizes",
                                instr.attr_locs.get("window", instr.loc))
            return values

        if "size" in fields and sizes("size", 1) != kernel:
            raise UserError(f"window size={fields['size']} of '{instr.name}' does not match the kernel "
                            f"{'x'.join(map(str, kernel))}", instr.attr_locs.get("window", instr.loc))
        pads = [[int(v) for v in d.split("_")] for d in fields["pad"].split("x")] if "pad" in fields else \
            [[0, 0]] * len(kernel)
        if len(pads) != len(kernel) or any(len(p) != 2 for p in pads):
            raise UserError(f"window pad={fields.get('pad')} of '{instr.name}' needs low_high for {len(kernel)} "
                            "dims", instr.attr_locs.get("window", instr.loc))
        y = self.b.conv(x, w, sizes("stride", 1), [p[0] for p in pads], [p[1] for p in pads],
                        sizes("rhs_dilate", 1), sizes("lhs_dilate", 1), groups)
        ours = ["b", "f", *spatial]
        return self.b.transpose(y, [ours.index(c) for c in out])

    def op_gather(self, instr, ops):
        """Gathers of single elements along the indexed dims and whole extents along the
        others: embedding lookups, take along any axis, take_along_axis, x[i, j]. The
        indexed dims are flattened into one, so one graph.gather does the lookup."""
        table, ids = ops
        b = self.b
        ts, ish = shape_of(table.type), list(shape_of(ids.type))
        start_map = self.ints(instr, "start_index_map")
        collapsed = self.ints(instr, "collapsed_slice_dims", [])
        offset_dims = self.ints(instr, "offset_dims", [])
        sizes = self.ints(instr, "slice_sizes")
        ivd = self.ints(instr, "index_vector_dim", [len(ish)])[0]
        # Batching dims (take_along_axis): operand dim i is indexed by the position along
        # indices dim j, i.e. by an iota; they are collapsed.
        op_batch = self.ints(instr, "operand_batching_dims", [])
        idx_batch = [d - (d > ivd) for d in self.ints(instr, "start_indices_batching_dims", [])]
        if (not set(collapsed) <= set(start_map) or any(sizes[d] != 1 for d in start_map + op_batch)
                or any(sizes[d] != ts[d] for d in range(len(ts)) if d not in start_map + op_batch)):
            raise self.unsupported(instr, "gather of windows (slice sizes other than 1 along indexed "
                                          "dims and whole extents along the others)")
        if not start_map + op_batch:
            raise self.unsupported(instr, "gather without indexed dims")
        if ivd == len(ish):  # scalar indices: an index vector of length 1
            ids = b.reshape(ids, ish + [1])
            ish.append(1)
        else:  # the index vector dim goes last
            ids = b.transpose(ids, [d for d in range(len(ish)) if d != ivd] + [ivd])
            ish = [s for d, s in enumerate(ish) if d != ivd] + [ish[ivd]]
        batch = ish[:-1]
        cols = [b.reshape(b.slice(ids, [0] * len(batch) + [j], batch + [j + 1]), batch)
                for j in range(len(start_map))]
        cols += [b.iota(batch, j, b.elem(ids)) for j in idx_batch]
        start_map, collapsed = start_map + op_batch, collapsed + op_batch
        flat = None
        for j, (d, col) in enumerate(zip(start_map, cols)):
            if len(start_map) > 1:  # XLA clamps each start index into its dim
                col = b.ew("min", b.ew("max", col, b.scalar_like(0, col)), b.scalar_like(ts[d] - 1, col))
                stride = math.prod(ts[e] for e in start_map[j + 1:])
                col = b.ew("mul", col, b.scalar_like(stride, col)) if stride != 1 else col
            flat = col if flat is None else b.ew("add", flat, col)
        rest = [d for d in range(len(ts)) if d not in start_map]
        rows = b.reshape(b.transpose(table, start_map + rest), [math.prod(ts[d] for d in start_map)]
                         + [ts[d] for d in rest])
        assert flat is not None  # start_map + op_batch is not empty
        out = b.gather(rows, flat)  # [batch..., rest dims...]
        # natural order: batch dims, then the slice dims not collapsed, in operand order
        offset_src = [d for d in range(len(ts)) if d not in collapsed]
        natural = batch + [ts[d] if d in rest else 1 for d in offset_src]
        out = b.reshape(out, natural)
        rank = len(natural)
        if len(offset_dims) != len(offset_src) or sorted(set(offset_dims)) != sorted(offset_dims) \
                or any(not 0 <= d < rank for d in offset_dims):
            raise UserError(f"offset_dims={{{','.join(map(str, offset_dims))}}} of '{instr.name}' must be "
                            f"{len(offset_src)} distinct dims of its rank-{rank} result",
                            instr.attr_locs.get("offset_dims", instr.loc))
        perm = [0] * rank  # result dim offset_dims[k] is offset k; the others are batch dims
        for k, d in enumerate(offset_dims):
            perm[d] = len(batch) + k
        for k, d in enumerate(d for d in range(rank) if d not in offset_dims):
            perm[d] = k
        return b.transpose(out, perm)

    # -- scatter, sort, while ---------------------------------------------------

    def op_scatter(self, instr, ops):
        """XLA scatter of point updates: each index vector names one element of the
        scattered dims and the update covers the other dims whole (ONNX ScatterND, JAX's
        `x.at[i].set/add/mul/max/min`). The update computation (`to_apply`) must return
        its second parameter (assignment) or add/multiply/maximum/minimum its two."""
        if len(ops) != 3:
            raise self.unsupported(instr, f"variadic scatter of {(len(ops) - 1) // 2} operands")
        x, ids, upd = ops
        b = self.b
        xs, ish, us = shape_of(x.type), list(shape_of(ids.type)), list(shape_of(upd.type))
        window_dims = self.ints(instr, "update_window_dims", [])
        inserted = self.ints(instr, "inserted_window_dims", [])
        dims = self.ints(instr, "scatter_dims_to_operand_dims")
        ivd = self.ints(instr, "index_vector_dim", [len(ish)])[0]
        if self.ints(instr, "input_batching_dims", []) or self.ints(instr, "scatter_indices_batching_dims", []):
            raise self.unsupported(instr, "scatter with batching dims")
        kind = self._scatter_kind(instr)
        if not 0 <= ivd <= len(ish):
            raise UserError(f"index_vector_dim={ivd} of '{instr.name}' is out of range for rank-{len(ish)} "
                            "indices", instr.attr_locs.get("index_vector_dim", instr.loc))
        if ivd == len(ish):  # scalar indices: index vectors of one entry
            ids = b.reshape(ids, ish + [1])
        elif ivd != len(ish) - 1:
            ids = b.transpose(ids, [d for d in range(len(ish)) if d != ivd] + [ivd])
        batch = list(shape_of(ids.type)[:-1])
        # the window: every operand dim not inserted, in order; the scattered ones that are
        # not inserted must have window size 1 (a point) and the others must be whole
        window_src = [d for d in range(len(xs)) if d not in inserted]
        if (not set(inserted) <= set(dims) or len(window_dims) != len(window_src)
                or sorted(set(window_dims)) != window_dims or any(not 0 <= d < len(us) for d in window_dims)
                or len(us) != len(batch) + len(window_dims)):
            raise UserError(f"'{instr.name}': update_window_dims, inserted_window_dims and "
                            "scatter_dims_to_operand_dims do not fit the operand, indices and updates", instr.loc)
        sizes = [us[w] for w in window_dims]
        for d, n in zip(window_src, sizes):
            if (d in dims and n != 1) or (d not in dims and n != xs[d]):
                raise self.unsupported(instr, "scatter of partial windows (updates other than points along "
                                              "the scattered dims and whole extents along the others)")
        scatter_pos = [d for d in range(len(us)) if d not in window_dims]
        upd = b.transpose(upd, scatter_pos + window_dims)
        upd = b.reshape(upd, [us[d] for d in scatter_pos] + [n for d, n in zip(window_src, sizes) if d not in dims])
        return b.scatter(kind, x, ids, upd, dims)

    def _scatter_kind(self, instr) -> graph.ScatterKind:
        region = self.computation_attr(instr, "to_apply")
        root = region.root
        params = {i.name: self._param_number(i) for i in region.instrs if i.opcode == "parameter"}
        if root.opcode == "parameter" and params.get(root.name) == 1:
            return graph.ScatterKind.NONE
        args = sorted(params.get(o.name, -1) for o in root.operands if isinstance(o, Operand))
        kinds = {"add": graph.ScatterKind.ADD, "multiply": graph.ScatterKind.MUL, "maximum": graph.ScatterKind.MAX,
                 "minimum": graph.ScatterKind.MIN}
        if root.opcode not in kinds or args != [0, 1]:
            raise self.unsupported(instr, f"scatter whose to_apply computation '{region.name}' is not an "
                                          "assignment or a single add/multiply/maximum/minimum of its parameters")
        return kinds[root.opcode]

    def op_sort(self, instr, ops):
        """A stable sort along one dim by one key operand: the comparator must be a single
        `compare(parameter(2k), parameter(2k+1))` with direction LT (ascending) or GT
        (descending), as jax.lax.sort and jnp.sort/argsort emit; every operand is
        permuted by operand k's order. Float keys: NaN sorts last ascending, and
        -0.0 ties with 0.0 (XLA's TOTALORDER puts -0.0 first)."""
        dims = self.ints(instr, "dimensions")
        region = self.computation_attr(instr, "to_apply")
        root = region.root
        params = {i.name: self._param_number(i) for i in region.instrs if i.opcode == "parameter"}
        args = [params.get(o.name, -1) for o in root.operands if isinstance(o, Operand)]
        direction = str(root.attrs.get("direction", ""))
        if (root.opcode != "compare" or direction not in ("LT", "GT") or len(args) != 2
                or args[0] % 2 or args[1] != args[0] + 1 or not 0 <= args[0] // 2 < len(ops)):
            raise self.unsupported(instr, f"sort whose comparator '{region.name}' is not a single LT or GT "
                                          "compare of one operand's two parameters")
        if len(dims) != 1:
            raise UserError(f"sort '{instr.name}' needs one dimension, got {len(dims)}",
                            instr.attr_locs.get("dimensions", instr.loc))
        keys = ops[args[0] // 2]
        rank = len(shape_of(keys.type))
        if not 0 <= dims[0] < rank or any(shape_of(v.type) != shape_of(keys.type) for v in ops):
            raise UserError(f"sort '{instr.name}' needs operands of one shape and a dimension within their rank",
                            instr.loc)
        order = graph.SortDirection.ASCENDING if direction == "LT" else graph.SortDirection.DESCENDING
        out = [self.b.sort(order, keys, v, dims[0]) for v in ops]
        return out[0] if len(out) == 1 else out

    def op_while(self, instr, ops):
        """A loop whose trip count is known at import time (a counter in the loop tuple
        compared against a constant, as jax's fori_loop and scan emit), unrolled: the
        condition is evaluated on constants before every iteration; at most
        MAX_WHILE_TRIPS iterations."""
        cond = self.computation_attr(instr, "condition")
        body = self.computation_attr(instr, "body")
        state = ops[0]
        for _ in range(MAX_WHILE_TRIPS + 1):
            go = self._inline_computation(instr, cond, [state])
            value = self.b.fold(go) if isinstance(go, SSAValue) else None
            if value is None or value.size != 1:
                raise self.unsupported(instr, "while whose condition is not computed from constants (its trip "
                                              "count must be static)")
            if not bool(value.reshape(-1)[0]):
                return state
            state = self._inline_computation(instr, body, [state])
        raise self.unsupported(instr, f"while of more than {MAX_WHILE_TRIPS} iterations (it is unrolled)")

    def _inline_computation(self, instr, comp, ops):
        try:
            return self.run_computation(comp, ops)
        finally:
            self.b.loc = instr.loc


_REDUCE_EW = {graph.ReduceKind.SUM: "add", graph.ReduceKind.MAX: "max", graph.ReduceKind.MIN: "min",
              graph.ReduceKind.PROD: "mul"}


def _merge_tiled_reduce(kind: graph.ReduceKind, x: SSAValue, dims: list[int]) -> tuple[SSAValue, list[int]]:
    """reduce(reduce(reshape(src) splitting dims into tiles)) over whole original dims is
    one reduce of src: undo XLA's tree-reduction split (reduce-window + reduce) so the
    graph has the row reduction fusion knows. Returns (x, dims) unchanged otherwise."""
    inner = x.owner
    if not (isinstance(inner, graph.ReduceOp) and inner.kind.data == kind
            and isinstance(inner.input.owner, graph.ReshapeOp)):
        return x, dims
    tiled = shape_of(inner.input.type)
    src_value = inner.input.owner.input
    src = shape_of(src_value.type)
    inner_dims = set(inner.dims.get_values())
    kept = [d for d in range(len(tiled)) if d not in inner_dims]
    reduced = inner_dims | {kept[d] for d in dims}
    groups, t = [], 0  # the tiled dims each source dim was split into
    for n in src:
        group, size = [], 1
        while t < len(tiled) and (size < n or (not group and n == 1)):
            group.append(t)
            size *= tiled[t]
            t += 1
        if size != n:
            return x, dims
        groups.append(group)
    if t != len(tiled) or any(0 < len(set(g) & reduced) < len(g) for g in groups):
        return x, dims
    return src_value, [i for i, g in enumerate(groups) if set(g) <= reduced]


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


def _fmt(s) -> str:
    if isinstance(s, ArrayShape):
        return f"{s.elem}[{','.join(map(str, s.dims))}]"
    return "(" + ", ".join(_fmt(x) for x in s.shapes) + ")"


def _argument_dims(param: Instr) -> graph.DimsAttr | None:
    """The `#graph.dims` of an entry parameter with dynamic dims: HLO does not name
    them, so dim k of parameter `p` is the symbol `p_k` (the `symbolic-dims` pass merges
    the symbols whose sizes the graph requires to agree)."""
    shape = param.shape
    if not isinstance(shape, ArrayShape) or DYN not in shape.dims:
        return None
    base = re.sub(r"\W", "_", _arg_name(param.name).lstrip("%") or "arg")
    base = base if re.match(r"[A-Za-z_]", base) else f"_{base}"
    return graph.DimsAttr([f"{base}_{k}" if d == DYN else d for k, d in enumerate(shape.dims)])


def _arg_name(name: str) -> str:
    base, _, suffix = name.rpartition(".")
    if base and suffix.isdigit() and not base.rsplit("_", 1)[-1].isdigit():
        return base
    return name


def import_hlo(text: str, filename: str = "<stdin>") -> ModuleOp:
    """Parse HLO text and return a verified graph-dialect module."""
    comps = parse_hlo(text, filename)
    importer = HloImporter(comps, filename)
    module = importer.run()
    verify(module)
    return module
