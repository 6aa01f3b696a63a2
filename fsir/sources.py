"""Source texts: reading an input file (or stdin) with located errors, and keeping
each text by name so that a diagnostic can quote the offending line."""

from __future__ import annotations

import sys
from typing import ClassVar

from fsir.errors import Location, UserError


class Sources:
    """Source texts by file name, so diagnostics can quote the offending line."""

    texts: ClassVar[dict[str, str]] = {}

    @classmethod
    def remember(cls, name: str, text: str) -> None:
        cls.texts[name] = text


def read_source(path: str | None, binary: bool = False) -> tuple[str, str | bytes]:
    """(name, text) of a file, or of stdin for None/'-'; unreadable files are user errors.

    With `binary` the contents are bytes (for binary formats such as .onnx)."""
    if path is None or path == "-":
        text = sys.stdin.buffer.read() if binary else sys.stdin.read()
        name = "<stdin>"
    else:
        try:
            with open(path, "rb") if binary else open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            raise UserError(f"cannot open '{path}': no such file") from None
        except IsADirectoryError:
            raise UserError(f"cannot read '{path}': it is a directory") from None
        except UnicodeDecodeError as err:
            raise _decode_error(path, err) from None
        except OSError as err:
            raise UserError(f"cannot read '{path}': {err}") from None
        name = path
    if isinstance(text, str):
        Sources.remember(name, text)
    return name, text


def _decode_error(path: str, err: UnicodeDecodeError) -> UserError:
    """A text input that is not UTF-8, located at the first bad byte."""
    before = err.object[: err.start]
    line = before.count(b"\n") + 1
    col = len(before) - (before.rfind(b"\n") + 1) + 1
    return UserError(f"invalid UTF-8 (byte 0x{err.object[err.start]:02x}): {err.reason}",
                     Location(path, line, col))
