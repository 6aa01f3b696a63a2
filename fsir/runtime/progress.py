"""Progress bars for long simulator runs and benchmark loops (tqdm).

A simulator run shows launches and blocks done on standard error once it has taken
`PROGRESS_DELAY_S` seconds, when standard error is a terminal; it stays silent otherwise and
when told to (`fs-run --quiet`). The bar hears of finished blocks through the simulator's
hook (fsir/sim/launcher.py `on_blocks_done`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO, TypeVar

from tqdm import tqdm

from fsir.sim.launcher import on_blocks_done

PROGRESS_DELAY_S = 2.0  # runs shorter than this never show a bar
T = TypeVar("T")


def _disable(enabled: bool | None) -> bool | None:
    """tqdm's `disable`: None lets tqdm decide (off unless the stream is a terminal)."""
    return None if enabled is None else not enabled


class SimProgress:
    """A bar over the blocks of a run's launches, its description counting launches."""

    def __init__(self, launches: int, enabled: bool | None, file: TextIO | None, delay: float | None):
        self.launches = launches
        self.started = 0
        self.bar = tqdm(total=0, unit="block", desc=self._desc(), file=file, leave=False,
                        delay=PROGRESS_DELAY_S if delay is None else delay, disable=_disable(enabled))

    def _desc(self) -> str:
        return f"launch {self.started}/{self.launches}"

    def launch_started(self, blocks: int) -> None:
        """A launch of `blocks` blocks begins: the total grows (grids can be known only at run time)."""
        self.started += 1
        if self.bar.total is not None:
            self.bar.total += blocks
        self.bar.set_description(self._desc(), refresh=self._visible())

    def _visible(self) -> bool:
        """Whether the bar has shown itself: a refresh before its delay would show it early."""
        bar = self.bar
        return not bar.disable and time.time() - bar.start_t >= bar.delay

    def blocks_done(self, n: int) -> None:
        self.bar.update(n)


@contextmanager
def sim_progress(launches: int, *, enabled: bool | None = None, file: TextIO | None = None,
                 delay: float | None = None) -> Iterator[SimProgress]:
    """A progress bar for a simulator run of `launches` launches, fed by the simulator's
    finished blocks while the block runs. enabled: None shows it on a terminal only,
    False never, True always; file: default standard error; delay: seconds before it
    shows (default PROGRESS_DELAY_S)."""
    progress = SimProgress(launches, enabled, file, delay)
    try:
        with on_blocks_done(progress.blocks_done):
            yield progress
    finally:
        progress.bar.close()


def progress_over(items: Iterable[T], *, desc: str, total: int | None = None, enabled: bool | None = None,
                  file: TextIO | None = None, delay: float | None = None) -> Iterator[T]:
    """`items`, with a bar on standard error for loops that take long (fs-bench's models,
    the benchmarks' cases): shown after `delay` seconds on a terminal (enabled None), never
    (False) or always (True)."""
    yield from tqdm(items, desc=desc, total=total, file=file, leave=False,
                    delay=PROGRESS_DELAY_S if delay is None else delay, disable=_disable(enabled))
