"""Search strategies over a task's space (Ansor §5), each measuring `trials`
candidates, none twice (a candidate already in the log counts as measured).

- `EVOLUTION`: each round, a population of statically valid candidates (random
  annotations of the sketches, today's configurations, the best measured) evolves for
  a few generations by mutation, parents drawn in proportion to their fitness under
  the cost model (the prior times the learned residual); the round measures the best
  unmeasured predictions, and with probability ε a random candidate instead
  (ε-greedy); the model retrains as the data grows.
- `RANDOM`: uniformly sampled valid candidates.
- `FAST`: Roller's construction (`fsir/tune/construct.py`): a GEMM sketch's traces
  ranked by a tile model that builds no kernel, its top few dozen (and every trace of
  the small sketches) checked statically and ranked by the prior; the top `trials`
  measured.

The first candidate measured is today's choice, so a tuned kernel is never slower
than today's under the measurer.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from fsir.tune.construct import shortlist
from fsir.tune.cost_model import CostModel, Sample
from fsir.tune.database import Database, Record, fsir_version
from fsir.tune.measure import MeasureInput, Measurer, MeasureResult, TaskSource
from fsir.tune.space import Checked, Checker, Trace, sample_valid


class SearchMode(StrEnum):
    EVOLUTION = "full"
    RANDOM = "random"
    FAST = "fast"


@dataclass(frozen=True)
class SearchOptions:
    trials: int = 64
    batch: int = 8
    mode: SearchMode = SearchMode.EVOLUTION
    seed: int = 0
    population: int = 128
    generations: int = 3
    epsilon: float = 0.1
    measurer_name: str = "model"
    learn: bool = True  # train the cost model (False: the prior alone guides the evolution)
    prior: bool = True  # the latency-evaluator as the model's prior (False: the model alone, an ablation)


@dataclass
class TuneResult:
    best: Record | None
    default: Record | None  # today's choice, as measured
    history: list[float] = field(default_factory=list)  # best seconds so far, per trial
    samples: int = 0  # rule-valid random annotations checked
    rejected: int = 0  # ... of which the static checks rejected (built kernels)
    drawn: int = 0  # annotations drawn, rule-breaking ones (redrawn) included
    broke_rules: int = 0


class Tuner:
    """Tunes one task: `checker` (its space on a captured request) proposes, `measurer`
    measures, `db` records."""

    def __init__(self, task: TaskSource, mapping: str, checker: Checker, measurer: Measurer, db: Database,
                 options: SearchOptions, default_config: str | None = None,
                 on_trial: Callable[[MeasureResult], None] | None = None):
        self.task = task
        self.mapping = mapping
        self.checker = checker
        self.measurer = measurer
        self.db = db
        self.options = options
        self.rng = random.Random(options.seed)
        self.model = CostModel(seed=options.seed)
        self.default_config = default_config
        self.on_trial = on_trial
        self.samples = 0
        self.rejected = 0
        self.history: list[float] = []  # best seconds so far, per trial
        self.exhausted = False
        self._started = False
        self._shortlist: list[Checked] | None = None  # the fast mode's checked candidates
        self._pending: list[Checked] | None = None  # the next round, proposed by `outlook`
        opts = task.options
        self.measured: dict[Trace, Record] = {r.trace: r for r in db.of(task.key, opts.gpu, opts.arch)}

    # -- the loop ---------------------------------------------------------------------

    def run(self) -> TuneResult:
        """Spend `options.trials` measurements on the task."""
        budget = self.options.trials
        while budget > 0:
            spent = self.step(min(self.options.batch, budget))
            if not spent:
                break  # the space is exhausted
            budget -= spent
        return self.result()

    def step(self, n: int) -> int:
        """One round of at most `n` measurements (today's choice alone first, if it is
        not measured yet); returns how many were measured (0: the space is exhausted).
        The task scheduler drives tuners round by round through this."""
        if not self._started:
            self._started = True
            default = self._default_trace()
            if default is not None and default.trace not in self.measured:
                self.measure_batch([default])
                return 1
        pending, self._pending = self._pending or [], None
        batch = [c for c in pending if c.trace not in self.measured][:n] or self._propose(n)
        if not batch:
            self.exhausted = True
            return 0
        self.measure_batch(batch)
        return len(batch)

    def best_seconds(self) -> float:
        """The best time measured so far (inf before any success)."""
        return min([r.seconds for r in self.measured.values() if r.ok and r.seconds] or [math.inf])

    def outlook(self, n: int) -> float:
        """The prior's estimate of the best time after the next `n` measurements: the
        round is proposed here (and measured by the next `step`), its best candidate's
        prior scaled by the task's calibration, the median of measured / prior over the
        candidates measured (so a prior found optimistic on this task promises less);
        never above the best so far. nan before anything is measured or where no
        measured candidate has a prior."""
        g = self.best_seconds()
        if not self._started or not math.isfinite(g):
            return math.nan
        if self._pending is None:
            self._pending = self._propose(n)
        ratios = []
        for rec in self.measured.values():
            got = self.checker.check(rec.trace)
            if rec.ok and rec.seconds and isinstance(got, Checked) and 0 < got.prior_seconds < math.inf:
                ratios.append(rec.seconds / got.prior_seconds)
        if not ratios:
            return math.nan
        priors = [c.prior_seconds for c in self._pending[:n]]
        return min([g] + [statistics.median(ratios) * p for p in priors])

    def result(self) -> TuneResult:
        defaults = [r for r in self.measured.values() if r.config == self.default_config]
        draws = self.checker.space.draws
        return TuneResult(self.db.best(self.task.key, self.task.options.gpu, self.task.options.arch),
                          defaults[0] if defaults else None, list(self.history), self.samples, self.rejected,
                          draws["drawn"], draws["broke_rules"])

    def measure_batch(self, batch: list[Checked]) -> None:
        for res in self.measurer.measure([MeasureInput(self.task, t.trace) for t in batch]):
            self._record(res)
            self.history.append(self.best_seconds())
        if self.options.learn:
            self.model.fit(self.training_samples())

    def default_checked(self) -> Checked | None:
        """Today's choice as a candidate of the space (None: outside it)."""
        return self._default_trace()

    def _default_trace(self) -> Checked | None:
        for config in self.checker.space.fixed:
            if config.describe() == self.default_config:
                t = self.checker.space.trace_of(config)
                if t is None:
                    return None
                got = self.checker.check(t)
                # stitch-codegen built and chose it: measured even where a static check
                # (an estimate) refuses it, without a prior
                return got if isinstance(got, Checked) else Checked(t, config, config.describe(), math.inf, ())
        return None

    def _record(self, res: MeasureResult) -> None:
        space = self.checker.space
        try:
            config = space.config(res.trace).describe()
        except Exception:  # noqa: BLE001 (an invalid trace is still logged, by its hash)
            config = f"?{res.trace.digest()}"
        o = self.task.options
        rec = Record(self.task.key, self.mapping, config, res.trace, res.seconds, res.error, res.detail, o.gpu,
                     o.arch, self.options.measurer_name, fsir_version())
        self.db.add(rec)
        self.measured[res.trace] = rec
        if self.on_trial is not None:
            self.on_trial(res)

    def training_samples(self) -> list[Sample]:
        """The measured candidates as the cost model's training data."""
        out = []
        for rec in self.measured.values():
            got = self.checker.check(rec.trace)
            if rec.ok and isinstance(got, Checked) and rec.seconds:
                features, prior = self._seen(got)
                out.append(Sample(self.task.key, features, prior, rec.seconds))
        return out

    def _seen(self, c: Checked) -> tuple[tuple[float, ...], float]:
        """A candidate's features and prior as the model sees them: without the prior
        (the ablation) a constant prior and no prior feature, so the model learns
        log time from the summary's features alone."""
        if self.options.prior:
            return c.features, c.prior_seconds
        return (*c.features[:-1], 0.0), 1.0

    # -- proposals ---------------------------------------------------------------------

    def _sample(self, n: int) -> list[Checked]:
        got = sample_valid(self.checker, self.rng, n)
        self.samples += got.draws
        self.rejected += got.rejected
        return got.candidates

    def _propose(self, n: int) -> list[Checked]:
        mode = self.options.mode
        if mode == SearchMode.RANDOM:
            return self._fresh(self._sample(4 * n), n, key=None)
        if mode == SearchMode.FAST:
            return self._fresh(self.ranked_space(), n, key=lambda c: c.prior_seconds)
        return self._evolve(n)

    def _fresh(self, pool: list[Checked], n: int, key) -> list[Checked]:
        """`n` unmeasured candidates of `pool`, in `key` order (None: pool order)."""
        seen: set[Trace] = set()
        out = []
        for c in (sorted(pool, key=key) if key is not None else pool):
            if c.trace not in self.measured and c.trace not in seen and math.isfinite(c.prior_seconds):
                seen.add(c.trace)
                out.append(c)
                if len(out) == n:
                    break
        return out

    def ranked_space(self) -> list[Checked]:
        """The fast mode's statically checked shortlist (built once)."""
        if self._shortlist is None:
            got = [self.checker.check(t) for t in shortlist(self.checker.request, self.checker.space, self.rng)]
            self._shortlist = [c for c in got if isinstance(c, Checked)]
            self.samples += len(got)
            self.rejected += len(got) - len(self._shortlist)
        return self._shortlist

    def _predict(self, cands: list[Checked]) -> list[float]:
        seen = [self._seen(c) for c in cands]
        return self.model.predict(self.task.key, [f for f, _ in seen], [p for _, p in seen])

    def _evolve(self, n: int) -> list[Checked]:
        opts = self.options
        best = sorted((r for r in self.measured.values() if r.ok), key=lambda r: r.seconds or math.inf)[:8]
        seeds = [self.checker.check(r.trace) for r in best]
        seeds += [self.checker.check(t) for t in map(self.checker.space.trace_of, self.checker.space.fixed)
                  if t is not None]
        population = [c for c in seeds if isinstance(c, Checked)] + self._sample(opts.population)
        pool: dict[Trace, Checked] = {c.trace: c for c in population}
        for _ in range(opts.generations):
            population = self._generation(population)
            pool.update((c.trace, c) for c in population)
        cands = [c for c in pool.values() if c.trace not in self.measured and math.isfinite(c.prior_seconds)]
        ranked = [c for _, c in sorted(zip(self._predict(cands), cands), key=lambda pc: pc[0])]
        out: list[Checked] = []
        randoms = self._fresh(self._sample(n), n, key=None)
        for _ in range(n):
            explore = self.rng.random() < opts.epsilon and randoms
            src = randoms if explore else ranked
            while src and (src[0].trace in self.measured or any(src[0].trace == o.trace for o in out)):
                src.pop(0)
            if src:
                out.append(src.pop(0))
        return out

    def _generation(self, population: list[Checked]) -> list[Checked]:
        """Children by mutation of parents drawn by fitness (1 / predicted time),
        the fittest quarter kept (elitism)."""
        if not population:
            return population
        predicted = self._predict(population)
        fitness = [1 / p if p > 0 and math.isfinite(p) else 0.0 for p in predicted]
        if not any(fitness):
            fitness = [1.0] * len(population)
        order = sorted(range(len(population)), key=lambda i: -fitness[i])
        elite = [population[i] for i in order[: max(1, len(population) // 4)]]
        children: dict[Trace, Checked] = {c.trace: c for c in elite}
        for _ in range(len(population) * 2):
            if len(children) >= len(population):
                break
            parent = self.rng.choices(population, weights=fitness)[0]
            child = self.checker.check(self.checker.space.mutate(parent.trace, self.rng))
            if isinstance(child, Checked):
                children.setdefault(child.trace, child)
        return list(children.values())
