"""What the explorer and the code generator both estimate about a graph value.

A `?` dim counts as `DYNAMIC_DIM` elements in byte and element estimates: there is no
better guess at compile time, and 128 is a typical batch or sequence size.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation

from fsir.dialects import graph

DYNAMIC_DIM = 128


def tensor_elements(t: Attribute) -> int:
    """The elements of a tensor type (a `?` dim as `DYNAMIC_DIM`); 1 for a scalar."""
    if not isinstance(t, TensorType):
        return 1
    return math.prod(DYNAMIC_DIM if d == graph.DYN else d for d in t.get_shape())


def reads_operands_from_memory(op: Operation) -> bool:
    """Whether `op`'s operands must come from outside its kernel: every result element
    of a window reduction reads a window of its operand, so a kernel reads the operand
    from memory rather than computing it once per window position it falls in (a
    reduction's rows could not be read across windows either)."""
    return isinstance(op, graph.ReduceWindowOp)
