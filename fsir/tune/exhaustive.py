"""Measuring a task's whole space (`fs-tune --exhaustive`): every rule-valid trace
that passes the static checks, each measured once, written to the log as the search
writes its records (so a search's log and an exhaustive log mix, and resume from each
other). The reference the searches are judged against (`benchmarks/tune.py`: within 5%
of the exhaustive best).

    tuner = Tuner(source, mapping, checker, measurer, db, SearchOptions(learn=False))
    result = measure_space(tuner, limit=512)

Spaces are counted before anything is built: the rule-valid traces (`Space.config`
accepts them; nothing is built) are counted, and a space of more than `limit` of them
is refused (`SpaceTooLarge`, a `UserError` naming the count and the option that raises
the limit) before one is checked or measured.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fsir.errors import UserError
from fsir.tune.search import Tuner, TuneResult
from fsir.tune.space import Checked, Checker, Invalid, Space, Trace

DEFAULT_LIMIT = 512  # rule-valid candidates a task may have for --exhaustive without --limit
MAX_TRACES = 1_000_000  # traces enumerated to count the rule-valid ones; larger spaces are refused outright


class SpaceTooLarge(UserError):
    """A space with more rule-valid candidates than the exhaustive limit."""


@dataclass(frozen=True)
class Enumerated:
    """A space enumerated: its statically valid candidates (in the space's order),
    how many traces it has, how many broke a rule and how many the static checks
    rejected."""

    valid: list[Checked]
    traces: int
    broke_rules: int
    rejected: int


def rule_valid(space: Space, limit: int, name: str) -> list[Trace]:
    """The traces of `space` that give a configuration (no kernel built); a
    `SpaceTooLarge` naming `name` above `limit` of them."""
    size = space.size()
    if size > MAX_TRACES:
        raise SpaceTooLarge(f"{name}: its space has {size} traces, too many to enumerate for --exhaustive "
                            f"(at most {MAX_TRACES})")
    out = []
    for trace in space.traces():
        try:
            space.config(trace)
        except Invalid:
            continue
        out.append(trace)
    if len(out) > limit:
        raise SpaceTooLarge(f"{name}: its space has {len(out)} rule-valid candidates, over the exhaustive limit of "
                            f"{limit}; --limit {len(out)} measures them all")
    return out


def enumerate_space(checker: Checker, traces: list[Trace]) -> Enumerated:
    """The statically valid candidates among `traces` (kernels built and summarised)."""
    checked = [checker.check(t) for t in traces]
    valid = [c for c in checked if isinstance(c, Checked)]
    return Enumerated(valid, checker.space.size(), checker.space.size() - len(traces), len(checked) - len(valid))


def measure_space(tuner: Tuner, traces: list[Trace], on_batch: Callable[[int], object] | None = None) -> TuneResult:
    """Measure every statically valid candidate among `traces` (from `rule_valid`) not
    yet in the tuner's log, today's choice first, in batches of the tuner's batch size;
    `on_batch(n)` after each batch of n."""
    got = enumerate_space(tuner.checker, traces)
    tuner.samples += len(traces)
    tuner.rejected += got.rejected
    todo = [c for c in got.valid if c.trace not in tuner.measured]
    # today's choice first: its record is the table's "today" column even if the run stops early
    todo.sort(key=lambda c: c.description != tuner.default_config)
    step = max(1, tuner.options.batch)
    for i in range(0, len(todo), step):
        batch = todo[i:i + step]
        tuner.measure_batch(batch)  # records each result in the log, as a search round does
        if on_batch is not None:
            on_batch(len(batch))
    tuner.exhausted = True
    return tuner.result()
