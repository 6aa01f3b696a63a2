"""Runtime sizes of graph values, as `index` code.

Static dims are Python ints; a `?` dim is computed from the sizes of the values it
derives from by the op's shape rule (`GraphOp.reify_dims`, in `IndexBuilder`
arithmetic). The same calculator runs on the host (sizes of intermediate buffers and
launch dims, from `memref.dim` of the function's arguments) and in kernels (from the
`index` arguments carrying the inputs' dynamic sizes).
"""

from __future__ import annotations

from xdsl.dialects import arith, cf
from xdsl.ir import Operation, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import DYN, DimAgreement, shape_of
from fsir.dialects.schedule import GroupOp, KernelOp
from fsir.errors import UserError
from fsir.ir import location_of
from fsir.lowering.scalar import Index, IndexBuilder
from fsir.transforms.symbolic_dims import Mono, MonoDims, SymbolTable, UnionFind, declared_symbol


class ShapeCalc:
    """`dims(v)`: the sizes of graph value `v`; `known` seeds the leaves."""

    def __init__(self, ib: IndexBuilder, known: dict[SSAValue, list[Index]] | None = None):
        self.ib = ib
        self.known: dict[SSAValue, list[Index]] = dict(known or {})

    def dims(self, v: SSAValue) -> list[Index]:
        if v in self.known:
            return self.known[v]
        static = shape_of(v.type)
        if DYN not in static:
            out: list[Index] = list(static)
        else:
            derived = self._derive(v)
            out = [s if s != DYN else d for s, d in zip(static, derived)]
            if any(isinstance(d, int) and d == DYN for d in out):
                op = v.owner
                assert isinstance(op, Operation)
                raise UserError(f"'{op.name}' op: a '?' result dim is not determined by its operands", location_of(op))
        self.known[v] = out
        return out

    def numel(self, v: SSAValue) -> Index:
        return self.ib.prod(self.dims(v))

    def _derive(self, v: SSAValue) -> list[Index]:
        """The op's shape rule (`reify_dims`); a kernel's or group's result is the value it yields."""
        op = v.owner
        if isinstance(op, (GroupOp, KernelOp)):
            index = next(i for i, r in enumerate(op.results) if r is v)
            return self.dims(op.yielded()[index])
        if not isinstance(op, graph.GraphOp):
            raise UserError(f"the size of a '?' dim of {v.type} is not known here",
                            location_of(op if isinstance(op, Operation) else None))
        return op.reify_dims(self.dims, self.ib)


class DimChecks:
    """The host's run-time checks that sizes which must agree do agree
    (`GraphOp.agreeing_dims`): a `cf.assert` on their comparison, located at the op,
    before the launch that relies on them; the executor names both sizes when one
    fails. Sizes checked equal form classes (a union-find over the sizes, as the
    `symbolic-dims` pass's classes): an equality already implied by the checks before
    it is not checked again, so a class of n sizes costs n - 1 checks however many ops
    rely on it; pairs of static sizes were checked by the verifier."""

    def __init__(self, ib: IndexBuilder):
        self.ib = ib
        self.seen: set[tuple] = set()
        self.equal = UnionFind()

    def emit(self, op: Operation, shapes: ShapeCalc) -> None:
        if not isinstance(op, graph.GraphOp):
            return
        for agreement in op.agreeing_dims(shapes.dims, self.ib):
            a, b = agreement.first, agreement.second
            if (isinstance(a, int) and isinstance(b, int)) or a is b:
                continue
            key = (agreement.kind, _key(a), _key(b))
            if agreement.kind == graph.DimAgreement.EQUAL:
                if not self.equal.union(_key(a), _key(b)):
                    continue  # implied by the checks before
            elif key in self.seen:
                continue
            self.seen.add(key)
            if isinstance(a, int) and agreement.kind == graph.DimAgreement.EQUAL:
                a, b = b, a  # the run-time size first, so the message reads "got vs expected"
            ok = self.ib.c.value(arith.CmpiOp(self.ib.ssa(a), self.ib.ssa(b), "eq"))
            if agreement.kind == graph.DimAgreement.FIRST_MAY_BE_1:
                one = self.ib.c.value(arith.CmpiOp(self.ib.ssa(a), self.ib.ssa(1), "eq"))
                ok = self.ib.c.value(arith.OrIOp(ok, one))
            check = cf.AssertOp(ok, f"'{op.name}' op: {agreement.what} differ at run time")
            check.location = op.location
            self.ib.c.insert(check)


