"""`fs-tune MODEL --trials N --log tune.jsonl [--mode fast|full|random]
[--workers N|ray|ray://ADDRESS] [--scheduler gradient|round-robin] [--exhaustive [--limit N]]
[--sizes SYMBOL=N,N,...]`:
tune every distinct fusion of a model, N measurements per kernel on average,
allocated round by round across the kernels by the task scheduler (`scheduler`),
appending to the log (and resuming from it: candidates already logged are not
measured again), or measure every kernel's whole space (`--exhaustive`,
`exhaustive.py`); with `--sizes`, all that for the model specialised to each size of
its symbolic dim (`sizes.py`); then print a table of today's choice against the best
found per kernel."""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace

from fsir.errors import UserError
from fsir.pipeline import PipelineOptions, read_model
from fsir.tune.database import Database
from fsir.tune.exhaustive import DEFAULT_LIMIT, measure_space, rule_valid
from fsir.tune.measure import CudaBackend, Measurer, ModelBackend, TaskSource, stitched_from_text, task_space
from fsir.tune.ray_measure import TimingResource, Workers, make_measurer
from fsir.tune.scheduler import Point, SchedTask, SchedulerOptions, Strategy, TaskScheduler
from fsir.tune.search import SearchMode, SearchOptions, Tuner, TuneResult
from fsir.tune.space import Checker
from fsir.tune.task import Task, capture, discover


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fs-tune", description="tune every kernel of a model on the model measurer")
    p.add_argument("model", help="model file (.mlir, .hlo, .onnx)")
    p.add_argument("--trials", type=int, default=64,
                   help="measurements per kernel on average (default 64); the scheduler allocates them")
    p.add_argument("--scheduler", default=Strategy.GRADIENT.value, choices=[s.value for s in Strategy],
                   help="gradient: rounds to the kernels where the model's time gains most (Ansor); "
                        "round-robin: equal rounds")
    p.add_argument("--log", required=True, help="JSON-lines tuning log (appended; resumed from)")
    p.add_argument("--mode", default="full", choices=[m.value for m in SearchMode],
                   help="full: evolutionary search with the cost model; fast: the prior's top N; random")
    p.add_argument("--workers", default="1",
                   help="N: measuring processes (0: in this process); ray: a Ray cluster (the one ray.init() "
                        "finds, or a local one); ray://ADDRESS: the Ray cluster at ADDRESS (needs fsir[ray])")
    p.add_argument("--measurer", default="model", choices=("model", "cuda"),
                   help="model: sampled simulator blocks through the timeline model; cuda: CUDA events on the GPU")
    p.add_argument("--gpu", default=PipelineOptions.gpu)
    p.add_argument("--arch", default=PipelineOptions.arch)
    p.add_argument("--fusion", default=PipelineOptions.fusion)
    p.add_argument("--precision", default=PipelineOptions.precision)
    p.add_argument("--exhaustive", action="store_true",
                   help="measure every statically valid candidate of each kernel's space (--trials, --mode and "
                        "--scheduler do not apply); refused for a space over --limit rule-valid candidates")
    p.add_argument("--limit", type=int, default=DEFAULT_LIMIT,
                   help=f"--exhaustive: the most rule-valid candidates a kernel's space may have (default "
                        f"{DEFAULT_LIMIT})")
    p.add_argument("--sizes", default=None, metavar="SYMBOL=N,N,...",
                   help="tune the model specialised to each size of its symbolic dim SYMBOL (a #graph.dims name, "
                        "an ONNX dim_param, else ARG_dDIM); fsir.compile(..., tuning_log=) then dispatches on it")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per measurement (default 300)")
    return p


def tune_model(text: str, options: PipelineOptions, search: SearchOptions, log: str, workers: int | Workers,
               timeout: float = 300.0, progress: bool = True,
               schedule: SchedulerOptions | None = None,
               exhaustive: int | None = None,
               sizes: tuple[tuple[str, int], ...] = ()) -> list[tuple[str, TuneResult]]:
    """Tune every task of the model `text`, `search.trials` measurements per task on
    average, rounds of `search.batch` allocated by the task scheduler (`schedule`;
    default the gradient scheduler); (kernel name, result) per task, measured by
    `search.measurer_name` (model or cuda). `exhaustive`: instead measure every task's
    whole space, refused (before anything is measured) for a task with more rule-valid
    candidates than this limit. `sizes`: the symbolic dims' sizes `text` is specialised
    to, carried by every record."""
    from tqdm import tqdm

    stitched = stitched_from_text(text, options)
    tasks = discover(stitched, options)
    db = Database(log, sizes=sizes)
    backend = CudaBackend() if search.measurer_name == "cuda" else ModelBackend()
    cuda = search.measurer_name == "cuda"
    measurer = make_measurer(backend, workers if isinstance(workers, Workers) else Workers(workers), timeout,
                             TimingResource.GPU if cuda else TimingResource.CPU)
    sched = schedule or SchedulerOptions(round_trials=search.batch, seed=search.seed)
    total = search.trials * len(tasks)
    bar = tqdm(total=total, desc="fs-tune", disable=not progress, file=sys.stderr, unit="trial")
    try:
        if exhaustive is not None:
            search = replace(search, learn=False)  # nothing to guide: every candidate is measured
        tuners = [model_tuner(text, options, task, search, measurer, db) for task in tasks]
        if exhaustive is not None:
            spaces = [rule_valid(t.checker.space, exhaustive, t.task.kernel) for t in tuners]
            bar.reset(total=sum(map(len, spaces)))  # an upper bound: some fail the static checks
            for tuner, traces in zip(tuners, spaces):
                measure_space(tuner, traces, bar.update)
            return [(task.kernel, tuner.result()) for task, tuner in zip(tasks, tuners)]
        entries = [SchedTask(tuner, task.launches, default_prior(tuner), task.mapping, task.kernel)
                   for task, tuner in zip(tasks, tuners)]

        def on_round(point: Point) -> None:
            bar.update(point.trials - bar.n)
            bar.set_postfix_str(" ".join(f"{e.name.rsplit('_', 1)[-1]}:{e.tuner.best_seconds() * 1e6:.1f}µs"
                                         for e in entries))

        TaskScheduler(entries, sched, on_round).run(total)
    finally:
        bar.close()
        measurer.close()
    return [(task.kernel, tuner.result()) for task, tuner in zip(tasks, tuners)]


