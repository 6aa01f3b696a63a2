"""Tuning on the `model` measurer: evolutionary search (with the cost model, with the
prior alone, with the model alone) against random search over the same space,
best-so-far against trials over several seeds; the sampling error of the model
measurer against simulating every block; the kernel set (`--kernels`: today's choice
against the fast mode's pick on 20+ kernels, and the cost model's Kendall τ on held-out
kernels); the task scheduler (`--scheduler`: gradient against round-robin on the BERT
layer or on ResNet-50's convolutions); the cost model's Kendall τ on held-out GEMM shapes
(`--rank`, `tune_rank.py`); two measuring workers against one (`--workers-speedup`).

    python benchmarks/tune.py [--m 256 --n 256 --k 512] [--space mma|full] [--seeds 5] [--trials 64]
    python benchmarks/tune.py --kernels [--trials 8] [--log kernels.jsonl]
    python benchmarks/tune.py --scheduler [--model bert|resnet50] [--seeds 5] [--trials 16] [--log sched.jsonl]
    python benchmarks/tune.py --workers-speedup [--m 512 --n 512 --k 512] [--trials 24]
    python benchmarks/tune.py --rank [--trials 40] [--log rank.jsonl]
    python benchmarks/tune.py --sampling-error [--unsplit 4] [--markdown]

--space mma (default): the tensor-core sketch of an f16 GEMM without split-K (the
space of the exhaustive figures in docs/tuning.md). Every candidate is
measured once (in a process pool) and the searches read those measurements
(deterministic: the model measurer gives a candidate the same time every time), so
each search sees exactly what measuring would give it, against the exhaustive best.

--space full: both GEMM sketches (FMA and tensor cores) without split-K, too large to
measure exhaustively: the searches measure as they go (each candidate once over all
runs, memoised), against the best any run found.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from fsir.codegen.gemm_config import GemmConfig, GemmMath
from fsir.pipeline import PipelineOptions
from fsir.testing.graphs import dot
from fsir.tune.database import Database
from fsir.tune.exhaustive import MAX_TRACES, measure_space, rule_valid
from fsir.tune.measure import MeasureInput, MeasureResult, ModelBackend, PoolMeasurer, TaskSource, stitched_from_text
from fsir.tune.search import SearchMode, SearchOptions, Tuner
from fsir.tune.space import Checked, Checker, SketchKind, space_for, today_splits
from fsir.tune.task import capture, discover


@dataclass
class TableMeasurer:
    """Measurements made once, looked up; what is not in the table is measured by
    `measurer` (if any) and added."""

    table: dict
    measurer: PoolMeasurer | None = None

    def measure(self, batch):
        todo = [inp for inp in batch if inp.trace not in self.table]
        if todo:
            assert self.measurer is not None, "a candidate outside the exhaustive table"
            for inp, res in zip(todo, self.measurer.measure(todo)):
                self.table[inp.trace] = res
        return [self.table[inp.trace] for inp in batch]


def exhaustive(src: TaskSource, mapping: str, checker: Checker, pool: PoolMeasurer, default: str | None,
               log: str | None) -> dict:
    """The whole space measured as `fs-tune --exhaustive` measures it (`fsir.tune.exhaustive`;
    records appended to `log` and resumed from it); trace -> result."""
    table: dict = {}
    tuner = Tuner(src, mapping, checker, pool, Database(log), SearchOptions(learn=False), default,
                  on_trial=lambda r: table.__setitem__(r.trace, r))
    for rec in tuner.measured.values():
        table[rec.trace] = MeasureResult(rec.trace, rec.seconds, rec.error, rec.detail)
    traces = rule_valid(checker.space, MAX_TRACES, "GEMM")
    t = time.time()
    result = measure_space(tuner, traces)
    print(f"exhaustive: {len(traces) - result.rejected} statically valid candidates of {checker.space.size()} "
          f"traces ({len(traces)} rule-valid), measured in {time.time() - t:.0f} s on {pool.workers} workers; "
          f"errors: {sum(not r.ok for r in table.values())}")
    return table


PRIOR_ONLY = "full, prior only"
NO_PRIOR = "full, model only (no prior)"


def search(src, mapping, checker, measurer: TableMeasurer, mode: str, seed: int, trials: int,
           default: str) -> list[float]:
    learn = mode != PRIOR_ONLY
    evolution = mode in (PRIOR_ONLY, NO_PRIOR)
    opts = SearchOptions(trials=trials, batch=8, mode=SearchMode.EVOLUTION if evolution else SearchMode(mode),
                         seed=seed, population=128, generations=3, learn=learn, prior=mode != NO_PRIOR)
    tuner = Tuner(src, mapping, checker, measurer, Database(None), opts, default)
    return tuner.run().history


SAMPLING_HEADER = ("kernel", "candidate", "blocks", "SM slots", "simulated", "sampled µs", "full µs", "error",
                   "sampled s", "full s")


def sampling_row(name: str, src: TaskSource, trace, description: str) -> list[str]:
    """One kernel's sampled (4 blocks; a split kernel's sampled tiles) and full (every
    block, waits and all) model time."""
    sampled, ts = timed_launch(src, trace, 4)
    full, tf = timed_launch(src, trace, 1 << 30)
    err = (sampled.seconds / full.seconds - 1) * 100
    row = [name, description, str(full.blocks), str(full.blocks_per_sm * _sms(src)), str(sampled.simulated),
           f"{sampled.seconds * 1e6:.3f}", f"{full.seconds * 1e6:.3f}", f"{err:+.2f}%", f"{ts:.1f}", f"{tf:.1f}"]
    print("| " + " | ".join(row) + " |", flush=True)
    return row


def _sms(src: TaskSource) -> int:
    from fsir.gpuspec import gpu_spec

    return gpu_spec(src.options.gpu).sms


def sampling_error(src: TaskSource, checker: Checker, n: int = 6, header: bool = True,
                   name: str = "") -> list[list[str]]:
    """Sampled against every block simulated, on `n` candidates."""
    rng = random.Random(0)
    cands = [c for c in (checker.check(t) for t in (checker.space.sample(rng) for _ in range(4 * n)))
             if isinstance(c, Checked)][:n]
    if header:
        print("\nsampling error of the model measurer (sampled vs every block simulated):")
        print("| " + " | ".join(SAMPLING_HEADER) + " |\n|---|---|" + "---:|" * (len(SAMPLING_HEADER) - 2))
    return [sampling_row(name, src, c.trace, c.description) for c in cands]


def sampling_models(args) -> None:
    """The sampling error on kernels whose blocks differ: GEMMs with edge tiles, a row
    kernel whose last block has fewer rows, a loop kernel with a partial last block;
    then split-K GEMMs (`SPLIT_KERNELS`)."""
    from fsir.tune.space import space_for as space_of

    layernorm = (Path(__file__).resolve().parents[1] / "examples" / "layernorm.mlir").read_text()
    layernorm = layernorm.replace("4096", "1000")
    t = "tensor<1000x770xf32>"
    loop = (f"func.func @f(%a: {t}, %b: {t}) -> {t} {{\n  %s = graph.add %a, %b : {t}\n"
            f"  %m = graph.mul %s, %a : {t}\n  func.return %m : {t}\n}}\n")
    rows: list[list[str]] = []
    first = True
    # the f16 GEMM on its tensor-core sketch: simulating every block of its FMA
    # candidates (thousands of blocks of a few threads) takes many minutes
    for name, text in (("gemm 1000x1000x256 f16", dot(1000, 1000, 256, "f16")),
                       ("gemm 200x300x96 f32", dot(200, 300, 96, "f32")), ("layernorm 1000x768", layernorm),
                       ("add, mul 1000x770", loop)):
        options = PipelineOptions(fusion="stitch", gpu="H100")
        stitched = stitched_from_text(text, options)
        (task,) = discover(stitched, options)
        request = capture(stitched, options, task.key)
        space = space_of(request, today_splits(request))
        kinds = {s.kind for s in space.sketches}
        space = space.narrowed({SketchKind.GEMM_MMA} if SketchKind.GEMM_MMA in kinds else kinds, split=False)
        rows += sampling_error(TaskSource(text, options, task.key, task.kernel), Checker(request, space),
                               args.unsplit, first, name)
        first = False
    rows += split_models(first)
    errors = [abs(float(r[7].rstrip("%"))) for r in rows]
    split = sum(bool(re.search(r"/s\d+(/p\d+)?$", r[1])) for r in rows)
    summary = (f"{len(rows)} kernels ({split} split-K): largest error {max(errors):.2f}%, mean "
               f"{sum(errors) / len(errors):.2f}%; blocks simulated {sum(int(r[4]) for r in rows)} of "
               f"{sum(int(r[2]) for r in rows)}")
    print(summary)
    if args.markdown:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent))  # docgen, beside this script
        from docgen import markdown_table, publish

        table = markdown_table(SAMPLING_HEADER, rows, [False, False] + [True] * (len(SAMPLING_HEADER) - 2))
        publish("tune.py", sys.argv[1:], table + "\n\n" + summary)


# split-K kernels for the sampling error: (m, n, k, element type, configuration); f32
# FMA and f16 tensor-core tiles, 2 to 8 slices, edge tiles, grids past the SM slots
SPLIT_KERNELS = (
    (64, 64, 256, "f32", GemmConfig(16, 16, 16, 1, 1, GemmMath.FMA, 4)),
    (200, 300, 96, "f32", GemmConfig(32, 32, 16, 2, 2, GemmMath.FMA, 3)),
    (200, 300, 96, "f32", GemmConfig(16, 16, 16, 1, 1, GemmMath.FMA, 6)),
    (520, 520, 128, "f32", GemmConfig(32, 32, 16, 2, 2, GemmMath.FMA, 8)),
    (1000, 1000, 64, "f32", GemmConfig(64, 64, 16, 4, 4, GemmMath.FMA, 2)),
    (256, 256, 1024, "f16", GemmConfig(64, 64, 32, 32, 32, GemmMath.F16, 4)),
    (1000, 1000, 256, "f16", GemmConfig(64, 64, 32, 32, 32, GemmMath.F16, 4)),
    (520, 520, 512, "f16", GemmConfig(32, 32, 32, 16, 16, GemmMath.F16, 6)),
    (300, 200, 1024, "f16", GemmConfig(64, 32, 32, 32, 16, GemmMath.F16, 8)),
    (1000, 1000, 256, "f32", GemmConfig(32, 64, 16, 2, 4, GemmMath.FMA, 4)),
)


def timed_launch(src: TaskSource, trace, samples: int):
    """The task's kernel timed by `SampledSimDevice` (its `SampledLaunch`: blocks, blocks
    simulated, occupancy) and the wall seconds the timing took, after compiling."""
    from fsir.gpuspec import gpu_spec
    from fsir.runtime.executor import execute
    from fsir.tune.measure import compile_for_measuring, random_inputs
    from fsir.tune.sampling import SampledSimDevice

    got = compile_for_measuring(MeasureInput(src, trace), True)
    assert not isinstance(got, MeasureResult), got.detail
    inputs = random_inputs(got.lowered, text=src.text)
    device = SampledSimDevice(src.kernel, gpu_spec(src.options.gpu), samples, got.registers)
    t = time.time()
    execute(got.lowered, inputs, device=device, ptx=got.ptx)
    return device.results[0], time.time() - t


def split_models(header: bool) -> list[list[str]]:
    """The sampling error on split-K kernels (sampled by groups against the full
    simulation, waits included)."""
    if header:
        print("| " + " | ".join(SAMPLING_HEADER) + " |\n|---|---|" + "---:|" * (len(SAMPLING_HEADER) - 2))
    options = PipelineOptions(fusion="stitch", gpu="H100")
    rows = []
    for m, n, k, dt, config in SPLIT_KERNELS:
        text = dot(m, n, k, dt)
        stitched = stitched_from_text(text, options)
        (task,) = discover(stitched, options)
        trace = space_for(capture(stitched, options, task.key)).trace_of(config)
        assert trace is not None, config
        rows.append(sampling_row(f"gemm {m}x{n}x{k} {dt}", TaskSource(text, options, task.key, task.kernel), trace,
                                 f"gemm/{config.text()}"))
    return rows


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
    p.add_argument("--space", default="mma", choices=("mma", "full"))
    p.add_argument("--samples", type=int, default=4, help="blocks simulated per launch")
    p.add_argument("--sampling-error", action="store_true",
                   help="only the sampling error on kernels with edge tiles, row and loop kernels, split-K GEMMs")
    p.add_argument("--unsplit", type=int, default=4,
                   help="--sampling-error: candidates of each kernel without split-K")
    p.add_argument("--kernels", action="store_true", help="the kernel set: today's choice against the fast mode")
    p.add_argument("--scheduler", action="store_true", help="the task scheduler on the BERT layer (or --model)")
    p.add_argument("--model", default="bert", choices=("bert", "resnet50"),
                   help="--scheduler: the BERT layer, or eight of ResNet-50's distinct convolutions")
    p.add_argument("--workers-speedup", action="store_true",
                   help="a fixed batch of --trials GEMM candidates (default 24, no split-K) measured by 1 and by 2 "
                        "workers: records identical, wall ratio (run on a quiet machine)")
    p.add_argument("--rank", action="store_true",
                   help="the cost model's Kendall τ on held-out GEMM shapes (--trials candidates a shape, default 40)")
    p.add_argument("--log", default=None,
                   help="measurements kept (and resumed from): the exhaustive space's, or --kernels/--scheduler's")
    p.add_argument("--timeout", type=float, default=240.0, help="seconds per measurement")
    p.add_argument("--markdown", action="store_true",
                   help="--kernels/--scheduler/--rank/--sampling-error: write its tables into the documents that "
                   "show them (benchmarks/docgen.py)")
    args = p.parse_args()
    if args.sampling_error:
        sampling_models(args)
        return
    if args.rank:
        from tune_rank import rank_set

        rank_set(args)
        return
    if args.workers_speedup:
        from tune_sets import workers_speedup

        workers_speedup(args)
        return
    if args.kernels or args.scheduler:
        from tune_sets import kernel_set, scheduler_set

        (kernel_set if args.kernels else scheduler_set)(args)
        return
    options = PipelineOptions(fusion="stitch", gpu=args.gpu)
    text = dot(args.m, args.n, args.k, "f16")
    stitched = stitched_from_text(text, options)
    (task,) = discover(stitched, options)
    request = capture(stitched, options, task.key)
    full = space_for(request, today_splits(request))
    kinds = {SketchKind.GEMM_MMA} if args.space == "mma" else {SketchKind.GEMM_MMA, SketchKind.GEMM_FMA}
    space = full.narrowed(kinds, split=False)
    checker = Checker(request, space)
    src = TaskSource(text, options, task.key, task.kernel)
    print(f"GEMM {args.m}x{args.n}x{args.k} f16 on {args.gpu} (model measurer, {args.samples} sampled blocks); "
          f"today's choice: {task.default_config}; full space {full.size()} traces, searched space {space.size()} "
          f"({args.space})")
    pool = PoolMeasurer(ModelBackend(samples=args.samples), workers=args.workers, timeout=600)
    # today's choice, measured in the full space (it may be split-K: sampled by groups)
    default = next(c for c in full.fixed if c.describe() == task.default_config)
    today_trace = full.trace_of(default)
    assert today_trace is not None
    (today,) = pool.measure([MeasureInput(src, today_trace)])
    today_us = today.seconds * 1e6 if today.seconds else math.nan
    table = exhaustive(src, task.mapping, checker, pool, task.default_config, args.log) if args.space == "mma" \
        else {}
    measurer = TableMeasurer(table, pool if args.space == "full" else None)
    modes = [str(SearchMode.EVOLUTION), PRIOR_ONLY, NO_PRIOR, str(SearchMode.RANDOM), str(SearchMode.FAST)]
    curves: dict[str, list[list[float]]] = {}
    t = time.time()
    try:
        for mode in modes:
            curves[mode] = [search(src, task.mapping, checker, measurer, mode, s, args.trials, task.default_config)
                            for s in range(args.seeds)]
    finally:
        pool.close()
    print(f"searches: {time.time() - t:.0f} s, {len(table)} distinct candidates measured")
    ok = {t: r for t, r in table.items() if r.ok}
    best_t, best = min(ok.items(), key=lambda tr: tr[1].seconds)
    what = "exhaustive best" if args.space == "mma" else "best any run found"
    print(f"{what}: {space.config(best_t).describe()} {best.seconds * 1e6:.3f} µs")
    print(f"today's choice: {today_us:.3f} µs ({today_us * 1e-6 / best.seconds:.3f}x the best)")
    ranked = sorted((c for c in map(checker.check, ok) if isinstance(c, Checked)), key=lambda c: c.prior_seconds)
    top1 = table[ranked[0].trace].seconds
    print(f"the prior's top pick among those measured: {ranked[0].description} {top1 * 1e6:.3f} µs "
          f"({top1 / best.seconds:.3f}x)")
    print(f"\nbest-so-far / {what}, mean (worst) over {args.seeds} seeds:")
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
        print(f"{mode}: trials to within 5% of the {what} per seed: {hit}")
    plot(curves, best.seconds, args)
    if args.space == "mma":
        sampling_error(src, checker, name=f"gemm {args.m}x{args.n}x{args.k} f16")


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
