"""benchmarks/tune.py's kernel set and task-scheduler runs (issue 28, items b-f), on
the `model` measurer.

`kernel_set`: every distinct kernel of 17 small models (square, skinny and split-K
GEMMs, a convolution, attention, LayerNorm/softmax/RMSNorm rows, a column sum, loops,
embedding columns): today's choice against the fast mode's pick (the prior's top k,
today's choice measured first); then k random candidates more per kernel (split-K left
out: simulated in full, slow) and the cost model's Kendall τ on each kernel held out
(trained on every other kernel's measurements) against the prior's.

`scheduler_set`: the BERT layer (examples/bert_layer.mlir, scaled down), or (`--model
resnet50`) eight of ResNet-50's distinct convolutions, tuned by the evolutionary search
under the gradient task scheduler (Ansor's guesses, and with the prior's outlook) and
under round-robin, several seeds, the objective Σ launches × best time
against trials. Measurements are memoised by
(workload key, trace) and kept in `--log` (the model measurer is deterministic), so
seeds and strategies share them and a rerun resumes.
"""

from __future__ import annotations

import functools
import json
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from fsir.pipeline import PipelineOptions
from fsir.testing.graphs import dot, softmax
from fsir.tune.cost_model import CostModel, Sample
from fsir.tune.database import Database
from fsir.tune.measure import (
    MeasureError,
    MeasureResult,
    ModelBackend,
    PoolMeasurer,
    TaskSource,
    stitched_from_text,
    task_space,
)
from fsir.tune.scheduler import SchedTask, SchedulerOptions, Strategy, TaskScheduler
from fsir.tune.search import SearchMode, SearchOptions, Tuner
from fsir.tune.space import Checker, SketchKind, Trace
from fsir.tune.task import Task, capture, discover

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tune"))
from tune_graphs import column_sum, elementwise, layernorm  # noqa: E402

OPTIONS = PipelineOptions(fusion="stitch", gpu="H100")


def models() -> dict[str, str]:
    ex = ROOT / "examples"
    return {
        "gemm 256³ f16": dot(256, 256, 256, "f16"),
        "gemm 512³ f16": dot(512, 512, 512, "f16"),
        "gemm 1024³ f16": dot(1024, 1024, 1024, "f16"),
        "gemm 200x300x96 f32": dot(200, 300, 96, "f32"),
        "gemm 16x1024x1024 f16": dot(16, 1024, 1024, "f16"),
        "gemm 1024x32x512 f32": dot(1024, 32, 512, "f32"),
        "gemm 64x64x4096 f16": dot(64, 64, 4096, "f16"),
        "gemm 128x128x2048 f32": dot(128, 128, 2048, "f32"),
        "conv3x3 x2": (ex / "cusync" / "conv2.mlir").read_text(),
        "attention": (ex / "cusync" / "attention.mlir").read_text(),
        "layernorm 1000x768": layernorm(1000, 768),
        "softmax 512x1024": softmax(512, 1024),
        "rmsnorm": (ex / "rmsnorm.mlir").read_text(),
        "gelu": (ex / "gelu.mlir").read_text(),
        "column sum 512x64": column_sum(512, 64),
        "add-mul 1000x770": elementwise(1000, 770),
        "recom (embedding columns)": (ex / "recom" / "recom_8.mlir").read_text(),
    }


# -- memoised measurements ---------------------------------------------------------------


@dataclass
class Memo:
    """A measurer memoising results by (workload key, trace), kept as JSON lines."""

    pool: PoolMeasurer
    path: Path | None
    table: dict[tuple[str, Trace], MeasureResult] = field(default_factory=dict)
    fresh: int = 0

    def __post_init__(self) -> None:
        if self.path is not None and self.path.exists():
            for line in self.path.read_text().splitlines():
                d = json.loads(line)
                trace = Trace.from_json(d["trace"])
                err = MeasureError(d["error"]) if d["error"] else None
                self.table[(d["key"], trace)] = MeasureResult(trace, d["seconds"], err, d["detail"])

    def measure(self, batch):
        todo = [inp for inp in batch if (inp.task.key, inp.trace) not in self.table]
        if todo:
            for inp, res in zip(todo, self.pool.measure(todo)):
                self.table[(inp.task.key, inp.trace)] = res
                self.fresh += 1
                if self.path is not None:
                    with self.path.open("a") as f:
                        f.write(json.dumps({"key": inp.task.key, "trace": inp.trace.to_json(),
                                            "seconds": res.seconds, "error": res.error, "detail": res.detail})
                                + "\n")
        return [self.table[(inp.task.key, inp.trace)] for inp in batch]


