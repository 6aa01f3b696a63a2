"""The fast mode (Roller's construction): it statically checks a shortlist of a few
hundred candidates at most, not the space, and on tensor-core GEMMs the prior's best
of that shortlist is as good as the prior's best of a large random sample of the
whole space."""

from __future__ import annotations

import random

import pytest
from tune_graphs import gemm

from fsir.codegen.gemm_config import GemmConfig
from fsir.pipeline import PipelineOptions
from fsir.tune.construct import SHORTLIST, shortlist, tile_seconds
from fsir.tune.database import Database
from fsir.tune.measure import MeasureInput, MeasureResult, TaskSource, stitched_from_text
from fsir.tune.search import SearchMode, SearchOptions, Tuner
from fsir.tune.space import Checked, Checker, GemmSketch, Rejected, Rejection, sample_valid, space_for, today_splits
from fsir.tune.task import capture, discover

H100 = PipelineOptions(fusion="stitch", gpu="H100")


def task_of(text: str):
    stitched = stitched_from_text(text, H100)
    (task,) = discover(stitched, H100)
    request = capture(stitched, H100, task.key)
    return task, request, space_for(request, today_splits(request))


class PriorMeasurer:
    """Times each candidate by its prior (counts what it was asked)."""

    def __init__(self, checker: Checker):
        self.checker = checker
        self.asked = 0

    def measure(self, batch: list[MeasureInput]) -> list[MeasureResult]:
        self.asked += len(batch)
        out = []
        for inp in batch:
            got = self.checker.check(inp.trace)
            assert isinstance(got, Checked)
            out.append(MeasureResult(inp.trace, got.prior_seconds))
        return out


@pytest.mark.parametrize("shape", [(1024, 1024, 1024), (16, 1024, 1024)])
def test_the_shortlist_keeps_the_priors_best(shape):
    task, request, space = task_of(gemm(*shape, "f16"))
    checker = Checker(request, space)
    short = [c for c in map(checker.check, shortlist(request, space, random.Random(0))) if isinstance(c, Checked)]
    sketches = sum(isinstance(s, GemmSketch) for s in space.sketches)
    assert len(short) <= sketches * 3 * SHORTLIST + len(space.fixed)
    sample = sample_valid(Checker(request, space), random.Random(0), 300).candidates
    assert len(sample) == 300
    assert min(c.prior_seconds for c in short) <= 1.05 * min(c.prior_seconds for c in sample)
    # today's configurations are in it
    assert {c.describe() for c in space.fixed} <= {c.description for c in short}


def test_fast_mode_checks_the_shortlist_only_and_measures_the_priors_top():
    task, request, space = task_of(gemm(512, 512, 512, "f16"))
    checker = Checker(request, space)
    measurer = PriorMeasurer(checker)
    src = TaskSource(gemm(512, 512, 512, "f16"), H100, task.key, task.kernel)
    tuner = Tuner(src, task.mapping, checker, measurer, Database(None),
                  SearchOptions(trials=5, batch=5, mode=SearchMode.FAST), task.default_config)
    result = tuner.run()
    assert measurer.asked == 5
    assert result.default is not None and result.best is not None
    assert result.best.seconds is not None and result.default.seconds is not None
    assert result.best.seconds <= result.default.seconds
    # the checks built a few hundred kernels, not the space's 20,000
    built = len(checker._cache)
    assert built <= 2 * 3 * SHORTLIST + len(space.fixed)
    assert space.size() > 50 * built


def test_the_tile_model_refuses_blocks_that_fit_no_sm_and_prefers_micro_tiles():
    _, request, space = task_of(gemm(1024, 1024, 1024, "f16"))
    fma = next(s for s in space.sketches if isinstance(s, GemmSketch) and s.math.value == "fma")
    assert tile_seconds(GemmConfig(512, 512, 64, 8, 8), fma, request.spec, 2) == float("inf")  # 4096 threads
    # the same 32x32 tile on 64 threads of 4x4 or 1,024 of 1x1: one shared load feeds
    # one FMA in the 4x4 micro-tile against a fifth of one in the 1x1
    micro, flat = GemmConfig(32, 32, 16, 4, 4), GemmConfig(32, 32, 16, 1, 1)
    assert 0 < tile_seconds(micro, fma, request.spec, 2) < tile_seconds(flat, fma, request.spec, 2) < float("inf")


class RefusingChecker(Checker):
    """Static checks that refuse every candidate (as an estimate over a limit would)."""

    def _check(self, trace):
        return Rejected(trace, Rejection.REGISTERS, "refused by the test")


class ConstantMeasurer:
    def __init__(self):
        self.asked: list = []

    def measure(self, batch):
        self.asked += [inp.trace for inp in batch]
        return [MeasureResult(inp.trace, 1e-6) for inp in batch]


def test_todays_choice_is_measured_even_where_a_static_check_refuses_it():
    task, request, space = task_of(gemm(256, 256, 256, "f16"))
    measurer = ConstantMeasurer()
    src = TaskSource(gemm(256, 256, 256, "f16"), H100, task.key, task.kernel)
    tuner = Tuner(src, task.mapping, RefusingChecker(request, space), measurer, Database(None),
                  SearchOptions(trials=4, batch=4, mode=SearchMode.FAST), task.default_config)
    result = tuner.run()
    (today,) = [c for c in space.fixed if c.describe() == task.default_config]
    assert measurer.asked == [space.trace_of(today)]  # nothing else passes the checks
    assert result.default is not None and result.default.config == task.default_config
