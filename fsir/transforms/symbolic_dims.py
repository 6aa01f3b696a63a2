"""Symbolic dims: which run-time sizes of a function are one size, and which are
products of others (RECom § shape analysis, after BladeDISC's shape analysis).

Every `?` dim of a function argument is a symbol: the name its `#graph.dims` gives
(the ONNX importer's `dim_param`), else a fresh one. Each graph op's shape rule
(`reify_dims`) runs on symbolic sizes — monomials, an int times a product of symbols,
so that reshapes give products (`[B, 4] -> [B*4]`) and a reshape back divides them out
— and the sizes its `agreeing_dims` require to be equal (elementwise operands, concat's
other dims, a dot's contracting and batch dims, a broadcast's `like`) are merged by
union-find. Two sizes are one when their classes are one; a class that contains a
product is that product. Unions can make earlier products equal (`B*4` and `C*4` once
B = C), so the walk repeats until no union happens (each round is linear in the ops;
there are at most as many rounds as unions).

The `symbolic-dims` pass writes the result as `#graph.dims` on every argument and op
result with `?` dims, so the relations are visible and FileCheck-able; the host checks
one equality per pair of classes it merges (fsir/lowering/shapes.py), never each pair
of ops again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DictionaryAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass

from fsir.dialects import graph
from fsir.dialects.graph import DIMS_ATTR, DYN, DimAgreement, DimBuilder, DimsAttr, shape_of
from fsir.errors import UserError
from fsir.ir import location_of


@dataclass(frozen=True)
class Mono:
    """`coef * s1 * s2 * ...` over symbol classes (sorted names); `syms == ()` is an int."""

    coef: int
    syms: tuple[str, ...] = ()

    @property
    def const(self) -> int | None:
        return self.coef if not self.syms else None

    def __str__(self) -> str:
        parts = ([str(self.coef)] if self.coef != 1 or not self.syms else []) + list(self.syms)
        return "*".join(parts)


Size = Mono


class UnionFind:
    """Classes of hashable keys; `find` is iterative (no recursion depth)."""

    def __init__(self) -> None:
        self.parent: dict[object, object] = {}

    def find(self, x: object) -> object:
        root = x
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while x != root:  # path compression
            nxt = self.parent.get(x, x)
            self.parent[x] = root
            x = nxt
        return root

    def union(self, a: object, b: object) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[rb] = ra
        return True


@dataclass
class SymbolTable:
    """Symbols and their classes. A symbol is a name (an argument's `?` dim) or an
    opaque size (a sum, a quotient that does not divide, ...) named by its expression."""

    uf: UnionFind = field(default_factory=UnionFind)
    order: dict[str, int] = field(default_factory=dict)  # first appearance
    user: set[str] = field(default_factory=set)  # names the source gave
    names: dict[object, str] = field(default_factory=dict)  # a class's root -> its name
    value: dict[object, Mono] = field(default_factory=dict)  # a class's product or int, if any
    opaque: dict[str, str] = field(default_factory=dict)  # an expression -> its symbol's name

    def symbol(self, name: str, user: bool = False) -> Mono:
        if name not in self.order:
            self.order[name] = len(self.order)
            self.names[name] = name
        if user:
            self.user.add(name)
        return self.canon(Mono(1, (name,)))

    def rep(self, name: str) -> Mono:
        """The size a symbol stands for: its class's product or int, else the class's
        name (the first name the source gave in it, else its first symbol)."""
        root = self.uf.find(name)
        if root in self.value:
            return self.value[root]
        return Mono(1, (self.names[root],))

    def canon(self, m: Mono) -> Mono:
        """`m` over class names and products; a class's product may name symbols merged
        since, so this expands until nothing changes (bounded: a cyclic `B = B*4` is a
        size that cannot hold and stays as it is)."""
        for _ in range(len(self.order) + 1):
            coef, syms = m.coef, []
            for s in m.syms:
                r = self.rep(s)
                coef *= r.coef
                syms.extend(r.syms)
            out = Mono(coef, tuple(sorted(syms)))
            if out == m:
                break
            m = out
        return m

    def merge(self, a: Mono, b: Mono) -> tuple[bool, str | None]:
        """Record a = b; (whether anything changed, a contradiction between ints)."""
        a, b = self.canon(a), self.canon(b)
        if a == b:
            return False, None
        if a.const is not None and b.const is not None:
            return False, f"{a.const} vs {b.const}"
        # the side that is one symbol joins the other's class (a product or an int
        # becomes the class's value); two products: their opaque keys are one class
        single = [m for m in (a, b) if m.coef == 1 and len(m.syms) == 1]
        if len(single) == 2:  # two class names: the merged class keeps the preferred one
            sa, sb = a.syms[0], b.syms[0]
            keep = sa if self._rank(sa) <= self._rank(sb) else sb
            self.uf.union(sa, sb)
            self.names[self.uf.find(sa)] = keep
            return True, None
        if single:
            s = single[0].syms[0]  # canonical: its class has no product yet
            self.value[self.uf.find(s)] = b if single[0] == a else a
            return True, None
        key = self.symbol(str(a))  # two products: equal opaque symbols
        other = self.symbol(str(b))
        return self.merge(key, other)

    def _rank(self, name: str) -> tuple[int, int]:
        """A class name's preference: given by the source first, then by appearance (a
        class holding a source name is named by one, so its name tells)."""
        return (0 if name in self.user else 1, self.order[name])


class MonoDims(DimBuilder[Mono]):
    """`DimBuilder` over monomials; anything else (a sum, an inexact quotient, a
    select) is an opaque symbol named by its expression."""

    def __init__(self, table: SymbolTable):
        self.t = table

    def lift(self, x: Mono | int) -> Mono:
        return Mono(x) if isinstance(x, int) else x

    def opaque(self, kind: str, *xs: Mono | int) -> Mono:
        # one symbol per distinct expression, named as a symbol must be (`#graph.dims`
        # holds names and products, not expressions); the name is a digest of the
        # expression rather than a count, since expressions of sizes not yet known
        # equal (an earlier round's) would shift a count: the pass run again on its
        # own output must write the same names
        text = f"{kind}({', '.join(str(self.lift(x)) for x in xs)})"
        name = self.t.opaque.get(text)
        if name is None:
            taken = set(self.t.opaque.values())
            digest = hashlib.sha1(text.encode()).hexdigest()
            name = next(c for n in range(6, len(digest) + 1) if (c := f"_{kind}_{digest[:n]}") not in taken)
            self.t.opaque[text] = name
        return self.t.symbol(name)

    def add(self, a, b):
        a, b = self.lift(a), self.lift(b)
        if a.const is not None and b.const is not None:
            return Mono(a.coef + b.coef)
        if a.const == 0:
            return b
        if b.const == 0:
            return a
        if a.syms == b.syms:
            return Mono(a.coef + b.coef, a.syms)
        return self.opaque("add", *sorted((a, b), key=str))

    def sub(self, a, b):
        a, b = self.lift(a), self.lift(b)
        if b.const == 0:
            return a
        if a.syms == b.syms:
            return Mono(a.coef - b.coef, a.syms)
        return self.opaque("sub", a, b)

    def mul(self, a, b):
        a, b = self.lift(a), self.lift(b)
        if 0 in (a.const, b.const):
            return Mono(0)
        return Mono(a.coef * b.coef, tuple(sorted(a.syms + b.syms)))

    def div(self, a, b):
        a, b = self.lift(a), self.lift(b)
        syms = list(a.syms)
        for s in b.syms:
            if s not in syms:
                return self.opaque("div", a, b)
            syms.remove(s)
        if b.coef == 0 or a.coef % b.coef:
            return self.opaque("div", a, b)
        return Mono(a.coef // b.coef, tuple(syms))

    def rem(self, a, b):
        a, b = self.lift(a), self.lift(b)
        if a.const is not None and b.const:
            return Mono(a.coef % b.coef)
        return self.opaque("rem", a, b)

    def eq(self, a, b):
        a, b = self.lift(a), self.lift(b)
        if a == b:
            return True
        return a.const == b.const if a.const is not None and b.const is not None else None

    def lt(self, a, b):
        a, b = self.lift(a), self.lift(b)
        return a.coef < b.coef if a.const is not None and b.const is not None else None

    def select(self, cond, a, b):
        if cond is None:
            return self.lift(a) if self.lift(a) == self.lift(b) else self.opaque("select", a, b)
        return a if cond else b


def argument_names(f: func.FuncOp) -> list[list[int | str] | None]:
    """Each argument's `#graph.dims` (checked against its type), None where absent."""
    return [argument_name(f, i) for i in range(len(f.args))]