def tuner(text: str, task: Task, search: SearchOptions, measurer, db: Database, narrow: bool = False) -> Tuner:
    request = capture(stitched_from_text(text, OPTIONS), OPTIONS, task.key)
    space = task_space(text, OPTIONS, task.key)
    if narrow:
        kinds = {s.kind for s in space.sketches}
        space = space.narrowed({SketchKind.GEMM_MMA} if SketchKind.GEMM_MMA in kinds else kinds, split=False)
    return Tuner(TaskSource(text, OPTIONS, task.key, task.kernel), task.mapping, Checker(request, space), measurer,
                 db, search, task.default_config)


# -- the kernel set ------------------------------------------------------------------------


@dataclass
class KernelRun:
    name: str
    task: Task
    today: float | None
    best: float | None
    best_config: str
    errors: int
    wall: float
    samples: list[Sample]
    rank: float = 0.0  # of `wall`: the space built, shortlisted, checked and ranked


def kernel_set(args) -> None:
    memo = Memo(PoolMeasurer(ModelBackend(samples=args.samples), workers=args.workers, timeout=args.timeout),
                Path(args.log) if args.log else None)
    k = args.trials if args.trials != 64 else 8
    runs: list[KernelRun] = []
    seen: set[str] = set()
    try:
        for model, text in models().items():
            for task in discover(stitched_from_text(text, OPTIONS), OPTIONS):
                if task.key in seen:
                    continue
                seen.add(task.key)
                runs.append(tune_kernel(f"{model}: {task.kernel}", text, task, memo, k))
                r = runs[-1]
                print(f"  {r.name} [{task.mapping}] default {us(r.today)} tuned {us(r.best)} ({r.best_config}); "
                      f"{r.wall:.1f} s ({r.rank:.1f} s ranking), {len(r.samples)} samples", flush=True)
    finally:
        memo.pool.close()
    print(f"\nkernel set: stitch-codegen's choice (default) against the fast mode (prior's top {k}, the default "
          "first), model measurer")
    table = kernel_table(runs)
    print("\n".join(table))
    print("\ncost model on held-out kernels (trained on the others), Kendall τ against measured times")
    taus = kendall(runs)
    print("\n".join(taus))
    if args.markdown:
        sys.path.insert(0, str(Path(__file__).resolve().parent))  # docgen, beside this script
        from docgen import publish

        publish("tune.py", sys.argv[1:], "\n".join([*table, "", *taus]))


