"""Step f of benchmarks/gpu_check.py: the tuner's two measurers against each other.

Three kernels of the BERT layer (its first GEMM, its attention and its first
LayerNorm row kernel, as the tuner's task discovery finds them), each with the fast
mode's ranking: the prior's top N statically checked candidates and stitch-codegen's
choice. Every candidate is timed by the `cuda` measurer (CUDA events on the task's
kernel) and by the `model` measurer (sampled simulator blocks through the timeline
model); per kernel the step reports the two rankings' Spearman and Kendall
correlation and what picking by the model (or by the prior alone) costs against the
measured best.

Each candidate is built once and the build timed by both measurers; builds and the
model's simulations run in worker processes while this process times the builds on
the GPU as they come. The step stops at its own time cap (`--tuner-cap-s`), reporting
the pairs measured by then.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import math
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAPPINGS = ("gemm", "attention", "row")  # the kernels compared, by their tuning task's mapping


@dataclass
class TunerRow:
    kernel: str
    mapping: str
    candidates: int  # the prior's top N and stitch-codegen's choice
    pairs: int  # measured by both measurers
    spearman: float | None  # the model's ranking against the measured one
    kendall: float | None
    best_us: float | None  # the measured best
    best: str
    model_pick: str  # the model measurer's fastest
    model_pick_us: float | None  # ... as measured
    model_gap_pct: float | None  # ... over the measured best
    prior_pick_us: float | None  # the prior's first candidate, as measured
    prior_gap_pct: float | None
    default: str  # stitch-codegen's choice
    default_us: float | None  # ... as measured


@dataclass
class Candidate:
    config: str
    inp: Any  # MeasureInput
    prior_rank: int  # 0: the prior's first; -1: stitch-codegen's choice outside the prior's top N
    cuda_s: float | None = None
    model_s: float | None = None
    error: str = ""


# -- worker entries (top level: the pool pickles them by reference) -----------------------
def build_job(backend: Any, inp: Any) -> Any:
    return backend.build(inp)


def time_job(backend: Any, inp: Any, built: Any) -> Any:
    return backend.time(inp, built)


# -- the candidates ----------------------------------------------------------------------
def tasks_of(text: str, options: Any) -> list[Any]:
    """The first task of each of MAPPINGS, in that order."""
    from fsir.tune.measure import stitched_from_text
    from fsir.tune.task import discover

    tasks = discover(stitched_from_text(text, options), options)
    return [next(t for t in tasks if t.mapping == m) for m in MAPPINGS if any(t.mapping == m for t in tasks)]


def candidates(text: str, options: Any, task: Any, top: int) -> list[Candidate]:
    """The prior's `top` candidates of `task` in the fast mode's order (its shortlist
    ranked by the prior), and stitch-codegen's choice where it is not among them."""
    from fsir.tune.cli import model_tuner
    from fsir.tune.database import Database
    from fsir.tune.measure import MeasureInput, ModelBackend, PoolMeasurer
    from fsir.tune.search import SearchMode, SearchOptions

    tuner = model_tuner(text, options, task, SearchOptions(mode=SearchMode.FAST, measurer_name="cuda"),
                        PoolMeasurer(ModelBackend(), workers=0), Database(None))
    ranked = sorted((c for c in tuner.ranked_space() if math.isfinite(c.prior_seconds)),
                    key=lambda c: c.prior_seconds)
    out: dict[Any, Candidate] = {}
    for c in ranked:
        if len(out) == top:
            break
        out.setdefault(c.trace, Candidate(c.description, MeasureInput(tuner.task, c.trace), len(out)))
    default = tuner.default_checked()
    if default is not None and default.trace not in out:
        out[default.trace] = Candidate(default.description, MeasureInput(tuner.task, default.trace), -1)
    return list(out.values())


