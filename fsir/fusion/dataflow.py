"""A function's ops as an integer dataflow graph: what the fusion explorer searches.

The explorer touches every op many times, so it works on small ints and lists instead
of xDSL objects. Vertex i is the i-th op of the function body in block (= topological)
order, except:

- constants are not vertices: like `mode=none`, fusions clone the constants they use
  (splats become immediates, so they cost no bytes; dense ones are read once);
- the terminator is not a vertex; the values it returns are outputs (`is_output`);
- dead ops (no output depends on them) are vertices that are never fused.

Values: vertex i's result is value i; every other value (function arguments, constants)
is an external value with a negative id (-1, -2, ...), its size in `ext_bytes`.

A `?` dim counts as `DYNAMIC_DIM` elements in byte and element estimates
(`fsir/analysis/values.py`). Element counts of the tensors themselves never feed back
into the IR.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from fsir.analysis.values import DYNAMIC_DIM, reads_operands_from_memory, tensor_elements
from fsir.dialects import graph

__all__ = ["DYNAMIC_DIM", "tensor_elements"]

# Vertex kinds: the op classes of fsir/dialects/graph/base.py, plus 'free' (reshapes: a view of a
# contiguous buffer, no kernel of their own) and 'other' (non-graph ops: never fused).
# A dot ('compute') stays a GEMM kernel; patterns may only end in one (its light
# producers inlined into the tile loads, when the code generator says it can).
FUSIBLE_KINDS = frozenset({"light", "expensive", "reduction", "gather", "free", "compute"})


def _element_bytes(t) -> int:
    width = getattr(t, "bitwidth", None)
    if width is None:
        width = getattr(getattr(t, "width", None), "data", 32)
    return max(1, (width + 7) // 8)


def tensor_bytes(t) -> int:
    if not isinstance(t, TensorType):
        return 8
    return tensor_elements(t) * _element_bytes(t.element_type)


def op_kind(op: Operation) -> str:
    if isinstance(op, graph.ReshapeOp):
        return "free"
    kind = graph.op_class(op)
    return kind if kind is not None else "other"


@dataclass
class DataflowGraph:
    ops: list[Operation]
    kind: list[str]
    inputs: list[tuple[int, ...]]  # distinct value ids each vertex reads
    preds: list[tuple[int, ...]]  # distinct producer vertices
    succs: list[list[int]]  # distinct consumer vertices
    nbytes: list[int]  # bytes of the vertex's result(s)
    elems: list[int]  # elements of the vertex's result (its input, for reductions)
    is_output: list[bool]  # returned by the function (must be written)
    fusible: list[bool]
    source_free: list[bool]  # light/free op fed only by external values (see `closure`)
    ext_bytes: list[int]  # external value -(j+1) has ext_bytes[j] bytes
    ext_values: list[SSAValue]
    index: dict[Operation, int]

    def __len__(self) -> int:
        return len(self.ops)

    def value_bytes(self, value_id: int) -> int:
        return self.nbytes[value_id] if value_id >= 0 else self.ext_bytes[-value_id - 1]


def build_dataflow(block: Block) -> DataflowGraph:
    ops: list[Operation] = []
    vid: dict[SSAValue, int] = {}
    ext: dict[SSAValue, int] = {}
    ext_bytes: list[int] = []
    ext_values: list[SSAValue] = []
    const_bytes: dict[SSAValue, int] = {}
    terminator = None
    for op in block.ops:
        if op.has_trait(IsTerminator) and op is block.last_op:
            terminator = op
            continue
        if isinstance(op, graph.ConstantOp):
            # A splat is an immediate in every kernel using it; a dense constant is a buffer.
            const_bytes[op.result] = 0 if graph.is_splat(op.value) else tensor_bytes(op.result.type)
            continue
        index = len(ops)
        ops.append(op)
        for r in op.results:
            vid[r] = index

    def value_id(v: SSAValue) -> int:
        i = vid.get(v)
        if i is not None:
            return i
        j = ext.get(v)
        if j is None:
            j = len(ext_bytes)
            ext[v] = j
            ext_bytes.append(const_bytes.get(v, tensor_bytes(v.type)))
            ext_values.append(v)
        return -(j + 1)

    n = len(ops)
    kind = [op_kind(op) for op in ops]
    inputs: list[tuple[int, ...]] = []
    preds: list[tuple[int, ...]] = []
    succs: list[list[int]] = [[] for _ in range(n)]
    nbytes = [0] * n
    elems = [0] * n
    for i, op in enumerate(ops):
        ids = tuple(dict.fromkeys(value_id(v) for v in op.operands))
        inputs.append(ids)
        p = tuple(x for x in ids if x >= 0)
        preds.append(p)
        for x in p:
            succs[x].append(i)
        nbytes[i] = sum(tensor_bytes(r.type) for r in op.results) if op.results else 0
        if kind[i] == "reduction":
            elems[i] = tensor_elements(op.operands[0].type)
        elif op.results:
            elems[i] = tensor_elements(op.results[0].type)
    is_output = [False] * n
    if terminator is not None:
        for v in terminator.operands:
            i = vid.get(v)
            if i is not None:
                is_output[i] = True
    # Dead code (values no output depends on) is left alone for DCE: a fusion of dead
    # ops would have no result.
    live = [False] * n
    for i in range(n - 1, -1, -1):
        live[i] = is_output[i] or kind[i] == "other" or any(live[c] for c in succs[i])
    fusible = [k in FUSIBLE_KINDS and alive for k, alive in zip(kind, live)]
    source_free = [False] * n
    # an op read by one that takes its operands from memory is never absorbed into its
    # readers' pattern (it runs in a kernel of its own or with its producers)
    from_memory = {p for i, op in enumerate(ops) if reads_operands_from_memory(op) for p in preds[i]}
    for i in range(n):
        if kind[i] in ("light", "free") and i not in from_memory and all(source_free[p] for p in preds[i]):
            source_free[i] = True
    return DataflowGraph(ops, kind, inputs, preds, succs, nbytes, elems, is_output, fusible,
                         source_free, ext_bytes, ext_values, {op: i for i, op in enumerate(ops)})
