"""ONNX → graph dialect (through the `onnx` package).

    fs-opt model.onnx -p fusion-explore
    fs-run model.onnx --device reference

Weights come from initializers (and external data files beside the model) and become
`graph.constant`s. ONNX's numpy-style broadcasting becomes explicit `graph.broadcast`.
Composite ops (LayerNormalization, Softmax, Gelu, Gemm) are expanded into graph
primitives so the fusion explorer sees, and can stitch, their reductions and
elementwise parts. Shape computations (Shape → Gather → Concat → Reshape chains) fold
to constants at import time through the graph ops' own references; they leave no ops.

ONNX has no source positions, so errors name the node and its op_type; their location
is `model.onnx:N:1`, N being the node's 1-based index in the graph. Graph inputs are
located at line 0: `model.onnx:0:K` is the K-th graph input; `model.onnx:0:0` is the
model as a whole (a file that is not a valid ONNX protobuf).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import external_data_helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of, tensor
from fsir.errors import Location, UserError
from fsir.frontend import onnx_storage
from fsir.frontend.builder import GraphBuilder, dense_i64
from fsir.frontend.onnx_dynamic import (
    SYMBOLIC,
    RunTimeSizes,
    Sym,
    SymbolicShapes,
    argument_dims,
    as_size,
    compare_sizes,
    infer_minus_one,
    is_symbolic,
    reshape_groups,
)
from fsir.ir import verify
from fsir.transforms.embedding_bags import fuse_embedding_bags
from fsir.transforms.symbolic_dims import set_argument_dims

_ELEM: dict[int, Attribute] = {
    onnx.TensorProto.FLOAT: graph.f32, onnx.TensorProto.FLOAT16: graph.f16,
    onnx.TensorProto.BFLOAT16: graph.bf16, onnx.TensorProto.DOUBLE: graph.Float64Type(),
    onnx.TensorProto.BOOL: graph.i1, onnx.TensorProto.INT8: graph.IntegerType(8),
    onnx.TensorProto.INT16: graph.IntegerType(16), onnx.TensorProto.INT32: graph.i32,
    onnx.TensorProto.INT64: graph.IntegerType(64),
    onnx.TensorProto.UINT8: graph.unsigned(8), onnx.TensorProto.UINT16: graph.unsigned(16),
    onnx.TensorProto.UINT32: graph.unsigned(32), onnx.TensorProto.UINT64: graph.unsigned(64),
}

_UNARY = {"Sqrt": "sqrt", "Exp": "exp", "Log": "log", "Tanh": "tanh", "Erf": "erf", "Neg": "neg",
          "Abs": "abs", "Sigmoid": "sigmoid", "Floor": "floor", "Ceil": "ceil", "Not": "not",
          "Round": "round", "Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "asin", "Acos": "acos",
          "Atan": "atan", "Sinh": "sinh", "Cosh": "cosh", "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh"}
_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Max": "max", "Min": "min",
           "And": "and", "Or": "or", "Xor": "xor", "Mod": "rem"}
_COMPARE = {"Equal": "eq", "Less": "lt", "Greater": "gt", "LessOrEqual": "le", "GreaterOrEqual": "ge"}


# Ops whose attributes hold subgraphs that read the enclosing graph's values.
SUBGRAPH_OPS = frozenset({"If", "Loop", "Scan"})

Converter = Callable[["OnnxImporter", onnx.NodeProto, dict[str, Any]], list[SSAValue]]
CONVERTERS: dict[str, Converter] = {}
"""The one dispatch table: each op_type's converter, registered with `@converter(...)` on
the importer's own methods (the core ops; the elementwise, comparison and reduction
families by their name tables) and in the op-family modules (`fsir/frontend/onnx_*.py`).
A converter returns the node's outputs in order; an op_type has exactly one."""


def converter(*op_types: str) -> Callable[[Converter], Converter]:
    def register(fn: Converter) -> Converter:
        for op_type in op_types:
            if op_type in CONVERTERS:
                raise AssertionError(f"two ONNX converters for {op_type}")
            CONVERTERS[op_type] = fn
        return fn
    return register


class ConstantInputsNeeded(UserError):
    """The model needs the values of graph inputs at compile time (a Reshape's shape,
    a ReduceSum's axes, a Trilu's k, ...); `inputs` names them. Import again with
    `bind={name: value}` to specialise the model to those values (fsir.onnx.backend does)."""

    def __init__(self, message: str, loc: Location | None = None, inputs: Sequence[str] = ()):
        super().__init__(message, loc)
        self.inputs = tuple(inputs)


def elem_type(onnx_type: int, what: str) -> Attribute:
    if onnx_type not in _ELEM:
        valid = onnx_type in onnx.TensorProto.DataType.values()
        name = onnx.TensorProto.DataType.Name(onnx.TensorProto.DataType.ValueType(onnx_type)) if valid else \
            f"{onnx_type} (not an ONNX data type)"
        raise UserError(f"{what} has element type {name}, which fsir does not support")
    return _ELEM[onnx_type]


