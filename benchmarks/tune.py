"""Tuning on the `model` measurer: evolutionary search (with the cost model) against
random search over the same space, best-so-far against trials over several seeds,
both against the exhaustive best of that space; and the sampling error of the model
measurer against simulating every block.

    python benchmarks/tune.py [--m 256 --n 256 --k 512] [--seeds 5] [--trials 64] [--png tune.png]

The space: the tensor-core sketch of an f16 GEMM without split-K (split kernels are
simulated in full, too slow to measure exhaustively here). Every candidate of it is
measured once (in a process pool); the searches then read those measurements
(deterministic: the model measurer gives a candidate the same time every time), so
each search sees exactly what measuring would give it.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from dataclasses import dataclass

from fsir.pipeline import PipelineOptions
from fsir.testing.graphs import dot
from fsir.tune.database import Database
from fsir.tune.measure import MeasureInput, ModelBackend, PoolMeasurer, TaskSource, _stitched
from fsir.tune.search import SearchMode, SearchOptions, Tuner
from fsir.tune.space import Checked, Checker, SketchKind, space_for, today_splits
from fsir.tune.task import capture, discover


@dataclass
class TableMeasurer:
    """Measurements made once, looked up."""

    table: dict

    def measure(self, batch):
        return [self.table[inp.trace] for inp in batch]


def exhaustive(src: TaskSource, checker: Checker, workers: int) -> dict:
    valid = [c for c in map(checker.check, checker.space.traces()) if isinstance(c, Checked)]
    t = time.time()
    measurer = PoolMeasurer(ModelBackend(), workers=workers, timeout=600)
    try:
        results = measurer.measure([MeasureInput(src, c.trace) for c in valid])
    finally:
        measurer.close()
    print(f"exhaustive: {len(valid)} statically valid candidates of {checker.space.size()} traces, measured in "
          f"{time.time() - t:.0f} s on {workers} workers; errors: "
          f"{sum(not r.ok for r in results)}")
    return {r.trace: r for r in results}


def search(src, mapping, checker, table, mode: SearchMode, seed: int, trials: int, default: str) -> list[float]:
    opts = SearchOptions(trials=trials, batch=8, mode=mode, seed=seed, population=128, generations=3)
    tuner = Tuner(src, mapping, checker, TableMeasurer(table), Database(None), opts, default)
    return tuner.run().history


def sampling_error(src: TaskSource, checker: Checker, n: int = 6) -> None:
    """Sampled (4 blocks) against every block simulated, on `n` candidates."""
    rng = random.Random(0)
    cands = [c for c in (checker.check(t) for t in (checker.space.sample(rng) for _ in range(4 * n)))
             if isinstance(c, Checked)][:n]
    print("\nsampling error of the model measurer (4 sampled blocks vs all blocks simulated):")
    print("| candidate | blocks | sampled µs | full µs | error |\n|---|---:|---:|---:|---:|")
    for c in cands:
        sampled = ModelBackend(samples=4).measure_one(MeasureInput(src, c.trace))
        full = ModelBackend(samples=1 << 20).measure_one(MeasureInput(src, c.trace))
        if sampled.ok and full.ok and sampled.seconds and full.seconds:
            print(f"| {c.description} | {full.blocks} | {sampled.seconds * 1e6:.3f} | {full.seconds * 1e6:.3f} | "
                  f"{(sampled.seconds / full.seconds - 1) * 100:+.2f}% |")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--m", type=int, default=256)
    p.add_argument("--n", type=int, default=256)
    p.add_argument("--k", type=int, default=512)
    p.add_argument("--gpu", default="H100")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--trials", type=int, default=64)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--png", default="tune.png")
    args = p.parse_args()
    options = PipelineOptions(fusion="stitch", gpu=args.gpu)
    text = dot(args.m, args.n, args.k, "f16")
    stitched = _stitched(text, options)
    (task,) = discover(stitched, options)
    request = capture(stitched, options, task.key)
    full = space_for(request, today_splits(request))
    space = full.narrowed({SketchKind.GEMM_MMA}, split=False)
    checker = Checker(request, space)
    src = TaskSource(text, options, task.key, task.kernel)
    print(f"GEMM {args.m}x{args.n}x{args.k} f16 on {args.gpu} (model measurer); today's choice: "
          f"{task.default_config}; full space {full.size()} traces, searched space {space.size()}")
    table = exhaustive(src, checker, args.workers)
    ok = {t: r for t, r in table.items() if r.ok}
    best_t, best = min(ok.items(), key=lambda tr: tr[1].seconds)
    print(f"exhaustive best: {space.config(best_t).describe()} {best.seconds * 1e6:.3f} µs")
    today = [r for t, r in ok.items() if space.config(t).describe() == task.default_config]
    if today:
        print(f"today's choice measured: {today[0].seconds * 1e6:.3f} µs ({today[0].seconds / best.seconds:.3f}x "
              "the best)")
    # the prior alone: where the exhaustive best ranks among the prior's picks
    ranked = sorted((c for c in map(checker.check, ok) if isinstance(c, Checked)), key=lambda c: c.prior_seconds)
    top1 = table[ranked[0].trace].seconds
    print(f"the prior's top pick: {ranked[0].description} {top1 * 1e6:.3f} µs ({top1 / best.seconds:.3f}x)")
    curves: dict[SearchMode, list[list[float]]] = {}
    for mode in (SearchMode.EVOLUTION, SearchMode.RANDOM, SearchMode.FAST):
        curves[mode] = [search(src, task.mapping, checker, table, mode, s, args.trials, task.default_config)
                        for s in range(args.seeds)]
    print(f"\nbest-so-far / exhaustive best, mean (worst) over {args.seeds} seeds:")
    marks = [t for t in (8, 16, 32, 48, 64, 96, 128) if t <= args.trials]
    print("| search | " + " | ".join(f"{t} trials" for t in marks) + " |")
    print("|---|" + "---:|" * len(marks))
    for mode, runs in curves.items():
        cells = []
        for t in marks:
            vals = [r[min(t, len(r)) - 1] / best.seconds for r in runs]
            cells.append(f"{statistics.mean(vals):.3f} ({max(vals):.3f})")
        print(f"| {mode} | " + " | ".join(cells) + " |")
    for mode, runs in curves.items():
        hit = [next((i + 1 for i, v in enumerate(r) if v <= 1.05 * best.seconds), math.inf) for r in runs]
        print(f"{mode}: trials to within 5% of the exhaustive best per seed: {hit}")
    plot(curves, best.seconds, args)
    sampling_error(src, checker)


def plot(curves, best: float, args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for mode, runs in curves.items():
        n = min(len(r) for r in runs)
        xs = range(1, n + 1)
        mean = [statistics.mean(r[i] / best for r in runs) for i in range(n)]
        lo = [min(r[i] / best for r in runs) for i in range(n)]
        hi = [max(r[i] / best for r in runs) for i in range(n)]
        ax.plot(xs, mean, label=str(mode))
        ax.fill_between(xs, lo, hi, alpha=0.2)
    ax.axhline(1.05, color="grey", linestyle=":", label="exhaustive best + 5%")
    ax.set_xlabel("trials")
    ax.set_ylabel("best so far / exhaustive best")
    ax.set_title(f"GEMM {args.m}x{args.n}x{args.k} f16, {args.gpu}, model measurer, {args.seeds} seeds")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"plot: {args.png}")


if __name__ == "__main__":
    main()
