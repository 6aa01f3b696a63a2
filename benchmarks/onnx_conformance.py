"""ONNX's backend test suite on fsir: every node case (and the model cases) run in each
fusion mode (stitch, xla, none) and classified as passed / refused (a located error) /
failed (a wrong result, or modes that disagree) / crashed, with a table per op type and
per target family (`fsir.onnx.conformance.TARGET_FAMILIES`: the op
types inference graphs of CNNs, transformers and recommenders use; each should pass
≥ 90% of its node tests).

    python benchmarks/onnx_conformance.py                 # node cases, ~1-3 minutes
    python benchmarks/onnx_conformance.py --models        # also pytorch-converted/-operator, simple, light
    python benchmarks/onnx_conformance.py --ops Conv,MaxPool --show refused,failed
    python benchmarks/onnx_conformance.py --tsv results.tsv   # one line per case
    python benchmarks/onnx_conformance.py --modes stitch      # one fusion mode only

Runs on the simulator (the backend's "CPU" device). A case's outcome in the tables is
its outcome in every mode, or failed when the modes disagree; the totals are also
printed per mode. `tests/onnx/test_onnx_backend.py` runs the same node cases in CI.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter, defaultdict

from fsir.onnx.conformance import (
    MODEL_KINDS,
    MODES,
    TARGET_FAMILIES,
    TARGET_OPS,
    ModeResults,
    Outcome,
    model_cases,
    node_cases,
    run_case_modes,
)
from fsir.runtime.progress import progress_over

OUTCOMES = list(Outcome)


def row(name: str, counts: Counter, width: int) -> str:
    total = sum(counts.values())
    cells = "".join(f"{counts[o]:>9}" for o in OUTCOMES)
    share = f"{100 * counts[Outcome.PASSED] / total:6.1f}%" if total else ""
    return f"{name:<{width}}{cells}{total:>8} {share}"


def header(width: int, what: str) -> str:
    return f"{what:<{width}}" + "".join(f"{o.value:>9}" for o in OUTCOMES) + f"{'total':>8}  passed"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", action="store_true", help="also run the model cases (" + ", ".join(MODEL_KINDS) + ")")
    ap.add_argument("--ops", help="only node cases of these op types (comma-separated)")
    ap.add_argument("--show", default="crashed,failed", help="list the cases with these outcomes (comma-separated)")
    ap.add_argument("--tsv", help="write one line per case: name, op type, outcome, seconds, message")
    ap.add_argument("--all-ops", action="store_true", help="print every op type, not only the target families")
    ap.add_argument("--modes", default=",".join(MODES), help="fusion modes to run each case in (comma-separated)")
    ap.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal after two seconds)")
    args = ap.parse_args(argv)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ONNX's case generators warn about their own overflows
        cases = node_cases()
    if args.ops:
        wanted = set(args.ops.split(","))
        cases = [c for c in cases if c.op_type in wanted]
    if args.models:
        cases += model_cases()

    modes = args.modes.split(",")
    results: list[ModeResults] = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in progress_over(cases, desc="cases", enabled=False if args.quiet else None):
            results.append(run_case_modes(case, modes))

    by_op: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        by_op[r.case.op_type][r.outcome] += 1
    width = max([len(op) for op in by_op] + [16]) + 2

    print(header(width, "op type"))
    for family, ops in TARGET_FAMILIES.items():
        fam = Counter()
        lines = []
        for op in ops:
            if op in by_op:
                fam.update(by_op[op])
                mark = "" if by_op[op][Outcome.PASSED] >= 0.9 * sum(by_op[op].values()) else "  <90%"
                lines.append(row("  " + op, by_op[op], width) + mark)
        if lines:
            print(row(f"[{family}]", fam, width))
            print("\n".join(lines))
    if args.all_ops:
        print(row("[other op types]", sum((c for op, c in by_op.items() if op not in TARGET_OPS), Counter()), width))
        for op in sorted(op for op in by_op if op not in TARGET_OPS):
            print(row("  " + op, by_op[op], width))

    target = sum((c for op, c in by_op.items() if op in TARGET_OPS), Counter())
    other = sum((c for op, c in by_op.items() if op not in TARGET_OPS and op != "node"), Counter())
    print()
    print(header(width, "totals"))
    print(row("target op types", target, width))
    print(row("other op types", other, width))
    print(row("all cases", Counter(r.outcome for r in results), width))
    for mode in modes:
        print(row(f"  {mode} mode alone", Counter(r.results[mode].outcome for r in results), width))
    print(f"({time.perf_counter() - start:.0f} s on the simulator; "
          f"{sum(r.disagreement is not None for r in results)} case(s) where the modes disagree)")

    show = {Outcome(s) for s in args.show.split(",") if s}
    for r in results:
        if r.outcome in show:
            print(f"{r.outcome.value:>8} {r.case.name}: {_why(r)[:160]}")
    if args.tsv:
        with open(args.tsv, "w") as f:
            for r in results:
                seconds = sum(m.seconds for m in r.results.values())
                f.write(f"{r.case.name}\t{r.case.op_type}\t{r.outcome.value}\t{seconds:.2f}\t{_why(r)}\n")
    return 0


def _why(run: ModeResults) -> str:
    """The disagreement of the modes, else the last line of the first mode's message."""
    if run.disagreement:
        return f"modes disagree: {run.disagreement}"
    message = next(iter(run.results.values())).message.strip()
    return message.splitlines()[-1] if message else ""


if __name__ == "__main__":
    sys.exit(main())