def tune_kernel(name: str, text: str, task: Task, memo: Memo, k: int) -> KernelRun:
    db = Database(None)
    t = time.time()
    fast = tuner(text, task, SearchOptions(trials=k, batch=k, mode=SearchMode.FAST), memo, db)
    fast.ranked_space()  # timed apart from the measurements
    rank = time.time() - t
    result = fast.run()
    wall = time.time() - t
    # k/2 random candidates more (no split-K; tensor cores where the GEMM has them: FMA
    # kernels of f16 GEMMs are slow to simulate), for the cost model's held-out ranking
    rnd = tuner(text, task, SearchOptions(trials=k // 2, batch=k // 2, mode=SearchMode.RANDOM, seed=1), memo, db,
                narrow=True)
    rnd.run()
    # every measured candidate of the task (both runs, read back from the log), featured on the full space
    samples = tuner(text, task, SearchOptions(), memo, db).training_samples()
    today = result.default.seconds if result.default is not None else None
    best = result.best
    errors = sum(1 for r in db.records if not r.ok)
    return KernelRun(name, task, today, best.seconds if best else None, best.config if best else "?", errors, wall,
                     samples, rank)


def us(s: float | None) -> str:
    return f"{s * 1e6:.2f} µs" if s else "-"


def kernel_table(runs: list[KernelRun]) -> list[str]:
    """The default against the fast mode's pick per kernel, and the summary line."""
    out = ["| kernel | mapping | default | default µs | tuned | tuned µs | speed-up | errors | ranking s | "
           "fast-mode wall s |", "|---|---|---|---:|---|---:|---:|---:|---:|---:|"]
    ups = []
    for r in runs:
        up = r.today / r.best if r.today and r.best else math.nan
        if math.isfinite(up):
            ups.append(up)
        out.append(f"| {r.name} | {r.task.mapping} | {r.task.default_config} | {(r.today or math.nan) * 1e6:.2f} | "
                   f"{r.best_config} | {(r.best or math.nan) * 1e6:.2f} | {up:.3f}x | {r.errors} | {r.rank:.1f} | "
                   f"{r.wall:.1f} |")
    gm = math.exp(statistics.mean(math.log(u) for u in ups)) if ups else math.nan
    slower = sum(u < 1 for u in ups)
    out += ["", f"{len(runs)} kernels; geometric-mean speed-up {gm:.3f}x; slower than the default: {slower}; "
            f"ranking per kernel: median {statistics.median(r.rank for r in runs):.1f} s, "
            f"max {max(r.rank for r in runs):.1f} s; fast-mode wall (measurements included) per kernel: median "
            f"{statistics.median(r.wall for r in runs):.1f} s, max {max(r.wall for r in runs):.1f} s."]
    return out


def kendall(runs: list[KernelRun]) -> list[str]:
    """The cost model trained on every other kernel's measurements ranks the held-out
    kernel's candidates: Kendall τ against the measured times, beside the prior's."""
    from scipy.stats import kendalltau

    rows = []
    for i, r in enumerate(runs):
        if len({round(s.seconds, 12) for s in r.samples}) < 4:
            continue  # too few distinct times to rank
        train = [s for j, o in enumerate(runs) if j != i for s in o.samples]
        model = CostModel(seed=0)
        model.fit(train)
        pred = model.predict(r.task.key, [s.features for s in r.samples], [s.prior_seconds for s in r.samples])
        meas = [s.seconds for s in r.samples]
        tau_model = float(kendalltau(pred, meas).statistic)
        tau_prior = float(kendalltau([s.prior_seconds for s in r.samples], meas).statistic)
        rows.append((r, tau_model, tau_prior))
    out = ["| kernel | candidates | τ model | τ prior |", "|---|---:|---:|---:|"]
    out += [f"| {r.name} | {len(r.samples)} | {tm:.3f} | {tp:.3f} |" for r, tm, tp in rows]
    if rows:
        # τ is undefined (nan) where one ranking is constant (equal priors of every candidate)
        model = [t for _, t, _ in rows if math.isfinite(t)]
        prior = [t for _, _, t in rows if math.isfinite(t)]
        out += ["", f"Mean τ over the held-out kernels where it is defined: model {statistics.mean(model):.3f} "
                    f"({len(model)} kernels), prior {statistics.mean(prior):.3f} ({len(prior)} kernels)."]
    return out


# -- the task scheduler ---------------------------------------------------------------------


SMALL_BERT = (("3072", "1024"), ("768", "256"), ("7.680000e+02", "2.560000e+02"), ("2x128x12x64", "1x64x4x64"),
              ("2x12x128x64", "1x4x64x64"), ("2x12x64x128", "1x4x64x64"), ("2x12x128x128", "1x4x64x64"),
              ("2x12x128", "1x4x64"), ("2x128", "1x64"), ("2x1x1x128", "1x1x1x64"))


def small_bert() -> str:
    """examples/bert_layer.mlir at B=1, S=64, H=256 (4 heads of 64), FFN 1024: the same
    7 kernels (6 tasks), small enough to measure a few hundred candidates of on 2 cores."""
    text = (ROOT / "examples" / "bert_layer.mlir").read_text()
    text = text[text.index("func.func"):]
    for old, new in SMALL_BERT:
        text = text.replace(old, new)
    return text


RR, GRAD, PRIOR = "round-robin", "gradient", "gradient, prior's outlook"
VARIANTS = ((RR, Strategy.ROUND_ROBIN, False), (GRAD, Strategy.GRADIENT, False), (PRIOR, Strategy.GRADIENT, True))


RESNET_CONVS = ("k0", "k2", "k13", "k16", "k18", "k29", "k31", "k48")


def resnet50() -> str:
    """The onnx wheel's `light` ResNet-50 (batch 1, 224×224) in the graph dialect."""
    import onnx

    from fsir.pipeline import read_model

    return str(read_model(str(Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" /
                              "light_resnet50.onnx")))


def scheduler_set(args) -> None:
    if args.model == "resnet50":
        text = resnet50()
        every = discover(stitched_from_text(text, OPTIONS), OPTIONS)
        tasks = [t for t in every if t.kernel.rsplit("_", 1)[-1] in RESNET_CONVS]
        what = (f"ResNet-50 (onnx light, batch 1, 224²): {len(tasks)} of its {len(every)} tasks "
                f"({', '.join(t.kernel for t in tasks)})")
    else:
        text = small_bert()
        tasks = discover(stitched_from_text(text, OPTIONS), OPTIONS)
        what = f"BERT layer (B=1, S=64, H=256): {len(tasks)} tasks"
    per_task = args.trials if args.trials != 64 else 16
    total = per_task * len(tasks)
    print(f"{what}, launches {[t.launches for t in tasks]}; {total} trials ({per_task} per task on average), rounds "
          f"of 4, evolutionary search, {args.seeds} seeds", flush=True)
    memo = Memo(PoolMeasurer(ModelBackend(samples=args.samples), workers=args.workers, timeout=args.timeout),
                Path(args.log) if args.log else None)
    curves: dict[str, list[list[tuple[int, float]]]] = {}
    t = time.time()
    try:
        for seed in range(args.seeds):  # seed by seed: a run cut short still compares its seeds
            for label, strategy, prior in VARIANTS:
                curve, spent = schedule_run(text, tasks, strategy, prior, seed, total, memo)
                curves.setdefault(label, []).append(curve)
                print(f"  {label} seed {seed}: final objective {curve[-1][1] * 1e6:.2f} µs, trials per task {spent} "
                      f"({memo.fresh} measured so far, {time.time() - t:.0f} s)", flush=True)
            if seed + 1 < args.seeds:
                print("\n".join(schedule_table(curves, total, seed + 1)), flush=True)
    finally:
        memo.pool.close()
    report_schedules(curves, total, args)


def schedule_run(text: str, tasks: list[Task], strategy: Strategy, prior: bool, seed: int, total: int,
                 memo: Memo) -> tuple[list[tuple[int, float]], list[int]]:
    """One scheduled tune: the objective after each round, and the trials each task got."""
    db = Database(None)
    search = SearchOptions(trials=total, batch=4, mode=SearchMode.EVOLUTION, seed=seed, population=64,
                           generations=2)
    entries = []
    for task in tasks:
        tu = Tuner(TaskSource(text, OPTIONS, task.key, task.kernel), task.mapping, checker_of(text, task.key), memo,
                   db, search, task.default_config)
        got = tu.default_checked()
        work = got.prior_seconds if got is not None and math.isfinite(got.prior_seconds) else 0.0
        entries.append(SchedTask(tu, task.launches, work, task.mapping, task.kernel))
    sched = TaskScheduler(entries, SchedulerOptions(strategy, round_trials=4, seed=seed, prior=prior))
    sched.run(total)
    return [(p.trials, p.objective) for p in sched.curve], [e.trials for e in entries]


@functools.lru_cache(maxsize=64)
def checker_of(text: str, key: str) -> Checker:
    """A task's space on its captured request, shared by every scheduled run (capturing
    a fusion of a large model codegens the model up to it; the checks are cached)."""
    request = capture(stitched_from_text(text, OPTIONS), OPTIONS, key)
    return Checker(request, task_space(text, OPTIONS, key))


def at(curve: list[tuple[int, float]], trials: int) -> float:
    """The objective after `trials` (the last round within)."""
    got = [f for n, f in curve if n <= trials]
    return got[-1] if got else math.inf


def report_schedules(curves, total: int, args) -> None:
    table = schedule_table(curves, total, args.seeds)
    print("\n" + "\n".join(table))
    plot_schedules(curves, total, args)
    if args.markdown:
        sys.path.insert(0, str(Path(__file__).resolve().parent))  # docgen, beside this script
        from docgen import publish

        publish("tune.py", sys.argv[1:], "\n".join(table))


def schedule_table(curves, total: int, seeds: int) -> list[str]:
    """The objective at a quarter, half, three quarters and all of the trials per
    scheduler, and the trials the gradient scheduler needs to reach round-robin's final
    objective, per seed (its own seed's and the median's)."""
    rr = curves[RR]
    rr_final = statistics.median(c[-1][1] for c in rr)
    marks = sorted({total // 4, total // 2, 3 * total // 4, total})
    out = [f"Objective Σ launches × best time (µs), median (min-max) over {seeds} seeds, {total} trials in all:", "",
           "| scheduler | " + " | ".join(f"{m} trials" for m in marks) + " |", "|---|" + "---:|" * len(marks)]
    for label, runs in curves.items():
        cells = []
        for m in marks:
            vals = [at(c, m) * 1e6 for c in runs]
            cells.append(f"{statistics.median(vals):.2f} ({min(vals):.2f}-{max(vals):.2f})")
        out.append(f"| {label} | " + " | ".join(cells) + " |")

    def reach(curve, target: float) -> float:
        return next((n for n, f in curve if f <= target * (1 + 1e-9)), math.inf)

    out += ["", "| seed | round-robin final µs | gradient: trials to reach it | fraction | "
                "gradient: trials to the median final | fraction | prior's outlook: fraction |",
            "|---:|---:|---:|---:|---:|---:|---:|"]
    own, med, outlook = [], [], []
    for seed, (r, g) in enumerate(zip(rr, curves[GRAD])):
        a, b = reach(g, r[-1][1]), reach(g, rr_final)
        own.append(a / total)
        med.append(b / total)
        outlook.append(reach(curves[PRIOR][seed], r[-1][1]) / total if PRIOR in curves else math.nan)
        out.append(f"| {seed} | {r[-1][1] * 1e6:.2f} | {cell(a)} | {cell(a / total)} | {cell(b)} | {cell(b / total)} "
                   f"| {cell(outlook[-1])} |")
    out += ["", f"Gradient reaches round-robin's final objective (same seed) with a median "
                f"{cell(statistics.median(own))} of the trials (≤ 0.60 on {sum(f <= 0.6 for f in own)} of {len(own)} "
                f"seeds); round-robin's median final ({rr_final * 1e6:.2f} µs) with a median "
                f"{cell(statistics.median(med))}. With the prior's outlook: a median "
                f"{cell(statistics.median(outlook))} (≤ 0.60 on {sum(f <= 0.6 for f in outlook)} of {len(outlook)} "
                f"seeds)."]
    return out


def cell(x: float) -> str:
    """A count or fraction of trials; `never` where the target was not reached."""
    return "never" if not math.isfinite(x) else f"{x:.2f}" if x < 1 else f"{x:.0f}"


def plot_schedules(curves, total: int, args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    xs = list(range(1, total + 1))
    for label, runs in curves.items():
        ys = [[at(c, x) * 1e6 for c in runs] for x in xs]
        ok = [i for i, y in enumerate(ys) if all(math.isfinite(v) for v in y)]
        ax.plot([xs[i] for i in ok], [statistics.median(ys[i]) for i in ok], label=label)
        ax.fill_between([xs[i] for i in ok], [min(ys[i]) for i in ok], [max(ys[i]) for i in ok], alpha=0.2)
    ax.set_xlabel("trials")
    ax.set_ylabel("Σ launches × best time (µs)")
    model = "ResNet-50, 8 convolutions" if args.model == "resnet50" else "BERT layer"
    ax.set_title(f"{model}, task scheduler, model measurer, {args.seeds} seeds")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"plot: {args.png}")


# -- two measuring workers against one --------------------------------------------------------


def workers_speedup(args) -> None:
    """The same fixed batch of candidates (GEMM m×n×k f16, both sketches, no split-K:
    each a few seconds on the model measurer) measured by a pool of one worker and of
    two, after the pool's workers each measured one candidate outside the batch (their
    start-up: spawning, importing fsir, rebuilding the task); the records must be
    identical. Run it on a quiet machine: the ratio is a wall-clock one."""
    import random

    from fsir.tune.measure import MeasureInput
    from fsir.tune.space import sample_valid, space_for, today_splits

    text = dot(args.m, args.n, args.k, "f16")
    stitched = stitched_from_text(text, OPTIONS)
    (task,) = discover(stitched, OPTIONS)
    request = capture(stitched, OPTIONS, task.key)
    space = space_for(request, today_splits(request)).narrowed({SketchKind.GEMM_MMA, SketchKind.GEMM_FMA},
                                                               split=False)
    n = args.trials if args.trials != 64 else 24
    got = sample_valid(Checker(request, space), random.Random(0), n + 2).candidates
    src = TaskSource(text, OPTIONS, task.key, task.kernel)
    warm, batch = [MeasureInput(src, c.trace) for c in got[:2]], [MeasureInput(src, c.trace) for c in got[2:]]
    print(f"GEMM {args.m}x{args.n}x{args.k} f16: {len(batch)} candidates (no split-K), model measurer, "
          f"{args.samples} sampled blocks", flush=True)
    walls: dict[int, float] = {}
    records: dict[int, list[tuple]] = {}
    for workers in (1, 2):
        pool = PoolMeasurer(ModelBackend(samples=args.samples), workers=workers, timeout=args.timeout)
        try:
            t = time.time()
            pool.measure(warm[:workers])
            start = time.time() - t
            t = time.time()
            out = pool.measure(batch)
            walls[workers] = time.time() - t
        finally:
            pool.close()
        records[workers] = [(r.trace, r.seconds, r.error, r.registers, r.blocks, r.simulated_blocks) for r in out]
        errors = sum(not r.ok for r in out)
        print(f"  {workers} worker(s): start-up {start:.1f} s, batch {walls[workers]:.1f} s "
              f"({walls[workers] / len(batch):.2f} s a candidate), {errors} errors", flush=True)
    same = records[1] == records[2]
    print(f"records identical: {same}; wall 1 worker / 2 workers: {walls[1] / walls[2]:.2f}x "
          f"(target ≥ 1.6x; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end)")
    if not same:
        raise SystemExit("the two pools measured different records")
