"""The task scheduler across a model's kernels (Ansor §6): which task gets the next
round of measurements.

The objective is the model's end-to-end time under the measurer,
f = Σᵢ wᵢ gᵢ(t), where gᵢ is task i's best time after tᵢ rounds and wᵢ the number
of launches that share its kernel. The warm-up measures today's choice of every task
(`warmup` measurements each, one by default: stitch-codegen's choice is a measured
starting point and the prior needs one measured candidate to be calibrated against).
Then every round goes to the task of the most negative estimated gradient ∂f/∂tᵢ:

    ∂f/∂tᵢ ≈ wᵢ (α (gᵢ(tᵢ) − gᵢ(tᵢ − Δt)) / Δt                (backward: recent gains)
                 + (1 − α) (min(ĝᵢ, β Cᵢ / max_{k∈N(i)} Vₖ) − gᵢ))   (forward)

The forward term is the lower of two guesses of gᵢ one round later: ĝᵢ, and task i
reaching the speed of the fastest structurally similar task N(i) (same mapping), with
Cᵢ the task's work and Vₖ = Cₖ / gₖ. Ansor's ĝᵢ is gᵢ − gᵢ/tᵢ, the gains continuing
at an optimistic average rate (0 for every task right after the warm-up, tᵢ = 1: the
first rounds go by weighted time). With `prior=True`, ĝᵢ is instead the
latency-evaluator's estimate of the round the task's search measures next
(`Steppable.outlook`: the round's lowest prior times the median measured / prior of
the task's candidates), Ansor's rate guess only where the prior has no estimate. It
is not the default: on the BERT layer and ResNet-50 (docs/tuning.md, Measured) it
ends lower than Ansor's guess on one budget and higher on two, committing many rounds
to one kernel: a round's lowest prior is the likeliest to be too low, and once the
prior sees no gain in the other kernels the similarity term alone keeps promising one.
Ansor measures work in FLOPs; fsir's kernels are as often bound by memory as by
arithmetic, so a task's work here is the latency-evaluator's estimate of today's
choice (prior seconds): Vₖ is then how much faster than its prior a task of the same
mapping became. With probability ε a random live task is picked instead (ε-greedy); a
task whose space is exhausted drops out. α, β, Δt and ε are TVM's defaults (0.2, 2, 3
rounds, 0.05).

`ROUND_ROBIN` (the alternative, and the ablation) gives every task a round in turn
after the same warm-up.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol


class Strategy(StrEnum):
    GRADIENT = "gradient"
    ROUND_ROBIN = "round-robin"


@dataclass(frozen=True)
class SchedulerOptions:
    strategy: Strategy = Strategy.GRADIENT
    round_trials: int = 8  # measurements per round given to the chosen task
    alpha: float = 0.2  # weight of the backward (history) term
    beta: float = 2.0  # trust in the similar tasks' speed (≥ 1: pessimistic)
    window: int = 3  # Δt, rounds
    epsilon: float = 0.05
    seed: int = 0
    warmup: int = 1  # measurements per task before the gradient decides (today's choice first)
    prior: bool = False  # the prior's outlook as the forward guess instead of Ansor's rate guess


class Steppable(Protocol):
    """What the scheduler drives (a `search.Tuner`)."""

    def step(self, n: int) -> int: ...

    def best_seconds(self) -> float: ...

    def outlook(self, n: int) -> float:
        """The best time expected after `n` more measurements (nan: no estimate)."""
        ...


@dataclass
class SchedTask:
    """One task under the scheduler: its tuner, weight (launches sharing the kernel),
    work (prior seconds of today's choice), similarity group (its mapping)."""

    tuner: Steppable
    weight: int
    work: float
    group: str
    name: str = ""
    rounds: int = 0
    trials: int = 0
    history: list[float] = field(default_factory=list)  # best seconds after each of its rounds
    live: bool = True


@dataclass(frozen=True)
class Point:
    """The objective after a round: trials spent in all, f = Σ wᵢ gᵢ (inf until every
    task has a measurement), and the task that got the round."""

    trials: int
    objective: float
    task: int


class TaskScheduler:
    def __init__(self, tasks: Sequence[SchedTask], options: SchedulerOptions = SchedulerOptions(),
                 on_round: Callable[[Point], None] | None = None):
        self.tasks = list(tasks)
        self.options = options
        self.rng = random.Random(options.seed)
        self.on_round = on_round
        self.curve: list[Point] = []
        self.trials = 0
        self._next_rr = 0

    def objective(self) -> float:
        return sum(t.weight * t.tuner.best_seconds() for t in self.tasks)

    def run(self, trials: int) -> list[Point]:
        """Spend `trials` measurements over the tasks; the objective after each round."""
        while self.trials < trials:
            i = self.pick()
            if i is None:
                break  # every space exhausted
            task = self.tasks[i]
            n = self.options.warmup if task.rounds == 0 else self.options.round_trials
            spent = task.tuner.step(min(n, trials - self.trials))
            if spent == 0:
                task.live = False
                continue
            task.rounds += 1
            task.trials += spent
            task.history.append(task.tuner.best_seconds())
            self.trials += spent
            point = Point(self.trials, self.objective(), i)
            self.curve.append(point)
            if self.on_round is not None:
                self.on_round(point)
        return self.curve

    def pick(self) -> int | None:
        live = [i for i, t in enumerate(self.tasks) if t.live]
        if not live:
            return None
        warm = [i for i in live if self.tasks[i].rounds == 0 or not math.isfinite(self.tasks[i].tuner.best_seconds())]
        if self.options.strategy == Strategy.ROUND_ROBIN or warm:
            if warm and self.options.strategy == Strategy.GRADIENT:
                return warm[0]
            for _ in range(len(self.tasks)):
                i = self._next_rr
                self._next_rr = (self._next_rr + 1) % len(self.tasks)
                if self.tasks[i].live:
                    return i
            return None
        if self.rng.random() < self.options.epsilon:
            return self.rng.choice(live)
        grads = {i: self.gradient(i) for i in live}
        lo, hi = min(grads.values()), max(grads.values())
        if lo == hi:
            return self.rng.choice(live)
        return min(live, key=lambda i: grads[i])

    def gradient(self, i: int) -> float:
        """The estimate of ∂f/∂tᵢ (module docstring); ≤ 0."""
        o = self.options
        t = self.tasks[i]
        g = t.tuner.best_seconds()
        h = t.history
        backward = (h[-1] - h[-1 - o.window]) / o.window if len(h) > o.window else 0.0
        guess = t.tuner.outlook(o.round_trials) if o.prior else math.nan
        if not math.isfinite(guess):
            guess = g - g / max(1, t.rounds)  # Ansor's rate guess
        speeds = [k.work / k.tuner.best_seconds() for k in self.tasks
                  if k.group == t.group and k is not t and math.isfinite(k.tuner.best_seconds()) and k.work > 0]
        by_similar = o.beta * t.work / max(speeds) if speeds and t.work > 0 else math.inf
        forward = min(guess, by_similar) - g
        return t.weight * (o.alpha * backward + (1 - o.alpha) * forward)