def argument_name(f: func.FuncOp, i: int) -> list[int | str] | None:
    """Argument i's `#graph.dims` (checked against its type), None where absent."""
    d = f.arg_attrs.data[i] if f.arg_attrs is not None else None
    dims = d.data.get(DIMS_ATTR) if isinstance(d, DictionaryAttr) else None
    if dims is None:
        return None
    if not isinstance(dims, DimsAttr):
        raise UserError(f"argument {i} of @{f.sym_name.data}: {DIMS_ATTR} must be a #graph.dims", location_of(f))
    try:
        dims.check_type(f.args[i].type, f"argument {i} of @{f.sym_name.data}")
    except Exception as err:  # VerifyException
        raise UserError(str(err), location_of(f)) from None
    return dims.sizes


class SymbolicShapes:
    """The symbolic sizes of every value of a function with `?` dims, after the union-find
    of the sizes its ops require to agree."""

    def __init__(self, f: func.FuncOp):
        self.f = f
        self.table = SymbolTable()
        self.b = MonoDims(self.table)
        self.args: dict[SSAValue, list[Mono]] = {}
        for i, (arg, names) in enumerate(zip(f.args, argument_names(f))):
            dims = []
            for d, s in enumerate(shape_of(arg.type)):
                if s != DYN:
                    dims.append(Mono(s))
                elif names is not None and isinstance(names[d], str):
                    dims.append(self._named(str(names[d]), f"{arg.name_hint or f'arg{i}'}_d{d}"))
                else:
                    dims.append(self.table.symbol(f"{arg.name_hint or f'arg{i}'}_d{d}"))
            self.args[arg] = dims
        self.dims: dict[SSAValue, list[Mono]] = {}
        for _ in range(len(self.table.order) + 2):  # at most one round per union, and a last one
            if not self._round():
                break

    def _named(self, text: str, leaf: str) -> Mono:
        """A dim the source names: a symbol, or a product of symbols and ints (a fresh
        symbol of that value, as the pass itself writes products on arguments)."""
        factors = text.split("*")
        if len(factors) == 1:
            return self.table.symbol(text, user=True)
        product = Mono(1)
        for x in factors:
            product = self.b.mul(product, Mono(int(x)) if x.isdigit() else self.table.symbol(x, user=True))
        fresh = self.table.symbol(leaf)
        self.table.merge(fresh, product)
        return fresh

    def _round(self) -> bool:
        self.dims = {a: [self.table.canon(m) for m in d] for a, d in self.args.items()}
        changed = False
        for op in self.f.body.walk():
            if not isinstance(op, graph.GraphOp):
                continue
            try:
                derived = op.reify_dims(lambda v: self.dims[v], self.b)
                agreements = op.agreeing_dims(lambda v: self.dims[v], self.b)
            except KeyError:  # an operand from outside the graph ops (none in a graph function)
                continue
            static = shape_of(op.results[0].type)
            self.dims[op.results[0]] = [
                Mono(s) if s != DYN else self.table.canon(self.b.lift(d)) if d != DYN else self._unknown(op)
                for s, d in zip(static, derived)]
            for a in agreements:
                if a.kind != DimAgreement.EQUAL:
                    continue
                did, clash = self.table.merge(self.b.lift(a.first), self.b.lift(a.second))
                if clash is not None:
                    raise UserError(f"'{op.name}' op: {a.what} differ: {clash}", location_of(op))
                changed |= did
        return changed

    def _unknown(self, op) -> Mono:
        return self.table.symbol(f"unknown_{len(self.table.order)}")

    def of(self, v: SSAValue) -> list[Mono]:
        return [self.table.canon(m) for m in self.dims.get(v, self.args.get(v, []))]

    def attr(self, v: SSAValue) -> DimsAttr:
        return DimsAttr([m.coef if m.const is not None else str(m) for m in self.of(v)])

    def same(self, a: SSAValue, i: int, b: SSAValue, j: int) -> bool:
        """Whether dim i of a and dim j of b are one size."""
        return self.of(a)[i] == self.of(b)[j]


