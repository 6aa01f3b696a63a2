"""The task scheduler on synthetic tasks (a task's best time after t trials is a
known curve, the prior's outlook that curve times a bias): the warm-up measures one
candidate per task; round-robin gives equal rounds; the gradient scheduler spends the
rounds where the weighted objective falls, follows the prior's outlook before the
measurements say anything, reaches round-robin's final objective with fewer trials,
drops exhausted tasks and spends exactly the budget. On a real task, the tuner's
outlook is the prior calibrated on its measurements, and the round it proposes is the
round it measures."""

from __future__ import annotations

import math
from dataclasses import dataclass

from fsir.tune.scheduler import SchedTask, SchedulerOptions, Strategy, TaskScheduler


@dataclass
class Curve:
    """A fake tuner: best time start → floor, exponentially in the trials spent; a
    space of `size` candidates; a prior whose outlook is the curve's next value times
    `bias` (nan: no prior)."""

    start: float
    floor: float
    tau: float
    size: int = 10**9
    spent: int = 0
    bias: float = 1.0

    def step(self, n: int) -> int:
        n = min(n, self.size - self.spent)
        self.spent += n
        return n

    def best_seconds(self) -> float:
        if self.spent == 0:
            return math.inf
        return self.at(self.spent)

    def at(self, spent: int) -> float:
        return self.floor + (self.start - self.floor) * math.exp(-spent / self.tau)

    def outlook(self, n: int) -> float:
        return min(self.best_seconds(), self.bias * self.at(self.spent + n)) if self.spent else math.nan


def tasks(weights=(1, 1, 1, 1)) -> list[SchedTask]:
    # one task with much to gain, three nearly tuned already
    curves = [Curve(100.0, 20.0, 40.0), Curve(10.0, 9.0, 8.0), Curve(10.0, 9.5, 8.0), Curve(5.0, 4.8, 8.0)]
    return [SchedTask(c, w, c.start, "gemm" if i < 2 else "row", f"k{i}") for i, (c, w) in
            enumerate(zip(curves, weights))]


def run(strategy: Strategy, trials: int, weights=(1, 1, 1, 1), seed: int = 0, prior: bool = True):
    ts = tasks(weights)
    sched = TaskScheduler(ts, SchedulerOptions(strategy, round_trials=4, seed=seed, prior=prior))
    return ts, sched, sched.run(trials)


def test_round_robin_gives_equal_rounds_and_spends_the_budget():
    ts, sched, curve = run(Strategy.ROUND_ROBIN, 160)
    # the warm-up (one each), then 39 rounds of 4 in turn
    assert [t.trials for t in ts] == [41, 41, 41, 37]
    assert sched.trials == 160 and curve[-1].trials == 160
    assert [p.task for p in curve[:8]] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert [p.trials for p in curve[:6]] == [1, 2, 3, 4, 8, 12]


def test_the_warm_up_measures_one_candidate_per_task():
    for strategy in Strategy:
        _, _, curve = run(strategy, 40)
        assert [(p.task, p.trials) for p in curve[:4]] == [(0, 1), (1, 2), (2, 3), (3, 4)]
        assert math.isfinite(curve[3].objective) and not math.isfinite(curve[2].objective)


def test_gradient_spends_where_the_objective_falls():
    ts, sched, curve = run(Strategy.GRADIENT, 160, prior=False)
    assert sched.trials == 160
    assert all(t.rounds >= 1 for t in ts)  # the warm-up: every task once
    assert ts[0].trials >= 60 and all(ts[0].trials > t.trials for t in ts[1:])  # most to gain, most rounds
    objective = [p.objective for p in curve if math.isfinite(p.objective)]
    assert objective == sorted(objective, reverse=True)
    # with the prior: task 0 first after the warm-up, until its gains slow; then task 1,
    # its group's similarity term (task 0 became 3x faster than its work, task 1 did
    # not) promising more than task 0's next round; tasks 2 and 3 (nearly tuned, another
    # group) all but left alone
    ts, sched, curve = run(Strategy.GRADIENT, 160)
    assert [p.task for p in curve[4:12]] == [0] * 8
    assert ts[0].trials >= 60 and ts[2].trials + ts[3].trials <= 12


def test_gradient_reaches_round_robins_objective_with_fewer_trials():
    for budget in (160, 48):
        _, _, rr = run(Strategy.ROUND_ROBIN, budget)
        target = rr[-1].objective
        for prior in (True, False):
            for seed in range(5):
                _, _, grad = run(Strategy.GRADIENT, budget, seed=seed, prior=prior)
                reached = next(p.trials for p in grad if p.objective <= target)
                assert reached <= 0.6 * budget, (budget, prior, seed)


def contrast(prior: bool, bias: float = 1.0):
    """A long kernel that is nearly tuned and a shorter one with much to gain: after
    the warm-up Ansor's rate guess (gᵢ − gᵢ/1 = 0) favours the longer, the prior the one
    that gains."""
    big, gain = Curve(50.0, 49.0, 8.0, bias=bias), Curve(30.0, 10.0, 20.0, bias=bias)
    ts = [SchedTask(big, 1, 50.0, "gemm", "big"), SchedTask(gain, 1, 30.0, "row", "gain")]
    sched = TaskScheduler(ts, SchedulerOptions(round_trials=4, epsilon=0.0, prior=prior))
    return ts, sched.run(18)


