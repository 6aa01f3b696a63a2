"""HLO text → records: the lark grammar (`hlo.lark`) and a transformer to small dataclasses.

Only what the importer reads is given structure (names, shapes with layouts, operands,
attributes as nested lists/`Item`s); everything else in an attribute value is kept as
parsed. Syntax errors become UserErrors at the line and column where lark stopped.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lark

from fsir.dialects.graph import DYN
from fsir.errors import Location, UserError


@dataclass
class ArrayShape:
    elem: str
    dims: tuple[int, ...]  # DYN (-1) for a dynamic dim, `?` or bounded `<=N`
    layout: tuple[int, ...] | None  # minor-to-major, None = default (row-major)
    loc: Location
    bounds: tuple[int | None, ...] = ()  # per dim: N of a bounded `<=N` dim, else None


@dataclass
class TupleShape:
    shapes: list


@dataclass
class Operand:
    name: str
    loc: Location


@dataclass
class Item:
    """`a=b`, `a:b`, `0:4:2` inside an attribute value."""

    seps: list[str]
    values: list


class Braced(list):
    pass


class Bracketed(list):
    pass


@dataclass
class Instr:
    name: str
    shape: Any
    opcode: str
    operands: list  # Operand, or a literal (number/str/Braced) for constant/parameter
    attrs: dict[str, Any]
    root: bool
    loc: Location
    attr_locs: dict[str, Location] = field(default_factory=dict)


@dataclass
class Computation:
    name: str
    instrs: list[Instr]
    entry: bool
    loc: Location

    @property
    def root(self) -> Instr:
        roots = [i for i in self.instrs if i.root]
        return roots[0] if roots else self.instrs[-1]


def clean_name(name: str) -> str:
    return name[1:] if name.startswith("%") else name


class _ToRecords(lark.Transformer):
    def __init__(self, filename: str):
        super().__init__()
        self.filename = filename

    def _loc(self, tok) -> Location:
        return Location(self.filename, tok.line, tok.column)

    # shapes
    def array_shape(self, children):
        tok = children[0]
        text = str(tok)
        elem, rest = text.split("[", 1)
        dims_text, rest = rest.split("]", 1)
        loc = self._loc(tok)
        dims: list[int] = []
        bounds: list[int | None] = []
        for d in filter(None, (x.strip() for x in dims_text.split(","))):
            if d.isdigit():
                dims.append(int(d))
                bounds.append(None)
            elif d == "?" or (d.startswith("<=") and d[2:].strip().isdigit()):
                # a dynamic dim: its size is known at run time only (a bounded one's is
                # at most N); fsir's `?` dims take any size, so the bound is not needed
                dims.append(DYN)
                bounds.append(int(d[2:]) if d != "?" else None)
            else:
                raise UserError(f"dimension '{d}' in {text} is not supported (an int, '?' or a bound '<=N')",
                                loc)
        layout = None
        if rest.startswith("{"):
            body = [x.strip() for x in rest[1:-1].split(":", 1)[0].split(",") if x.strip()]
            if not all(x.isdigit() for x in body):
                raise UserError(f"malformed layout in {text}: expected dimension numbers", loc)
            layout = tuple(int(x) for x in body)
        return ArrayShape(elem, tuple(dims), layout, loc, tuple(bounds))

    def tuple_shape(self, children):
        return TupleShape([c for c in children if c is not None])

    # attribute values
    def NUMBER(self, tok):
        text = str(tok)
        if any(c in text for c in ".eEin"):
            return float(text)
        return int(text)

    def STRING(self, tok):
        return str(tok)[1:-1]

    def NAME(self, tok):
        return tok  # keep positions; compare as str

    def item(self, children):
        if len(children) == 1:
            return children[0]
        return Item([str(c) for c in children[1::2]], list(children[0::2]))

    def items(self, children):
        return list(children)

    def braced(self, children):
        return Braced(children[0] if children and children[0] is not None else [])

    def bracketed(self, children):
        return Bracketed(children[0] if children and children[0] is not None else [])

    def parened(self, children):
        return Bracketed(children[0] if children and children[0] is not None else [])

    def attr(self, children):
        name, value = children
        return (str(name), value, self._loc(name))

    # instructions and computations
    def named_operand(self, children):
        tok = children[-1]
        return Operand(clean_name(str(tok)), self._loc(tok))

    def literal_operand(self, children):
        return children[0]

    def instruction(self, children):
        root = children[0] == "ROOT_MARK"
        if root:
            children = children[1:]
        name, shape, opcode, *rest = children
        operands = []
        attrs, attr_locs = {}, {}
        for c in rest:
            if isinstance(c, tuple) and len(c) == 3 and isinstance(c[2], Location):
                attrs[c[0]] = c[1]
                attr_locs[c[0]] = c[2]
            elif c is not None:
                operands.append(c)
        return Instr(clean_name(str(name)), shape, str(opcode), operands, attrs, root,
                     self._loc(opcode), attr_locs)

    def root(self, _):
        return "ROOT_MARK"

    def entry(self, _):
        return "ENTRY_MARK"

    def computation(self, children):
        entry = children[0] == "ENTRY_MARK"
        if entry:
            children = children[1:]
        name = children[0]
        instrs = [c for c in children[1:] if isinstance(c, Instr)]
        return Computation(clean_name(str(name)), instrs, entry, self._loc(name))

    def start(self, children):
        return [c for c in children if isinstance(c, Computation)]


@functools.cache
def _parser() -> lark.Lark:
    grammar = (Path(__file__).parent / "hlo.lark").read_text()
    return lark.Lark(grammar, parser="lalr", maybe_placeholders=False)


def parse_hlo(text: str, filename: str = "<stdin>") -> list[Computation]:
    try:
        tree = _parser().parse(text)
    except lark.UnexpectedInput as err:
        loc = Location(filename, err.line, err.column)
        if isinstance(err, lark.UnexpectedToken):
            got = "end of input" if err.token.type == "$END" else f"'{err.token}'"
            expected = ", ".join(sorted(err.accepts or err.expected))[:200]
            raise UserError(f"malformed HLO: unexpected {got} (expected one of: {expected})", loc) from None
        if isinstance(err, lark.UnexpectedCharacters):
            raise UserError(f"malformed HLO: unexpected character '{text[err.pos_in_stream]}'", loc) from None
        raise UserError("malformed HLO: unexpected end of input", loc) from None
    try:
        return _ToRecords(filename).transform(tree)
    except lark.exceptions.VisitError as err:
        if isinstance(err.orig_exc, UserError):
            raise err.orig_exc from None
        raise