# -- measuring ---------------------------------------------------------------------------
def measure_all(kernels: list[list[Candidate]], workers: int, cuda: Any, model: Any, deadline: float,
                clock: Callable[[], float], on_case: Callable[[str], None]) -> bool:
    """Time every candidate on both measurers until `deadline`; True when all were.
    Each candidate is built once (as the model measurer builds it: with ptxas's register
    count) and the build timed by both; with `workers`, builds and simulations run in
    that many processes while this one times the builds on the GPU as they come."""
    from fsir.tune.measure import MeasureResult

    flat = [c for cs in kernels for c in cs]
    if workers <= 0:
        for c in flat:
            if clock() >= deadline:
                return False
            on_case(f"tuner {c.inp.task.kernel} {c.config}")
            built = model.build(c.inp)
            if isinstance(built, MeasureResult):
                record(c, built, "build")
                continue
            record(c, cuda.time(c.inp, built), "cuda_s")
            record(c, model.time(c.inp, built), "model_s")
        return True
    import multiprocessing as mp

    pool = cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"))
    try:
        builds = [pool.submit(build_job, model, c.inp) for c in flat]
        models: dict[cf.Future, Candidate] = {}
        for c, fut in zip(flat, builds):
            if clock() >= deadline:  # a finished build would not wait for the timeout
                raise cf.TimeoutError
            built = fut.result(timeout=max(0.0, deadline - clock()))
            if isinstance(built, MeasureResult):
                record(c, built, "build")
                continue
            models[pool.submit(time_job, model, c.inp, built)] = c  # queued behind the builds
            on_case(f"tuner {c.inp.task.kernel} {c.config}")
            record(c, cuda.time(c.inp, built), "cuda_s")
        for fut in cf.as_completed(models, timeout=max(0.0, deadline - clock())):
            record(models[fut], fut.result(), "model_s")
    except cf.TimeoutError:
        abandon(pool)  # past the cap: the simulations still running are not waited for
        return False
    except BaseException:
        abandon(pool)  # a broken pool or an interrupt: no worker is left behind
        raise
    pool.shutdown()
    return True


def abandon(pool: cf.ProcessPoolExecutor) -> None:
    """Kill `pool`'s own workers (by their ids) and drop what it has queued."""
    for p in list(getattr(pool, "_processes", {}).values()):
        if p.is_alive():
            with contextlib.suppress(ProcessLookupError):  # it may exit between the check and the kill
                os.kill(p.pid, 9)
    pool.shutdown(wait=False, cancel_futures=True)


def record(c: Candidate, result: Any, slot: str) -> None:
    if result.ok and result.seconds:
        setattr(c, slot, result.seconds)
    else:
        c.error = c.error or f"{slot.removesuffix('_s')}: {result.error}: {result.detail}"


# -- the table ---------------------------------------------------------------------------
def row_of(task: Any, cs: list[Candidate]) -> TunerRow:
    """`task`'s row (a `fsir.tune.task.Task`) from its measured candidates `cs`."""
    from scipy.stats import kendalltau, spearmanr

    measured = [c for c in cs if c.cuda_s is not None]
    pairs = [c for c in measured if c.model_s is not None]
    rho = tau = None
    if len(pairs) >= 2:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a constant column: no correlation (nan)
            rho = float(spearmanr([c.model_s for c in pairs], [c.cuda_s for c in pairs]).statistic)
            tau = float(kendalltau([c.model_s for c in pairs], [c.cuda_s for c in pairs]).statistic)
    best = min(measured, key=lambda c: c.cuda_s or math.inf, default=None)
    pick = min(pairs, key=lambda c: c.model_s or math.inf, default=None)
    first = next((c for c in cs if c.prior_rank == 0), None)
    default = next((c for c in cs if c.config == task.default_config), None)

    def us(c: Candidate | None) -> float | None:
        return None if c is None or c.cuda_s is None else c.cuda_s * 1e6

    def gap(c: Candidate | None) -> float | None:
        if c is None or c.cuda_s is None or best is None or not best.cuda_s:
            return None
        return 100.0 * (c.cuda_s / best.cuda_s - 1.0)

    return TunerRow(task.kernel, task.mapping, len(cs), len(pairs), rho, tau, us(best),
                    best.config if best else "-", pick.config if pick else "-", us(pick), gap(pick), us(first),
                    gap(first), task.default_config, us(default))
