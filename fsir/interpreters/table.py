"""A dialect's table of op implementations: `@TABLE.impl(Op)` registers a function.

An op's implementation is found by its class, then its base classes (one row serves a
family, e.g. every elementwise op), as xDSL's `@impl(arith.Addi)` interpreters do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.ir import Operation

Impl = Callable[..., Any]


class ImplTable:
    """Implementations of one dialect's ops, keyed by op class."""

    def __init__(self, dialect: str):
        self.dialect = dialect
        self.impls: dict[type[Operation], Impl] = {}

    def impl(self, op_type: type[Operation]) -> Callable[[Impl], Impl]:
        def register(fn: Impl) -> Impl:
            if op_type in self.impls:
                raise ValueError(f"{op_type.__name__} has two implementations in the {self.dialect} table")
            self.impls[op_type] = fn
            return fn

        return register

    def lookup(self, op_type: type[Operation]) -> Impl | None:
        for cls in op_type.__mro__:
            fn = self.impls.get(cls)
            if fn is not None:
                return fn
        return None
