"""Building scalar and index code at the gpu level.

`Cursor` inserts ops at the end of a block and reuses pure ops already computed in the
current or an enclosing block (FusionStitching §4.5: index and intermediate values are
computed once per thread), `IndexBuilder` does `index` arithmetic that folds constants
(indices are Python ints until they depend on a runtime value), and `ScalarBuilder` has
the scalar operations the `ELEMENTWISE` table's `lower` lambdas call, choosing float or
signed-integer variants from the operand type, so adding an elementwise op stays a
one-table change in fsir/dialects/graph/elementwise.py.

f16/bf16 values are widened to f32 when loaded; scalar code sees f32, f64, i1 and the
integers. Integer scalars keep their graph element type, unsigned ones (`ui8` ...
`ui64`) included, so the ops whose result depends on signedness are chosen from the
operand type: divui/remui, cmpi u*, maxui/minui, shrui, extui, uitofp, fptoui for
unsigned types, the signed variants otherwise. (Upstream MLIR's arith takes signless
integers only; xDSL accepts unsigned ones, and keeping the type on the scalar keeps
every signedness decision in this one builder.)
"""

from __future__ import annotations

import math as _m
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TypeGuard

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import Pure

from fsir.ir import integer_constant
from fsir.lowering.libm import TRIG, TrigBuilder, float_bits, fmod

index = IndexType()
Index = int | SSAValue  # a folded constant or a runtime `index` value


FloatType = Float16Type | BFloat16Type | Float32Type | Float64Type


def is_float_type(t: Attribute) -> TypeGuard[FloatType]:
    return isinstance(t, (Float16Type, BFloat16Type, Float32Type, Float64Type))