def tensor_array(t: onnx.TensorProto, what: str, narrow: bool = False) -> np.ndarray:
    """The values of a TensorProto (an initializer, a constant), refused when its element
    type is not one fsir supports (with `narrow`, ONNX's narrow types are, as the ml_dtypes
    arrays onnx gives) or its data does not fill its dims."""
    if not (narrow and onnx_storage.is_narrow(t.data_type)):
        elem_type(t.data_type, what)
    try:
        return numpy_helper.to_array(t)
    except (ValueError, TypeError) as err:
        dims = "x".join(str(d) for d in t.dims) or "scalar"
        raise UserError(f"{what}: its data does not match its dims {dims} and element type ({err})") from None


class OnnxImporter:
    def __init__(self, model: onnx.ModelProto, filename: str, bind: Mapping[str, np.ndarray] | None = None):
        self.model = model
        self.bind = dict(bind or {})
        self.input_args: dict[SSAValue, str] = {}  # graph-input arguments by ONNX name
        self.arg_dims: list[graph.DimsAttr | None] = []  # each argument's named `?` dims
        self.filename = filename
        self.b = GraphBuilder(filename)
        self.env: dict[str, SSAValue] = {}
        self.inits = {t.name: t for t in model.graph.initializer}
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
        self.node: onnx.NodeProto | None = None
        self.sym = SymbolicShapes()  # sizes of `?` dims as far as import time knows them
        # Shape of `?` dims: placeholders, each with its value computed at run time (or None)
        self.shape_placeholders: list[tuple[SSAValue, SSAValue | None, Location | None]] = []
        self.run_time_sizes = RunTimeSizes(self.b, self.value_with_dim)
        self._checker: Any = None  # onnx.checker's context, made on first use
        self.sequences: dict[SSAValue, tuple[SSAValue, ...]] = {}  # a sequence's token -> its elements
        # values of ONNX narrow types (onnx_storage), by name: their ONNX type
        self.storage: dict[str, int] = {t.name: t.data_type for t in model.graph.initializer
                                        if onnx_storage.is_narrow(t.data_type)}

    # -- values ------------------------------------------------------------------

    def value(self, name: str) -> SSAValue:
        if name in self.env:
            return self.env[name]
        if name in self.inits:  # weights become constants on first use
            t = self.inits.pop(name)
            what = f"initializer '{name}'"
            storage = onnx_storage.storage_type(t.data_type)
            if storage is not None:  # a narrow type's bytes (onnx_storage)
                v = self.b.constant(onnx_storage.to_storage(tensor_array(t, what, narrow=True), t.data_type), storage)
                self.env[name] = v
                return v
            v = self.b.constant(tensor_array(t, what), elem_type(t.data_type, what))
            self.env[name] = v
            return v
        raise self.error(f"input '{name}' is not produced by any earlier node, input or initializer")

    def const(self, array, like_or_elem) -> SSAValue:
        elem = like_or_elem if not isinstance(like_or_elem, SSAValue) else self.b.elem(like_or_elem)
        return self.b.constant(np.asarray(array), elem)

    def ints(self, name: str, what: str) -> list[int]:
        out = self.sizes(name, what)
        if any(is_symbolic(x) for x in out):
            raise self.error(f"{what} of {self.describe()} depends on the run-time size of a `?` dim "
                             f"({', '.join(map(str, out))}); fsir takes such sizes only as a Reshape or "
                             "Expand target")
        return out

    def sizes(self, name: str, what: str) -> list:
        """A shape operand's entries: ints, and `Sym`s for run-time sizes (`onnx_dynamic`)."""
        return [x if is_symbolic(x) else int(x) for x in self.constant_value(name, what).reshape(-1)]

    def constant_value(self, name: str, what: str) -> np.ndarray:
        """The value of input `name`, which the node needs at compile time. Computed from
        graph inputs, it raises `ConstantInputsNeeded` naming them."""
        v = self.value(name)
        value = self.b.fold(v)
        if value is not None:
            return np.asarray(value)
        needed = self.graph_inputs_of(v)
        message = (f"{what} of {self.describe()} must be a constant (computed from constants and the sizes of "
                   "static dims only)")
        if needed:
            listed = ", ".join(f"'{n}'" for n in needed)
            raise ConstantInputsNeeded(f"{message}; it is computed from graph input(s) {listed}: bind them to "
                                       "values to specialise the model", self.b.loc, needed)
        raise self.error(message)

    def graph_inputs_of(self, v: SSAValue) -> list[str]:
        """The graph inputs `v` is computed from, in graph order."""
        seen: set[SSAValue] = set()
        stack, found = [v], set()
        while stack:
            u = stack.pop()
            if u in seen:
                continue
            seen.add(u)
            if u in self.input_args:
                found.add(self.input_args[u])
            elif isinstance(u.owner, Operation):
                stack.extend(u.owner.operands)
        return [i.name for i in self.model.graph.input if i.name in found]

    def bound_input(self, inp: onnx.ValueInfoProto) -> SSAValue:
        """Graph input `inp` bound to its value in `bind`: a constant."""
        t = inp.type.tensor_type
        elem = elem_type(t.elem_type, f"input '{inp.name}'")
        value = np.asarray(self.bind[inp.name])
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim] \
            if t.HasField("shape") else None
        shape_ok = dims is None or (len(dims) == value.ndim
                                    and all(d in (None, s) for d, s in zip(dims, value.shape)))
        if value.dtype != graph.numpy_dtype(elem) or not shape_ok:
            raise self.error(f"graph input '{inp.name}' is bound to a {value.dtype} value of shape "
                             f"{list(value.shape)}, which does not match its type")
        return self.const(value, elem)

    def describe(self) -> str:
        n = self.node
        return f"node '{n.name or n.output[0]}' ({n.op_type})" if n is not None else "the graph"

    def error(self, message: str) -> UserError:
        return UserError(message, self.b.loc)

    # -- the graph -------------------------------------------------------------

    def run(self) -> ModuleOp:
        try:
            return self._run()
        except UserError as err:  # errors raised without a place get the current node's
            if err.loc is not None or self.b.loc is None:
                raise
            raise type(err)(err.message, self.b.loc) from None

    def _run(self) -> ModuleOp:
        g = self.model.graph
        for position, inp in enumerate(g.input):
            if inp.name in self.inits:  # old exporters list initializers as inputs too
                continue
            self.b.loc = Location(self.filename, 0, position + 1)
            if inp.name in self.bind:
                self.env[inp.name] = self.bound_input(inp)
                continue
            t = inp.type.tensor_type
            if not inp.type.HasField("tensor_type"):
                raise self.error(f"graph input '{inp.name}' is not a tensor")
            # a symbolic dim (dim_param, or no value) is `?`; dims of one dim_param are one size
            sizes = [d.dim_value if d.HasField("dim_value") else Sym(("param", d.dim_param or f"{inp.name}[{k}]"))
                     for k, d in enumerate(t.shape.dim)]
            dims = [graph.DYN if isinstance(d, Sym) else d for d in sizes]
            elem = onnx_storage.storage_type(t.elem_type)
            if elem is not None:  # a narrow type, held in its storage type (onnx_storage)
                self.storage[inp.name] = t.elem_type
            else:
                elem = elem_type(t.elem_type, f"input '{inp.name}'")
            self.env[inp.name] = self.b.add_arg(tensor(elem, dims), _value_name(inp.name))
            self.sym.bind(self.env[inp.name], sizes)
            self.input_args[self.env[inp.name]] = inp.name
            self.arg_dims.append(argument_dims(sizes))
        for index, node in enumerate(g.node):
            self.node = node
            self.b.loc = Location(self.filename, index + 1, 1)
            self.import_node(node)
        self.node = None
        results = [self.value(o.name) for o in g.output]
        if any(r in self.sequences for r in results):  # (through Identity, say)
            raise self.error("a graph output is a sequence; fsir's results are tensors")
        self.check_narrow_outputs()
        for placeholder, run_time, _ in self.shape_placeholders:
            # still read (as data, or by shape chains that end dead): the run-time sizes
            if run_time is not None:
                placeholder.replace_all_uses_with(run_time)
                results = [run_time if r is placeholder else r for r in results]
        # the function's name prefixes its kernels' names, which PTX restricts to [A-Za-z0-9_$]
        name = re.sub(r"[^\w$]", "_", _value_name(g.name)) if g.name else ""
        module = self.b.finish(name or "main", results)
        set_argument_dims(module, self.arg_dims)
        for placeholder, _, loc in self.shape_placeholders:  # (dead shape chains are gone now)
            if placeholder.uses:
                raise UserError("the run-time size of a `?` dim is used as data, and fsir finds no value with a "
                                "dim of that size to compute it from", loc)
        return module

    def check_narrow_outputs(self) -> None:
        """A graph output declared with a narrow type (onnx_storage) must be computed in
        it, and one computed in a narrow type must not be declared another type: callers
        (fsir.onnx.backend) read its bytes by the declared type."""
        producers = {o: i for i, n in enumerate(self.model.graph.node) for o in n.output}
        for out in self.model.graph.output:
            declared = out.type.tensor_type.elem_type if out.type.HasField("tensor_type") else 0
            actual = self.storage.get(out.name)
            if declared == 0 or declared == actual or (actual is None and not onnx_storage.is_narrow(declared)):
                continue
            where = Location(self.filename, producers[out.name] + 1, 1) if out.name in producers else \
                Location(self.filename, 0, 0)
            computed = onnx_storage.type_name(actual) if actual is not None else str(self.b.elem(self.env[out.name]))
            raise UserError(f"graph output '{out.name}' is declared {onnx_storage.type_name(declared)} but computed "
                            f"as {computed}", where)

    def import_node(self, node: onnx.NodeProto) -> None:
        if node.domain not in ("", "ai.onnx"):
            raise self.error(f"{self.describe()} of domain '{node.domain}' is not supported")
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        narrow = next((n for n in node.input if n in self.storage), None)
        if narrow is not None and node.op_type not in onnx_storage.STORAGE_OPS:
            raise self.error(f"{self.describe()} reads '{narrow}' of element type "
                             f"{onnx_storage.type_name(self.storage[narrow])}, which fsir holds as storage only: "
                             f"only {' and '.join(sorted(onnx_storage.STORAGE_OPS))} take it")
        try:
            self.convert(node, attrs)
        except TypeError as err:
            # numpy on the symbolic sizes of `?` dims (object arrays of `Sym`) refuses what
            # they cannot compute: the model's fault to fsir's knowledge, never an internal error
            if "Sym" not in str(err):
                raise
            raise self.error(f"{self.describe()} computes with the run-time size of a `?` dim in a way fsir does "
                             f"not support ({err})") from None

    def convert(self, node: onnx.NodeProto, attrs: dict[str, Any]) -> None:
        handler = CONVERTERS.get(node.op_type)
        if handler is None:
            raise self.error(f"{self.describe()}: ONNX op_type '{node.op_type}' is not supported")
        self.check_schema(node)
        self._bind(node, handler(self, node, attrs))

    def check_schema(self, node: onnx.NodeProto) -> None:
        """The node as its op's ONNX schema (at the model's opset) allows: input and output
        counts, attribute types; converters may then rely on them."""
        if node.op_type in SUBGRAPH_OPS:
            # the checker checks a subgraph without its enclosing scope, so a branch that
            # reads an outer value (as branches do) fails it; the converter checks the
            # attributes it reads, and the branch's nodes are checked one by one as they
            # are imported (`onnx_control`)
            return
        if self._checker is None:
            self._checker = onnx.checker.C.CheckerContext()
            self._checker.ir_version = self.model.ir_version or onnx.IR_VERSION
            self._checker.opset_imports = {o.domain: o.version for o in self.model.opset_import} or {"": self.opset}
        try:
            onnx.checker.check_node(node, self._checker)
        except onnx.checker.ValidationError as err:
            if "is deprecated in domain_version" in str(err):  # old ops a converter may still read
                return
            raise self.error(f"{self.describe()} does not match its ONNX schema: {str(err).splitlines()[0]}") from None

    def _bind(self, node: onnx.NodeProto, outs: Sequence[SSAValue]) -> None:
        for name, v in zip(node.output, outs):
            if name:
                self.env[name] = v
        for name in node.output[len(outs):]:
            if name and self._used(name):
                raise self.error(f"{self.describe()}: its output '{name}' is not supported")

    def _used(self, name: str) -> bool:
        g = self.model.graph
        return any(name in n.input for n in g.node) or any(o.name == name for o in g.output)

    def inputs(self, node: onnx.NodeProto) -> list[SSAValue]:
        """All of the node's inputs; an empty name (an omitted optional input) is an error."""
        for i, name in enumerate(node.input):
            if not name:
                raise self.error(f"{self.describe()}: input {i} is omitted, which fsir does not support here")
        return [self.value(n) for n in node.input]

    def optional_input(self, node: onnx.NodeProto, index: int) -> SSAValue | None:
        """Input `index`, or None if the node omits it (an empty name, or fewer inputs)."""
        return self.value(node.input[index]) if len(node.input) > index and node.input[index] else None

    # -- helpers -----------------------------------------------------------------

    def bcast(self, *vs: SSAValue) -> list[SSAValue]:
        if any(graph.DYN in shape_of(v.type) for v in vs):
            return self.dynamic_bcast(vs)
        try:
            shape = np.broadcast_shapes(*(shape_of(v.type) for v in vs))
        except ValueError:
            shapes = " and ".join(str(list(shape_of(v.type))) for v in vs)
            raise self.error(f"{self.describe()}: shapes {shapes} do not broadcast") from None
        return [self.b.broadcast_to(v, shape) for v in vs]

    def dynamic_bcast(self, vs: Sequence[SSAValue]) -> list[SSAValue]:
        """numpy broadcasting with `?` dims: a dim is static when an operand's is (and not
        1), else the operands' run-time size (they must agree: the host checks it)."""
        rank = max(len(shape_of(v.type)) for v in vs)
        sizes = [[1] * (rank - len(shape_of(v.type))) + self.sym.dims(v) for v in vs]
        out = [self.broadcast_sizes([s[d] for s in sizes], " and ".join(
            graph.fmt_shape(shape_of(v.type)) for v in vs)) for d in range(rank)]
        shape = [graph.DYN if is_symbolic(d) else d for d in out]
        like = self.like(shape, out, vs)
        return [self.b.broadcast_to(v, shape, like) for v in vs]

    def broadcast_sizes(self, sizes: Sequence, what: str):
        """One dim of numpy broadcasting over sizes that may be `Sym`s."""
        static = {d for d in sizes if isinstance(d, int) and d != 1}
        if len(static) > 1:
            raise self.error(f"{self.describe()}: shapes {what} do not broadcast")
        if static:
            return static.pop()
        return next((d for d in sizes if is_symbolic(d)), 1)

    def like(self, shape: Sequence[int], sizes: Sequence, prefer: Sequence[SSAValue]) -> SSAValue | None:
        """A value of shape `shape` whose `?` dims have the run-time `sizes` (a broadcast's
        `like` operand): one of `prefer`, else any value imported so far; None when
        `shape` is static."""
        if graph.DYN not in shape:
            return None
        for v in [*prefer, *self.sym.known]:
            if not graph.shapes_compatible(shape_of(v.type), shape):
                continue
            dims = self.sym.dims(v)
            if all(dims[d] == sizes[d] for d, s in enumerate(shape) if s == graph.DYN):
                return v
        carrier = self.size_carrier(shape, sizes)
        if carrier is not None:
            return carrier
        shown = ", ".join(map(str, sizes))
        raise self.error(f"{self.describe()}: no value of the model has the run-time shape [{shown}] that fsir "
                         "could take the `?` sizes of its result from")

    def size_carrier(self, shape: Sequence[int], sizes: Sequence) -> SSAValue | None:
        """A value of `shape` whose `?` dims have the run-time `sizes` when no model
        value has them (a [seq, seq] mask from [1, seq] < [seq, 1]): an iota taking
        those sizes from one value that has them all (`like` with `dims`), whose
        elements nothing reads; None if no value has them all."""
        wanted = [sizes[d] for d, s in enumerate(shape) if s == graph.DYN]
        for v in [*self.input_args, *self.sym.known]:
            dims = self.sym.dims(v)
            if all(w in dims for w in wanted):
                mapping = [dims.index(sizes[d]) if s == graph.DYN else -1 for d, s in enumerate(shape)]
                carrier = self.b.emit(graph.IotaOp, [v], tensor(graph.i32, shape), dim=graph.i64_attr(0),
                                      like_dims=dense_i64(mapping))
                self.sym.bind(carrier, list(sizes))
                return carrier
        return None

    def iota(self, sizes: Sequence, dim: int, elem: Attribute) -> SSAValue:
        """An iota along `dim` of shape `sizes` (ints and `Sym`s): its `?` dims take their
        run-time sizes from a value that has them (`like`)."""
        shape = [graph.DYN if is_symbolic(d) else d for d in sizes]
        like = self.like(shape, sizes, [])
        if like is None:
            return self.b.iota(shape, dim, elem)
        return self.b.emit(graph.IotaOp, [like], tensor(elem, shape), dim=graph.i64_attr(dim))

    def count(self, x: SSAValue, axes: Sequence[int], reduced: SSAValue) -> SSAValue:
        """How many elements of `x` each element of `reduced` (x reduced over `axes`)
        sums, as a value like `reduced`: a constant, or a sum of ones over `?` axes."""
        shape = shape_of(x.type)
        if graph.DYN not in [shape[a] for a in axes]:
            return self.b.scalar_like(math.prod(shape[a] for a in axes), reduced)
        return self.b.reduce("sum", self.b.scalar_like(1, x), axes)

    def rank(self, v: SSAValue) -> int:
        return len(shape_of(v.type))

    def axis(self, a: int, rank: int) -> int:
        if not -rank <= a < max(rank, 1):
            raise self.error(f"{self.describe()}: axis {a} is out of range for rank {rank}")
        return a + rank if a < 0 else a

    def keep_dims(self, v: SSAValue, shape: Sequence[int], axes: Sequence[int]) -> SSAValue:
        """Reshape a reduced value to `shape` with the reduced axes as size 1."""
        return self.b.reshape(v, [1 if i in axes else s for i, s in enumerate(shape)])

    def take(self, x: SSAValue, ids: SSAValue, axis: int) -> SSAValue:
        return self.b.take(x, ids, axis)

    def normalize_ids(self, ids: SSAValue, size: int, x: SSAValue | None = None, axis: int = 0) -> SSAValue:
        """Indices into a dim of `size` with negative ones counted from its end; a dim
        of run-time size (`?`) is `x`'s dim `axis`."""
        value = self.b.fold(ids)
        if value is not None and value.dtype == object:
            value = None  # run-time sizes (`Shape(x)[k] - 1`): wrapped at run time, as data
        if value is not None and value.min(initial=0) >= 0:
            return ids
        if size == graph.DYN:
            if x is None:
                raise self.error(f"{self.describe()}: indices into a dim of run-time size must be constant and "
                                 "non-negative here")
            count = self.run_time_size(x, axis, ids)
        elif value is not None:
            return self.const(np.where(value < 0, value + size, value), ids)
        else:
            count = self.b.scalar_like(size, ids)
        neg = self.b.compare("lt", ids, self.b.scalar_like(0, ids))
        return self.b.select(neg, self.b.ew("add", ids, count), ids)

    def run_time_size(self, x: SSAValue, axis: int, like: SSAValue) -> SSAValue:
        """The run-time size of `x`'s dim `axis`, broadcast like `like` (of its element
        type): 1 + the largest of an iota over that dim, a reduction of one row."""
        b = self.b
        iota = b.emit(graph.IotaOp, [x], tensor(b.elem(like), [graph.DYN]), dim=graph.i64_attr(0),
                      like_dims=dense_i64([axis]))
        last = b.reduce("max", iota, [0])
        size = b.ew("add", last, b.constant(np.array(1), b.elem(like)))
        return b.broadcast(size, shape_of(like.type), [], like=like if graph.DYN in shape_of(like.type) else None)

    # -- elementwise ---------------------------------------------------------------

    @converter(*_UNARY)
    def unary(self, node, attrs):
        return [self.b.ew(_UNARY[node.op_type], self.value(node.input[0]))]

    @converter(*_BINARY)
    def binary(self, node, attrs):
        symbolic = self.symbolic_arithmetic(node)
        if symbolic is not None:
            return [symbolic]
        vs = self.bcast(*self.inputs(node))  # Max and Min are variadic (one operand: itself)
        variadic = node.op_type in ("Max", "Min")
        if len(vs) < (1 if variadic else 2) or (len(vs) > 2 and not variadic):
            raise self.error(f"{self.describe()}: expected two operands, got {len(vs)}")
        y = vs[0]
        for v in vs[1:]:
            y = self.b.ew(_BINARY[node.op_type], y, v)
        if node.op_type == "Mod" and not attrs.get("fmod", 0):
            # Python-style modulo: the result takes the divisor's sign (graph.rem: the dividend's)
            b, zero = self.b, self.b.scalar_like(0, y)
            fix = b.ew("and", b.compare("ne", y, zero),
                       b.compare("ne", b.compare("lt", y, zero), b.compare("lt", vs[1], zero)))
            y = b.select(fix, b.ew("add", y, vs[1]), y)
        return [y]

    def symbolic_arithmetic(self, node) -> SSAValue | None:
        """Add, Sub, Mul, Div or Mod of shape values holding run-time sizes (`Sym`s),
        computed at import in the `SymbolicDims` algebra (sizes are whole and
        non-negative: Div is their quotient, Mod their remainder) into a shape
        placeholder, as Shape's; None for any other operands."""
        kind = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Mod": "rem"}.get(node.op_type)
        if kind is None or len(node.input) != 2:
            return None
        folded = [self.b.fold(self.value(n)) for n in node.input]
        if any(f is None for f in folded) or not any(np.asarray(f).dtype == object for f in folded):
            return None
        a, c = (np.asarray(f) for f in folded)
        rule = getattr(SYMBOLIC, kind)
        value = np.frompyfunc(lambda x, y: rule(as_size(x), as_size(y)), 2, 1)(a, c)
        return self.shape_placeholder(np.asarray(value, dtype=object), self.b.elem(self.value(node.input[0])))

    def shape_placeholder(self, sizes: np.ndarray, elem: Attribute) -> SSAValue:
        """A constant standing for `sizes` (ints and `Sym`s): its folded value holds them,
        so shape chains read them. Its run-time value is built beside it; where the
        placeholder is still read at the end it takes its place (`RunTimeSizes`)."""
        run_time = self.run_time_sizes.value(sizes, elem)
        placeholder = self.const(np.zeros(sizes.shape, graph.numpy_dtype(elem)), elem)
        self.b._folded[placeholder] = sizes
        self.shape_placeholders.append((placeholder, run_time, self.b.loc))
        return placeholder


    @converter(*_COMPARE)
    def comparison(self, node, attrs):
        folded = [self.b.fold(self.value(n)) for n in node.input]
        if all(f is not None for f in folded) and any(np.asarray(f).dtype == object for f in folded):
            a, c = (np.asarray(f) for f in folded)
            known = np.frompyfunc(lambda x, y: compare_sizes(node.op_type, as_size(x), as_size(y)), 2, 1)(a, c)
            if all(k is not None for k in np.asarray(known).reshape(-1)):
                return [self.const(np.asarray(known, dtype=bool), graph.i1)]
        a, c = self.bcast(*self.inputs(node))
        return [self.b.compare(_COMPARE[node.op_type], a, c)]


    def int_pow_float(self, x: SSAValue, e: SSAValue) -> SSAValue:
        """An integer base to a float exponent (the result has the base's type): exact
        for integral exponents, else f32 pow truncated toward zero."""
        b, xt = self.b, self.b.elem(x)
        ints = b.convert(e, xt)
        integral = b.compare("eq", b.convert(ints, b.elem(e)), e)
        approx = b.convert(b.ew("pow", b.convert(x, graph.f32), b.convert(e, graph.f32)), xt)
        return b.select(integral, b.ew("pow", x, ints), approx)


    def gelu(self, x: SSAValue, approximate) -> SSAValue:
        b = self.b
        half = b.ew("mul", x, b.scalar_like(0.5, x))
        if approximate in (b"tanh", "tanh"):
            cube = b.ew("mul", b.ew("mul", x, x), x)
            inner = b.ew("add", x, b.ew("mul", cube, b.scalar_like(0.044715, x)))
            t = b.ew("tanh", b.ew("mul", inner, b.scalar_like(math.sqrt(2 / math.pi), x)))
        else:
            t = b.ew("erf", b.ew("mul", x, b.scalar_like(1 / math.sqrt(2), x)))
        return b.ew("mul", half, b.ew("add", t, b.scalar_like(1, x)))


    # -- composite ops, expanded so fusion sees their parts -----------------------


    def softmax(self, node, attrs, log: bool) -> SSAValue:
        x = self.value(node.input[0])
        rank = self.rank(x)
        if self.opset >= 13:
            axes = [self.axis(attrs.get("axis", -1), rank)]
        else:  # before opset 13 the input is coerced to 2-D at `axis`
            axes = list(range(self.axis(attrs.get("axis", 1), rank), rank))
        shape = shape_of(x.type)
        keep = [d for d in range(rank) if d not in axes]
        b = self.b
        xm = b.ew("sub", x, b.broadcast(b.reduce("max", x, axes), shape, keep, like=x))
        e = b.ew("exp", xm)
        s = b.reduce("sum", e, axes)
        if log:
            return b.ew("sub", xm, b.broadcast(b.ew("log", s), shape, keep, like=x))
        return b.ew("div", e, b.broadcast(s, shape, keep, like=x))


    def arg_reduce(self, node, attrs, kind: str) -> SSAValue:
        x = self.value(node.input[0])
        shape = shape_of(x.type)
        axis = self.axis(attrs.get("axis", 0), len(shape))
        y = self.arg_reduce_of(x, axis, kind, last=bool(attrs.get("select_last_index", 0)))
        return self.keep_dims(y, shape, [axis]) if attrs.get("keepdims", 1) else y

    def arg_reduce_of(self, x: SSAValue, axis: int, kind: str, last: bool) -> SSAValue:
        """The first (last) index of the max (min) along `axis`: reduce, compare, then a
        min (max) over the indices of the hits (so fusion sees two reductions, no new op)."""
        shape = shape_of(x.type)
        keep = [d for d in range(len(shape)) if d != axis]
        b = self.b
        best = b.broadcast(b.reduce(kind, x, [axis]), shape, keep, like=x)
        i64 = graph.IntegerType(64)
        idx = self.iota(self.sym.dims(x), axis, i64)
        miss = -1 if last else np.iinfo(np.int64).max
        cand = b.select(b.compare("eq", x, best), idx, b.scalar_like(miss, idx))
        return b.reduce("max" if last else "min", cand, [axis])


    # -- shapes and data movement ----------------------------------------------


    def dynamic_reshape(self, x: SSAValue, target: list, attrs) -> SSAValue:
        """A Reshape with run-time sizes: graph.reshape determines at most one `?` result
        dim from the element count, or keeps the operand's `?` dims when the shapes have
        the same dynamic structure; the target's sizes must say the same."""
        src, sx = shape_of(x.type), self.sym.dims(x)
        want = [sx[i] if isinstance(d, int) and d == 0 and not attrs.get("allowzero", 0) else d
                for i, d in enumerate(target)]
        want = infer_minus_one(sx, want)
        out = [graph.DYN if is_symbolic(d) or d == -1 else d for d in want]
        groups = None
        if out.count(graph.DYN) > 1:
            kept = graph.kept_dynamic_dims(src, out)
            if len(kept) != out.count(graph.DYN) or any(want[j] != sx[i] for j, i in kept.items()):
                groups = reshape_groups(sx, want)
                kept = {}
            if groups is None and not kept:
                shown = ", ".join(map(str, want))
                raise self.error(f"{self.describe()}: cannot reshape {graph.fmt_shape(src)} to [{shown}]: fsir "
                                 "takes one run-time size from the element count, keeps the `?` dims of a "
                                 "reshape of the same dynamic structure, or merges and splits consecutive dims "
                                 "into `?` dims of one run-time size each")
        y = self.b.reshape(x, out, groups)
        if -1 not in want and y not in self.sym.known:
            self.sym.bind(y, want)  # the sizes the model states (reify_dims computes the same)
        return y


    def _axes(self, node, attrs, since: int) -> list[int] | None:
        if self.opset >= since:
            return self.ints(node.input[1], "axes") if len(node.input) > 1 and node.input[1] else None
        return list(attrs["axes"]) if "axes" in attrs else None


    def check_whole_slice(self, x: SSAValue, axis: int, start, end, step) -> None:
        """A Slice of dim `axis` of run-time size, or with run-time bounds, must keep the
        dim whole: start 0 (or -size), step 1 and an end at or past the size (the
        size itself, or a huge end such as INT64_MAX meaning "to the end"), as
        exporters write `x[:, :seq]` of a length-seq dim; numpy clamps the end."""
        size = self.sym.dims(x)[axis]
        starts_at_0 = start == 0 or (is_symbolic(start) and SYMBOLIC.sub(0, size) == start)
        to_end = end == size or (not is_symbolic(end) and end >= _TO_END) or (
            not is_symbolic(size) and not is_symbolic(end) and end >= size)
        if step == 1 and starts_at_0 and to_end:
            return
        raise self.error(f"{self.describe()}: slice [{start}, {end}) with step {step} of dim {axis} of run-time "
                         f"size {size}: fsir slices a dim of run-time size, or with run-time bounds, only whole")


    def run_time_range(self, start, limit, delta, symbolic: dict, like_elem: SSAValue) -> SSAValue:
        """Range(start, limit, delta) of a run-time limit (the size of a `?` dim, as
        transformers' `arange(seq)` exports): start + delta * iota, the iota's length
        taken from a value with that dim (`like`). A run-time start or delta, or a
        length that is no value's dim, is refused."""
        length = self.range_length(start, limit, delta) if set(symbolic) == {"limit"} else None
        found = self.value_with_dim(length) if length is not None else None
        if found is None:
            shown = ", ".join(f"{what} = {v}" for what, v in symbolic.items())
            raise self.error(f"{self.describe()} has a run-time bound ({shown}, from the size of a `?` dim): fsir "
                             "makes a Range of run-time length only with a constant start and delta > 0 and a "
                             "length that is the size of a dim of a model value (arange(n) of n = Shape(x)[k])")
        like, k = found
        b = self.b
        y = b.emit(graph.IotaOp, [like], tensor(b.elem(like_elem), [graph.DYN]), dim=graph.i64_attr(0),
                   like_dims=dense_i64([k]))
        if delta != 1:
            y = b.ew("mul", y, b.scalar_like(delta, y))
        if start != 0:
            y = b.ew("add", y, b.scalar_like(start, y))
        self.sym.bind(y, [length])
        return y

    @staticmethod
    def range_length(start, limit, delta):
        """ceil((limit - start) / delta) where the algebra gives it exactly (a run-time
        length must be some value's dim, whose size is whole): None otherwise."""
        if isinstance(delta, float) or isinstance(start, float) or delta <= 0:
            return None
        length = SYMBOLIC.div(SYMBOLIC.sub(limit, as_size(start)), int(delta))
        return None if isinstance(length, Sym) and length.expr[0] == "div" else length

    def value_with_dim(self, size) -> tuple[SSAValue, int] | None:
        """A value with a dim of run-time size `size` and that dim, a graph input first
        (reading an input's sizes ties no kernel to another's output); None if none."""
        if not is_symbolic(size):
            return None
        for v in [*self.input_args, *self.sym.known]:
            dims = self.sym.dims(v)
            if size in dims:
                return v, dims.index(size)
        return None


