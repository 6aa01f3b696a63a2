"""Errors that reach users.

A `UserError` is something the user can fix (bad IR, bad inputs, bad options); tools
print it as `file:line:col: error: message` and exit 1. Anything else escaping a tool
is an internal error: the tool says it is a bug and how to report it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    file: str
    line: int  # 1-based
    col: int  # 1-based

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class UserError(Exception):
    """An error in the user's input; `loc` points into their source when known."""

    def __init__(self, message: str, loc: Location | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc


class SimulatorError(UserError):
    """The PTX simulator found invalid PTX or an invalid access (names kernel and PTX line)."""


def format_error(err: UserError, source: str | None = None) -> str:
    """`file:line:col: error: message`, then the source line and a caret (MLIR style)."""
    if err.loc is None:
        return f"error: {err.message}"
    out = f"{err.loc}: error: {err.message}"
    if source is not None:
        lines = source.splitlines()
        if 0 < err.loc.line <= len(lines):
            line = lines[err.loc.line - 1]
            out += f"\n{line}\n{' ' * (err.loc.col - 1)}^"
    return out
