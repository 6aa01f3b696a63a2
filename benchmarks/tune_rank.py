"""benchmarks/tune.py --rank: the cost model's Kendall τ on held-out shapes of one
mapping kind at a time (issue 28, item 6c).

Two kinds: f16 GEMMs (the tensor-core sketch without split-K: split kernels are
simulated in full, minutes each) and LayerNorm rows (every row sketch). Per shape, a
seeded random sample of statically valid candidates is measured on the `model`
measurer (memoised in `--log`). Each shape of a kind in turn is held out: the model
trained on the kind's other shapes ranks the held-out shape's whole sample, and Kendall
τ against the measured times is printed beside the prior's
(`fsir.tune.cost_model.held_out`).
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

from fsir.pipeline import PipelineOptions
from fsir.testing.graphs import dot
from fsir.tune.cost_model import HeldOut, Objective, Sample, held_out
from fsir.tune.measure import MeasureInput, ModelBackend, PoolMeasurer, TaskSource, stitched_from_text
from fsir.tune.space import Checker, SketchKind, sample_valid, space_for, today_splits
from fsir.tune.task import capture, discover

OPTIONS = PipelineOptions(fusion="stitch", gpu="H100")

# (m, n, k): square, tall, wide, deep and shallow f16 GEMMs whose mma candidates simulate in
# about a second each on 4 sampled blocks
SHAPES = ((256, 256, 256), (512, 512, 512), (256, 256, 512), (128, 512, 256), (512, 128, 256),
          (64, 512, 1024), (384, 384, 128), (256, 1024, 128))
# (rows, columns) of a LayerNorm
ROWS = ((1000, 768), (512, 1024), (2048, 256), (256, 2048), (4096, 512), (128, 4096))


def kinds() -> dict[str, list[tuple[str, str]]]:
    """Per mapping kind, its shapes' names and models."""
    from tune_graphs import layernorm  # tests/tune, put on the path by tune_sets

    return {"gemm": [(f"gemm {m}x{n}x{k} f16", dot(m, n, k, "f16")) for m, n, k in SHAPES],
            "row": [(f"layernorm {r}x{c}", layernorm(r, c)) for r, c in ROWS]}


def shape_samples(text: str, count: int, measurer, seed: int = 0) -> tuple[str, list[Sample]]:
    """`count` random statically valid candidates of the model's one kernel (an f16 GEMM's
    mma sketch without split-K; a row kernel's whole space), measured."""
    stitched = stitched_from_text(text, OPTIONS)
    (task,) = discover(stitched, OPTIONS)
    request = capture(stitched, OPTIONS, task.key)
    space = space_for(request, today_splits(request))
    if SketchKind.GEMM_MMA in {s.kind for s in space.sketches}:
        space = space.narrowed({SketchKind.GEMM_MMA}, split=False)
    cands = sample_valid(Checker(request, space), random.Random(seed), count).candidates[:count]
    src = TaskSource(text, OPTIONS, task.key, task.kernel)
    results = measurer.measure([MeasureInput(src, c.trace) for c in cands])
    return task.key, [Sample(task.key, c.features, c.prior_seconds, r.seconds)
                      for c, r in zip(cands, results) if r.ok and r.seconds]


def rank_table(by_kind: dict[str, list[HeldOut]], residual: dict[str, list[HeldOut]],
               names: dict[str, str]) -> list[str]:
    """τ per held-out shape: the model (pairwise), the residual regression, the prior."""
    out = ["| kind | held-out shape | candidates | τ model (pairwise) | τ residual model | τ prior |",
           "|---|---|---:|---:|---:|---:|"]
    out += [f"| {kind} | {names[r.task]} | {r.candidates} | {r.tau_model:.3f} | {q.tau_model:.3f} | "
            f"{r.tau_prior:.3f} |" for kind, rows in by_kind.items() for r, q in zip(rows, residual[kind])]
    for kind, rows in by_kind.items():
        if not rows:
            continue
        out += ["", f"{kind}: mean τ over {len(rows)} held-out shapes: residual model "
                    f"{statistics.mean(r.tau_model for r in residual[kind]):.3f}; model "
                    f"{statistics.mean(r.tau_model for r in rows):.3f} (median "
                    f"{statistics.median(r.tau_model for r in rows):.3f}, at least 0.7 on "
                    f"{sum(r.tau_model >= 0.7 for r in rows)}), prior {statistics.mean(r.tau_prior for r in rows):.3f} "
                    f"(at least 0.7 on {sum(r.tau_prior >= 0.7 for r in rows)})."]
    return out


def rank_set(args) -> None:
    from tune_sets import Memo

    count = args.trials if args.trials != 64 else 40
    memo = Memo(PoolMeasurer(ModelBackend(samples=args.samples), workers=args.workers, timeout=args.timeout),
                Path(args.log) if args.log else None)
    samples: dict[str, list[Sample]] = {}
    names: dict[str, str] = {}
    t = time.time()
    try:
        for kind, models in kinds().items():
            for name, text in models:
                key, got = shape_samples(text, count, memo)
                names[key] = name
                samples.setdefault(kind, []).extend(got)
                print(f"  {name}: {len(got)} candidates measured ({memo.fresh} fresh, {time.time() - t:.0f} s)",
                      flush=True)
    finally:
        memo.pool.close()
    print(f"\ncost model on held-out shapes of one kind (trained on the kind's other shapes), Kendall τ against "
          f"measured times, {count} random candidates a shape")
    table = rank_table({kind: held_out(got) for kind, got in samples.items()},
                       {kind: held_out(got, objective=Objective.RESIDUAL) for kind, got in samples.items()}, names)
    print("\n".join(table))
    if args.markdown:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from docgen import publish

        publish("tune.py", sys.argv[1:], "\n".join(table))
