"""fs-opt: xdsl-opt with fsir's dialects, passes, targets and frontends.

    fs-opt model.mlir -p 'shape-inference,graph-canonicalize,cse' -t mlir
    fs-opt bad.mlir --split-input-file --verify-diagnostics

Differences from plain xdsl-opt, all for users: errors are `file:line:col: error:`
with exit 1 (also for verifier errors, which xDSL reports without a location), and
`--verify-diagnostics` follows MLIR: every `// expected-error @+1 {{text}}` must match an
error on that line and every error must be expected. `--time-passes` also prints the
compile counts (`fsir.stats`). With FSIR_CACHE=1, lowered kernels go through the
persistent kernel cache (`fsir.cache`) unless `--no-cache`.

Start-up is kept short: only xDSL's driver is imported up front; fsir's passes,
dialects and the IR utilities are imported when a command uses them.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.universe import Universe
from xdsl.utils.exceptions import ArgSpecParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from fsir import cache as kernel_cache
from fsir import registry
from fsir.errors import Location, UserError
from fsir.sources import read_source
from fsir.stats import collecting
from fsir.tools.driver import run_tool


class _ArgumentError(UserError):
    pass


def _parsed_by_parse_source(stream: IO[bytes]) -> ModuleOp:
    """fsir's frontends are registered by name only: `FsOptMain.parse_source` reads them."""
    raise AssertionError("fsir frontends are read by FsOptMain.parse_source")


def _raise_argument_error(message: str):
    raise _ArgumentError(message)


class FsOptMain(xDSLOptMain):
    def __init__(self, args=None):
        try:
            super().__init__(description="fsir modular optimizer driver", args=args)
        except (ValueError, ArgSpecParseError) as err:
            raise UserError(_pass_error_message(err)) from None

    # -- registration: xDSL's own, then fsir's (OVERRIDING_DIALECTS replace xDSL's) --

    def register_all_dialects(self):
        universe = Universe.get_multiverse()
        fsir_dialects = {**registry.DIALECTS, **registry.OVERRIDING_DIALECTS}
        for name, factory in universe.all_dialects.items():
            if name not in fsir_dialects:
                self.ctx.register_dialect(name, factory)
        for name, factory in fsir_dialects.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in registry.PASSES.items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        super().register_all_targets()
        for name, factory in registry.TARGETS.items():
            self.available_targets[name] = factory

    def register_all_frontends(self):
        super().register_all_frontends()
        for name in registry.FRONTENDS:
            self.available_frontends[name] = _parsed_by_parse_source

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument("--verify-each", action="store_true",
                                help="verify the IR after every pass, not only after the last")
        arg_parser.add_argument("--no-cache", action="store_true",
                                help="lower every kernel: neither read nor write the kernel cache (FSIR_CACHE_DIR)")
        arg_parser.error = _raise_argument_error
        arg_parser.epilog = _describe_registry()
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter

    # -- pipeline: verify with locations after the passes --------------------

    def setup_pipeline(self):
        from fsir.ir import verify

        timer = [time.perf_counter()]

        def callback(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None):
            if self.args.time_passes and previous is not None:
                print(f"Pass {previous.name} took {time.perf_counter() - timer[0]:.4f} seconds", file=sys.stderr)
            # the input was verified when it was parsed; the output after the last pass
            # (`--verify-each`: after every pass, which names the pass that broke the IR)
            checked = following is None or self.args.verify_each
            if previous is not None and checked and not self.args.disable_verify:
                try:
                    verify(module)
                except UserError as err:
                    who = f"pass '{previous.name}'" if self.args.verify_each else \
                        f"the passes up to '{previous.name}' (--verify-each names the pass)"
                    raise RuntimeError(f"{who} produced invalid IR: {err.message}") from None
            if previous and following and self.args.print_between_passes:
                print(f"// IR after {previous.name}:")
                Printer(stream=sys.stdout).print_op(module)
                print("\n")
            timer[0] = time.perf_counter()

        self.pipeline = PassPipeline.parse_spec(self.available_passes, self.args.passes, callback)

    # -- running -----------------------------------------------------------

    def parse_source(self, text: str | bytes, name: str, line_offset: int) -> ModuleOp:
        from fsir.pipeline import input_format, parse_source  # the pipeline's options load the code generator

        fmt = input_format(name, self.args.frontend)
        return parse_source(text, name, fmt, self.ctx, line_offset, not self.args.no_implicit_module)

    def run(self) -> int:  # type: ignore[override]  # the exit status, which xDSL's run (-> None) has no way to return
        from fsir.ir import collector_paused
        from fsir.pipeline import input_format, is_binary

        binary = is_binary(input_format(self.args.input_file, self.args.frontend))
        name, text = read_source(self.args.input_file, binary=binary)
        chunks: list[tuple[str | bytes, int]] = [(text, 0)]
        if self.args.split_input_file and isinstance(text, str):
            chunks = list(split_input(text))
        out = open(self.args.output_file, "w") if self.args.output_file else sys.stdout
        try:
            with collecting() as counts, kernel_cache.active(self.chosen_cache()), collector_paused():
                failures = self.run_chunks(chunks, name, out)
        finally:
            if out is not sys.stdout:
                out.close()
        if self.args.time_passes:
            print("Compile counts:", *(f"  {line}" for line in counts.result().lines()), sep="\n", file=sys.stderr)
        return 1 if failures else 0

    def chosen_cache(self) -> kernel_cache.KernelCache | None:
        return None if self.args.no_cache else kernel_cache.KernelCache.from_environment()

    def run_chunks(self, chunks: list[tuple[str | bytes, int]], name: str, out: IO[str]) -> int:
        """Compile each chunk to `out`; the number of unmet diagnostic expectations."""
        failures = 0
        for i, (chunk, offset) in enumerate(chunks):
            if i > 0:
                out.write("// -----\n")
            expected = collect_expected(chunk, offset, name) if self.args.verify_diagnostics else []
            try:
                module = self.parse_source(chunk, name, offset)
                self.apply_passes(module)
                out.write(self.output_resulting_program(module))
                out.flush()
                error = None
            except UserError as err:
                if not self.args.verify_diagnostics:
                    raise
                error = err
            if self.args.verify_diagnostics:
                failures += check_expected(expected, error, name)
        return failures


