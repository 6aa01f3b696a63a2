"""Pieces several of fsir's dialects share: a terminator returning tensors, and the
printing of a result type list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, traits_def, var_operand_def
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException


class TensorYieldOp(IRDLOperation):
    """Base of the `yield` terminators that return tensors to the op whose region they
    end (`stitch.yield`, `schedule.yield`):

        X.yield %a, %b : tensor<4xf32>, tensor<4x8xf32>

    A subclass names the ops it may end in `parents()` and the error in `PARENT_ERROR`.
    """

    PARENT_ERROR: ClassVar[str]

    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator(), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])

    @classmethod
    def parents(cls) -> tuple[type[Operation], ...]:
        """The ops whose region this yield may end."""
        raise NotImplementedError

    def verify_(self) -> None:
        parent = self.parent_op()
        if parent is not None and not isinstance(parent, self.parents()):
            raise VerifyException(self.PARENT_ERROR)


def print_result_types(printer: Printer, types: Sequence[Attribute]) -> None:
    """Results as MLIR prints a function type's: `T` for one, `(T1, T2)` for several."""
    if len(types) == 1:
        printer.print_attribute(types[0])
    else:
        printer.print_string("(")
        printer.print_list(types, printer.print_attribute)
        printer.print_string(")")
