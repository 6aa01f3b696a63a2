"""Runtime sizes of graph values, as `index` code.

Static dims are Python ints; a `?` dim is computed from the sizes of the values it
derives from by the op's shape rule. The same calculator runs on the host (sizes of
intermediate buffers and launch dims, from `memref.dim` of the function's arguments)
and in kernels (from the `index` arguments carrying the inputs' dynamic sizes).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import DYN, shape_of
from fsir.dialects.schedule import GroupOp, KernelOp
from fsir.errors import UserError
from fsir.ir import location_of
from fsir.lowering.scalar import Index, IndexBuilder


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
        self.known[v] = out
        return out

    def numel(self, v: SSAValue) -> Index:
        return self.ib.prod(self.dims(v))

    def _derive(self, v: SSAValue) -> list[Index]:
        op = v.owner
        ib = self.ib
        if isinstance(op, (GroupOp, KernelOp)):
            index = list(op.results).index(v)
            block = op.regions[0].blocks[0]
            return self.dims(block.last_op.operands[index])  # type: ignore[union-attr]
        if not isinstance(op, graph.GraphOp):
            raise UserError(f"the size of a '?' dim of {v.type} is not known here", location_of(op if isinstance(op, Operation) else None))
        out = shape_of(v.type)
        if isinstance(op, (graph.ElementwiseOp, graph.CompareOp, graph.SelectOp)):
            shapes = [shape_of(o.type) for o in op.operands]
            res = []
            for i in range(len(out)):
                static = [s[i] for s in shapes if s[i] != DYN]
                res.append(static[0] if static else self.dims(op.operands[0])[i])
            return res
        if isinstance(op, graph.ConvertOp):
            return self.dims(op.input)
        if isinstance(op, graph.BroadcastOp):
            res: list[Index] = list(out)
            src = self.dims(op.input)
            for i, d in enumerate(op.dims.get_values()):
                if out[d] == DYN:
                    res[d] = src[i]  # as the reference does (a size-1 operand dim gives 1)
            if DYN in res:
                raise self._undetermined(op)
            return res
        if isinstance(op, graph.ReshapeOp):
            unknown = [i for i, d in enumerate(out) if d == DYN]
            if len(unknown) != 1:
                raise self._undetermined(op)
            known = 1
            for d in out:
                if d != DYN:
                    known *= d
            res = list(out)
            res[unknown[0]] = ib.div(self.numel(op.input), known)
            return res
        if isinstance(op, graph.TransposeOp):
            src = self.dims(op.input)
            return [src[p] for p in op.perm.get_values()]
        if isinstance(op, graph.SliceOp):
            start, limit, strides = (op.start.get_values(), op.limit.get_values(), op.strides.get_values())
            return [-(-(l - a) // k) for a, l, k in zip(start, limit, strides)]
        if isinstance(op, graph.ConcatOp):
            d = op.dim.value.data
            first = self.dims(op.operands[0])
            res = list(first)
            total: Index = 0
            for o in op.operands:
                total = ib.add(total, self.dims(o)[d])
            res[d] = total
            return res
        if isinstance(op, graph.GatherOp):
            return self.dims(op.ids) + self.dims(op.table)[1:]
        if isinstance(op, graph.ReduceOp):
            reduced = set(op.dims.get_values())
            return [s for i, s in enumerate(self.dims(op.input)) if i not in reduced]
        if isinstance(op, graph.DotOp):
            return self.matmul_dims(op)
        raise self._undetermined(op)

    def matmul_dims(self, op: graph.DotOp) -> list[Index]:
        a, b = self.dims(op.lhs), self.dims(op.rhs)
        va, vb = len(a) == 1, len(b) == 1
        a2 = [1, a[0]] if va else list(a)
        b2 = [b[0], 1] if vb else list(b)
        ba, bb = a2[:-2], b2[:-2]
        n = max(len(ba), len(bb))
        ba = [1] * (n - len(ba)) + ba
        bb = [1] * (n - len(bb)) + bb
        batch = [self.ib.select(self.ib.eq(x, 1), y, x) for x, y in zip(ba, bb)]
        out = list(batch)
        if not va:
            out.append(a2[-2])
        if not vb:
            out.append(b2[-1])
        return out

    @staticmethod
    def _undetermined(op: Operation) -> UserError:
        return UserError(f"'{op.name}' op: a '?' result dim is not determined by its operands", location_of(op))
