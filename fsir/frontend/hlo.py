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

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import DYN, tensor
from fsir.errors import Location, UserError
from fsir.frontend import hlo_contract, hlo_control, hlo_elementwise, hlo_gather, hlo_layout, hlo_reduce
from fsir.frontend.builder import GraphBuilder
from fsir.frontend.hlo_elementwise import ELEMENTWISE
from fsir.frontend.hlo_layout import fmt_shape
from fsir.frontend.hlo_parse import ArrayShape, Computation, Instr, Operand, parse_hlo
from fsir.frontend.hlo_parse import clean_name as _clean
from fsir.ir import verify
from fsir.transforms.symbolic_dims import set_argument_dims

_ELEM = {
    "pred": graph.i1, "s8": graph.IntegerType(8), "s16": graph.IntegerType(16), "s32": graph.i32,
    "s64": graph.IntegerType(64), "f16": graph.f16, "bf16": graph.bf16, "f32": graph.f32,
    "f64": graph.Float64Type(),
    # unsigned integers (element types)
    "u8": graph.unsigned(8), "u16": graph.unsigned(16), "u32": graph.unsigned(32), "u64": graph.unsigned(64),
}

_MANY = 1 << 30

Value = Any  # SSAValue, or a list of Values for tuples

Handler = Callable[["HloImporter", Instr, list[Value]], Value]


class Reader(NamedTuple):
    """How the importer reads one opcode: its handler, the (fewest, most) operands checked
    before the handler runs (None: the handler checks), and whether operands may be tuples."""

    handler: Handler
    arity: tuple[int, int] | None
    tuples: bool = False


def _elementwise(name: str) -> Reader:
    n = graph.ELEMENTWISE[name].arity
    return Reader(lambda imp, instr, ops: imp.b.ew(name, *ops), (n, n))


# The one dispatch table: HLO opcode -> its reader.
OPS: dict[str, Reader] = {
    **{op: _elementwise(name) for op, name in ELEMENTWISE.items()},
    # hlo_layout.py
    "constant": Reader(hlo_layout.constant, (0, 0)),
    "iota": Reader(hlo_layout.iota, (0, 0)),
    "copy": Reader(hlo_layout.copy, (1, 1)),
    "convert": Reader(hlo_layout.convert, (1, 1)),
    "bitcast-convert": Reader(hlo_layout.bitcast_convert, (1, 1)),
    "reshape": Reader(hlo_layout.reshape, (1, 1)),
    "bitcast": Reader(hlo_layout.bitcast, (1, 1)),
    "broadcast": Reader(hlo_layout.broadcast, (1, 1)),
    "transpose": Reader(hlo_layout.transpose, (1, 1)),
    "slice": Reader(hlo_layout.slice_, (1, 1)),
    "dynamic-slice": Reader(hlo_layout.dynamic_slice, (1, _MANY)),
    "dynamic-update-slice": Reader(hlo_layout.dynamic_update_slice, (2, _MANY)),
    "concatenate": Reader(hlo_layout.concatenate, (1, _MANY)),
    "pad": Reader(hlo_layout.pad, (2, 2)),
    "reverse": Reader(hlo_layout.reverse, (1, 1)),
    # hlo_elementwise.py
    "compare": Reader(hlo_elementwise.compare, (2, 2)),
    "select": Reader(hlo_elementwise.select, (3, 3)),
    "clamp": Reader(hlo_elementwise.clamp, (3, 3)),
    "exponential-minus-one": Reader(hlo_elementwise.exponential_minus_one, (1, 1)),
    "log-plus-one": Reader(hlo_elementwise.log_plus_one, (1, 1)),
    "sign": Reader(hlo_elementwise.sign, (1, 1)),
    "is-finite": Reader(hlo_elementwise.is_finite, (1, 1)),
    # hlo_control.py
    "tuple": Reader(hlo_control.tuple_, None, tuples=True),
    "get-tuple-element": Reader(hlo_control.get_tuple_element, (1, 1), tuples=True),
    "call": Reader(hlo_control.call, None, tuples=True),
    "fusion": Reader(hlo_control.fusion, None, tuples=True),
    "while": Reader(hlo_control.while_, (1, 1), tuples=True),
    # hlo_reduce.py
    "reduce": Reader(hlo_reduce.reduce, (2, _MANY)),
    "reduce-window": Reader(hlo_reduce.reduce_window, (2, _MANY)),
    # hlo_contract.py
    "dot": Reader(hlo_contract.dot, (2, 2)),
    "convolution": Reader(hlo_contract.convolution, (2, 2)),
    # hlo_gather.py
    "gather": Reader(hlo_gather.gather, (2, 2)),
    "scatter": Reader(hlo_gather.scatter, (3, _MANY)),
    "sort": Reader(hlo_gather.sort, (1, _MANY)),
}




class HloImporter:
    def __init__(self, comps: list[Computation], filename: str):
        self.comps = {c.name: c for c in comps}
        self.filename = filename
        self.b = GraphBuilder(filename)
        self.shapes: dict[str, Any] = {}  # declared shapes (with layouts) of the current computation

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
            args.append(self.b.add_arg(self.type_of(i.shape, i), _arg_name(i.name)))
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
        saved = self.shapes
        self.shapes = {i.name: i.shape for i in comp.instrs}
        try:
            return self._run_computation(comp, args)
        finally:
            self.shapes = saved

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

    def type_of(self, shape, instr: Instr):
        if not isinstance(shape, ArrayShape):
            raise UserError(f"'{instr.name}': tuple-shaped {instr.opcode} is not supported here", instr.loc)
        if shape.elem not in _ELEM:
            raise UserError(f"element type '{shape.elem}' is not supported "
                            f"(fsir supports {', '.join(_ELEM)})", shape.loc)
        return tensor(_ELEM[shape.elem], shape.dims)

    def _check_shape(self, instr: Instr, value: Value) -> None:
        if isinstance(instr.shape, ArrayShape) and isinstance(value, SSAValue):
            want = self.type_of(instr.shape, instr)
            if value.type != want:
                raise UserError(f"'{instr.name}' is declared {fmt_shape(instr.shape)} but its {instr.opcode} "
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
        reader = OPS.get(op)
        if reader is None:
            if op == "custom-call":
                target = self.attr(instr, "custom_call_target", "?")
                raise self.unsupported(instr, f"custom-call to '{target}'")
            raise self.unsupported(instr)
        arity = reader.arity
        if arity is not None and not arity[0] <= len(ops) <= arity[1]:
            expected = str(arity[0]) if arity[0] == arity[1] else \
                f"{arity[0]} to {arity[1]}" if arity[1] < _MANY else f"at least {arity[0]}"
            raise UserError(f"{op} '{instr.name}' takes {expected} operands, got {len(ops)}", instr.loc)
        if any(isinstance(v, list) for v in ops) and not reader.tuples:
            raise UserError(f"'{instr.name}': {op} of a tuple operand is not supported", instr.loc)
        return reader.handler(self, instr, ops)


    # -- convolution ------------------------------------------------------------


    # -- scatter, sort, while ---------------------------------------------------


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
