"""Parse PTX text (grammar: ptx.lark) into a small, plain-Python module description.

The result is what the simulator's decoder consumes: module-scope variables, and for each
function its parameters and its body as a flat list of declarations, labels and instructions
(each carrying its PTX line and column). Nested `{ ... }` scopes are flattened; PTX
compilers only use them to scope temporaries, and names stay unique in practice.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from lark import Lark, Token, Transformer
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from fsir.errors import Location, SimulatorError

# ---------------------------------------------------------------------------- operands


@dataclass(frozen=True)
class Reg:
    """A register, special register, symbol or label name (resolved by the decoder)."""

    name: str


@dataclass(frozen=True)
class NotReg:
    name: str


@dataclass(frozen=True)
class Imm:
    value: int | float
    kind: str  # "int" | "f32" | "f64" | "float" (decimal literal)
    text: str


@dataclass(frozen=True)
class Mem:
    base: str | None  # register or symbol; None for an absolute address
    offset: int


@dataclass(frozen=True)
class Vec:
    items: tuple


@dataclass(frozen=True)
class Pair:
    first: str
    second: str


@dataclass(frozen=True)
class CallList:
    items: tuple


# ---------------------------------------------------------------------------- statements


@dataclass
class Instr:
    opcode: str  # full dotted opcode, e.g. "ld.global.nc.v4.f32"
    operands: list
    guard: tuple[str, bool] | None  # (predicate register, negated)
    line: int
    col: int

    @property
    def parts(self) -> list[str]:
        return self.opcode.split(".")


@dataclass
class Label:
    name: str
    line: int


@dataclass
class VarDecl:
    space: str  # "reg", "shared", "global", "local", "const", "param"
    type: str  # PTX type without the dot, e.g. "b32"
    name: str
    count: int | None  # %r<10> -> 10
    dims: list  # [] scalar, [n] array, [None] unsized (extern)
    align: int | None
    vector: int
    linkage: list
    init: object
    line: int

    @property
    def elem_size(self) -> int:
        return type_size(self.type) * max(self.vector, 1)

    @property
    def nbytes(self) -> int:
        n = self.elem_size
        for d in self.dims:
            n *= d or 0
        return n


@dataclass
class Param:
    name: str
    type: str
    align: int | None
    dims: list
    line: int

    @property
    def nbytes(self) -> int:
        n = type_size(self.type)
        for d in self.dims:
            n *= d
        return n


@dataclass
class Function:
    name: str
    kind: str  # "entry" | "func"
    params: list
    body: list | None  # None: a declaration (prototype) without a body
    line: int
    directives: dict = field(default_factory=dict)
    returns: list = field(default_factory=list)  # .func return parameters


@dataclass
class PTXModule:
    version: str | None = None
    target: list = field(default_factory=list)
    address_size: int = 64
    variables: list = field(default_factory=list)
    functions: dict = field(default_factory=dict)

    @property
    def kernels(self) -> dict:
        return {n: f for n, f in self.functions.items() if f.kind == "entry"}


_TYPE_SIZES = {
    "pred": 1, "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16, "e4m3x2": 2, "e5m2x2": 2,
}


def type_size(t: str) -> int:
    return _TYPE_SIZES[t]


# ---------------------------------------------------------------------------- transformer


def _int(tok: str) -> int:
    t = tok.rstrip("uU")
    neg = t.startswith("-")
    if neg:
        t = t[1:]
    if t[:2] in ("0x", "0X"):
        v = int(t, 16)
    elif len(t) > 1 and t[0] == "0":
        v = int(t, 8)
    else:
        v = int(t)
    return -v if neg else v


class _Builder(Transformer):
    """Builds PTXModule pieces bottom-up (runs inline with the LALR parser)."""

    # numbers
    def int_lit(self, c):
        return Imm(_int(c[0]), "int", str(c[0]))

    def hexfloat_lit(self, c):
        t = str(c[0])
        bits = int(t[2:], 16)  # noqa: FURB166 - 0f/0d is PTX's float-bits prefix, not a base prefix
        if t[1] in "fF":
            return Imm(struct.unpack("<f", struct.pack("<I", bits))[0], "f32", t)
        return Imm(struct.unpack("<d", struct.pack("<Q", bits))[0], "f64", t)

    def float_lit(self, c):
        return Imm(float(c[0]), "float", str(c[0]))

    # operands
    def reg_or_symbol(self, c):
        return Reg(str(c[0]))

    def not_reg(self, c):
        return NotReg(str(c[1]))

    def reg_pair(self, c):
        return Pair(str(c[0]), str(c[1]))

    def memref(self, c):
        return c[0]

    def address(self, c):
        return Mem(str(c[0]), _int(c[1]) if len(c) > 1 else 0)

    def address_neg(self, c):
        off = _int(c[1])
        if off >= 0:
            raise SimulatorError(
                f"PTX parse error at {c[1].line}:{c[1].column}: expected '+' before address offset",
                Location("<ptx>", c[1].line, c[1].column))
        return Mem(str(c[0]), off)

    def abs_address(self, c):
        return Mem(None, _int(c[0]))

    def vector_op(self, c):
        return Vec(tuple(c))

    def call_list(self, c):
        return CallList(tuple(c))

    def guard(self, c):
        if len(c) == 2:
            return (str(c[1]), True)
        return (str(c[0]), False)

    def instruction(self, c):
        guard = None
        if c and isinstance(c[0], tuple):
            guard = c[0]
            c = c[1:]
        op = c[0]
        return Instr(str(op), list(c[1:]), guard, op.line, op.column)

    def label(self, c):
        return Label(str(c[0]), c[0].line)

    def pragma(self, c):
        return ("pragma", None)

    def pragma_stmt(self, c):
        return None

    def body(self, c):
        out = []
        for s in c:
            if s is None:
                continue
            if isinstance(s, list):
                out.extend(s)
            else:
                out.append(s)
        return out

    # declarations
    def linkage(self, c):
        return ("linkage", str(c[0])[1:])

    def state_space(self, c):
        return ("space", str(c[0])[1:])

    def align(self, c):
        return ("align", int(c[0]))

    def vector(self, c):
        return ("vector", int(str(c[0])[2:]))

    def ptr(self, c):
        return ("ptr", None)

    def ptr_space(self, c):
        return ("ptr_space", str(c[0])[1:])

    def reg_range(self, c):
        return ("range", int(c[0]))

    def array_dim(self, c):
        return ("dim", int(c[0]) if c else None)

    def initializer(self, c):
        return ("init", c[0])

    def init_list(self, c):
        return list(c)

    def init_symbol(self, c):
        return Reg(str(c[0]))

    def var_item(self, c):
        name = c[0]
        count = None
        dims = []
        init = None
        for x in c[1:]:
            if x[0] == "range":
                count = x[1]
            elif x[0] == "dim":
                dims.append(x[1])
            elif x[0] == "init":
                init = x[1]
        return (name, count, dims, init)

    def var_decl(self, c):
        linkage, space, align, vector, typ = [], None, None, 0, None
        items = []
        for x in c:
            if isinstance(x, Token) and x.type == "TYPE":
                typ = str(x)[1:]
            elif isinstance(x, tuple) and len(x) == 2:
                k, v = x
                if k == "linkage":
                    linkage.append(v)
                elif k == "space":
                    space = v
                elif k == "align":
                    align = v
                elif k == "vector":
                    vector = v
            elif isinstance(x, tuple):
                items.append(x)
        assert space is not None and typ is not None  # the grammar requires both
        return [
            VarDecl(space, typ, str(n), cnt, dims, align, vector, linkage, init, n.line)
            for (n, cnt, dims, init) in items
        ]

    def param(self, c):
        typ, align, dims, name = None, None, [], None
        for x in c:
            if isinstance(x, Token):
                if x.type == "TYPE":
                    typ = str(x)[1:]
                elif x.type == "NAME":
                    name = x
            elif isinstance(x, tuple):
                if x[0] == "align":
                    align = x[1]
                elif x[0] == "dim":
                    dims.append(x[1])
        assert typ is not None and name is not None  # the grammar requires both
        return Param(str(name), typ, align, dims, name.line or 0)

    def param_space(self, c):
        return ("param_space", None)

    def param_list(self, c):
        return ("params", list(c))

    def return_params(self, c):
        return ("returns", list(c))

    def func_kind(self, c):
        return ("kind", "entry" if str(c[0]) == ".entry" else "func")

    def perf_directive(self, c):
        return ("perf", str(c[0])[1:], [int(x) for x in c[1:]])

    def function(self, c):
        kind, name, params, body, dirs, line, returns = None, None, [], None, {}, 0, []
        for x in c:
            if isinstance(x, Token) and x.type == "NAME":
                name, line = str(x), x.line or 0
            elif isinstance(x, tuple):
                if x[0] == "kind":
                    kind = x[1]
                elif x[0] == "params":
                    params = x[1]
                elif x[0] == "returns":
                    returns = x[1]
                elif x[0] == "perf" and len(x) == 3:
                    dirs[x[1]] = x[2]
            elif isinstance(x, list):
                body = x
        assert name is not None and kind is not None  # the grammar requires both
        return Function(name, kind, params, body, line, dirs, returns)

    def version(self, c):
        return ("version", str(c[0]))

    def target(self, c):
        return ("target", [str(x) for x in c])

    def address_size(self, c):
        return ("address_size", int(c[0]))

    def start(self, c):
        m = PTXModule()
        for x in c:
            if isinstance(x, Function):
                if x.body is None and x.name in m.functions:
                    continue  # a declaration after/before the definition
                m.functions[x.name] = x
            elif isinstance(x, list):
                m.variables.extend(x)
            elif isinstance(x, tuple):
                k, v = x
                if k == "version":
                    m.version = v
                elif k == "target":
                    m.target = v
                elif k == "address_size":
                    m.address_size = v
        return m


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = (Path(__file__).parent / "ptx.lark").read_text()
    return Lark(grammar, parser="lalr", lexer="contextual", transformer=_Builder(), maybe_placeholders=False,
                cache=True)  # grammar analysis cached in the temp dir (keyed by grammar + lark version)


def parse_ptx(text: str, filename: str = "<ptx>") -> PTXModule:
    """Parse PTX text; syntax errors raise SimulatorError carrying `line:col`."""
    try:
        module = _parser().parse(text)
    except UnexpectedInput as e:
        line, col = getattr(e, "line", 0), getattr(e, "column", 0)
        at_end = isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken) and e.token.type == "$END")
        if at_end or line in (None, -1):
            line, col = text.count("\n") + 1, len(text) - text.rfind("\n")
        if isinstance(e, UnexpectedToken):
            what = f"unexpected {e.token!r}" if e.token.type != "$END" else "unexpected end of input"
        elif isinstance(e, UnexpectedCharacters):
            what = (
                f"unexpected character {text[e.pos_in_stream]!r}" if e.pos_in_stream < len(text) else "unexpected input"
            )
        else:
            what = "unexpected end of input"
        src = text.splitlines()[line - 1] if 0 < line <= len(text.splitlines()) else ""
        msg = f"PTX parse error at {filename}:{line}:{col}: {what}"
        if src.strip():
            msg += f" in `{src.strip()}`"
        raise SimulatorError(msg, Location(filename, line, col)) from None
    except VisitError as e:
        if isinstance(e.orig_exc, SimulatorError):
            raise e.orig_exc from None
        raise
    assert isinstance(module, PTXModule)  # what the inline transformer builds from the start rule
    return module