def bind_declared_dims(f, dims: dict[SSAValue, list[Index]], ib: IndexBuilder) -> None:
    """The function arguments' dims its source names by one symbol (`#graph.dims`, the
    ONNX `dim_param`s) are one size: each is checked once, on entry, against the first
    argument dim of its symbol (a `cf.assert` located at the function, else at the
    argument's first reader, naming both), and
    then takes that dim's size, so every kernel reading any of them receives one value."""


    first: dict[str, tuple[Index, str]] = {}
    for arg in f.body.blocks[0].args:
        for d, size in enumerate(dims[arg]):
            symbol = declared_symbol(arg, d) if not isinstance(size, int) else None
            if symbol is None:
                continue
            where = f"dim {d} of %{arg.name_hint or f'arg{arg.index}'}"
            if symbol not in first:
                first[symbol] = (size, where)
                continue
            size0, where0 = first[symbol]
            ok = ib.c.value(arith.CmpiOp(ib.ssa(size0), ib.ssa(size), "eq"))
            check = cf.AssertOp(ok, f"@{f.sym_name.data}: {where0} and {where} are both '{symbol}' but differ "
                                    "at run time")
            check.location = f.location if location_of(f) is not None else _first_reader(f, arg).location
            ib.c.insert(check)
            dims[arg][d] = size0


def _first_reader(f, arg: SSAValue) -> Operation:
    """The first op of `f` reading `arg` (where a check on it is located when `f` has
    no location of its own, as an imported ONNX graph)."""
    return next((op for op in f.body.blocks[0].ops if arg in op.operands), f)


def _key(x: Index) -> tuple:
    return ("c", x) if isinstance(x, int) else ("v", id(x))


def kernel_dim_classes(k: Operation) -> dict[tuple[int, int], tuple[int, int]]:
    """For a `schedule.kernel`: each `?` dim of its operands, (operand, dim), mapped to
    the first (operand, dim) of its symbol class, where the classes merge the sizes the
    kernel's own ops require to agree and the function arguments' dims the source names
    by one symbol (`B` of every column, even of columns no op relates). The host checks
    exactly those agreements before the launch, and the declared ones once on entry
    (fsir/lowering/shapes.py), so one `index` argument per class carries the size into
    the kernel: a thousand columns of batch B take B once."""
    assert isinstance(k, KernelOp)
    table = SymbolTable()
    mono = MonoDims(table)
    leaves: dict[str, tuple[int, int]] = {}
    known: dict[SSAValue, list] = {}
    for i, a in enumerate(k.block.args):
        dims: list = []
        for d, s in enumerate(shape_of(a.type)):
            if s == DYN:
                name = f"k{i}_{d}"
                leaves[name] = (i, d)
                dims.append(table.symbol(name))
            else:
                dims.append(Mono(s))
        known[a] = dims
    calc = ShapeCalc(mono, known)  # pyright: ignore[reportArgumentType]  # any DimBuilder serves
    for g in k.groups():
        for op in g.block.ops:
            if not isinstance(op, graph.GraphOp):
                continue
            for a in op.agreeing_dims(calc.dims, mono):
                if a.kind == DimAgreement.EQUAL:
                    table.merge(mono.lift(a.first), mono.lift(a.second))
    first_of: dict[str, str] = {}
    for name, (i, d) in leaves.items():
        symbol = declared_symbol(k.operands[i], d)
        if symbol is not None:
            table.merge(Mono(1, (first_of.setdefault(symbol, name),)), Mono(1, (name,)))
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for name, where in leaves.items():
        rep = table.canon(Mono(1, (name,)))
        out[where] = leaves.get(rep.syms[0], where) if rep.coef == 1 and len(rep.syms) == 1 else where
    return out
