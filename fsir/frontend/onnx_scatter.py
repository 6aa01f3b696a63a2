"""ONNX ScatterND, ScatterElements and Scatter → graph.scatter.

ScatterND's index tuples address the leading dims of the data and each update covers the
dims after them whole: graph.scatter with dims [0, ..., k-1]. ScatterElements (and the
older Scatter) write single elements: every update's full coordinates are its own
position with the `axis` coordinate taken from the indices, so it becomes a graph.scatter
of all dims whose index vectors are built from iotas and the indices. Negative indices
count from the end (as the ONNX reference implementation does); updates are applied in
order (`none`: the last of duplicates wins), out-of-range indices are skipped.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from fsir.dialects import graph
from fsir.dialects.graph import shape_of
from fsir.frontend.onnx_import import OnnxImporter, converter


def _reduction(imp: OnnxImporter, attrs) -> graph.ScatterKind:
    """ONNX's reduction names are graph.scatter's kinds."""
    value = attrs.get("reduction", b"none")
    name = value.decode() if isinstance(value, bytes) else str(value)
    kinds = tuple(graph.ScatterKind)
    if name not in kinds:
        raise imp.error(f"{imp.describe()}: unknown reduction '{name}' ({', '.join(kinds)})")
    return graph.ScatterKind(name)


def _index_type_checked(imp: OnnxImporter, ids: SSAValue) -> None:
    elem = imp.b.elem(ids)
    if not graph.is_int(elem) or graph.is_bool(elem):
        raise imp.error(f"{imp.describe()}: indices must be int32 or int64, got {elem}")


def _wrap_negative(imp: OnnxImporter, ids: SSAValue, sizes: list[int]) -> SSAValue:
    """Indices < 0 count from the end of their dim (`sizes` per entry of the last dim)."""
    b = imp.b
    shape = list(shape_of(ids.type))
    bound = imp.const(np.broadcast_to(np.array(sizes, dtype=graph.numpy_dtype(b.elem(ids))), shape), ids)
    folded = b.fold(ids)
    if folded is not None:
        return imp.const(np.where(folded < 0, folded + np.asarray(sizes), folded), ids) \
            if folded.min(initial=0) < 0 else ids
    negative = b.compare("lt", ids, b.scalar_like(0, ids))
    return b.select(negative, b.ew("add", ids, bound), ids)


@converter("ScatterND")
def scatter_nd(imp: OnnxImporter, node, attrs) -> list[SSAValue]:
    x, ids, updates = imp.inputs(node)
    _index_type_checked(imp, ids)
    xs, ish = shape_of(x.type), shape_of(ids.type)
    k = ish[-1] if ish else 0
    if not ish or not 1 <= k <= len(xs):
        raise imp.error(f"{imp.describe()}: the last dim of the indices ({k}) must be between 1 and the data's "
                        f"rank {len(xs)}")
    ids = _wrap_negative(imp, ids, list(xs[:k]))
    return [imp.b.scatter(_reduction(imp, attrs), x, ids, updates, list(range(k)))]


@converter("ScatterElements", "Scatter")
def scatter_elements(imp: OnnxImporter, node, attrs) -> list[SSAValue]:
    x, ids, updates = imp.inputs(node)
    _index_type_checked(imp, ids)
    b = imp.b
    xs, ish = shape_of(x.type), list(shape_of(ids.type))
    rank = len(xs)
    axis = imp.axis(attrs.get("axis", 0), rank)
    if len(ish) != rank or shape_of(updates.type) != tuple(ish):
        raise imp.error(f"{imp.describe()}: indices {ish} and updates {list(shape_of(updates.type))} must have one "
                        f"shape of the data's rank {rank}")
    elem = b.elem(ids)
    ids = _wrap_negative(imp, b.reshape(ids, ish + [1]), [xs[axis]])
    # the full coordinates of every update: its position, with the indices along `axis`
    columns = [ids if d == axis else b.iota(ish + [1], d, elem) for d in range(rank)]
    points = b.concat(columns, rank) if rank > 1 else columns[0]
    return [b.scatter(_reduction(imp, attrs), x, points, updates, list(range(rank)))]
