"""Compile counts: what a compile did, counted where it does it.

    from fsir import stats
    stats.count("kernels_lowered")                   # at a work site: one line
    with stats.collecting() as counts:               # around a compile
        lower(module)
    counts.result()                                  # CompileStats(kernels_lowered=6, ...)

The counts are deterministic (no clocks), so a test can pin them: a change that
multiplies the work a compile does fails by name (tests/test_compile_counts.py), where a
timing test would be flaky. Counting outside every `collecting` scope costs one
context-variable read; nested scopes all receive every count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class CompileStats:
    """The work of one compile, by what was done.

    fusion_candidates: candidate fusion patterns the explorer generated.
    plans_evaluated: fusion plans the explorer timed against each other.
    fusions_generated: candidate fusions the explorer built with stitch-codegen to time them.
    summaries_scored: latency estimates made from kernel summaries (every candidate
        configuration stitch-codegen considers, and the explorer's generated fusions').
    candidates_lowered: candidate configurations lowered to gpu IR to score them exactly.
    kernels_lowered: kernels lowered to gpu IR (stitch-codegen's trial lowering of each
        new kernel, which schedule-to-gpu then reuses, or schedule-to-gpu's own).
    fusions_split: fusions stitch-codegen could not lower as one kernel and compiled as
        one kernel per op instead.
    ptxas_calls: runs of ptxas.
    fusions_split: fusions stitch-codegen compiled as one kernel per op because their
        kernel did not lower (a rule the explorer's capability query missed).
    cache_hits, cache_misses: kernel cache lookups (fsir/cache.py) that found a valid
        entry, and those that did not (a miss lowers the kernel and writes the entry).
    cache_compile_hits, cache_compile_misses: lookups of a whole compile's result (the
        PTX path, `fsir.pipeline.compile_ptx`): a hit lowers nothing at all.
    """

    fusion_candidates: int = 0
    plans_evaluated: int = 0
    fusions_generated: int = 0
    summaries_scored: int = 0
    candidates_lowered: int = 0
    kernels_lowered: int = 0
    fusions_split: int = 0
    ptxas_calls: int = 0
    fusions_split: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    cache_compile_hits: int = 0
    cache_compile_misses: int = 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def lines(self) -> list[str]:
        """One `name: n` line per count, in declaration order (what --time-passes prints)."""
        return [f"{name}: {n}" for name, n in self.as_dict().items()]


COUNTS = frozenset(f.name for f in fields(CompileStats))


class Collector:
    """The counts of one `collecting` scope so far."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def result(self) -> CompileStats:
        return CompileStats(**self.counts)


# the collectors of the enclosing `collecting` scopes, innermost last
_SCOPES: ContextVar[tuple[Collector, ...]] = ContextVar("fsir_compile_stats", default=())


def count(name: str, n: int = 1) -> None:
    """Add `n` to count `name` (a field of CompileStats) in every enclosing scope."""
    scopes = _SCOPES.get()
    if not scopes:
        return
    if name not in COUNTS:  # a typo at a count site must not pass silently
        raise KeyError(f"unknown compile count '{name}' (known: {', '.join(sorted(COUNTS))})")
    for scope in scopes:
        scope.counts[name] += n


@contextmanager
def collecting() -> Iterator[Collector]:
    """Collect the counts made inside the block (also those of nested scopes)."""
    collector = Collector()
    token = _SCOPES.set((*_SCOPES.get(), collector))
    try:
        yield collector
    finally:
        _SCOPES.reset(token)