def _with_dims(attrs: Attribute | None, dims: DimsAttr) -> DictionaryAttr:
    base = dict(attrs.data) if isinstance(attrs, DictionaryAttr) else {}
    base[DIMS_ATTR] = dims
    return DictionaryAttr(base)


@dataclass(frozen=True)
class SymbolicDimsPass(ModulePass):
    """Name every `?` dim by its symbol class: `#graph.dims` on arguments and on the
    results of graph ops with `?` dims."""

    name = "symbolic-dims"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for f in op.walk():
            if not isinstance(f, func.FuncOp) or f.is_declaration:
                continue
            shapes = SymbolicShapes(f)
            old: Sequence[Attribute | None] = f.arg_attrs.data if f.arg_attrs is not None else [None] * len(f.args)
            f.arg_attrs = builtin.ArrayAttr([
                _with_dims(a, shapes.attr(arg)) if DYN in shape_of(arg.type) else
                (a if isinstance(a, DictionaryAttr) else DictionaryAttr({}))
                for arg, a in zip(f.args, old)])
            for inner in f.body.walk():
                if isinstance(inner, graph.GraphOp) and DYN in shape_of(inner.results[0].type):
                    inner.attributes[DIMS_ATTR] = shapes.attr(inner.results[0])


def set_argument_dims(module: builtin.ModuleOp, dims: Sequence[DimsAttr | None]) -> None:
    """Name the `?` dims of the first function's arguments (an importer's symbols)."""
    f = next(op for op in module.ops if isinstance(op, func.FuncOp))
    if all(d is None for d in dims):
        return
    assert len(dims) == len(f.args)
    f.arg_attrs = builtin.ArrayAttr([DictionaryAttr({DIMS_ATTR: d} if d is not None else {}) for d in dims])


def declared_symbol(v: SSAValue, d: int) -> str | None:
    """The symbol the source gives dim `d` of `v` when `v` is an argument of its
    function with `#graph.dims` there naming that dim by one symbol (not a product)."""
    from xdsl.ir import BlockArgument

    if not isinstance(v, BlockArgument):
        return None
    f = v.owner.parent_op()
    if not isinstance(f, func.FuncOp) or f.body.blocks[0] is not v.owner:
        return None
    names = argument_name(f, v.index)
    name = names[d] if names is not None else None
    return name if isinstance(name, str) and "*" not in name else None
