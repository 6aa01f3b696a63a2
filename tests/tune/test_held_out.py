"""The cost model's held-out-shape evaluation (`benchmarks/tune.py --rank`): one row
per task with enough candidates, in order, each ranked by a model that never saw it;
deterministic; and a residual the prior cannot see, learned on some GEMM shapes, ranks
another shape better than the prior. Times are synthetic (no measurement)."""

from __future__ import annotations

import math
import random

from scipy.stats import kendalltau
from tune_graphs import gemm

from fsir.pipeline import PipelineOptions
from fsir.tune import cost_model
from fsir.tune.cost_model import CostModel, Sample, held_out
from fsir.tune.measure import stitched_from_text
from fsir.tune.space import Checker, SketchKind, sample_valid, space_for, today_splits
from fsir.tune.task import capture, discover

H100 = PipelineOptions(fusion="stitch", gpu="H100")
SHAPES = ((128, 128, 256), (256, 128, 128), (128, 256, 512))


def shape(m: int, n: int, k: int, count: int) -> list[Sample]:
    """`count` mma candidates of an f16 GEMM, "measured" as the prior off by a factor
    growing with the k-step (which the prior does not see here by construction)."""
    text = gemm(m, n, k, "f16")
    stitched = stitched_from_text(text, H100)
    (task,) = discover(stitched, H100)
    request = capture(stitched, H100, task.key)
    space = space_for(request, today_splits(request)).narrowed({SketchKind.GEMM_MMA}, split=False)
    cands = sample_valid(Checker(request, space), random.Random(0), count).candidates[:count]
    return [Sample(task.key, c.features, c.prior_seconds, c.prior_seconds * math.exp(0.8 * math.log2(c.config.bk)))
            for c in cands]


def test_held_out_shapes_structure_and_transfer(monkeypatch):
    per = [shape(*s, 30) for s in SHAPES]
    few = [Sample("few", s.features, s.prior_seconds, s.seconds) for s in per[0][:3]]
    samples = [s for group in per for s in group] + few
    trained_on: list[set[str]] = []
    fit = CostModel.fit

    def spy(self, data):
        trained_on.append({s.task for s in data})
        return fit(self, data)

    monkeypatch.setattr(cost_model.CostModel, "fit", spy)
    rows = held_out(samples)
    keys = [g[0].task for g in per]
    assert [r.task for r in rows] == keys  # "few" (3 candidates) is not ranked
    assert [r.candidates for r in rows] == [len(g) for g in per]
    assert all(r.candidates >= 30 for r in rows)
    # each model trained on the other tasks only (the short one included)
    assert trained_on == [set(keys) - {k} | {"few"} for k in keys]
    for r, group in zip(rows, per):
        assert r.tau_prior == float(kendalltau([s.prior_seconds for s in group], [s.seconds for s in group]).statistic)
        assert -1 <= r.tau_model <= 1
        assert r.tau_model > r.tau_prior + 0.1  # the residual transfers across shapes
    assert held_out(samples) == rows  # deterministic
