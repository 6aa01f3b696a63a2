"""Index-only (light) ops: iota, broadcast, reshape, transpose, slice, concat, pad.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, TensorType, i64
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from fsir.dialects.graph.base import (
    GraphCanonicalization,
    GraphOp,
    LightElementwise,
    check_dims_in_rank,
    dims_property,
    i64_attr,
    operand_tensor_types,
    parse_int_list,
    print_int_list,
    same_shape_agreement,
    same_shape_dims,
    tensor_type,
)
from fsir.dialects.graph.types import (
    DYN,
    STATIC,
    DimAgreement,
    DimBuilder,
    DimsOf,
    dims_compatible,
    dims_product,
    fmt_shape,
    is_bool,
    is_float,
    is_int,
    join_shapes,
    shape_of,
    shapes_compatible,
    static_dims,
    tensor,
)


@irdl_op_definition
class IotaOp(GraphOp):
    """Indices along one dimension.

        %i = graph.iota dim 1 : tensor<4x8xi32>

    A `?` result dim takes its size from the optional `like` operand, as a broadcast's
    does (only its sizes are read, never its elements). Without `dims`, `like` has the
    result's rank and shape; with `dims`, result dim i has the size of `like`'s dim
    dims[i], or is static where dims[i] is -1, so a rank-1 iota can count along one dim
    of a larger value (ONNX's `Range(0, Shape(x)[1], 1)`):

        %p = graph.iota dim 0 like %ids dims [1] : (tensor<?x?xi64>) -> tensor<?xi64>
    """

    name = "graph.iota"
    dim = prop_def(IntegerAttr[I64])
    like_dims = opt_prop_def(DenseArrayBase[I64])
    like = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise())

    @classmethod
    def parse(cls, parser: Parser):
        parser.parse_keyword("dim")
        props: dict[str, Attribute] = {"dim": i64_attr(parser.parse_integer())}
        like: UnresolvedOperand | None = None
        if parser.parse_optional_keyword("like") is not None:
            like = parser.parse_unresolved_operand()
            if parser.parse_optional_keyword("dims") is not None:
                props["like_dims"] = DenseArrayBase.from_list(i64, parse_int_list(parser))
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        operands: list[SSAValue] = []
        if like is not None:  # `: (like type) -> result type`
            pos = parser.pos
            types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
            if len(types) != 1:
                parser.raise_error(f"expected 1 operand type, got {len(types)}", pos, parser.pos)
            parser.parse_punctuation("->")
            operands.append(parser.resolve_operand(like, types[0]))
        result_type = parser.parse_type()
        return cls.build(operands=cls._group_operands(operands), result_types=[result_type], properties=props,
                         attributes=attrs)

    @classmethod
    def _group_operands(cls, operands):
        return [list(operands)]  # the one optional `like`

    def print(self, printer: Printer):
        printer.print_string(f" dim {self.dim.value.data}")
        if self.like is not None:
            printer.print_string(" like ")
            printer.print_operand(self.like)
        if self.like_dims is not None:
            printer.print_string(" dims ")
            print_int_list(printer, dims_property(self, "like_dims"))
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if self.like is not None:
            printer.print_string("(")
            printer.print_attribute(self.like.type)
            printer.print_string(") -> ")
        printer.print_attribute(self.result_type)

    def _like_shape(self) -> list[int] | None:
        """`like`'s sizes as the result's dims see them (through `dims`), or None
        without `like`; a -1 entry of `dims` stands for the result's own size."""
        if self.like is None:
            return None
        like, out = shape_of(self.like.type), shape_of(self.result_type)
        if self.like_dims is None:
            return list(like)
        return [like[k] if k >= 0 else out[i] for i, k in enumerate(dims_property(self, "like_dims"))]

    def _check_like(self, out: Sequence[int]) -> None:
        if self.like is None:
            if self.like_dims is not None:
                raise VerifyException("'dims' needs a 'like' operand")
            return
        like = shape_of(self.like.type)
        if self.like_dims is not None:
            dims = dims_property(self, "like_dims")
            if len(dims) != len(out):
                raise VerifyException(f"dims has {len(dims)} entries but the result has rank {len(out)}")
            for i, k in enumerate(dims):
                if not -1 <= k < len(like):
                    raise VerifyException(f"dims entry {k} is out of range for the 'like' operand's rank {len(like)}")
                if k == -1 and out[i] == DYN:
                    raise VerifyException(f"result dim {i} is '?' but takes no dim of the 'like' operand "
                                          "(dims entry -1)")
        mapped = self._like_shape()
        assert mapped is not None
        if not shapes_compatible(mapped, out):
            raise VerifyException(f"the 'like' operand's shape {fmt_shape(like)} is not compatible with the result "
                                  f"shape {fmt_shape(out)}")

    def infer_type(self) -> TensorType:
        t = self.result_type
        out = shape_of(t)
        check_dims_in_rank([self.dim.value.data], len(out), "iota dimension")
        if not (is_int(t.element_type) or is_float(t.element_type)) or is_bool(t.element_type):
            raise VerifyException(f"iota needs an integer or float element type, got {t.element_type}")
        self._check_like(out)
        mapped = self._like_shape()
        return t if mapped is None else tensor(t.element_type, join_shapes(out, mapped))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        """A `?` result dim is the size of the `like` dim it maps to."""
        out: list = list(shape_of(self.result_type))
        if self.like is None:
            return out
        like = dims_of(self.like)
        dims = dims_property(self, "like_dims") if self.like_dims is not None else range(len(out))
        return [like[k] if s == DYN else s for s, k in zip(out, dims)]

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        """`like` gives sizes, not elements: no coordinate of it is read (0 stands for
        that, so index analyses see an invariant, never a data-dependent, read)."""
        return [[0] * len(shape_of(o.type)) for o in self.operands]


@irdl_op_definition
class BroadcastOp(GraphOp):
    """StableHLO broadcast_in_dim: operand dim i goes to result dim dims[i]; an operand
    dim must equal its result dim or be 1.

        %b = graph.broadcast %v dims [0] : (tensor<4xf32>) -> tensor<4x8xf32>

    A `?` result dim that no operand dim gives takes its size from the optional `like`
    operand, a tensor of the result's rank whose shape is the result's (only its sizes
    are read, never its elements; like `stablehlo.dynamic_broadcast_in_dim`'s output
    dimensions, or `tensor.empty(%d)`'s sizes):

        %b = graph.broadcast %m dims [0] like %x : (tensor<6xf32>, tensor<6x?xf32>) -> tensor<6x?xf32>

    With `like`, every `?` result dim is `like`'s size, and an operand dim mapped to
    it must have that size at run time (the host checks it before the launch): only a
    static 1 expands, as stablehlo's `known_nonexpanding_dimensions` would state it,
    so a row kernel knows that row r of the result reads row r of the operand.
    """

    name = "graph.broadcast"
    INT_PROPS: ClassVar = (("dims", "dims", True),)
    dims = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    like = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    @classmethod
    def parse(cls, parser: Parser):
        pos = parser.pos
        operands = [parser.parse_unresolved_operand()]
        parser.parse_keyword("dims")
        dims = parse_int_list(parser)
        if parser.parse_optional_keyword("like") is not None:
            operands.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        if len(types) != len(operands):
            parser.raise_error(f"expected {len(operands)} operand types, got {len(types)}", pos, parser.pos)
        resolved: list[SSAValue] = [parser.resolve_operand(o, t) for o, t in zip(operands, types)]
        return cls.build(operands=cls._group_operands(resolved), result_types=[result_type],
                         properties={"dims": DenseArrayBase.from_list(i64, dims)}, attributes=attrs)

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(" dims ")
        print_int_list(printer, dims_property(self, "dims"))
        if self.like is not None:
            printer.print_string(" like ")
            printer.print_operand(self.like)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_list([o.type for o in self.operands], printer.print_attribute)
        printer.print_string(") -> ")
        printer.print_attribute(self.result_type)

    @classmethod
    def _group_operands(cls, operands):
        return [operands[0], list(operands[1:])]

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        out = list(shape_of(self.result_type))
        dims = dims_property(self, "dims")
        if len(dims) != len(src):
            raise VerifyException(f"dims has {len(dims)} entries but the operand has rank {len(src)}")
        check_dims_in_rank(dims, len(out), "broadcast dimension")
        if list(dims) != sorted(dims):
            raise VerifyException(f"dims {list(dims)} must be increasing (use graph.transpose to permute)")
        if self.like is not None:
            like = shape_of(self.like.type)
            if not shapes_compatible(like, out):
                raise VerifyException(f"the 'like' operand's shape {fmt_shape(like)} is not compatible with "
                                      f"the result shape {fmt_shape(out)}")
            out = list(join_shapes(out, like))
        for i, d in enumerate(dims):
            if src[i] not in (1, DYN) and out[d] != DYN and src[i] != out[d]:
                raise VerifyException(
                    f"operand dim {i} of size {src[i]} cannot broadcast to result dim {d} of size {out[d]}"
                )
        inferred = self.reify_dims(static_dims, STATIC)
        for i, d in enumerate(dims):
            if src[i] == 1:  # the type keeps a `?` that a size-1 dim would stretch to
                inferred[d] = out[d]
        return tensor(tensor_type(self.input).element_type, inferred)

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        """A `?` result dim is `like`'s size when `like` is given, else its operand
        dim's size (1 for a size-1 operand dim, as the reference computes); a `?`
        result dim nothing gives is undetermined."""
        out: list = list(shape_of(self.result_type))
        if self.like is not None:
            like = dims_of(self.like)
            return [like[d] if s == DYN else s for d, s in enumerate(out)]
        src = dims_of(self.input)
        for i, d in enumerate(dims_property(self, "dims")):
            if out[d] == DYN:
                out[d] = src[i]
        return out

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        """Only the operand is read (`like` gives sizes, not elements)."""
        src, out = shape_of(self.input.type), shape_of(self.result_type)
        sidx: list = []
        for i, d in enumerate(dims_property(self, "dims")):
            if src[i] == 1:
                sidx.append(0)
            elif src[i] == DYN and out[d] != DYN:  # a `?` dim is stretched when it is 1 at run time
                sidx.append(b.select(b.eq(dims_of(self.input)[i], 1), 0, idx[d]))
            else:
                sidx.append(idx[d])
        return [sidx]

    def agreeing_dims(self, dims_of: DimsOf, b: DimBuilder) -> list[DimAgreement]:
        """An operand dim has its result dim's size (trivially so when it gives it), or
        is a `?` that is 1 when the result dim is static."""
        src, sizes, out = shape_of(self.input.type), dims_of(self.input), self.reify_dims(dims_of, b)
        static_out = shape_of(self.result_type)
        return [DimAgreement(f"operand dim {i} and result dim {d}", sizes[i], out[d],
                             DimAgreement.FIRST_MAY_BE_1 if static_out[d] != DYN else DimAgreement.EQUAL)
                for i, d in enumerate(dims_property(self, "dims")) if src[i] != 1]


def kept_dynamic_dims(src: Sequence[int], out: Sequence[int]) -> dict[int, int]:
    """The `?` dims a reshape of the same dynamic structure keeps, as {result dim:
    operand dim}: both shapes have their `?` dims in the same number and order, and the
    static dims before the first, between two consecutive and after the last `?` dim
    hold equally many elements in both (a reshape within the static runs: an unsqueeze
    or squeeze, as [B, S] -> [B, 1, 1, S]; a split or merge of trailing dims, as
    [B, S, 768] -> [B, S, 12, 64]; of middle dims, as GQA's [B, 2, 2, S, 16] ->
    [B, 4, S, 16]). Then the `?` dims pair in order. Empty when that does not hold."""
    src_dyn = [i for i, d in enumerate(src) if d == DYN]
    out_dyn = [j for j, d in enumerate(out) if d == DYN]
    if len(src_dyn) != len(out_dyn):
        return {}
    for a, b in zip(_static_runs(src, src_dyn), _static_runs(out, out_dyn)):
        if math.prod(a) != math.prod(b):
            return {}
    return dict(zip(out_dyn, src_dyn))


def _static_runs(shape: Sequence[int], dyn: list[int]) -> list[Sequence[int]]:
    """The static dims before, between and after the `?` dims at `dyn`."""
    bounds = [-1, *dyn, len(shape)]
    return [shape[lo + 1:hi] for lo, hi in zip(bounds, bounds[1:])]


def reshape_dim_groups(groups: Sequence[int], src: Sequence[int], out: Sequence[int]) -> list[tuple[range, range]]:
    """A reshape's `groups` attribute as consecutive (operand dims, result dims) groups
    of equal size: [n_in, n_out] per group, e.g. [2, 1, 1, 2] for [B, 4, S] -> [4*B, 1, S]
    (B and 4 merge into one `?` dim, S gains a leading 1). Each group's result dims hold
    at most one `?` dim, the group's size over its static result dims; a group whose
    operand dims are static has static result dims of the same size, or one `?`."""
    if len(groups) % 2 or any(n < 1 for n in groups):
        raise VerifyException(f"reshape groups {list(groups)} must be pairs of dim counts of at least 1")
    if sum(groups[0::2]) != len(src) or sum(groups[1::2]) != len(out):
        raise VerifyException(f"reshape groups {list(groups)} do not cover {fmt_shape(src)} -> {fmt_shape(out)}")
    spans, i, j = [], 0, 0
    for n_in, n_out in zip(groups[0::2], groups[1::2]):
        ins, outs = range(i, i + n_in), range(j, j + n_out)
        i, j = i + n_in, j + n_out
        dyn_out = [d for d in outs if out[d] == DYN]
        known = math.prod(out[d] for d in outs if out[d] != DYN)
        n = math.prod(src[d] for d in ins if src[d] != DYN)
        dyn_in = any(src[d] == DYN for d in ins)
        if len(dyn_out) > 1 or (dyn_in and not dyn_out) or known == 0:
            raise VerifyException(f"reshape group {fmt_shape([src[d] for d in ins])} -> "
                                  f"{fmt_shape([out[d] for d in outs])} does not determine its result dims")
        if not dyn_in and (n % known if dyn_out else n != known):
            raise VerifyException(f"reshape group {fmt_shape([src[d] for d in ins])} cannot become "
                                  f"{fmt_shape([out[d] for d in outs])}")
        spans.append((ins, outs))
    return spans


@irdl_op_definition
class ReshapeOp(GraphOp):
    """Same elements, new shape (row-major). At most one result dim may be `?` unless
    the operand has the same dynamic structure (`kept_dynamic_dims`: `?` dims in the
    same number and order, the static dims around them holding as many elements in
    both); then the `?` dims keep the operand's sizes. Otherwise a `groups` attribute
    (`reshape_dim_groups`) splits both shapes into consecutive groups of equal size, each
    `?` result dim the size of its group's operand dims over its static result dims: a
    run-time dim merged with static ones, or split from them.

        %r = graph.reshape %x : (tensor<4x8xf32>) -> tensor<32xf32>
        %h = graph.reshape %y : (tensor<?x?x768xf32>) -> tensor<?x?x12x64xf32>
        %m = graph.reshape %z {groups = array<i64: 2, 1, 1, 2>} : (tensor<?x4x?xf32>) -> tensor<?x1x?xf32>
    """

    name = "graph.reshape"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    groups = opt_attr_def(DenseArrayBase[I64])
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    def dim_groups(self) -> list[tuple[range, range]] | None:
        """The `groups` attribute as spans (`reshape_dim_groups`), None without it."""
        if self.groups is None:
            return None
        return reshape_dim_groups(self.groups.get_values(), shape_of(self.input.type),
                                  shape_of(self.result_type))

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        out = list(shape_of(self.result_type))
        if tensor_type(self.input).element_type != self.result_type.element_type:
            raise VerifyException("reshape cannot change the element type (use graph.convert)")
        if self.groups is not None:
            self.dim_groups()
        elif DYN not in src:
            n = math.prod(src)
            unknown = [i for i, d in enumerate(out) if d == DYN]
            known = math.prod(d for d in out if d != DYN)
            if not unknown and known != n:
                raise VerifyException(
                    f"cannot reshape {fmt_shape(src)} ({n} elements) to {fmt_shape(out)} ({known} elements)"
                )
            if unknown and (known == 0 or n % known):
                raise VerifyException(f"cannot reshape {fmt_shape(src)} ({n} elements) to {fmt_shape(out)}")
        return tensor(self.result_type.element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        """With `groups`, each `?` dim is its group's operand size over its static dims;
        with the same dynamic structure (`kept_dynamic_dims`), the `?` dims are the
        operand's; else one `?` result dim holds the elements the static dims
        leave; with more, the result is undetermined."""
        out: list = list(shape_of(self.result_type))
        spans = self.dim_groups()
        if spans is not None:
            src = dims_of(self.input)
            for ins, outs in spans:
                for d in outs:
                    if out[d] == DYN:
                        known = math.prod(out[k] for k in outs if k != d)
                        out[d] = b.div(dims_product(b, [src[k] for k in ins]), known)
            return out
        kept = kept_dynamic_dims(shape_of(self.input.type), out)
        if kept:
            src = dims_of(self.input)
            return [src[kept[j]] if j in kept else d for j, d in enumerate(out)]
        unknown = [i for i, d in enumerate(out) if d == DYN]
        known = math.prod(d for d in out if d != DYN)
        if len(unknown) == 1 and known:
            out[unknown[0]] = b.div(dims_product(b, dims_of(self.input)), known)
        return out

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        return [b.delinearize(b.linearize(idx, dims_of(self.result)), dims_of(self.input))]


@irdl_op_definition
class TransposeOp(GraphOp):
    """Permute dimensions: result dim i is operand dim perm[i].

        %t = graph.transpose %x perm [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
    """

    name = "graph.transpose"
    INT_PROPS: ClassVar = (("perm", "perm", True),)
    perm = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        perm = dims_property(self, "perm")
        if sorted(perm) != list(range(len(src))):
            raise VerifyException(f"perm {list(perm)} is not a permutation of {len(src)} dimensions")
        return tensor(tensor_type(self.input).element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        src = dims_of(self.input)
        return [src[p] for p in dims_property(self, "perm")]

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        perm = dims_property(self, "perm")
        sidx: list = [0] * len(perm)
        for i, p in enumerate(perm):
            sidx[p] = idx[i]
        return [sidx]


@irdl_op_definition
class SliceOp(GraphOp):
    """Strided static slice: result dim i has ceil((limit-start)/stride) elements. A
    dim of run-time size (`?`) is kept whole by start 0, stride 1 and the limit DYN
    (-9223372036854775808, the `?` of builtin shapes), as exporters slice the other dims
    of a value with a symbolic batch.

        %l = graph.slice %x start [0, 2] limit [4, 8] strides [1, 2] : (tensor<4x8xf32>) -> tensor<4x3xf32>
    """

    name = "graph.slice"
    INT_PROPS: ClassVar = (("start", "start", True), ("limit", "limit", True), ("strides", "strides", True))
    start = prop_def(DenseArrayBase[I64])
    limit = prop_def(DenseArrayBase[I64])
    strides = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        start, limit, strides = (dims_property(self, p) for p in ("start", "limit", "strides"))
        if not len(start) == len(limit) == len(strides) == len(src):
            raise VerifyException(f"start, limit and strides need {len(src)} entries each (the operand rank)")
        for i, (s, l, k) in enumerate(zip(start, limit, strides)):
            if k < 1:
                raise VerifyException(f"stride {k} of dim {i} must be positive")
            if src[i] == DYN and (s, l, k) == (0, DYN, 1):
                continue  # a dim of run-time size kept whole
            if s < 0 or l < s or (src[i] != DYN and l > src[i]):
                raise VerifyException(f"slice [{s}, {l}) of dim {i} is out of bounds for size {fmt_shape([src[i]])}")
        return tensor(tensor_type(self.input).element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        start, limit, strides = (dims_property(self, p) for p in ("start", "limit", "strides"))
        whole = dims_of(self.input) if DYN in limit else None  # limit DYN: the run-time size
        return [whole[i] if whole is not None and l == DYN else -(-(l - s) // k)
                for i, (s, l, k) in enumerate(zip(start, limit, strides))]

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        """A dim the slice keeps whole reads the result's coordinate itself (an index
        algebra that tracks coordinates sees it pass through); others scale and shift."""
        start, limit, strides = (dims_property(self, p) for p in ("start", "limit", "strides"))
        src = shape_of(self.input.type)
        return [[i if (s, k, l) == (0, 1, n) else b.add(s, b.mul(i, k))
                 for i, s, l, k, n in zip(idx, start, limit, strides, src)]]


@irdl_op_definition
class ConcatOp(GraphOp):
    """Concatenate along one dimension.

        %n = graph.concat %a, %b dim 0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
    """

    name = "graph.concat"
    INT_PROPS: ClassVar = (("dim", "dim", False),)
    dim = prop_def(IntegerAttr[I64])
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    @classmethod
    def _group_operands(cls, operands):
        return [operands]

    def infer_type(self) -> TensorType:
        types = operand_tensor_types(self)
        if not types:
            raise VerifyException("concat needs at least one operand")
        rank = len(shape_of(types[0]))
        d = self.dim.value.data
        check_dims_in_rank([d], rank, "concat dimension")
        out = list(shape_of(types[0]))
        for t in types[1:]:
            s = shape_of(t)
            if t.element_type != types[0].element_type:
                raise VerifyException(f"operand element types differ: {types[0].element_type} and {t.element_type}")
            if len(s) != rank:
                raise VerifyException(f"operand ranks differ: {rank} and {len(s)}")
            for i in range(rank):
                if i == d:
                    continue
                if not dims_compatible(out[i], s[i]):
                    raise VerifyException(f"operand dim {i} sizes differ: {out[i]} and {s[i]}")
                out[i] = join_shapes([out[i]], [s[i]])[0]
        return tensor(types[0].element_type, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        """The concat dim is the operands' sum; the others are shared (see `same_shape_dims`)."""
        d = self.dim.value.data
        out = same_shape_dims(self, dims_of, b)
        out[d] = b.add(self.offsets(dims_of, b)[-1], dims_of(self.operands[-1])[d])
        return out

    def agreeing_dims(self, dims_of: DimsOf, b: DimBuilder) -> list[DimAgreement]:
        return same_shape_agreement(self, dims_of, b, skip=self.dim.value.data)

    def offsets(self, dims_of: DimsOf, b: DimBuilder) -> list:
        """Where each operand starts along the concat dim."""
        d = self.dim.value.data
        out: list = [0]
        for o in self.operands[:-1]:
            out.append(b.add(out[-1], dims_of(o)[d]))
        return out

    def operand_index(self, i: int, idx: Sequence, offsets: Sequence, b: DimBuilder) -> list:
        """The index of operand i holding the result's `idx` (when it lies in its piece)."""
        d = self.dim.value.data
        shifted = list(idx)
        shifted[d] = b.sub(idx[d], offsets[i])
        return shifted

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        """Every operand's index, each valid for the result indices in its piece: a
        reader chooses the operand by `idx[d] < offsets[i + 1]`."""
        offsets = self.offsets(dims_of, b)
        return [self.operand_index(i, idx, offsets, b) for i in range(len(self.operands))]

# ---------------------------------------------------------------------------
# Padding
# ---------------------------------------------------------------------------


class PadMode(StrEnum):
    """What `graph.pad` puts in padded positions: a value (`constant`), the nearest
    edge element (`edge`), the mirror image without repeating the edge (`reflect`), or
    the other end of the dim (`wrap`, periodic)."""

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    WRAP = "wrap"


@irdl_attr_definition
class PadModeAttr(EnumAttribute[PadMode], SpacedOpaqueSyntaxAttribute):
    """`#graph<pad_mode reflect>`; printed as the bare word after the op name."""

    name = "graph.pad_mode"


@irdl_op_definition
class PadOp(GraphOp):
    """Pad each dim by `low`/`high` positions (negative: remove them) and `interior`
    positions between neighbours (constant mode only). `constant` pads with the rank-0
    operand `%v`; `edge`, `reflect` and `wrap` with the operand's own elements (see
    `PadMode`), as numpy.pad does. Result dim d has `low + high + n + (n - 1) * interior`
    elements.

        %p = graph.pad constant %x, %v low [0, 1] high [2, -1] interior [0, 0]
               : (tensor<4x8xf32>, tensor<f32>) -> tensor<6x8xf32>
        %r = graph.pad reflect %x low [1, 2] high [1, 2] interior [0, 0] : (tensor<4x8xf32>) -> tensor<6x12xf32>

    A result element reads one operand element (`operand_indices`; in constant mode,
    the clamped position, which the element rule replaces by `%v` outside), so pads
    are light ops that stitch into their consumers.
    """

    name = "graph.pad"
    KEYWORD_PROP: ClassVar = "mode"
    KEYWORD_ENUM: ClassVar = PadModeAttr
    INT_PROPS: ClassVar = (("low", "low", True), ("high", "high", True), ("interior", "interior", True))
    mode = prop_def(PadModeAttr)
    low = prop_def(DenseArrayBase[I64])
    high = prop_def(DenseArrayBase[I64])
    interior = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    value = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), LightElementwise(), GraphCanonicalization())

    @classmethod
    def _group_operands(cls, operands):
        return [operands[0], operands[1:]]

    @property
    def mode_name(self) -> PadMode:
        return self.mode.data

    def params(self) -> tuple[tuple[int, ...], ...]:
        """(low, high, interior), one entry per dim each."""
        return tuple(dims_property(self, p) for p in ("low", "high", "interior"))

    def infer_type(self) -> TensorType:
        src = shape_of(self.input.type)
        elem = tensor_type(self.input).element_type
        mode = self.mode_name
        for name, values in zip(("low", "high", "interior"), self.params()):
            if len(values) != len(src):
                raise VerifyException(f"{name} has {len(values)} entries but the operand has rank {len(src)}")
        if (self.value is not None) != (mode == PadMode.CONSTANT):
            raise VerifyException("the padding value operand is required in constant mode and only there")
        if self.value is not None:
            v = tensor_type(self.value)
            if shape_of(v) != () or v.element_type != elem:
                raise VerifyException(f"the padding value must be a tensor<{elem}>, got {v}")
        for d, (n, lo, hi, r) in enumerate(zip(src, *self.params())):
            if r < 0:
                raise VerifyException(f"interior padding {r} of dim {d} must not be negative")
            if (r or lo < 0 or hi < 0) and mode != PadMode.CONSTANT:
                raise VerifyException(f"interior and negative padding need constant mode, not {mode}")
            if n == 0 and mode != PadMode.CONSTANT and (lo > 0 or hi > 0):
                raise VerifyException(f"{mode} padding of the empty dim {d} has no element to repeat")
            if n != DYN and lo + hi + n + max(n - 1, 0) * r < 0:
                raise VerifyException(f"padding {lo}, {hi} of dim {d} removes more than its {n} elements")
        return tensor(elem, self.reify_dims(static_dims, STATIC))

    def reify_dims(self, dims_of: DimsOf, b: DimBuilder) -> list:
        return [b.add(self._core(n, r, b), lo + hi) for n, lo, hi, r in zip(dims_of(self.input), *self.params())]

    @staticmethod
    def _core(n, r: int, b: DimBuilder):
        """The extent of a dim of size n with r interior positions between neighbours."""
        if not r:
            return n
        return b.select(b.lt(n, 1), 0, b.add(b.mul(b.sub(n, 1), r + 1), 1))

    def operand_indices(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list[list]:
        """The operand element a result element reads (constant mode: clamped into the
        operand, so it is always a valid position; `inside` tells whether it is used).
        A dim without padding reads the result's coordinate itself."""
        mode = self.mode_name
        out = []
        for i, n, lo, hi, r in zip(idx, dims_of(self.input), *self.params()):
            if (lo, hi, r) == (0, 0, 0):
                out.append(i)
                continue
            t = b.sub(i, lo)
            if mode == PadMode.CONSTANT:
                t = _clamp(t, b.mul(b.sub(n, 1), r + 1), b, lo > 0, hi > 0)
                out.append(b.div(t, r + 1))
            elif mode == PadMode.EDGE:
                out.append(_clamp(t, b.sub(n, 1), b, lo > 0, hi > 0))
            elif mode == PadMode.WRAP:
                # shifted by a multiple of n to be non-negative (index division is unsigned)
                shift = b.mul(n, -(-lo // n)) if isinstance(n, int) else b.mul(n, max(lo, 0))
                out.append(_index_rem(b, b.add(t, shift), n))
            else:  # reflect: period 2(n-1), the second half mirrored
                p = 2 * n - 2 if isinstance(n, int) else b.mul(b.sub(n, 1), 2)
                p = b.select(b.lt(p, 1), 1, p)
                shift = b.mul(p, -(-lo // p)) if isinstance(p, int) else b.mul(p, max(lo, 0))
                m = _index_rem(b, b.add(t, shift), p)
                out.append(b.select(b.lt(m, n), m, b.sub(p, m)))
        return [out, []] if self.value is not None else [out]

    def inside(self, idx: Sequence, dims_of: DimsOf, b: DimBuilder) -> list:
        """Constant mode: the conditions (all must hold) under which the result's `idx`
        is an operand element rather than padding; static ones are left out."""
        conds = []
        for i, n, lo, hi, r in zip(idx, dims_of(self.input), *self.params()):
            t = b.sub(i, lo)
            if lo > 0:
                conds.append(b.lt(-1, t))
            if hi > 0 or r:
                conds.append(b.lt(t, b.add(b.mul(b.sub(n, 1), r + 1), 1)))
            if r:
                t0 = b.select(b.lt(t, 0), 0, t)
                conds.append(b.eq(_index_rem(b, t0, r + 1), 0))
        return [c for c in conds if c is not True]


def _clamp(t, top, b: DimBuilder, low: bool, high: bool):
    """t clamped to [0, top] (only the sides that can be left)."""
    if low:
        t = b.select(b.lt(t, 0), 0, t)
    if high:
        t = b.select(b.lt(top, t), top, t)
    return t


def _index_rem(b: DimBuilder, a, n):
    """a mod n for a >= 0, n > 0 in the builder's algebra."""
    return b.sub(a, b.mul(b.div(a, n), n))
