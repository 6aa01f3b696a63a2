"""The learned cost model (Ansor §5.2, MetaSchedule's XGBoost model): gradient-boosted
trees on features of a candidate that need no lowering, with the latency-evaluator as
the prior.

The features (`features`) come from the mapping's summary of the candidate's schedule
kernel and the evaluator's estimate: instructions per thread by class, registers,
shared and global bytes, occupancy, waves, the launch, the tile shape (GEMM), the
arithmetic intensity and the prior itself. The model learns the residual
log(measured / prior): with no data its prediction is the prior, and what it learns
is where the prior is wrong. Targets are normalised per task (each task's residuals
centred), so tasks of different sizes train one model. It is retrained only when the
measured data grew by `RETRAIN_GROWTH` since the last training.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from fsir.codegen.latency import Estimate
from fsir.codegen.summary import Summary
from fsir.dialects.schedule import GemmParamsAttr, KernelOp, RowParamsAttr
from fsir.gpuspec import GpuSpec

CLASSES = ("alu", "int", "sfu", "global", "smem", "shuffle", "barrier", "tensor")
RETRAIN_GROWTH = 0.2
MIN_TRAIN = 8  # measured candidates before the first training


def features(kernel: KernelOp, summary: Summary, est: Estimate, spec: GpuSpec) -> tuple[float, ...]:
    """A candidate's feature vector (module docstring); logs of counts, so trees split
    on ratios."""
    grid, block = kernel.launch()
    blocks = math.prod(g for g in grid if g > 0)
    threads = math.prod(block)
    counts = [math.log1p(summary.counts.get(c, 0)) for c in CLASSES]
    flops = sum(summary.counts.get(c, 0) for c in ("alu", "tensor")) + sum(summary.tensor_fmas.values())
    intensity = flops / max(1.0, summary.global_bytes)
    p = kernel.params
    tile = (p.tile_m, p.tile_n, p.tile_k, p.thread_m, p.thread_n, p.split_k) if isinstance(p, GemmParamsAttr) \
        else (0, 0, 0, 0, 0, 0)
    row = (p.threads_per_row, p.rows_per_block, p.row_steps) if isinstance(p, RowParamsAttr) else (0, 0, 0)
    occ = est.occupancy
    prior = est.seconds if math.isfinite(est.seconds) else 1.0
    return (*counts, float(summary.registers), float(summary.shared_bytes), math.log1p(summary.global_bytes),
            math.log1p(summary.distinct_bytes or 0), math.log1p(summary.bytes_in_flight),
            float(occ.warps_per_sm), float(occ.blocks_per_sm), float(est.waves), math.log(max(1, blocks)),
            float(threads), float(p.vector_width), *(math.log2(max(1, t)) for t in tile), *row,
            math.log1p(intensity), blocks / spec.sms, math.log(prior))


@dataclass(frozen=True)
class Sample:
    """One measured candidate for training: its task, features, prior and time."""

    task: str
    features: tuple[float, ...]
    prior_seconds: float
    seconds: float


class Objective(Enum):
    """What the trees learn. `PAIRWISE` (XGBoost's rank:pairwise, each task a query, the
    prior's -log seconds as the base margin): the order of a task's candidates, as a
    correction of the prior's order; on held-out shapes (`benchmarks/tune.py --rank`) it
    ranks LayerNorm rows better than `RESIDUAL` and GEMMs about as well. `RESIDUAL`:
    log(measured / prior) by squared error, centred per task."""

    PAIRWISE = "pairwise"
    RESIDUAL = "residual"


@dataclass
class CostModel:
    """Predicts seconds = prior x exp(residual); `fit` retrains on growth only."""

    seed: int = 0
    objective: Objective = Objective.PAIRWISE
    trained_on: int = 0
    booster: object | None = None
    _offsets: dict[str, float] = field(default_factory=dict)

    def fit(self, samples: Sequence[Sample]) -> bool:
        """Retrain when the data grew by `RETRAIN_GROWTH` (returns whether it did)."""
        usable = [s for s in samples if s.seconds > 0 and math.isfinite(s.prior_seconds) and s.prior_seconds > 0]
        if len(usable) < MIN_TRAIN or len(usable) < (1 + RETRAIN_GROWTH) * self.trained_on:
            return False
        import numpy as np
        import xgboost as xgb

        residual = [math.log(s.seconds / s.prior_seconds) for s in usable]
        # per task: centre the residuals (the ranking within a task is what search needs;
        # a task's constant offset is kept to predict its absolute times)
        by_task: dict[str, list[float]] = {}
        for s, r in zip(usable, residual):
            by_task.setdefault(s.task, []).append(r)
        self._offsets = {t: sum(v) / len(v) for t, v in by_task.items()}
        params = {"max_depth": 4, "eta": 0.3, "seed": self.seed, "nthread": 1, "verbosity": 0}
        if self.objective == Objective.PAIRWISE:
            # a query per task, rows grouped by query as XGBoost requires; the label is
            # -log seconds (faster ranks higher), the margin starts at the prior's order
            order = list(by_task)
            usable.sort(key=lambda s: order.index(s.task))
            data = xgb.DMatrix(np.array([s.features for s in usable]),
                               label=np.array([-math.log(s.seconds) for s in usable]),
                               qid=np.array([order.index(s.task) for s in usable]),
                               base_margin=np.array([-math.log(s.prior_seconds) for s in usable]))
            params["objective"] = "rank:pairwise"
        else:
            y = np.array([math.log(s.seconds / s.prior_seconds) - self._offsets[s.task] for s in usable])
            data = xgb.DMatrix(np.array([s.features for s in usable]), label=y)
            params |= {"objective": "reg:squarederror", "subsample": 0.9}
        self.booster = xgb.train(params, data, num_boost_round=60)
        self.trained_on = len(usable)
        return True

    def predict(self, task: str, rows: Sequence[tuple[float, ...]], priors: Sequence[float]) -> list[float]:
        """Predicted seconds of candidates of `task` (the prior where untrained)."""
        if self.booster is None or not rows:
            return list(priors)
        import numpy as np
        import xgboost as xgb

        assert isinstance(self.booster, xgb.Booster)
        # without a base margin the booster gives the trees' correction alone: a
        # residual of log seconds, or (pairwise) a score where higher is faster
        out = self.booster.predict(xgb.DMatrix(np.array(rows)))
        sign = -1.0 if self.objective == Objective.PAIRWISE else 1.0
        offset = self._offsets.get(task, 0.0)
        return [p * math.exp(sign * float(r) + offset) for p, r in zip(priors, out)]


@dataclass(frozen=True)
class HeldOut:
    """One held-out task: how many candidates it ranks, and Kendall τ of the model's and
    the prior's predictions against the measured times (nan where a ranking is
    constant)."""

    task: str
    candidates: int
    tau_model: float
    tau_prior: float


def held_out(samples: Sequence[Sample], seed: int = 0, min_candidates: int = 4,
             objective: Objective = Objective.PAIRWISE) -> list[HeldOut]:
    """Leave one task out at a time: the model trained on every other task's samples
    ranks the held-out task's, in the order tasks first appear."""
    tasks = list(dict.fromkeys(s.task for s in samples))
    out = []
    for task in tasks:
        test = [s for s in samples if s.task == task]
        if len(test) < min_candidates:
            continue
        model = CostModel(seed=seed, objective=objective)
        model.fit([s for s in samples if s.task != task])
        priors = [s.prior_seconds for s in test]
        pred = model.predict(task, [s.features for s in test], priors)
        meas = [s.seconds for s in test]
        out.append(HeldOut(task, len(test), kendall_tau(pred, meas), kendall_tau(priors, meas)))
    return out


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's τ-b (ties counted as scipy counts them); nan where a ranking is constant."""
    from scipy.stats import kendalltau

    return float(kendalltau(a, b).statistic)  # type: ignore[attr-defined]  # scipy's result class is untyped
