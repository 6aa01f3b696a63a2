"""The task scheduler on synthetic tasks (a task's best time after t trials is a
known curve): round-robin gives equal rounds; the gradient scheduler spends the rounds
where the weighted objective falls, reaches round-robin's final objective with fewer
trials, drops exhausted tasks and spends exactly the budget."""

from __future__ import annotations

import math
from dataclasses import dataclass

from fsir.tune.scheduler import SchedTask, SchedulerOptions, Strategy, TaskScheduler


@dataclass
class Curve:
    """A fake tuner: best time start → floor, exponentially in the trials spent; a
    space of `size` candidates."""

    start: float
    floor: float
    tau: float
    size: int = 10**9
    spent: int = 0

    def step(self, n: int) -> int:
        n = min(n, self.size - self.spent)
        self.spent += n
        return n

    def best_seconds(self) -> float:
        if self.spent == 0:
            return math.inf
        return self.floor + (self.start - self.floor) * math.exp(-self.spent / self.tau)


def tasks(weights=(1, 1, 1, 1)) -> list[SchedTask]:
    # one task with much to gain, three nearly tuned already
    curves = [Curve(100.0, 20.0, 40.0), Curve(10.0, 9.0, 8.0), Curve(10.0, 9.5, 8.0), Curve(5.0, 4.8, 8.0)]
    return [SchedTask(c, w, c.start, "gemm" if i < 2 else "row", f"k{i}") for i, (c, w) in
            enumerate(zip(curves, weights))]


def run(strategy: Strategy, trials: int, weights=(1, 1, 1, 1), seed: int = 0):
    ts = tasks(weights)
    sched = TaskScheduler(ts, SchedulerOptions(strategy, round_trials=4, seed=seed))
    return ts, sched, sched.run(trials)


def test_round_robin_gives_equal_rounds_and_spends_the_budget():
    ts, sched, curve = run(Strategy.ROUND_ROBIN, 160)
    assert [t.trials for t in ts] == [40, 40, 40, 40]
    assert sched.trials == 160 and curve[-1].trials == 160
    assert [p.task for p in curve[:8]] == [0, 1, 2, 3, 0, 1, 2, 3]


def test_gradient_spends_where_the_objective_falls():
    ts, sched, curve = run(Strategy.GRADIENT, 160)
    assert sched.trials == 160
    assert all(t.rounds >= 1 for t in ts)  # the warm-up: every task once
    assert ts[0].trials >= 60 and all(ts[0].trials > t.trials for t in ts[1:])  # most to gain, most rounds
    objective = [p.objective for p in curve if math.isfinite(p.objective)]
    assert objective == sorted(objective, reverse=True)


def test_gradient_reaches_round_robins_objective_with_fewer_trials():
    _, _, rr = run(Strategy.ROUND_ROBIN, 160)
    target = rr[-1].objective
    for seed in range(5):
        _, _, grad = run(Strategy.GRADIENT, 160, seed=seed)
        reached = next(p.trials for p in grad if p.objective <= target)
        assert reached <= 0.6 * 160


def test_weights_count_launches():
    # the nearly tuned task 1 launched 50 times outweighs task 0's larger gains
    light, _, _ = run(Strategy.GRADIENT, 120)
    heavy, _, _ = run(Strategy.GRADIENT, 120, weights=(1, 50, 1, 1))
    assert heavy[1].trials > light[1].trials


def test_similar_tasks_bound_the_forward_estimate():
    ts = tasks()
    sched = TaskScheduler(ts, SchedulerOptions(round_trials=4))
    for t in ts:
        assert t.tuner.step(4) == 4
        t.rounds, t.trials, t.history = 1, 4, [t.tuner.best_seconds()]
    # task 1 is as fast (relative to its work) as task 0 can be told it would be: with
    # β = 2 the similarity guess is worse than the rate guess (g - g/1 = 0), so only
    # the rate term counts; a task alone in its group has only the rate term
    g0 = ts[0].tuner.best_seconds()
    assert math.isclose(sched.gradient(0), (1 - 0.2) * (0 - g0))
    # after many rounds the rate guess is small; the similar task's speed bounds it
    ts[1].rounds = 100
    g1 = ts[1].tuner.best_seconds()
    speed0 = ts[0].work / g0
    expect = (1 - 0.2) * (min(g1 - g1 / 100, 2 * ts[1].work / speed0) - g1)
    assert math.isclose(sched.gradient(1), expect)


def test_exhausted_tasks_drop_out():
    ts = tasks()
    curve = ts[0].tuner
    assert isinstance(curve, Curve)
    curve.size = 6  # a space of 6 candidates
    sched = TaskScheduler(ts, SchedulerOptions(Strategy.GRADIENT, round_trials=4))
    sched.run(100)
    assert ts[0].trials == 6 and not ts[0].live
    assert sched.trials == 100


def test_launches_count_kernels_equal_up_to_names():
    """Two GEMMs equal up to names are one task of weight 2; a third of another shape
    is a task of weight 1."""
    from fsir.pipeline import PipelineOptions
    from fsir.tune.measure import stitched_from_text
    from fsir.tune.task import discover

    a, b, c, w, r = "tensor<64x32xf32>", "tensor<32x48xf32>", "tensor<64x48xf32>", "tensor<32x16xf32>", \
        "tensor<64x16xf32>"
    text = f"""
func.func @f(%a: {a}, %b: {b}, %x: {a}, %y: {b}, %p: {w}) -> ({c}, {c}, {r}) {{
  %d = graph.dot %a, %b : ({a}, {b}) -> {c}
  %e = graph.dot %x, %y : ({a}, {b}) -> {c}
  %q = graph.dot %a, %p : ({a}, {w}) -> {r}
  func.return %d, %e, %q : {c}, {c}, {r}
}}
"""
    options = PipelineOptions(fusion="stitch", gpu="H100")
    tasks = discover(stitched_from_text(text, options), options)
    assert sorted(t.launches for t in tasks) == [1, 2]