# A Slice end at least this large runs to the end of any dim (exporters write INT64_MAX).
_TO_END = 2**31 - 1


def _value_name(name: str) -> str:
    """An ONNX name as an MLIR value name ([A-Za-z_$.-][\\w$.-]*)."""
    name = re.sub(r"[^\w$.-]", "_", name)
    # not "_0": xDSL takes a trailing `_N` for its own numbering and strips it, leaving ""
    return "v" + name if name and name[0].isdigit() else name


def import_onnx(source: bytes | str, filename: str = "<stdin>",
                bind: Mapping[str, np.ndarray] | None = None) -> ModuleOp:
    """Read an ONNX model (bytes, or a path) and return a verified graph-dialect module.

    External weight files are looked up next to `filename`. `bind` specialises the model:
    the graph inputs it names become constants of the given values (and leave the
    function's arguments)."""
    try:
        if isinstance(source, str) and os.path.exists(source):
            filename = source if filename == "<stdin>" else filename
            with open(source, "rb") as f:
                source = f.read()
        if isinstance(source, str):
            raise UserError(f"'{filename}' must be read as binary ONNX, not text")
        model = onnx.load_model_from_string(source)
        if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
            base = os.path.dirname(os.path.abspath(filename))
            external_data_helper.load_external_data_for_model(model, base)
    except UserError:
        raise
    except Exception as err:  # protobuf's DecodeError, missing external files, ...
        raise UserError(f"cannot read ONNX model '{filename}': {err}", Location(filename, 0, 0)) from None
    module = OnnxImporter(model, filename, bind).run()
    # PyTorch's EmbeddingBag exports as a loop over the bags, unrolled above: one bag
    # reduction over all of them instead (fsir/transforms/embedding_bags.py)
    fuse_embedding_bags(module)
    verify(module)
    return module


# Op-family modules register their converters on import.
from fsir.frontend import onnx_families  # noqa: E402, F401
