"""HLO reductions: reduce (single and variadic, arg-min/max), reduce-window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.errors import UserError
from fsir.frontend.builder import dense_i64
from fsir.frontend.hlo_parse import Item, Operand, TupleShape

if TYPE_CHECKING:  # the importer calls these handlers; they only read its state
    from fsir.frontend.hlo import HloImporter


# to_apply root opcode -> graph.reduce kind (its identity: graph.reduce_identity)
_REDUCERS = {"add": graph.ReduceKind.SUM, "maximum": graph.ReduceKind.MAX, "minimum": graph.ReduceKind.MIN,
             "multiply": graph.ReduceKind.PROD}


_REDUCE_EW = {graph.ReduceKind.SUM: "add", graph.ReduceKind.MAX: "max", graph.ReduceKind.MIN: "min",
              graph.ReduceKind.PROD: "mul"}


def reduce(imp: HloImporter, instr, ops):
    n = len(ops) // 2
    inputs, inits = ops[:n], ops[n:]
    dims = imp.ints(instr, "dimensions")
    if any(not 0 <= d < len(shape_of(x.type)) for x in inputs for d in dims) or len(set(dims)) != len(dims):
        raise UserError(f"reduce '{instr.name}': dimensions {dims} must be distinct dims of its operands",
                        instr.attr_locs.get("dimensions", instr.loc))
    region = imp.computation_attr(instr, "to_apply")
    if n == 2:
        return _arg_reduce(imp, instr, region, inputs, inits, dims)
    if n != 1:
        raise imp.unsupported(instr, f"variadic reduce of {n} operands")
    return _reduce_one(imp, instr, inputs[0], inits[0], dims)


def _reduce_one(imp: HloImporter, instr, x, init, dims):
    region = imp.computation_attr(instr, "to_apply")
    root = region.root
    params = {i.name: imp._param_number(i) for i in region.instrs if i.opcode == "parameter"}
    args = [o.name for o in root.operands if isinstance(o, Operand)]
    if root.opcode not in (*_REDUCERS, "and", "or") or sorted(params.get(a, -1) for a in args) != [0, 1]:
        raise imp.unsupported(instr, f"{instr.opcode} whose to_apply computation '{region.name}' is "
                                      "not a single add/maximum/minimum/multiply/and/or of its parameters")
    if graph.is_bool(imp.b.elem(x)) and root.opcode in ("and", "or"):
        # all / any: min / max over 0-1 integers
        kind = graph.ReduceKind.MIN if root.opcode == "and" else graph.ReduceKind.MAX
        as_int = imp.b.reduce(kind, imp.b.convert(x, graph.i32), dims)
        out = imp.b.compare("ne", as_int, imp.b.scalar_like(0, as_int))
        return imp.b.ew(root.opcode, out, imp.b.broadcast(init, shape_of(out.type), []))
    kind = _REDUCERS[root.opcode]
    x, dims = _merge_tiled_reduce(kind, x, dims)
    out = imp.b.reduce(kind, x, dims)
    init_value = imp.b.fold(init)
    dtype = graph.numpy_dtype(imp.b.elem(x))
    if init_value is None or init_value.reshape(-1)[0] != graph.reduce_identity(kind, dtype):
        # A non-identity init takes part in the reduction once.
        out = imp.b.ew(_REDUCE_EW[kind], out,
                        imp.b.broadcast(init, shape_of(out.type), []))
    return out


def reduce_window(imp: HloImporter, instr, ops):
    """graph.reduce_window (size, stride, window dilation `rhs_dilate`, padding `pad`
    low_high per dim, negative padding removed first). Non-overlapping tiles without
    padding become a reshape and a reduce: XLA's CPU pipeline splits long row
    reductions into such a reduce-window and a reduce, which `_reduce_one` merges
    back into the row reduction."""
    if len(ops) != 2:
        raise imp.unsupported(instr, "variadic reduce-window")
    x, init = ops
    window = imp.attr(instr, "window")
    fields = {str(i.values[0]): str(i.values[1]) for i in window if isinstance(i, Item) and i.seps == ["="]}
    shape = shape_of(x.type)
    rank = len(shape)
    loc = instr.attr_locs.get("window", instr.loc)

    def field(name: str, default: list[int]) -> list[list[int]]:
        text = fields.get(name)
        if text is None:
            return [default] * rank
        try:
            values = [[int(v) for v in d.split("_")] for d in text.split("x")]
        except ValueError:
            values = []
        if len(values) != rank:
            raise UserError(f"cannot read {name}={text} in window={{...}} of '{instr.name}' "
                            f"({rank} entries expected)", loc)
        return values

    unknown = set(fields) - {"size", "stride", "pad", "rhs_dilate", "lhs_dilate"}
    if "size" not in fields or unknown:
        raise imp.unsupported(instr, f"reduce-window with window fields {sorted(unknown) or 'without size'}")
    size = [v[0] for v in field("size", [1])]
    stride = [v[0] for v in field("stride", [1])]
    dilate = [v[0] for v in field("rhs_dilate", [1])]
    pad = field("pad", [0, 0])
    if any(v[0] != 1 for v in field("lhs_dilate", [1])):
        raise imp.unsupported(instr, "reduce-window with base dilation (lhs_dilate)")
    if any(len(p) != 2 for p in pad):
        raise UserError(f"cannot read pad={fields.get('pad')} of '{instr.name}' (expected low_high per dim)", loc)
    low, high = [p[0] for p in pad], [p[1] for p in pad]
    if (stride == size and set(dilate) == {1} and not any(low) and not any(high)
            and not any(n % k for n, k in zip(shape, size))):
        tiled, dims = [], []
        for n, k in zip(shape, size):
            tiled += [n // k, k] if k > 1 else [n]
            if k > 1:
                dims.append(len(tiled) - 1)
        return _reduce_one(imp, instr, imp.b.reshape(x, tiled), init, dims)
    kind = _reducer_kind(imp, instr, x)
    if min(low) < 0 or min(high) < 0:
        x = imp.b.slice(x, [max(-lo, 0) for lo in low], [n - max(-hi, 0) for n, hi in zip(shape, high)])
        low, high = [max(lo, 0) for lo in low], [max(hi, 0) for hi in high]
    init_value = imp.b.fold(init)
    dtype = graph.numpy_dtype(imp.b.elem(x))
    identity = init_value is not None and init_value.reshape(-1)[0] == graph.reduce_identity(kind, dtype)
    if not identity and kind in (graph.ReduceKind.SUM, graph.ReduceKind.PROD) and (any(low) or any(high)):
        # padded positions hold the init value, which would count once per position
        raise imp.unsupported(instr, f"padded reduce-window whose init value is not the {kind}'s identity")
    out = imp.b.emit(graph.ReduceWindowOp, [x], kind=graph.ReduceKindAttr(kind),
                      window=dense_i64(size), strides=dense_i64(stride), dilations=dense_i64(dilate),
                      low=dense_i64(low), high=dense_i64(high))
    if not identity:  # a non-identity init takes part in every window once
        out = imp.b.ew(_REDUCE_EW[kind], out, imp.b.broadcast(init, shape_of(out.type), []))
    # JAX's average pool counts each window's elements by a reduce-window over ones
    folded = imp.b.fold(out)
    return out if folded is None else imp.b.constant(folded, imp.b.elem(out))


def _reducer_kind(imp: HloImporter, instr, x) -> graph.ReduceKind:
    """The graph reduction kind of a to_apply computation that is a single
    add/maximum/minimum/multiply of its two parameters."""
    region = imp.computation_attr(instr, "to_apply")
    root = region.root
    params = {i.name: imp._param_number(i) for i in region.instrs if i.opcode == "parameter"}
    args = [o.name for o in root.operands if isinstance(o, Operand)]
    if root.opcode not in _REDUCERS or sorted(params.get(a, -1) for a in args) != [0, 1] \
            or graph.is_bool(imp.b.elem(x)):
        raise imp.unsupported(instr, f"{instr.opcode} whose to_apply computation '{region.name}' is "
                                      "not a single add/maximum/minimum/multiply of its parameters")
    return _REDUCERS[root.opcode]


def _arg_reduce(imp: HloImporter, instr, region, inputs, inits, dims):
    """JAX's argmax/argmin: a reduce over (values, indices) whose comparator keeps the
    larger (smaller) value and, on ties, the smaller index. Lowered to a max (min)
    reduce, then a min reduce over the indices where the value equals it."""
    compares = [i for i in region.instrs if i.opcode == "compare"]
    names = {i.name: imp._param_number(i) for i in region.instrs if i.opcode == "parameter"}
    kind = None
    for c in compares:
        args = [names.get(o.name) for o in c.operands if isinstance(o, Operand)]
        direction = str(c.attrs.get("direction", ""))
        if args == [0, 2] and direction in ("GT", "LT"):
            kind = graph.ReduceKind.MAX if direction == "GT" else graph.ReduceKind.MIN
    if kind is None or not isinstance(region.root.shape, TupleShape):
        raise imp.unsupported(instr, "variadic reduce (other than argmax/argmin)")
    values, indices = inputs
    best = imp.b.reduce(kind, values, dims)
    keep = [d for d in range(len(shape_of(values.type))) if d not in dims]
    full = imp.b.broadcast(best, shape_of(values.type), keep)
    hit = imp.b.compare("eq", values, full)
    idx_dtype = graph.numpy_dtype(imp.b.elem(indices))
    big = imp.b.scalar_like(np.iinfo(idx_dtype).max, indices)
    index = imp.b.reduce("min", imp.b.select(hit, indices, big), dims)
    return [best, index]


def _merge_tiled_reduce(kind: graph.ReduceKind, x: SSAValue, dims: list[int]) -> tuple[SSAValue, list[int]]:
    """reduce(reduce(reshape(src) splitting dims into tiles)) over whole original dims is
    one reduce of src: undo XLA's tree-reduction split (reduce-window + reduce) so the
    graph has the row reduction fusion knows. Returns (x, dims) unchanged otherwise."""
    inner = x.owner
    if not (isinstance(inner, graph.ReduceOp) and inner.kind.data == kind
            and isinstance(inner.input.owner, graph.ReshapeOp)):
        return x, dims
    tiled = shape_of(inner.input.type)
    src_value = inner.input.owner.input
    src = shape_of(src_value.type)
    inner_dims = set(inner.dims.get_values())
    kept = [d for d in range(len(tiled)) if d not in inner_dims]
    reduced = inner_dims | {kept[d] for d in dims}
    groups, t = [], 0  # the tiled dims each source dim was split into
    for n in src:
        group, size = [], 1
        while t < len(tiled) and (size < n or (not group and n == 1)):
            group.append(t)
            size *= tiled[t]
            t += 1
        if size != n:
            return x, dims
        groups.append(group)
    if t != len(tiled) or any(0 < len(set(g) & reduced) < len(g) for g in groups):
        return x, dims
    return src_value, [i for i, g in enumerate(groups) if set(g) <= reduced]