def _pass_error_message(err: BaseException) -> str:
    msg = str(err)
    m = re.match(r"Unrecognized passes: \[(.*)\]", msg)
    if m:
        return f"unknown pass {m.group(1)} (see fs-opt --help for the list)"
    return f"bad pass pipeline: {msg}"


def _describe_registry() -> str:
    lines = ["fsir passes:"]
    for name, summary in registry.PASS_SUMMARIES.items():  # (importing the passes would slow --help)
        lines.append(f"  {name:24s} {summary}")
    lines.append("fsir dialects: " + ", ".join({**registry.DIALECTS, **registry.OVERRIDING_DIALECTS}))
    lines.append("fsir targets: " + (", ".join(registry.TARGETS) or "(none)"))
    if registry.FRONTENDS:
        lines.append("fsir frontends (-f): " + ", ".join(registry.FRONTENDS))
    return "\n".join(lines)


# -- --split-input-file and MLIR-style --verify-diagnostics --------------------


def split_input(text: str) -> list[tuple[str, int]]:
    """Chunks separated by `// -----` lines, each with the line offset of its start."""
    chunks, offset = [], 0
    for chunk in re.split(r"^// -----.*$", text, flags=re.MULTILINE):
        chunks.append((chunk, offset))
        offset += chunk.count("\n")
    return chunks


_EXPECTED = re.compile(r"//\s*expected-(error|warning|remark|note)\s*(@[^\s{]+)?\s*\{\{(.*?)\}\}")


@dataclass
class Expected:
    line: int
    text: str
    source_line: int


def collect_expected(chunk: str | bytes, offset: int, name: str) -> list[Expected]:
    """The expected errors a chunk's comments state (none in a binary model)."""
    expected: list[Expected] = []
    if isinstance(chunk, bytes):
        return expected
    for i, line in enumerate(chunk.splitlines()):
        for m in _EXPECTED.finditer(line):
            kind, where, msg = m.groups()
            if kind != "error":
                continue
            here = offset + i + 1
            target = here
            if where:
                w = where[1:]
                if w in ("above",):
                    target = here - 1
                elif w in ("below",):
                    target = here + 1
                elif re.fullmatch(r"[+-]\d+", w):
                    target = here + int(w)
                else:
                    raise UserError(
                        f"cannot read the location '{where}' of an expected-error", Location(name, here, m.start() + 1)
                    )
            expected.append(Expected(target, msg.strip(), here))
    return expected


def check_expected(expected: list[Expected], error: UserError | None, name: str) -> int:
    """Match the produced error against the expectations; print mismatches; count them."""
    from fsir.errors import format_error

    failures = 0
    matched = False
    for exp in expected:
        if (
            error is not None
            and not matched
            and error.loc is not None
            and error.loc.line == exp.line
            and exp.text in error.message
        ):
            matched = True
            continue
        print(
            f'{name}:{exp.source_line}: error: expected error "{exp.text}" on line {exp.line} was not produced',
            file=sys.stderr,
        )
        failures += 1
    if error is not None and not matched:
        print(format_error(error) + "  [unexpected error]", file=sys.stderr)
        failures += 1
    return failures


def main(argv=None) -> None:
    run_tool("fs-opt", lambda: FsOptMain(argv).run())


if __name__ == "__main__":
    main()
