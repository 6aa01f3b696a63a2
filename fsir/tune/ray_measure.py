"""Measuring on a Ray cluster (`fs-tune --workers ray` or `--workers ray://ADDRESS`):
the `Measurer` interface of the process pool, with candidates built (lowering, PTX,
ptxas) as Ray tasks anywhere in the cluster and timed by a set number of timing actors:
one per GPU for the `cuda` measurer (each actor holds its GPU), one per CPU slot for
the `model` measurer (the simulator is CPU work).

    measurer = RayMeasurer(ModelBackend(), address="ray://head:10001", timeout=120)
    results = measurer.measure([MeasureInput(source, trace), ...])

Ray is an optional dependency (`pip install 'fsir[ray]'`), imported only here and only
when a Ray measurer is made. A build task or a timing actor whose process dies is a
`CRASH` result (a dead actor is replaced), one running past its timeout (`build_timeout`
for a build, `timeout` for a timing) is cancelled (a task) or killed and replaced (an
actor) and is a `TIMEOUT` result; the rest of the batch
goes on. Builds are submitted at most as many at a time as the cluster has CPUs, and
each timing actor runs one candidate at a time, so the timeout of each starts when it
starts running. The cluster's nodes need the same fsir installed (Ray ships the
calls, not the package).
"""

from __future__ import annotations

import importlib
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import ModuleType
from typing import Any

from fsir.errors import UserError
from fsir.tune.measure import (
    Built,
    MeasureError,
    MeasureInput,
    MeasureResult,
    PoolMeasurer,
    SplitBackend,
    first_line,
)

INSTALL_HINT = "pip install 'fsir[ray]'"
POLL_SECONDS = 0.05  # how long one wait on the cluster blocks before the timeouts are checked


def import_ray() -> ModuleType:
    """The `ray` module, or a `UserError` naming the extra that installs it."""
    try:
        return importlib.import_module("ray")
    except ImportError as err:
        raise UserError(f"--workers ray needs Ray, which is not installed: {INSTALL_HINT}") from err


class TimingResource(StrEnum):
    """What a timing actor holds: a GPU (the `cuda` measurer) or a CPU slot (`model`)."""

    GPU = "GPU"
    CPU = "CPU"


@dataclass(frozen=True)
class Workers:
    """Where candidates are measured (`fs-tune --workers`): `count` local processes
    (0: in the tuner's process), or a Ray cluster (`ray`: the one `ray.init()` finds or
    starts, `address` a `ray://` client address)."""

    count: int = 1
    ray: bool = False
    address: str | None = None

    @staticmethod
    def parse(text: str) -> Workers:
        """`N`, `ray` or `ray://ADDRESS`; a `UserError` otherwise."""
        if text == "ray":
            return Workers(ray=True)
        if text.startswith("ray://"):
            if len(text) == len("ray://"):
                raise UserError("--workers ray://ADDRESS needs an address (host:port)")
            return Workers(ray=True, address=text)
        try:
            count = int(text)
        except ValueError:
            raise UserError(f"--workers must be a number of processes, 'ray' or 'ray://ADDRESS', not '{text}'") \
                from None
        if count < 0:
            raise UserError(f"--workers must not be negative, not {count}")
        return Workers(count)


def make_measurer(backend: SplitBackend, workers: Workers, timeout: float,
                  resource: TimingResource = TimingResource.CPU) -> PoolMeasurer | RayMeasurer:
    if workers.ray:
        import_ray()  # a missing Ray is said before anything is tuned
        return RayMeasurer(backend, address=workers.address, timeout=timeout, resource=resource)
    return PoolMeasurer(backend, workers=workers.count, timeout=timeout)


# -- what runs on the cluster (top level: Ray pickles them by reference) -----------------


def _build(backend: SplitBackend, inp: MeasureInput) -> Built | MeasureResult:
    try:
        return backend.build(inp)
    except Exception as err:  # noqa: BLE001 (an error the backend did not type is still a result)
        return MeasureResult(inp.trace, None, MeasureError.CRASH, first_line(err))


