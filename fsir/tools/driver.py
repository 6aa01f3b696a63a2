"""What every fsir command does with errors.

User errors print `file:line:col: error: message` (with the source line and a caret
when the position is known) and exit 1. Anything else is an internal error: one
paragraph saying it is a bug and how to report it, exit 3; `FSIR_DEBUG=1` shows the
traceback.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from typing import ClassVar

from fsir.errors import Location, UserError

EXIT_USER_ERROR = 1
EXIT_INTERNAL_ERROR = 3
REPORT_URL = "the fsir issue tracker"


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


def report(err: UserError, tool: str) -> None:
    from fsir.ir import format_error  # xDSL's parser: not loaded before an error needs it

    source = Sources.texts.get(err.loc.file) if err.loc else None
    text = format_error(err, source)
    if err.loc is None:
        text = f"{tool}: {text}"
    print(text, file=sys.stderr)


def run_tool(tool: str, main: Callable[[], int | None]) -> None:
    """Run a command's main with fsir's error conventions and exit with its status."""
    try:
        status = main()
    except UserError as err:
        report(err, tool)
        sys.exit(EXIT_USER_ERROR)
    except KeyboardInterrupt:
        print(f"{tool}: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except SystemExit:
        raise
    except Exception as err:  # noqa: BLE001 - the last line of defence
        print(
            f"{tool}: internal error: {type(err).__name__}: {err}\n"
            f"This is a bug in fsir, not in your input. Please report it on {REPORT_URL} "
            "with the command line and the input file; rerun with FSIR_DEBUG=1 to "
            "include the traceback.",
            file=sys.stderr,
        )
        if os.environ.get("FSIR_DEBUG"):
            traceback.print_exc()
        sys.exit(EXIT_INTERNAL_ERROR)
    sys.exit(status or 0)