def is_unsigned_int(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def compute_type(t: Attribute) -> Attribute:
    """The register type elements of type `t` are computed in (f16/bf16 widen to f32)."""
    return f32 if isinstance(t, (Float16Type, BFloat16Type)) else t


class Cursor:
    """Inserts ops at the end of the current block, with pure-op reuse per scope."""

    def __init__(self, block: Block):
        self.block = block
        self._scopes: list[dict] = [{}]
        # the blocks of the scopes, and whether each is the body of a loop that code
        # invariant in it may be hoisted out of (`at(..., hoistable=True)`, `hoisted`)
        self._blocks: list[Block] = [block]
        self._hoistable: list[bool] = [False]

    def insert(self, op: Operation) -> Operation:
        """Insert `op`, or return an equal pure op already available here."""
        key = None
        if op.has_trait(Pure) and not op.regions:
            # attributes compare by value (a float by its bits), as their printed forms would
            key = (op.name, tuple(id(o) for o in op.operands), tuple(op.properties.items()),
                   tuple(op.attributes.items()), tuple(r.type for r in op.results))
            for scope in reversed(self._scopes):
                if key in scope:
                    return scope[key]
        self.block.add_op(op)
        if key is not None:
            self._scopes[-1][key] = op
        return op

    def value(self, op: Operation) -> SSAValue:
        return self.insert(op).results[0]

    @contextmanager
    def at(self, block: Block, hoistable: bool = False) -> Iterator[Block]:
        """Insert into `block` (a nested region's block) for the duration. `hoistable`:
        the block is the body of a loop that runs at least once and is inserted into the
        enclosing block after its body is built, so ops invariant in it may be inserted
        at the enclosing block's end instead (`hoist_level`, `hoisted`)."""
        saved = self.block
        self.block = block
        self._scopes.append({})
        self._blocks.append(block)
        self._hoistable.append(hoistable)
        try:
            yield block
        finally:
            self._scopes.pop()
            self._blocks.pop()
            self._hoistable.pop()
            self.block = saved

    @property
    def level(self) -> int:
        """The nesting depth of the current block (0: the outermost)."""
        return len(self._blocks) - 1

    def defined_level(self, v: SSAValue) -> int:
        """The level of the block defining `v` (0 for values from outside the cursor's
        blocks)."""
        block = v.owner.parent_block() if isinstance(v.owner, Operation) else v.owner
        for level in range(len(self._blocks) - 1, 0, -1):
            if self._blocks[level] is block:
                return level
        return 0

    def available_level(self, v: SSAValue, depth: int = 16) -> int:
        """The outermost level at which `v` can be had: where it is defined, or, for a
        pure op's result (an index division: `IndexBuilder._once`), where its operands
        are (the op can be built there again)."""
        level = self.defined_level(v)
        op = v.owner
        if level == 0 or depth == 0 or not isinstance(op, Operation) or not _rebuildable(op):
            return level
        return max((self.available_level(o, depth - 1) for o in op.operands), default=0)

    def hoist_level(self, values: Sequence[SSAValue]) -> int:
        """The outermost level the code using `values` may move to: out of enclosing
        hoistable loop bodies (`at`) as long as the values are available there."""
        need = max((self.available_level(v) for v in values), default=0)
        level = self.level
        while level > need and self._hoistable[level]:
            level -= 1
        return level

    @contextmanager
    def hoisted(self, level: int) -> Iterator[None]:
        """Insert at the end of the block at `level` (before the loop nest being built
        in it), seeing only that level's scopes, for the duration."""
        saved = self.block, self._scopes, self._blocks, self._hoistable
        self.block = self._blocks[level]
        self._scopes, self._blocks = self._scopes[:level + 1], self._blocks[:level + 1]
        self._hoistable = self._hoistable[:level + 1]
        try:
            yield
        finally:
            self.block, self._scopes, self._blocks, self._hoistable = saved

    def rebuilt(self, v: SSAValue, level: int) -> SSAValue:
        """`v` at `level`: itself when defined there or further out, else its op built
        again at that level from its operands (`available_level` says it can be)."""
        if self.defined_level(v) <= level:
            return v
        op = v.owner
        assert isinstance(op, Operation)
        operands = [self.rebuilt(o, level) for o in op.operands]
        key = ("rebuilt", op.name, tuple(id(o) for o in operands), str(op.properties))
        with self.hoisted(level):
            found = self.lookup(key)  # (divisions are not pure ops: `insert` would not reuse them)
            if found is None:
                clone = op.clone_without_regions()
                clone.operands = operands
                found = self.memo()[key] = self.insert(clone).results[op.results.index(v)]
        return found

    def memo(self) -> dict:
        """The innermost scope's dictionary, for callers' own reuse keys."""
        return self._scopes[-1]

    def lookup(self, key) -> SSAValue | None:
        for scope in reversed(self._scopes):
            if key in scope:
                return scope[key]
        return None


def _rebuildable(op: Operation) -> bool:
    """Whether `op` can be built again elsewhere from its operands: a pure op without
    regions, or an index division or remainder (never by 0 here, `IndexBuilder._once`)."""
    if op.regions:
        return False
    return op.has_trait(Pure) or (isinstance(op, (arith.DivUIOp, arith.RemUIOp))
                                  and isinstance(op.results[0].type, IndexType))


def const_addend(v: Index) -> tuple[SSAValue, int] | None:
    """(x, c) when `v` is the index `x + c` for a constant c."""
    if isinstance(v, int) or not isinstance(v.owner, arith.AddiOp):
        return None
    rhs = v.owner.rhs.owner
    if isinstance(rhs, arith.ConstantOp) and isinstance(rhs.value, IntegerAttr):
        return v.owner.lhs, rhs.value.value.data
    return None


def known_multiple(v: Index) -> int:
    """A number the non-negative index `v` is provably a multiple of (0: v is 0), from
    the index arithmetic computing it: `i * 4` is a multiple of 4, `(i * 4) % 768` too,
    `i * 4 + 8` of 4. What the vectorizer needs to prove an access aligned."""
    if isinstance(v, int):
        return abs(v)
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return abs(op.value.value.data)
    if isinstance(op, arith.MuliOp):
        return known_multiple(op.lhs) * known_multiple(op.rhs)
    if isinstance(op, (arith.AddiOp, arith.SubiOp, arith.SelectOp, arith.MinSIOp, arith.MaxSIOp,
                       arith.MinUIOp, arith.MaxUIOp, arith.RemUIOp)):
        # a % m = a - (a / m) * m; select, min and max pick one of their operands
        return _m.gcd(known_multiple(op.lhs), known_multiple(op.rhs))
    if isinstance(op, arith.DivUIOp):
        a, m = known_multiple(op.lhs), known_multiple(op.rhs)
        return a // m if m and a % m == 0 else 1
    return 1


class IndexBuilder:
    """`index` arithmetic on Python ints and SSA values, folding what is constant."""

    def __init__(self, cursor: Cursor):
        self.c = cursor

    def const(self, v: int) -> SSAValue:
        # looked up before an op is built: building and hashing one costs more than the
        # rest of an index operation (GEMM candidates ask for thousands)
        key = ("index", v)
        found = self.c.lookup(key)
        if found is None:
            found = self.c.value(arith.ConstantOp(IntegerAttr(v, index)))
            self.c.memo()[key] = found
        return found

    def ssa(self, v: Index) -> SSAValue:
        return self.const(v) if isinstance(v, int) else v

    def add(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if a == 0:
            return b
        if b == 0:
            return a
        # (x + c) + y -> (x + y) + c: constants move outwards, so offsets that differ by
        # a constant (a thread's unrolled row slots) share one base register and the
        # constant becomes the load's immediate address offset
        for first, (p, q) in enumerate(((a, b), (b, a))):
            split = const_addend(p)
            if split is not None:
                if isinstance(q, int):  # (x + c) + d -> x + (c + d)
                    return self.add(split[0], split[1] + q)
                # (operands keep their order, so equal sums are one op)
                inner = self.add(split[0], q) if first == 0 else self.add(q, split[0])
                return self.add(inner, split[1])
        if isinstance(a, int):
            a, b = b, a
        return self.c.value(arith.AddiOp(self.ssa(a), self.ssa(b)))

    def sub(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a - b
        if b == 0:
            return a
        return self.c.value(arith.SubiOp(self.ssa(a), self.ssa(b)))

    def mul(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if a == 0 or b == 0:
            return 0
        if a == 1:
            return b
        if b == 1:
            return a
        # (x + c) * k -> x * k + c * k: offsets differing by a constant keep sharing one
        # base once scaled (a GEMM thread's staged tile elements, rows apart)
        for p, q in ((a, b), (b, a)):
            split = const_addend(p)
            if split is not None and isinstance(q, int):
                return self.add(self.mul(split[0], q), split[1] * q)
        return self.c.value(arith.MuliOp(self.ssa(a), self.ssa(b)))

    def div(self, a: Index, b: Index) -> Index:
        """Floor division of non-negative indices."""
        if isinstance(a, int) and isinstance(b, int):
            return a // b
        if b == 1 or a == 0:
            return a
        split = self._aligned_split(a, b)
        if split is not None:
            return self.div(split[0], b)
        return self._once(arith.DivUIOp, a, b)

    def rem(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a % b
        if b == 1 or a == 0:
            return 0
        split = self._aligned_split(a, b)
        if split is not None:
            return self.add(self.rem(split[0], b), split[1])
        return self._once(arith.RemUIOp, a, b)

    def _once(self, kind, a: Index, b: Index) -> SSAValue:
        """An index division or remainder, reused where already computed (they are not
        `Pure` in xDSL, as a division may trap; an index divisor here never is 0)."""
        key = (kind.name, self._key([a, b]))
        found = self.c.lookup(key)
        if found is None:
            found = self.c.memo()[key] = self.c.value(kind(self.ssa(a), self.ssa(b)))
        return found

    def _aligned_split(self, a: Index, m: Index) -> tuple[Index, int] | None:
        """(y, r) with a = y + r, when y is a multiple of g = gcd(y's factor, m) > r:
        then a % m = y % m + r and a / m = y / m (y % m is at most m - g). A vector
        lane's offset `base + v` keeps its `+ v` through delinearization this way."""
        split = const_addend(a)
        if split is None or not isinstance(m, int):
            return None
        x, c = split
        g = _m.gcd(known_multiple(x), m)
        lo = c % g if g > 1 else 0
        if not lo:
            return None
        return self.add(x, c - lo), lo  # y = a - lo >= 0, as a >= 0 and y is a multiple of g

    def ceildiv(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return -(-a // b)
        if b == 1:
            return a
        return self.div(self.add(a, self.sub(b, 1)), b)

    def max(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return max(a, b)
        return self.c.value(arith.MaxSIOp(self.ssa(a), self.ssa(b)))

    def min(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return min(a, b)
        return self.c.value(arith.MinSIOp(self.ssa(a), self.ssa(b)))

    def lt(self, a: Index, b: Index) -> bool | SSAValue:
        if isinstance(a, int) and isinstance(b, int):
            return a < b
        return self.c.value(arith.CmpiOp(self.ssa(a), self.ssa(b), "slt"))

    def eq(self, a: Index, b: Index) -> bool | SSAValue:
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return self.c.value(arith.CmpiOp(self.ssa(a), self.ssa(b), "eq"))

    def select(self, cond: bool | SSAValue, a: Index, b: Index) -> Index:
        if isinstance(cond, bool):
            return a if cond else b
        if isinstance(a, int) and isinstance(b, int) and a == b:
            return a
        return self.c.value(arith.SelectOp(cond, self.ssa(a), self.ssa(b)))

    def prod(self, xs: Sequence[Index]) -> Index:
        out: Index = 1
        for x in xs:
            out = self.mul(out, x)
        return out

    @staticmethod
    def _key(values: Sequence[Index]) -> tuple:
        return tuple(("c", v) if isinstance(v, int) else ("v", id(v)) for v in values)

    def linearize(self, idx: Sequence[Index], dims: Sequence[Index]) -> Index:
        """Row-major offset of multi-index `idx` in a tensor of shape `dims` (the linear
        index itself when `idx` was delinearized from it in this shape)."""
        if not dims:
            return 0
        known = self.c.lookup(("delinearized", self._key(idx), self._key(dims)))
        if known is not None:
            return known
        split = const_addend(idx[-1])
        if split is not None:  # a delinearized index shifted in its innermost dim (a vector lane)
            known = self.c.lookup(("delinearized", self._key([*idx[:-1], split[0]]), self._key(dims)))
            if known is not None:
                return self.add(known, split[1])
        out: Index = 0
        for i, d in zip(idx, dims):
            out = self.add(self.mul(out, d), i)
        return out

    def known_linear(self, idx: Sequence[Index], dims: Sequence[Index]) -> bool:
        """Whether `idx` was delinearized from an offset in shape `dims` (`linearize`
        returns that offset without arithmetic)."""
        return bool(dims) and self.c.lookup(("delinearized", self._key(idx), self._key(dims))) is not None

    def delinearize(self, linear: Index, dims: Sequence[Index]) -> list[Index]:
        """The row-major multi-index of `linear` (< prod(dims)) in shape `dims`; the
        outermost coordinate needs no remainder."""
        original = linear
        out: list[Index] = []
        for pos in range(len(dims) - 1, -1, -1):
            d = dims[pos]
            if pos == 0:
                out.append(linear)
            elif d == 1:
                out.append(0)
            else:
                out.append(self.rem(linear, d))
                linear = self.div(linear, d)
        result = out[::-1]
        if dims:  # (a rank-0 shape has one element whatever `linear` is)
            self.c.memo()[("delinearized", self._key(result), self._key(dims))] = original
        return result


class ScalarBuilder:
    """Scalar ops for one element; the `lower` lambdas of ELEMENTWISE call these."""

    def __init__(self, cursor: Cursor):
        self.c = cursor

    # -- constants -----------------------------------------------------------------

    def const(self, value: float | int | bool, t: Attribute) -> SSAValue:
        if is_float_type(t):
            return self.c.value(arith.ConstantOp(FloatAttr(float(value), t)))
        if isinstance(t, IntegerType) and t.width.data == 1:
            return self.c.value(arith.ConstantOp(IntegerAttr(1 if value else 0, t)))
        assert isinstance(t, (IntegerType, IndexType))
        if is_unsigned_int(t):  # arith.constant is signless: the same bits, then the type
            assert isinstance(t, IntegerType)
            bits = self.const(value, IntegerType(t.width.data))
            return self.c.value(arith.BitcastOp(bits, t))
        return self.c.value(arith.ConstantOp(IntegerAttr(int(value), t)))

    def _is_float(self, x: SSAValue) -> bool:
        return is_float_type(x.type)

    # -- the ELEMENTWISE vocabulary -------------------------------------------------

    def neg(self, x: SSAValue) -> SSAValue:
        if self._is_float(x):
            return self.c.value(arith.NegfOp(x))
        return self.c.value(arith.SubiOp(self.const(0, x.type), x))

    def abs(self, x: SSAValue) -> SSAValue:
        if self._is_float(x):
            return self.c.value(math.AbsFOp(x))
        if is_unsigned_int(x.type):
            return x
        return self.c.value(math.AbsIOp(x))

    def not_(self, x: SSAValue) -> SSAValue:
        return self.c.value(arith.XOrIOp(x, self.const(1 if x.type == i1 else -1, x.type)))

    _MATH = {
        "floor": math.FloorOp, "ceil": math.CeilOp, "exp": math.ExpOp, "log": math.LogOp,
        "tanh": math.TanhOp, "erf": math.ErfOp, "sqrt": math.SqrtOp, "rsqrt": math.RsqrtOp,
        "powf": math.PowFOp, "absf": math.AbsFOp,
    }

    def math(self, name: str, *xs: SSAValue) -> SSAValue:
        return self.c.value(self._MATH[name](*xs))

    def trig(self, name: str, x: SSAValue) -> SSAValue:
        """sin, cos, tan, asin, ..., atanh of an f32 scalar (fsir/lowering/libm.py)."""
        return TRIG[name](TrigBuilder(self), x)

    def round_even(self, x: SSAValue) -> SSAValue:
        """Round half to even (cvt.rni)."""
        return self.c.value(math.RoundEvenOp(x))

    def sigmoid(self, x: SSAValue) -> SSAValue:
        one = self.const(1.0, x.type)
        e = self.math("exp", self.neg(x))
        return self.c.value(arith.DivfOp(one, self.c.value(arith.AddfOp(one, e))))

    _FLOAT_ARITH = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp, "div": arith.DivfOp}
    _INT_ARITH = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "and": arith.AndIOp,
                  "or": arith.OrIOp, "xor": arith.XOrIOp}

    def arith(self, name: str, x: SSAValue, y: SSAValue) -> SSAValue:
        if self._is_float(x):
            if name == "rem":
                return fmod(self, x, y)
            return self.c.value(self._FLOAT_ARITH[name](x, y))
        if name in ("div", "rem"):
            unsigned = is_unsigned_int(x.type)
            if integer_constant(y) not in (None, 0):
                # a nonzero constant: no guard, so the printer sees the constant divisor
                # and multiplies (`fsir/ptx/divide.py`)
                if name == "div":
                    return self.c.value((arith.DivUIOp if unsigned else arith.DivSIOp)(x, y))
                return self.c.value((arith.RemUIOp if unsigned else arith.RemSIOp)(x, y))
            # x / 0 is 0 and x % 0 is x (graph semantics); PTX leaves both undefined,
            # so divide by a safe divisor and select.
            zero = self.const(0, x.type)
            is_zero = self.c.value(arith.CmpiOp(y, zero, "eq"))
            safe = self.c.value(arith.SelectOp(is_zero, self.const(1, x.type), y))
            if name == "div":
                q = self.c.value((arith.DivUIOp if unsigned else arith.DivSIOp)(x, safe))
                return self.c.value(arith.SelectOp(is_zero, zero, q))
            r = self.c.value((arith.RemUIOp if unsigned else arith.RemSIOp)(x, safe))
            return self.c.value(arith.SelectOp(is_zero, x, r))
        return self.c.value(self._INT_ARITH[name](x, y))

    def shift(self, kind: str, x: SSAValue, y: SSAValue) -> SSAValue:
        """x << y or x >> y (arithmetic for signed types, logical for unsigned) with the
        amount read as unsigned; amounts of at least the width give 0 or the sign fill
        (arith leaves them undefined, so they are selected here)."""
        t = x.type
        assert isinstance(t, IntegerType)
        bits = t.width.data
        wide = self.c.value(arith.CmpiOp(y, self.const(bits, t), "uge"))
        if kind == "shr" and not is_unsigned_int(t):
            amount = self.c.value(arith.SelectOp(wide, self.const(bits - 1, t), y))
            return self.c.value(arith.ShRSIOp(x, amount))
        shifted = self.c.value((arith.ShLIOp if kind == "shl" else arith.ShRUIOp)(x, y))
        return self.c.value(arith.SelectOp(wide, self.const(0, t), shifted))

    def pow(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """x^y: math.powf for floats; for integers square and multiply over the bits of
        y (unrolled, wrapping), a negative y giving 1 / x^-y truncated (+-1 or 0)."""
        if self._is_float(x):
            return self.math("powf", x, y)
        t = x.type
        assert isinstance(t, IntegerType)
        zero, one = self.const(0, t), self.const(1, t)
        acc, base, bits = one, x, y
        for _ in range(t.width.data):
            odd = self.c.value(arith.CmpiOp(self.c.value(arith.AndIOp(bits, one)), zero, "ne"))
            acc = self.c.value(arith.SelectOp(odd, self.c.value(arith.MuliOp(acc, base)), acc))
            base = self.c.value(arith.MuliOp(base, base))
            bits = self.c.value(arith.ShRUIOp(bits, one))
        if is_unsigned_int(t):
            return acc
        minus_one = self.const(-1, t)
        odd = self.c.value(arith.CmpiOp(self.c.value(arith.AndIOp(y, one)), zero, "ne"))
        inverse = self.c.value(arith.SelectOp(
            self.c.value(arith.CmpiOp(x, one, "eq")), one,
            self.c.value(arith.SelectOp(self.c.value(arith.CmpiOp(x, minus_one, "eq")),
                                        self.c.value(arith.SelectOp(odd, minus_one, one)), zero))))
        negative = self.c.value(arith.CmpiOp(y, zero, "slt"))
        return self.c.value(arith.SelectOp(negative, inverse, acc))

    def max(self, x: SSAValue, y: SSAValue) -> SSAValue:
        if self._is_float(x):
            return self.c.value(arith.MaximumfOp(x, y))  # NaN-propagating
        if x.type == i1:
            return self.c.value(arith.OrIOp(x, y))
        return self.c.value((arith.MaxUIOp if is_unsigned_int(x.type) else arith.MaxSIOp)(x, y))

    def min(self, x: SSAValue, y: SSAValue) -> SSAValue:
        if self._is_float(x):
            return self.c.value(arith.MinimumfOp(x, y))
        if x.type == i1:
            return self.c.value(arith.AndIOp(x, y))
        return self.c.value((arith.MinUIOp if is_unsigned_int(x.type) else arith.MinSIOp)(x, y))

    # -- the other light ops -------------------------------------------------------

    _FCMP = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
    _ICMP = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
    _BCMP = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}

    def compare(self, direction: str, x: SSAValue, y: SSAValue) -> SSAValue:
        if self._is_float(x):
            return self.c.value(arith.CmpfOp(x, y, self._FCMP[direction]))
        # i1 compares as unsigned: false < true
        table = self._BCMP if x.type == i1 or is_unsigned_int(x.type) else self._ICMP
        return self.c.value(arith.CmpiOp(x, y, table[direction]))

    def select(self, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.c.value(arith.SelectOp(cond, x, y))

    def convert(self, x: SSAValue, dst: Attribute) -> SSAValue:
        """Convert a computed scalar to the compute type of element type `dst`,
        rounding to `dst`'s precision (graph.convert semantics)."""
        src = x.type
        target = compute_type(dst)
        if is_float_type(src):
            if isinstance(dst, IntegerType):
                if dst.width.data == 1:
                    return self.c.value(arith.CmpfOp(x, self.const(0.0, src), "une"))
                # PTX cvt.rzi saturates to the destination's range and maps NaN to 0, as
                # the reference does (arith leaves out-of-range values undefined)
                return self.c.value((arith.FPToUIOp if is_unsigned_int(dst) else arith.FPToSIOp)(x, dst))
            if isinstance(dst, (Float16Type, BFloat16Type)) and isinstance(src, Float64Type):
                # straight to the narrow type: one rounding, not two through f32
                return self.c.value(arith.ExtFOp(self.c.value(arith.TruncFOp(x, dst)), f32))
            out = x
            if src != target:
                widen = float_bits(src) < float_bits(target)
                out = self.c.value((arith.ExtFOp if widen else arith.TruncFOp)(x, target))
            return self.round_to(out, dst)
        assert isinstance(src, IntegerType)
        from_unsigned = src.width.data == 1 or is_unsigned_int(src)
        if isinstance(dst, IntegerType):
            sw, dw = src.width.data, dst.width.data
            if dw == 1:
                return self.c.value(arith.CmpiOp(x, self.const(0, src), "ne"))
            if src == dst:
                return x
            if sw == dw:  # the same bits, read with the other signedness
                return self.c.value(arith.BitcastOp(x, dst))
            if sw < dw:
                return self.c.value((arith.ExtUIOp if from_unsigned else arith.ExtSIOp)(x, dst))
            return self.c.value(arith.TruncIOp(x, dst))
        cvt = arith.UIToFPOp if from_unsigned else arith.SIToFPOp
        assert is_float_type(target)
        return self.round_to(self.c.value(cvt(x, target)), dst)

    def bitcast(self, x: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
        """The computed scalar `x` of element type `src` reinterpreted as `dst` (of the
        same width; an i1 is the byte 0 or 1), in `dst`'s compute type."""
        if src == dst:
            return x
        if isinstance(dst, IntegerType) and dst.width.data == 1:
            return self.c.value(arith.CmpiOp(x, self.const(0, x.type), "ne"))
        if x.type == i1:  # a byte 0 or 1
            x = self.c.value(arith.ExtUIOp(x, IntegerType(8)))
        else:
            x = self.narrow(x, src)  # f16/bf16 back to their bits' type (the loaded value)
        if x.type != dst:
            x = self.c.value(arith.BitcastOp(x, dst))
        return self.widen(x)

    def multiply_add(self, x: SSAValue, y: SSAValue, acc: SSAValue) -> SSAValue:
        """acc + x * y: one fused multiply-add for floats (a GEMM's inner product)."""
        if self._is_float(x):
            return self.c.value(math.FmaOp(x, y, acc))
        return self.arith("add", acc, self.arith("mul", x, y))

    def round_to(self, x: SSAValue, elem: Attribute) -> SSAValue:
        """Round an f32 register value to f16/bf16 precision (each graph op rounds its
        result to its element type, as the reference interpreter does)."""
        if isinstance(elem, (Float16Type, BFloat16Type)) and x.type == f32:
            if _widened_from(x, elem) is not None:
                return x  # already exactly representable
            narrow = self.c.value(arith.TruncFOp(x, elem))
            return self.c.value(arith.ExtFOp(narrow, f32))
        return x

    def widen(self, x: SSAValue) -> SSAValue:
        """A loaded element in its compute type."""
        if isinstance(x.type, (Float16Type, BFloat16Type)):
            return self.c.value(arith.ExtFOp(x, f32))
        return x

    def narrow(self, x: SSAValue, elem: Attribute) -> SSAValue:
        """A computed value in element type `elem`, ready to store."""
        if x.type != elem and is_float_type(elem):
            source = _widened_from(x, elem)
            return source if source is not None else self.c.value(arith.TruncFOp(x, elem))
        return x

    def index_to(self, i: Index, t: Attribute) -> SSAValue:
        """An index as a scalar of compute type `t` (iota)."""
        ib = IndexBuilder(self.c)
        if is_float_type(t):
            as_int = self.c.value(arith.IndexCastOp(ib.ssa(i), IntegerType(64)))
            return self.c.value(arith.SIToFPOp(as_int, t))
        return self.c.value(arith.IndexCastOp(ib.ssa(i), t))

    def to_index(self, x: SSAValue) -> SSAValue:
        t = x.type
        if is_unsigned_int(t) and isinstance(t, IntegerType) and t.width.data < 64:
            x = self.c.value(arith.ExtUIOp(x, i64))  # index_cast sign-extends
        return self.c.value(arith.IndexCastOp(x, index))

    # -- reductions ----------------------------------------------------------------

    def reduce_init(self, kind: str, t: Attribute) -> SSAValue:
        if kind == "sum":
            return self.const(0, t)
        if kind == "prod":
            return self.const(1, t)
        if is_float_type(t):
            return self.const(float("-inf") if kind == "max" else float("inf"), t)
        assert isinstance(t, IntegerType)
        bits = t.width.data
        if is_unsigned_int(t) or bits == 1:  # i1 as false < true
            lo, hi = 0, (1 << bits) - 1
        else:
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        return self.const(lo if kind == "max" else hi, t)

    def combine(self, kind: str, x: SSAValue, y: SSAValue) -> SSAValue:
        if kind == "sum":
            return self.arith("add", x, y)
        if kind == "prod":
            return self.arith("mul", x, y)
        return self.max(x, y) if kind == "max" else self.min(x, y)


def _widened_from(x: SSAValue, elem: Attribute) -> SSAValue | None:
    """The `elem` value `x` was widened from by arith.extf, if it was."""
    op = x.owner
    if isinstance(op, arith.ExtFOp) and op.input.type == elem:
        return op.input
    return None
