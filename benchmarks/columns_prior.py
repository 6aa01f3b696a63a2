"""How well the tuner's prior (the latency-evaluator's estimate of a columns kernel's
summary) ranks the columns kernel's candidates: rows per tile and each cluster's
(lanes, vector width).

    python benchmarks/columns_prior.py [--count 40] [--workers 2] [--log columns.jsonl] [--markdown]

Kernels: the embedding-columns kernel of examples/hlo/embedding_bag.hlo,
examples/recom/recom_8.mlir and recom_ragged_8.mlir, and of a 20-column RECom model at
batch 256 (`examples/recom/generate.py 20 --batch 256 --max-rows 1000`). Per kernel, a
seeded random sample of `--count` statically valid candidates and the builder's own
choice are measured on the `model` measurer (simulator + timeline model) with every
block simulated unless `--samples N` (a columns kernel's blocks are unequal, and the
nearest of N sampled blocks stands in badly for the others); memoised in `--log`, so a
rerun after a change of the prior measures nothing. Printed per kernel:
Kendall τ of the prior against the measured times, and the measured time of the
prior's pick (its fastest estimate among the measured candidates), of the builder's
choice and of the best measured candidate.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from fsir.pipeline import PipelineOptions, read_model
from fsir.tune.cost_model import kendall_tau
from fsir.tune.measure import MeasureInput, ModelBackend, PoolMeasurer, TaskSource, stitched_from_text
from fsir.tune.space import Checked, Checker, sample_valid, space_for, today_splits
from fsir.tune.task import capture, discover

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests" / "tune"))
sys.path.insert(0, str(ROOT / "examples" / "recom"))
OPTIONS = PipelineOptions(fusion="stitch", gpu="H100")
FULL = 10**9  # samples past any grid: every block simulated


def recom(columns: int, batch: int, seed: int = 0, max_rows: int = 1000) -> str:
    """A RECom model as examples/recom/generate.py writes it."""
    from generate import model_spec, to_mlir

    return to_mlir(model_spec(columns, seed, max_rows), batch)


def models() -> dict[str, str]:
    ex = ROOT / "examples"
    return {
        "embedding_bag.hlo": str(read_model(str(ex / "hlo" / "embedding_bag.hlo"))),
        "recom_8": (ex / "recom" / "recom_8.mlir").read_text(),
        "recom_ragged_8": (ex / "recom" / "recom_ragged_8.mlir").read_text(),
        "recom 20 columns, batch 256": recom(20, 256),
    }


@dataclass(frozen=True)
class Row:
    name: str
    clusters: int
    candidates: int
    tau: float
    pick: float  # seconds measured: the prior's pick
    builder: float  # the builder's choice
    best: float  # the best measured
    pick_config: str
    best_config: str


def kernel_row(name: str, text: str, count: int, memo, seed: int = 0) -> Row:
    """The columns kernel of `text`: `count` random valid candidates and the builder's
    choice, their priors and measured times."""
    stitched = stitched_from_text(text, OPTIONS)
    (task,) = [t for t in discover(stitched, OPTIONS) if t.mapping == "columns"]
    request = capture(stitched, OPTIONS, task.key)
    space = space_for(request, today_splits(request))
    checker = Checker(request, space)
    cands = sample_valid(checker, random.Random(seed), count).candidates[:count]
    (today_config,) = space.fixed
    today_trace = space.trace_of(today_config)
    assert today_trace is not None
    today = checker.check(today_trace)
    assert isinstance(today, Checked)
    cands = [today, *(c for c in cands if c.trace != today_trace)]
    src = TaskSource(text, OPTIONS, task.key, task.kernel)
    results = memo.measure([MeasureInput(src, c.trace) for c in cands])
    got = [(c, r.seconds) for c, r in zip(cands, results) if r.ok and r.seconds]
    priors = [c.prior_seconds for c, _ in got]
    measured = [s for _, s in got]
    pick = min(got, key=lambda g: g[0].prior_seconds)
    best = min(got, key=lambda g: g[1])
    builder = next(s for c, s in got if c.trace == today_trace)
    clusters = len(space.sketches[0].domains()) // 2  # type: ignore[attr-defined]  # rows, then lanes/vector per cluster
    return Row(name, clusters, len(got), kendall_tau(priors, measured), pick[1], builder, best[1],
               pick[0].description, best[0].description)


def table(rows: list[Row], count: int) -> list[str]:
    out = ["| kernel | clusters | candidates | τ prior | prior's pick µs | builder µs | best sampled µs |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    out += [f"| {r.name} | {r.clusters} | {r.candidates} | {r.tau:.3f} | {r.pick * 1e6:.2f} | {r.builder * 1e6:.2f} | "
            f"{r.best * 1e6:.2f} |" for r in rows]
    out += ["", f"Kendall τ of the prior against the `model` measurer over {count} random valid candidates and the "
                "builder's choice per kernel (H100); the prior's pick is its fastest estimate among them."]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=40, help="random candidates per kernel")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--samples", type=int, default=0,
                   help="blocks the model measurer simulates per launch (0: every block; a columns kernel's blocks "
                        "differ, the nearest sampled block stands in for the others)")
    p.add_argument("--log", default=None, help="JSON lines memoising the measurements")
    p.add_argument("--only", nargs="*", default=None, help="kernels by name prefix")
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args(argv)
    from tune_sets import Memo

    memo = Memo(PoolMeasurer(ModelBackend(samples=args.samples or FULL), workers=args.workers, timeout=args.timeout),
                Path(args.log) if args.log else None)
    rows = []
    t = time.time()
    try:
        for name, text in models().items():
            if args.only and not any(name.startswith(o) for o in args.only):
                continue
            row = kernel_row(name, text, args.count, memo, args.seed)
            rows.append(row)
            print(f"  {name}: τ {row.tau:.3f} over {row.candidates}; pick {row.pick * 1e6:.2f} µs "
                  f"({row.pick_config}), builder {row.builder * 1e6:.2f}, best {row.best * 1e6:.2f} "
                  f"({row.best_config}); {memo.fresh} fresh, {time.time() - t:.0f} s", flush=True)
    finally:
        memo.pool.close()
    lines = table(rows, args.count)
    print("\n".join(lines))
    if args.markdown:
        from docgen import publish

        publish("columns_prior.py", sys.argv[1:] if argv is None else argv, "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