def model_tuner(text: str, options: PipelineOptions, task: Task, search: SearchOptions, measurer: Measurer,
                db: Database) -> Tuner:
    """A tuner of one task of the model `text` (its space captured from the model)."""
    request = capture(stitched_from_text(text, options), options, task.key)
    checker = Checker(request, task_space(text, options, task.key))
    return Tuner(TaskSource(text, options, task.key, task.kernel), task.mapping, checker, measurer, db, search,
                 task.default_config)


def default_prior(tuner: Tuner) -> float:
    """The latency-evaluator's estimate of today's choice: the task's work as the
    scheduler's similarity term reads it (0: unknown)."""
    got = tuner.default_checked()
    return got.prior_seconds if got is not None and math.isfinite(got.prior_seconds) else 0.0


def require_gpu() -> None:
    """`--measurer cuda` on local workers: refused up front where no GPU is usable
    (else every trial would fail alone and the table would hold only failures). On a Ray
    cluster the GPUs are the cluster's, not this machine's."""
    from fsir.runtime.cuda_device import probe_gpu

    ok, why = probe_gpu()
    if not ok:
        raise UserError(f"--measurer cuda: no CUDA GPU found: {why}")


def models(text: str, name: str, sizes: str | None) -> list[tuple[str, str, tuple[tuple[str, int], ...]]]:
    """The models to tune: `text` itself, or (`--sizes SYMBOL=N,...`) `text`
    specialised to each size; each as (label, text, sizes)."""
    if sizes is None:
        return [("", text, ())]
    from fsir.parse import parse_module
    from fsir.tune.sizes import SizeList, specialize

    wanted = SizeList.parse(sizes)
    module = parse_module(text, name)
    return [(f" @{wanted.symbol}={n}", str(specialize(module, wanted.symbol, n)), ((wanted.symbol, n),))
            for n in wanted.values]


def summary_table(results: list[tuple[str, TuneResult]]) -> str:
    rows = ["| kernel | today | today µs | tuned | tuned µs | speedup | statically rejected | broke rules |",
            "|---|---|---:|---|---:|---:|---:|---:|"]
    for name, r in results:
        d = r.default
        b = r.best
        d_us = d.seconds * 1e6 if d is not None and d.seconds else math.nan
        b_us = b.seconds * 1e6 if b is not None and b.seconds else math.nan
        rate = f"{r.rejected}/{r.samples}" if r.samples else "-"
        rules = f"{r.broke_rules}/{r.drawn}" if r.drawn else "-"
        rows.append(f"| {name} | {d.config if d else '?'} | {d_us:.2f} | {b.config if b else '?'} | {b_us:.2f} | "
                    f"{d_us / b_us:.2f}x | {rate} | {rules} |")
    return "\n".join(rows)


def main(argv=None) -> None:
    args = parser().parse_args(argv)
    try:
        # workers re-parse the model: its graph-dialect text
        text = open(args.model).read() if args.model.endswith(".mlir") else str(read_model(args.model))
        options = PipelineOptions(fusion=args.fusion, gpu=args.gpu, arch=args.arch, precision=args.precision)
        search = SearchOptions(trials=args.trials, mode=SearchMode(args.mode), seed=args.seed,
                               measurer_name=args.measurer)
        schedule = SchedulerOptions(Strategy(args.scheduler), round_trials=search.batch, seed=args.seed)
        workers = Workers.parse(args.workers)
        if args.measurer == "cuda" and not workers.ray:
            require_gpu()
        exhaustive = args.limit if args.exhaustive else None
        results = []
        for label, sized, at in models(text, args.model, args.sizes):
            got = tune_model(sized, options, search, args.log, workers, args.timeout, schedule=schedule,
                             exhaustive=exhaustive, sizes=at)
            results += [(f"{kernel}{label}", r) for kernel, r in got]
    except UserError as err:
        print(f"fs-tune: error: {err}", file=sys.stderr)
        sys.exit(1)
    print(summary_table(results))
