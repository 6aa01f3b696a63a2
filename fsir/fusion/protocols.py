"""The explorer's view of the code generator: what it asks, as typed protocols.

The explorer (this package) sits above the code generator (`fsir/codegen/`), which
implements these structurally: `CodegenCapability` (`fsir/codegen/capability.py`) and
`CodegenLatency` (`fsir/codegen/plan_latency.py`) never import them. The explorer calls
the methods; it does not probe for them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import NotImplementedType
from typing import Protocol

from xdsl.ir import Operation

RowShape = tuple[int, ...] | None  # the result shape of a set's reductions (None: it has none)
# A verdict: None if the code generator can make one kernel, else the reason; an
# incremental form may answer NotImplemented (it cannot tell: ask the full check).
Verdict = str | None
Incremental = str | None | NotImplementedType


class Capability(Protocol):
    """Which sets of ops the code generator can make one kernel of."""

    def __call__(self, ops: Sequence[Operation]) -> Verdict:
        """The verdict on `ops`."""
        ...

    def epilogue(self, op: Operation) -> bool:
        """Whether the kernel of a compute-intensive `op` may go on past it (a stitched
        epilogue); otherwise it is the last op of its kernel."""
        ...

    def extend(self, row_shape: RowShape, op: Operation, escapes: bool,
               inside: Callable[[Operation], bool], known: object | None) -> tuple[Incremental, object | None]:
        """The verdict on a valid set without dots (`row_shape`: its reductions' result
        shape, `known`: what this check kept of it, or None) grown by one producer `op`
        (`inside`: the grown set's membership, `escapes`: whether op's result is read
        outside it), and what it keeps of the grown set for the next producer (None:
        nothing)."""
        ...

    def known(self, ops: Sequence[Operation]) -> object | None:
        """What `extend` keeps of a valid set `ops` (in block order), from scratch."""
        ...

    def pack(self, row_shape_a: RowShape, row_shape_b: RowShape) -> Incremental:
        """The verdict on two valid sets without dots and no path between them, packed
        into one kernel (the arguments: their reductions' row shapes)."""
        ...


class Verdicts:
    """A plain verdict function as a `Capability`: no epilogues, and no incremental
    forms (every set goes to the function)."""

    def __init__(self, verdict: Callable[[Sequence[Operation]], Verdict]):
        self.verdict = verdict

    def __call__(self, ops: Sequence[Operation]) -> Verdict:
        return self.verdict(ops)

    def epilogue(self, op: Operation) -> bool:
        return False

    def extend(self, row_shape: RowShape, op: Operation, escapes: bool,
               inside: Callable[[Operation], bool], known: object | None) -> tuple[Incremental, object | None]:
        return NotImplemented, None

    def known(self, ops: Sequence[Operation]) -> object | None:
        return None

    def pack(self, row_shape_a: RowShape, row_shape_b: RowShape) -> Incremental:
        return NotImplemented


class LatencyEvaluator(Protocol):
    """latency(kernels) -> seconds over kernels given as op lists (a plan's, or the
    ones where the compared plans differ); `pending(kernels)` is how many of them it
    would still have to evaluate, which the explorer holds against its budget. What it
    could not time is reported: `rejected` (kernel -> why the code generator refused
    it), `unfit` (estimated registers of kernels no block of which fits an SM),
    `unscored` (kernels timed by a fallback), `generated` (kernels it built)."""

    name: str
    rejected: dict[frozenset[Operation], str]
    unfit: list[int]
    unscored: int
    generated: int

    def __call__(self, kernels: Sequence[Sequence[Operation]]) -> float: ...

    def pending(self, kernels: Sequence[Sequence[Operation]]) -> int: ...
