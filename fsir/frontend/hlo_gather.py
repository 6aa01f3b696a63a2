"""HLO indexing: gather, scatter and sort.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.errors import UserError
from fsir.frontend.hlo_parse import Operand

if TYPE_CHECKING:  # the importer calls these handlers; they only read its state
    from fsir.frontend.hlo import HloImporter


def gather(imp: HloImporter, instr, ops):
    """Gathers of single elements along the indexed dims and whole extents along the
    others: embedding lookups, take along any axis, take_along_axis, x[i, j]. The
    indexed dims are flattened into one, so one graph.gather does the lookup."""
    table, ids = ops
    b = imp.b
    ts, ish = shape_of(table.type), list(shape_of(ids.type))
    start_map = imp.ints(instr, "start_index_map")
    collapsed = imp.ints(instr, "collapsed_slice_dims", [])
    offset_dims = imp.ints(instr, "offset_dims", [])
    sizes = imp.ints(instr, "slice_sizes")
    ivd = imp.ints(instr, "index_vector_dim", [len(ish)])[0]
    # Batching dims (take_along_axis): operand dim i is indexed by the position along
    # indices dim j, i.e. by an iota; they are collapsed.
    op_batch = imp.ints(instr, "operand_batching_dims", [])
    idx_batch = [d - (d > ivd) for d in imp.ints(instr, "start_indices_batching_dims", [])]
    if (not set(collapsed) <= set(start_map) or any(sizes[d] != 1 for d in start_map + op_batch)
            or any(sizes[d] != ts[d] for d in range(len(ts)) if d not in start_map + op_batch)):
        raise imp.unsupported(instr, "gather of windows (slice sizes other than 1 along indexed "
                                      "dims and whole extents along the others)")
    if not start_map + op_batch:
        raise imp.unsupported(instr, "gather without indexed dims")
    if ivd == len(ish):  # scalar indices: an index vector of length 1
        ids = b.reshape(ids, ish + [1])
        ish.append(1)
    else:  # the index vector dim goes last
        ids = b.transpose(ids, [d for d in range(len(ish)) if d != ivd] + [ivd])
        ish = [s for d, s in enumerate(ish) if d != ivd] + [ish[ivd]]
    batch = ish[:-1]
    cols = [b.reshape(b.slice(ids, [0] * len(batch) + [j], batch + [j + 1]), batch)
            for j in range(len(start_map))]
    cols += [b.iota(batch, j, b.elem(ids)) for j in idx_batch]
    start_map, collapsed = start_map + op_batch, collapsed + op_batch
    flat = None
    for j, (d, col) in enumerate(zip(start_map, cols)):
        if len(start_map) > 1:  # XLA clamps each start index into its dim
            col = b.ew("min", b.ew("max", col, b.scalar_like(0, col)), b.scalar_like(ts[d] - 1, col))
            stride = math.prod(ts[e] for e in start_map[j + 1:])
            col = b.ew("mul", col, b.scalar_like(stride, col)) if stride != 1 else col
        flat = col if flat is None else b.ew("add", flat, col)
    rest = [d for d in range(len(ts)) if d not in start_map]
    rows = b.reshape(b.transpose(table, start_map + rest), [math.prod(ts[d] for d in start_map)]
                     + [ts[d] for d in rest])
    assert flat is not None  # start_map + op_batch is not empty
    out = b.gather(rows, flat)  # [batch..., rest dims...]
    # natural order: batch dims, then the slice dims not collapsed, in operand order
    offset_src = [d for d in range(len(ts)) if d not in collapsed]
    natural = batch + [ts[d] if d in rest else 1 for d in offset_src]
    out = b.reshape(out, natural)
    rank = len(natural)
    if len(offset_dims) != len(offset_src) or sorted(set(offset_dims)) != sorted(offset_dims) \
            or any(not 0 <= d < rank for d in offset_dims):
        raise UserError(f"offset_dims={{{','.join(map(str, offset_dims))}}} of '{instr.name}' must be "
                        f"{len(offset_src)} distinct dims of its rank-{rank} result",
                        instr.attr_locs.get("offset_dims", instr.loc))
    perm = [0] * rank  # result dim offset_dims[k] is offset k; the others are batch dims
    for k, d in enumerate(offset_dims):
        perm[d] = len(batch) + k
    for k, d in enumerate(d for d in range(rank) if d not in offset_dims):
        perm[d] = k
    return b.transpose(out, perm)


def scatter(imp: HloImporter, instr, ops):
    """XLA scatter of point updates: each index vector names one element of the
    scattered dims and the update covers the other dims whole (ONNX ScatterND, JAX's
    `x.at[i].set/add/mul/max/min`). The update computation (`to_apply`) must return
    its second parameter (assignment) or add/multiply/maximum/minimum its two."""
    if len(ops) != 3:
        raise imp.unsupported(instr, f"variadic scatter of {(len(ops) - 1) // 2} operands")
    x, ids, upd = ops
    b = imp.b
    xs, ish, us = shape_of(x.type), list(shape_of(ids.type)), list(shape_of(upd.type))
    window_dims = imp.ints(instr, "update_window_dims", [])
    inserted = imp.ints(instr, "inserted_window_dims", [])
    dims = imp.ints(instr, "scatter_dims_to_operand_dims")
    ivd = imp.ints(instr, "index_vector_dim", [len(ish)])[0]
    if imp.ints(instr, "input_batching_dims", []) or imp.ints(instr, "scatter_indices_batching_dims", []):
        raise imp.unsupported(instr, "scatter with batching dims")
    kind = _scatter_kind(imp, instr)
    if not 0 <= ivd <= len(ish):
        raise UserError(f"index_vector_dim={ivd} of '{instr.name}' is out of range for rank-{len(ish)} "
                        "indices", instr.attr_locs.get("index_vector_dim", instr.loc))
    if ivd == len(ish):  # scalar indices: index vectors of one entry
        ids = b.reshape(ids, ish + [1])
    elif ivd != len(ish) - 1:
        ids = b.transpose(ids, [d for d in range(len(ish)) if d != ivd] + [ivd])
    batch = list(shape_of(ids.type)[:-1])
    # the window: every operand dim not inserted, in order; the scattered ones that are
    # not inserted must have window size 1 (a point) and the others must be whole
    window_src = [d for d in range(len(xs)) if d not in inserted]
    if (not set(inserted) <= set(dims) or len(window_dims) != len(window_src)
            or sorted(set(window_dims)) != window_dims or any(not 0 <= d < len(us) for d in window_dims)
            or len(us) != len(batch) + len(window_dims)):
        raise UserError(f"'{instr.name}': update_window_dims, inserted_window_dims and "
                        "scatter_dims_to_operand_dims do not fit the operand, indices and updates", instr.loc)
    sizes = [us[w] for w in window_dims]
    for d, n in zip(window_src, sizes):
        if (d in dims and n != 1) or (d not in dims and n != xs[d]):
            raise imp.unsupported(instr, "scatter of partial windows (updates other than points along "
                                          "the scattered dims and whole extents along the others)")
    scatter_pos = [d for d in range(len(us)) if d not in window_dims]
    upd = b.transpose(upd, scatter_pos + window_dims)
    upd = b.reshape(upd, [us[d] for d in scatter_pos] + [n for d, n in zip(window_src, sizes) if d not in dims])
    return b.scatter(kind, x, ids, upd, dims)


def _scatter_kind(imp: HloImporter, instr) -> graph.ScatterKind:
    region = imp.computation_attr(instr, "to_apply")
    root = region.root
    params = {i.name: imp._param_number(i) for i in region.instrs if i.opcode == "parameter"}
    if root.opcode == "parameter" and params.get(root.name) == 1:
        return graph.ScatterKind.NONE
    args = sorted(params.get(o.name, -1) for o in root.operands if isinstance(o, Operand))
    kinds = {"add": graph.ScatterKind.ADD, "multiply": graph.ScatterKind.MUL, "maximum": graph.ScatterKind.MAX,
             "minimum": graph.ScatterKind.MIN}
    if root.opcode not in kinds or args != [0, 1]:
        raise imp.unsupported(instr, f"scatter whose to_apply computation '{region.name}' is not an "
                                      "assignment or a single add/multiply/maximum/minimum of its parameters")
    return kinds[root.opcode]


def sort(imp: HloImporter, instr, ops):
    """A stable sort along one dim by one key operand: the comparator must be a single
    `compare(parameter(2k), parameter(2k+1))` with direction LT (ascending) or GT
    (descending), as jax.lax.sort and jnp.sort/argsort emit; every operand is
    permuted by operand k's order. Float keys: NaN sorts last ascending, and
    -0.0 ties with 0.0 (XLA's TOTALORDER puts -0.0 first)."""
    dims = imp.ints(instr, "dimensions")
    region = imp.computation_attr(instr, "to_apply")
    root = region.root
    params = {i.name: imp._param_number(i) for i in region.instrs if i.opcode == "parameter"}
    args = [params.get(o.name, -1) for o in root.operands if isinstance(o, Operand)]
    direction = str(root.attrs.get("direction", ""))
    if (root.opcode != "compare" or direction not in ("LT", "GT") or len(args) != 2
            or args[0] % 2 or args[1] != args[0] + 1 or not 0 <= args[0] // 2 < len(ops)):
        raise imp.unsupported(instr, f"sort whose comparator '{region.name}' is not a single LT or GT "
                                      "compare of one operand's two parameters")
    if len(dims) != 1:
        raise UserError(f"sort '{instr.name}' needs one dimension, got {len(dims)}",
                        instr.attr_locs.get("dimensions", instr.loc))
    keys = ops[args[0] // 2]
    rank = len(shape_of(keys.type))
    if not 0 <= dims[0] < rank or any(shape_of(v.type) != shape_of(keys.type) for v in ops):
        raise UserError(f"sort '{instr.name}' needs operands of one shape and a dimension within their rank",
                        instr.loc)
    order = graph.SortDirection.ASCENDING if direction == "LT" else graph.SortDirection.DESCENDING
    out = [imp.b.sort(order, keys, v, dims[0]) for v in ops]
    return out[0] if len(out) == 1 else out
