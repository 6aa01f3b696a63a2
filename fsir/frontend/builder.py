"""Emitting graph-dialect ops from an importer: the helpers both frontends share.

Importers translate one foreign op at a time into a few graph ops; `GraphBuilder` keeps
the block they go into, stamps every op with the source location of the foreign op
(so verifier errors point into the .hlo/.onnx), computes result types with the ops'
own shape rules, and folds constant subgraphs with the ops' own numpy references when
an importer needs a value at import time (ONNX Shape chains, HLO dynamic-slice
indices, reduce init values). Ops that only fed such folds are removed at the end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from fsir.dialects import graph
from fsir.dialects.graph import ELEMENTWISE_OPS, GraphOp, shape_of, tensor
from fsir.errors import Location, UserError
from fsir.interpreters import graph_value
from fsir.ir import MAX_DENSE_ELEMENTS

_RAW_DTYPES = {Float32Type: np.dtype("<f4"), Float64Type: np.dtype("<f8"), Float16Type: np.dtype("<f2")}

# Constant subgraphs larger than this are not folded (they stay ops for the compiler).
FOLD_LIMIT = 1 << 16


def dense_i64(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


class GraphBuilder:
    def __init__(self, filename: str):
        self.filename = filename
        self.block = Block()
        self.loc: Location | None = None
        # values folded so far; None for one known not to fold, so a long chain of ops
        # (an unrolled loop's) is walked once, not once per op appended to it
        self._folded: dict[SSAValue, np.ndarray | None] = {}

    def add_arg(self, t: Attribute, name: str | None = None) -> SSAValue:
        arg = self.block.insert_arg(t, len(self.block.args))
        if name and SSAValue.is_valid_name(name):
            arg.name_hint = name
        return arg

    # -- errors and locations -------------------------------------------------

    def error(self, message: str, loc: Location | None = None) -> UserError:
        return UserError(message, loc or self.loc)

    def _stamp(self, op) -> None:
        if self.loc is not None:
            op.location = FileLineColLoc(
                StringAttr(self.loc.file), IntAttr(self.loc.line), IntAttr(self.loc.col)
            )

    # -- emitting ------------------------------------------------------------------

    def emit(self, cls: type[GraphOp], operands: Sequence[SSAValue], result_type: Attribute | None = None,
             attributes: dict[str, Attribute] | None = None, **props: Attribute) -> SSAValue:
        """Append one op; without `result_type` the op's shape rule decides it."""
        if result_type is None:
            probe = cls.build(operands=self._group(cls, operands), result_types=[operands[0].type],
                              properties=props)
            try:
                result_type = probe.infer_type()
            except VerifyException as err:
                raise self.error(f"cannot import as {cls.name}: {err}") from None
            finally:
                probe.drop_all_references()
        op = cls.build(operands=self._group(cls, operands), result_types=[result_type], properties=props,
                       attributes=attributes or {})
        self._stamp(op)
        try:
            op.verify_()
        except VerifyException as err:
            raise self.error(f"cannot import as {cls.name}: {err}") from None
        self.block.add_op(op)
        return op.results[0]

    @staticmethod
    def _group(op_class, operands):
        return op_class._group_operands(list(operands))

    def ew(self, name: str, *operands: SSAValue) -> SSAValue:
        return self.emit(ELEMENTWISE_OPS[name], operands)

    def constant(self, array: np.ndarray, element_type: Attribute) -> SSAValue:
        array = np.asarray(array)
        if isinstance(element_type, IntegerType):  # signless or unsigned, as xDSL packs them (i1: below)
            dtype = np.dtype(element_type.format) if element_type.width.data > 1 else None
        else:
            dtype = _RAW_DTYPES.get(type(element_type))
        if dtype is not None and array.size > 1 and not np.all(array == array.reshape(-1)[0]):
            # Weights: the attribute's bytes straight from numpy (little-endian, as xDSL
            # packs them), not a Python list per element.
            raw = np.ascontiguousarray(array, dtype=dtype).tobytes()
            assert isinstance(element_type, IntegerType | Float16Type | Float32Type | Float64Type)  # has a dtype
            op = graph.ConstantOp(DenseIntOrFPElementsAttr(TensorType(element_type, array.shape), BytesAttr(raw)))
        else:
            op = graph.ConstantOp.from_array(array, element_type)
        self._stamp(op)
        self.block.add_op(op)
        return op.results[0]

    def scalar_like(self, value: float, like: SSAValue) -> SSAValue:
        """A constant of `like`'s type filled with `value` (a splat, cheap to print; a
        scalar broadcast `like` it when its shape has `?` dims)."""
        shape = shape_of(like.type)
        if graph.DYN in shape:
            return self.broadcast(self.constant(np.array(value), self.elem(like)), shape, [], like=like)
        return self.constant(np.full(shape, value), self.elem(like))

    def broadcast(self, v: SSAValue, shape: Sequence[int], dims: Sequence[int],
                  like: SSAValue | None = None) -> SSAValue:
        """StableHLO broadcast_in_dim; dims need not be increasing (a transpose is added).
        `like` (a value of shape `shape`) gives the `?` sizes of the result."""
        src = shape_of(v.type)
        if tuple(shape) == src and list(dims) == list(range(len(src))):
            return v
        splat = self._splat(v)
        if splat is not None and graph.DYN not in shape and math.prod(shape) <= MAX_DENSE_ELEMENTS:
            # a broadcast of a scalar constant: a splat constant, which kernels inline
            return self.constant(np.full(shape, splat), self.elem(v))
        order = sorted(range(len(dims)), key=lambda i: dims[i])
        if order != list(range(len(dims))):
            v = self.transpose(v, order)
            dims = [dims[i] for i in order]
        operands = [v] if like is None or graph.DYN not in shape else [v, like]
        return self.emit(graph.BroadcastOp, operands, tensor(self.elem(v), shape), dims=dense_i64(dims))

    @staticmethod
    def _splat(v: SSAValue):
        op = v.owner
        if isinstance(op, graph.ConstantOp):
            values = op.value.get_values()
            if len(values) == 1:
                return values[0]
        return None

    def broadcast_to(self, v: SSAValue, shape: Sequence[int], like: SSAValue | None = None) -> SSAValue:
        """numpy-style: align trailing dims; size-1 dims stretch."""
        rank = len(shape_of(v.type))
        return self.broadcast(v, shape, list(range(len(shape) - rank, len(shape))), like)

    # reshape(reshape(x)) and transpose(transpose(x)) are composed as they are built:
    # JAX wraps every broadcast in such pairs, and each left in place is a kernel boundary
    # or an extra kernel. The inner op is dropped at `finish` if nothing else uses it.

    def reshape(self, v: SSAValue, shape: Sequence[int], groups: Sequence[int] | None = None) -> SSAValue:
        """`groups`: the reshape's dim groups where its `?` dims need them
        (`graph.reshape_dim_groups`); a reshape with groups is not composed."""
        if isinstance(v.owner, graph.ReshapeOp) and v.owner.groups is None and groups is None:
            v = v.owner.input
        if tuple(shape) == shape_of(v.type):
            return v
        if groups is None:
            return self.emit(graph.ReshapeOp, [v], tensor(self.elem(v), shape))
        return self.emit(graph.ReshapeOp, [v], tensor(self.elem(v), shape),
                         attributes={"groups": dense_i64(groups)})

    def transpose(self, v: SSAValue, perm: Sequence[int]) -> SSAValue:
        if isinstance(v.owner, graph.TransposeOp):
            inner = v.owner.perm.get_values()
            perm = [inner[p] for p in perm]
            v = v.owner.input
        if list(perm) == list(range(len(perm))):
            return v
        return self.emit(graph.TransposeOp, [v], perm=dense_i64(perm))

    def convert(self, v: SSAValue, element_type: Attribute) -> SSAValue:
        if self.elem(v) == element_type:
            return v
        return self.emit(graph.ConvertOp, [v], tensor(element_type, shape_of(v.type)))

    def compare(self, direction: graph.CompareDirection | str, a: SSAValue, b: SSAValue) -> SSAValue:
        """`graph.compare` of `direction` (a CompareDirection or its name)."""
        return self.emit(graph.CompareOp, [a, b],
                         direction=graph.CompareDirectionAttr(graph.CompareDirection(direction)))

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.SelectOp, [c, a, b])

    def reduce(self, kind: graph.ReduceKind | str, v: SSAValue, dims: Sequence[int]) -> SSAValue:
        """`graph.reduce` of `kind` (a ReduceKind or its name) over `dims`."""
        return self.emit(graph.ReduceOp, [v], kind=graph.ReduceKindAttr(graph.ReduceKind(kind)),
                         dims=dense_i64(sorted(dims)))

    def slice(self, v: SSAValue, start: Sequence[int], limit: Sequence[int],
              strides: Sequence[int] | None = None) -> SSAValue:
        strides = strides or [1] * len(start)
        if list(start) == [0] * len(start) and tuple(limit) == shape_of(v.type) and set(strides) <= {1}:
            return v
        return self.emit(graph.SliceOp, [v], start=dense_i64(start), limit=dense_i64(limit),
                         strides=dense_i64(strides))

    def concat(self, vs: Sequence[SSAValue], dim: int) -> SSAValue:
        if len(vs) == 1:
            return vs[0]
        return self.emit(graph.ConcatOp, vs, dim=graph.i64_attr(dim))

    def iota(self, shape: Sequence[int], dim: int, element_type: Attribute) -> SSAValue:
        return self.emit(graph.IotaOp, [], tensor(element_type, shape), dim=graph.i64_attr(dim))

    def dot(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(graph.DotOp, [a, b])

    def dot_general(self, a: SSAValue, c: SSAValue, lb: Sequence[int], lc: Sequence[int],
                    rb: Sequence[int], rc: Sequence[int]) -> SSAValue:
        """XLA's dot_general (batch and contracting dims of each side) as transposes and
        reshapes around one graph.dot: [batch, M, K] @ [batch, K, N] -> [batch, M, N],
        reshaped to [batch, lhs free, rhs free]."""
        lb, lc, rb, rc = list(lb), list(lc), list(rb), list(rc)
        sa, sc = shape_of(a.type), shape_of(c.type)
        for dims, rank in ((lb + lc, len(sa)), (rb + rc, len(sc))):
            if len(set(dims)) != len(dims) or any(not 0 <= d < rank for d in dims):
                raise self.error(f"dot: batch and contracting dims {dims} must be distinct dims of a rank-{rank} "
                                 "operand")
        if len(lb) != len(rb) or len(lc) != len(rc):
            raise self.error("dot: the operands need as many batch dims and as many contracting dims each")
        lf = [d for d in range(len(sa)) if d not in lb + lc]
        rf = [d for d in range(len(sc)) if d not in rb + rc]
        batch = [sa[d] for d in lb]
        m, k, n = (math.prod(s[d] for d in dims) for s, dims in ((sa, lf), (sa, lc), (sc, rf)))
        a = self.reshape(self.transpose(a, lb + lf + lc), batch + [m, k])
        c = self.reshape(self.transpose(c, rb + rc + rf), batch + [k, n])
        return self.reshape(self.dot(a, c), batch + [sa[d] for d in lf] + [sc[d] for d in rf])

    def conv(self, x: SSAValue, w: SSAValue, strides: Sequence[int], pad_low: Sequence[int],
             pad_high: Sequence[int], dilation: Sequence[int], lhs_dilation: Sequence[int],
             groups: int) -> SSAValue:
        """graph.conv in ONNX's layout (input [N, C, *spatial], weight [O, C / groups, *kernel])."""
        return self.emit(graph.ConvOp, [x, w], strides=dense_i64(strides), pad_low=dense_i64(pad_low),
                         pad_high=dense_i64(pad_high), dilation=dense_i64(dilation),
                         lhs_dilation=dense_i64(lhs_dilation), groups=graph.i64_attr(groups))

    def gather(self, table: SSAValue, ids: SSAValue) -> SSAValue:
        return self.emit(graph.GatherOp, [table, ids])

    def take(self, x: SSAValue, ids: SSAValue, axis: int) -> SSAValue:
        """numpy.take along `axis` (ids in range): graph.gather takes rows of axis 0, so
        `axis` is moved to the front and the result's dims put back in numpy's order."""
        rank = len(shape_of(x.type))
        front = [axis] + [d for d in range(rank) if d != axis]
        g = self.gather(self.transpose(x, front), ids)
        k = len(shape_of(ids.type))
        # g has the ids dims, then x's other dims in order; x's dims before `axis` go first
        perm = list(range(k, k + axis)) + list(range(k)) + list(range(k + axis, k + rank - 1))
        return self.transpose(g, perm)

    def scatter(self, kind: graph.ScatterKind | str, x: SSAValue, ids: SSAValue, updates: SSAValue,
                dims: Sequence[int]) -> SSAValue:
        """`graph.scatter` of `kind` (a ScatterKind or its name) along `dims`."""
        return self.emit(graph.ScatterOp, [x, ids, updates], kind=graph.ScatterKindAttr(graph.ScatterKind(kind)),
                         dims=dense_i64(dims))

    def sort(self, direction: graph.SortDirection | str, keys: SSAValue, values: SSAValue, dim: int) -> SSAValue:
        """`graph.sort` in `direction` (a SortDirection or its name) along `dim`."""
        return self.emit(graph.SortOp, [keys, values],
                         direction=graph.SortDirectionAttr(graph.SortDirection(direction)), dim=IntegerAttr(dim, i64))

    @staticmethod
    def elem(v: SSAValue) -> Attribute:
        assert isinstance(v.type, TensorType)  # every graph value is a tensor
        return v.type.element_type

    # -- constant folding ---------------------------------------------------------

    def fold(self, v: SSAValue) -> np.ndarray | None:
        """The value of `v` if it depends on constants only (evaluated by the ops'
        reference implementations), else None."""
        if v in self._folded:
            return self._folded[v]
        op = v.owner
        if not isinstance(op, GraphOp) or len(op.results) != 1:
            return None
        if isinstance(v.type, TensorType) and np.prod(shape_of(v.type)) > FOLD_LIMIT:
            return None
        if isinstance(v.type, TensorType) and graph.DYN in shape_of(v.type):
            return None  # sized at run time (an iota or broadcast `like` a value): no constant
        args = []
        for operand in op.operands:
            a = self.fold(operand)
            if a is None:
                self._folded[v] = None
                return None
            args.append(a)
        try:
            value = graph_value(op, args)
        except (TypeError, ValueError, VerifyException):
            # arithmetic the symbolic sizes of `?` dims (object arrays) do not support
            if any(a.dtype == object for a in args):
                return None
            raise
        self._folded[v] = value
        return value

    def fold_ints(self, v: SSAValue, what: str) -> list[int]:
        value = self.fold(v)
        if value is None:
            raise self.error(f"{what} must be a constant (computed from constants only)")
        return [int(x) for x in np.asarray(value).reshape(-1)]

    # -- finishing ----------------------------------------------------------------

    def finish(self, name: str, results: Sequence[SSAValue]) -> ModuleOp:
        """Wrap the block in `func.func @name`, drop dead ops, and return the module."""
        ret = func.ReturnOp(*results)
        self._stamp(ret)
        self.block.add_op(ret)
        self._remove_dead_ops()
        ftype = FunctionType.from_lists([a.type for a in self.block.args], [r.type for r in results])
        f = func.FuncOp(name, ftype, Region(self.block))
        return ModuleOp([f])

    def _remove_dead_ops(self) -> None:
        for op in reversed(list(self.block.ops)):
            if isinstance(op, GraphOp) and all(not r.uses for r in op.results):
                op.detach()
                op.erase()
