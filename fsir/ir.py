"""Locating and verifying IR: where an op was written, and verification that names it.

The floor under every pass: it reads xDSL and `fsir.errors` only. Reading text (the
context of all dialects and the locating parser) is `fsir.parse`, above the registry.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from fsir.errors import Location, UserError

MAX_DENSE_ELEMENTS = 1 << 26


def location_of(op: Operation | None) -> Location | None:
    """The source location of `op`, or of its nearest located ancestor."""
    while op is not None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return Location(loc.filename.data, loc.line.data, loc.column.data)
        op = op.parent_op()
    return None


def verify(module: Operation) -> None:
    """Verify op by op so the error names the op that failed and where it was written."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except (VerifyException, DiagnosticException) as err:
            msg = str(err.args[0]) if err.args else str(err)
            msg = msg.removeprefix("Operation does not verify: ")
            raise UserError(f"'{op.name}' op {msg}", location_of(op)) from None


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off for the block, back on after it (also on an error).
    A compile builds and drops IR by the thousand ops; each time enough objects pile
    up the collector rescans every object alive, the whole module's IR included, so
    that a compile would spend a fifth of its time in it. What the block leaves behind
    is collected after it. Nested blocks leave the collector as the outermost found it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def integer_constant(v: SSAValue) -> int | None:
    """The value of an integer or index `arith.constant`, also seen through the bitcast
    that gives an unsigned type its constants (`arith.constant 7 : i32` then
    `arith.bitcast` to ui32: the same bits)."""
    op = v.owner
    if isinstance(op, arith.BitcastOp) and isinstance(v.type, IntegerType):
        op = op.input.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None