class TimingActor:
    """Times built candidates, one at a time, in its own process."""

    def __init__(self):
        # loaded before the actor counts as ready, so that a call's timeout does not
        # pay for the first import of the compiler in a fresh process
        for name in ("fsir.parse", "fsir.runtime.executor", "fsir.tune.sampling"):
            importlib.import_module(name)

    def time(self, backend: SplitBackend, inp: MeasureInput, built: Built) -> MeasureResult:
        try:
            return backend.time(inp, built)
        except Exception as err:  # noqa: BLE001 (as in `_build`)
            return MeasureResult(inp.trace, None, MeasureError.CRASH, first_line(err))


@dataclass
class _Flight:
    """A call in flight: the batch index, when it started, the actor (timing only)."""

    index: int
    started: float
    actor: Any = None


@dataclass
class RayMeasurer:
    """Measures on a Ray cluster (module docstring). `address`: passed to `ray.init`
    when Ray is not initialised yet (None: a local cluster, or the one `RAY_ADDRESS`
    names); `actors`: timing actors (default: the cluster's GPUs or CPUs);
    `build_timeout`: a build's timeout (default `timeout`)."""

    backend: SplitBackend
    address: str | None = None
    timeout: float = 300.0
    resource: TimingResource = TimingResource.CPU
    actors: int | None = None
    build_timeout: float | None = None
    _ray: ModuleType | None = field(default=None, repr=False)
    _actors: list[Any] = field(default_factory=list, repr=False)
    _build_fn: Any = field(default=None, repr=False)
    _starting: dict[Any, Any] = field(default_factory=dict, repr=False)  # readiness ref -> actor
    _started_at: dict[int, float] = field(default_factory=dict, repr=False)  # id(actor) -> when it was asked for

    def measure(self, batch: Sequence[MeasureInput]) -> list[MeasureResult]:
        ray = self._start()
        results: list[MeasureResult | None] = [None] * len(batch)
        to_build = deque(range(len(batch)))
        to_time: deque[tuple[int, Built]] = deque()
        builds: dict[Any, _Flight] = {}
        timings: dict[Any, _Flight] = {}
        free = [a for a in self._actors if a not in self._starting.values()]
        slots = self._build_slots()
        while builds or timings or to_build or to_time:
            while to_build and len(builds) < slots:
                i = to_build.popleft()
                builds[self._build_fn.remote(self.backend, batch[i])] = _Flight(i, time.monotonic())
            while to_time and free:
                i, built = to_time.popleft()
                actor = free.pop()
                timings[actor.time.remote(self.backend, batch[i], built)] = _Flight(i, time.monotonic(), actor)
            done, _ = ray.wait([*builds, *timings, *self._starting], num_returns=1, timeout=POLL_SECONDS)
            for ref in done:
                if ref in self._starting:
                    free.append(self._starting.pop(ref))  # an actor ready: its process has started
                elif ref in builds:
                    flight = builds.pop(ref)
                    got, _ = self._get(ref, batch[flight.index], "build task")
                    if isinstance(got, Built):
                        to_time.append((flight.index, got))
                    else:
                        results[flight.index] = got
                else:
                    flight = timings.pop(ref)
                    got, died = self._get(ref, batch[flight.index], "timing actor")
                    results[flight.index] = got if isinstance(got, MeasureResult) else \
                        MeasureResult(batch[flight.index].trace, None, MeasureError.CRASH, "not a result")
                    if died:
                        self._replace(flight.actor)
                    else:
                        free.append(flight.actor)
            self._expire(builds, timings, batch, results)
            if to_time and not free and not timings and self._none_ready():
                # no actor could start (a cluster without the resource it asks for, say)
                while to_time:
                    i, _ = to_time.popleft()
                    results[i] = MeasureResult(batch[i].trace, None, MeasureError.TIMEOUT,
                                               f"no timing actor ready within {self.timeout:.0f} s")
        return [r for r in results if r is not None]

    def _none_ready(self) -> bool:
        """Whether every actor has been starting for longer than the timeout."""
        now = time.monotonic()
        return bool(self._starting) and len(self._starting) == len(self._actors) and \
            all(now - self._started_at.get(id(a), now) > self.timeout for a in self._starting.values())

    # -- the cluster ------------------------------------------------------------------

    def _start(self) -> ModuleType:
        if self._ray is not None:
            return self._ray
        ray = import_ray()
        if not ray.is_initialized():
            import logging

            ray.init(address=self.address, logging_level=logging.WARNING, log_to_driver=False)
        self._ray = ray
        # a crashed build is a result, not something to run again
        self._build_fn = ray.remote(max_retries=0)(_build)
        self._actors = [self._new_actor() for _ in range(self._actor_count())]
        return ray

    def _actor_count(self) -> int:
        assert self._ray is not None
        if self.actors is not None:
            return max(1, self.actors)
        have = int(self._ray.cluster_resources().get(str(self.resource), 0))
        if have < 1:
            raise UserError(f"the Ray cluster has no {self.resource} to time candidates on")
        return have

    def _new_actor(self) -> Any:
        assert self._ray is not None
        # a GPU actor holds its GPU; a CPU timing actor claims no CPU, so that build
        # tasks still run beside it (the simulator and the builds share the cores)
        need = {"num_gpus": 1, "num_cpus": 0} if self.resource == TimingResource.GPU else {"num_cpus": 0}
        actor = self._ray.remote(max_restarts=0, **need)(TimingActor).remote()
        # a timeout counts from when the actor runs the call, not from its process's start
        self._starting[actor.__ray_ready__.remote()] = actor
        self._started_at[id(actor)] = time.monotonic()
        return actor

    def _build_slots(self) -> int:
        assert self._ray is not None
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def _get(self, ref: Any, inp: MeasureInput, what: str) -> tuple[Built | MeasureResult, bool]:
        """The call's value, and whether its process died (then a `CRASH` result)."""
        assert self._ray is not None
        try:
            return self._ray.get(ref), False
        except self._ray.exceptions.RayError as err:
            why = f"the {what}'s process died: {first_line(err)}"
            return MeasureResult(inp.trace, None, MeasureError.CRASH, why[:500]), True

    def _replace(self, actor: Any) -> None:
        """Kill `actor` and start another in its place (free once it is ready)."""
        assert self._ray is not None
        self._ray.kill(actor, no_restart=True)
        fresh = self._new_actor()
        self._actors = [fresh if a is actor else a for a in self._actors]

    def _expire(self, builds: dict[Any, _Flight], timings: dict[Any, _Flight],
                batch: Sequence[MeasureInput], results: list[MeasureResult | None]) -> None:
        """Calls past the timeout become `TIMEOUT` results: a build task cancelled
        (its worker killed), a timing actor killed and replaced."""
        assert self._ray is not None
        now = time.monotonic()
        limit = self.timeout if self.build_timeout is None else self.build_timeout
        for ref, flight in [(r, f) for r, f in builds.items() if now - f.started > limit]:
            del builds[ref]
            self._ray.cancel(ref, force=True)
            results[flight.index] = MeasureResult(batch[flight.index].trace, None, MeasureError.TIMEOUT,
                                                  f"building over {limit:.0f} s")
        for ref, flight in [(r, f) for r, f in timings.items() if now - f.started > self.timeout]:
            del timings[ref]
            self._replace(flight.actor)
            results[flight.index] = MeasureResult(batch[flight.index].trace, None, MeasureError.TIMEOUT,
                                                  f"over {self.timeout:.0f} s")

    def close(self, kill: bool = False) -> None:
        """Kill the timing actors (the cluster itself stays up: it may not be ours)."""
        if self._ray is not None:
            for actor in self._actors:
                self._ray.kill(actor, no_restart=True)
        self._actors = []
        self._starting = {}
        self._ray = None
