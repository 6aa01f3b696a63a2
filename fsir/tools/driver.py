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

from fsir.errors import UserError, format_error
from fsir.sources import Sources

EXIT_USER_ERROR = 1
EXIT_INTERNAL_ERROR = 3
REPORT_URL = "the fsir issue tracker"


def report(err: UserError, tool: str) -> None:
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
