"""`fs-tune MODEL --trials N --log tune.jsonl [--mode fast|full|random] [--workers N]`:
tune every distinct fusion of a model on the `model` measurer, appending to the log
(and resuming from it: candidates already logged are not measured again), then print
a table of today's choice against the best found per kernel."""

from __future__ import annotations

import argparse
import math
import sys

from fsir.errors import UserError
from fsir.pipeline import PipelineOptions, read_model
from fsir.tune.database import Database
from fsir.tune.measure import CudaBackend, ModelBackend, PoolMeasurer, TaskSource, _stitched, task_space
from fsir.tune.search import SearchMode, SearchOptions, Tuner, TuneResult
from fsir.tune.space import Checker
from fsir.tune.task import capture, discover


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fs-tune", description="tune every kernel of a model on the model measurer")
    p.add_argument("model", help="model file (.mlir, .hlo, .onnx)")
    p.add_argument("--trials", type=int, default=64, help="measurements per kernel (default 64)")
    p.add_argument("--log", required=True, help="JSON-lines tuning log (appended; resumed from)")
    p.add_argument("--mode", default="full", choices=[m.value for m in SearchMode],
                   help="full: evolutionary search with the cost model; fast: the prior's top N; random")
    p.add_argument("--workers", type=int, default=1, help="measuring processes (0: in this process)")
    p.add_argument("--measurer", default="model", choices=("model", "cuda"),
                   help="model: sampled simulator blocks through the timeline model; cuda: CUDA events on the GPU")
    p.add_argument("--gpu", default=PipelineOptions.gpu)
    p.add_argument("--arch", default=PipelineOptions.arch)
    p.add_argument("--fusion", default=PipelineOptions.fusion)
    p.add_argument("--precision", default=PipelineOptions.precision)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per measurement (default 300)")
    return p


def tune_model(text: str, options: PipelineOptions, search: SearchOptions, log: str, workers: int,
               timeout: float = 300.0, progress: bool = True) -> list[tuple[str, TuneResult]]:
    """Tune every task of the model `text`; (kernel name, result) per task, measured by
    `search.measurer_name` (model or cuda)."""
    from tqdm import tqdm

    stitched = _stitched(text, options)
    tasks = discover(stitched, options)
    db = Database(log)
    backend = CudaBackend() if search.measurer_name == "cuda" else ModelBackend()
    measurer = PoolMeasurer(backend, workers=workers, timeout=timeout)
    out = []
    try:
        for task in tasks:
            request = capture(_stitched(text, options), options, task.key)
            checker = Checker(request, task_space(text, options, task.key))
            bar = tqdm(total=search.trials, desc=task.kernel, disable=not progress, file=sys.stderr)
            tuner = Tuner(TaskSource(text, options, task.key, task.kernel), task.mapping, checker, measurer, db,
                          search, task.default_config, on_trial=lambda _r, bar=bar: _tick(bar))
            out.append((task.kernel, tuner.run()))
            bar.close()
    finally:
        measurer.close()
    return out


def _tick(bar) -> None:
    bar.update(1)


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
        results = tune_model(text, options, search, args.log, args.workers, args.timeout)
    except UserError as err:
        print(f"fs-tune: error: {err}", file=sys.stderr)
        sys.exit(1)
    print(summary_table(results))