def test_the_priors_outlook_steers_the_first_rounds():
    ts, curve = contrast(prior=True)
    assert [p.task for p in curve[2:6]] == [1, 1, 1, 1]  # every round to the task that gains
    ansor, ansor_curve = contrast(prior=False)
    assert ansor_curve[2].task == 0  # the longer kernel first
    assert ansor[0].trials > ts[0].trials
    assert curve[-1].objective < ansor_curve[-1].objective
    # a prior that promises nothing: after the warm-up, no forward term (and no history)
    big, gain = Curve(50.0, 49.0, 8.0, bias=10.0), Curve(30.0, 10.0, 20.0, bias=10.0)
    flat = TaskScheduler([SchedTask(big, 1, 50.0, "gemm"), SchedTask(gain, 1, 30.0, "row")],
                         SchedulerOptions(prior=True))
    flat.run(2)
    assert flat.gradient(0) == 0.0 and flat.gradient(1) == 0.0
    assert TaskScheduler(flat.tasks, SchedulerOptions(prior=False)).gradient(1) == -0.8 * gain.best_seconds()


def test_weights_count_launches():
    # the nearly tuned task 1 launched 50 times outweighs task 0's larger gains
    light, _, _ = run(Strategy.GRADIENT, 120)
    heavy, _, _ = run(Strategy.GRADIENT, 120, weights=(1, 50, 1, 1))
    assert heavy[1].trials > light[1].trials


def test_similar_tasks_bound_the_forward_estimate():
    ts = tasks()
    sched = TaskScheduler(ts, SchedulerOptions(round_trials=4))  # Ansor's terms as written (the default)
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
    # with the prior its outlook takes the rate guess's place, the similarity bound kept
    with_prior = TaskScheduler(ts, SchedulerOptions(round_trials=4, prior=True))
    assert math.isclose(with_prior.gradient(0), (1 - 0.2) * (ts[0].tuner.outlook(4) - g0))
    assert math.isclose(with_prior.gradient(1), (1 - 0.2) * (min(ts[1].tuner.outlook(4), 2 * ts[1].work / speed0)
                                                             - g1))


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


class ScaledPrior:
    """A measurer timing today's choice at `today` × its prior and every other candidate
    at `other` × its prior; it records what it was asked."""

    def __init__(self, checker, default: str | None, today: float, other: float):
        self.checker, self.default, self.today, self.other = checker, default, today, other
        self.asked: list = []

    def measure(self, batch):
        from fsir.tune.measure import MeasureResult
        from fsir.tune.space import Checked

        out = []
        for inp in batch:
            self.asked.append(inp.trace)
            got = self.checker.check(inp.trace)
            assert isinstance(got, Checked)
            factor = self.today if got.description == self.default else self.other
            out.append(MeasureResult(inp.trace, factor * got.prior_seconds))
        return out


def test_the_tuners_outlook_is_the_calibrated_prior_of_the_round_it_measures_next():
    from tune_graphs import gemm

    from fsir.pipeline import PipelineOptions
    from fsir.tune.database import Database
    from fsir.tune.measure import TaskSource, stitched_from_text
    from fsir.tune.search import SearchMode, SearchOptions, Tuner
    from fsir.tune.space import Checker, space_for, today_splits
    from fsir.tune.task import capture, discover

    options = PipelineOptions(fusion="stitch", gpu="H100")
    text = gemm(128, 128, 128, "f16")
    stitched = stitched_from_text(text, options)
    (task,) = discover(stitched, options)
    request = capture(stitched, options, task.key)
    checker = Checker(request, space_for(request, today_splits(request)))
    # the prior is right about today's choice and 3x optimistic about the others
    measurer = ScaledPrior(checker, task.default_config, 1.0, 3.0)
    search = SearchOptions(mode=SearchMode.FAST, seed=0, learn=False)
    tuner = Tuner(TaskSource(text, options, task.key, task.kernel), task.mapping, checker, measurer, Database(None),
                  search, task.default_config)
    assert math.isnan(tuner.outlook(4))  # nothing measured: no calibration
    assert tuner.step(1) == 1
    g = tuner.best_seconds()
    expect = tuner.outlook(4)
    pending = tuner._pending
    assert pending is not None and len(pending) == 4
    # calibrated on today's choice alone (ratio 1): the round's best prior, or no gain
    assert expect == min(g, min(c.prior_seconds for c in pending)) and expect < g
    assert tuner.step(4) == 4 and measurer.asked[1:] == [c.trace for c in pending]
    # 4 of 5 measured at 3x their prior: the median ratio is 3, the next round promises 3x its prior
    later = tuner.outlook(4)
    nxt = tuner._pending
    assert nxt is not None and not {c.trace for c in nxt} & set(measurer.asked)
    assert later == min(tuner.best_seconds(), 3.0 * min(c.prior_seconds for c in nxt))
