"""The model corpus (examples/zoo/) on fsir's simulator: every variant compiled and run
in each fusion mode (none, xla, stitch) and checked against onnxruntime's outputs.

    python examples/zoo/build.py                      # the corpus, once (needs the zoo extra)
    python benchmarks/zoo.py                          # every variant in examples/zoo/out
    python benchmarks/zoo.py --only bert,dlrm --dtypes f32 --exporters torchscript
    python benchmarks/zoo.py --tsv zoo.tsv            # one line per variant

One line per variant: status (pass / refused / wrong / crash, the worst over the modes),
compile and simulator seconds (stitch mode), kernels launched in none / xla / stitch
mode, and the distinct global bytes the stitch run moves against the lower bound
(inputs, weights and outputs moved once). The messages of every variant that did not
pass follow the table.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from fsir.onnx.conformance import Outcome
from fsir.onnx.zoo import VariantResult, run_variant, variants

HERE = Path(__file__).resolve().parent
STATUS = {Outcome.PASSED: "pass", Outcome.REFUSED: "refused", Outcome.FAILED: "wrong", Outcome.CRASHED: "crash"}
MODES = ("none", "xla", "stitch")


def line(r: VariantResult, width: int) -> str:
    stitch = r.modes.get("stitch")
    kernels = "/".join(str(r.modes[m].kernels) if m in r.modes and r.modes[m].kernels else "-" for m in MODES)
    ratio = f"{stitch.distinct_bytes / r.lower_bound:6.2f}" if stitch and stitch.distinct_bytes else "     -"
    compile_s = f"{stitch.compile_s:7.2f}" if stitch else "      -"
    sim_s = f"{stitch.sim_s:7.2f}" if stitch and stitch.sim_s else "      -"
    return (f"{r.variant.name:<{width}} {STATUS[r.outcome]:<8} {compile_s} {sim_s} {kernels:>14} "
            f"{(stitch.distinct_bytes if stitch else 0) / 1e3:>10.1f} {r.lower_bound / 1e3:>10.1f} {ratio}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=str(HERE.parent / "examples" / "zoo" / "out"), help="the built corpus")
    ap.add_argument("--only", help="architectures (comma-separated)")
    ap.add_argument("--exporters", help="torchscript, dynamo (comma-separated; default both)")
    ap.add_argument("--dtypes", help="f32, f16 (comma-separated; default both)")
    ap.add_argument("--modes", default=",".join(MODES), help="fusion modes (comma-separated)")
    ap.add_argument("--tsv", help="write one line per variant and mode")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)

    folder = Path(args.dir)
    if not (folder / "manifest.json").exists():
        print(f"{folder}: no corpus (run examples/zoo/build.py first)", file=sys.stderr)
        return 1
    chosen = variants(folder)
    for attr, wanted in (("arch", args.only), ("exporter", args.exporters), ("dtype", args.dtypes)):
        if wanted:
            chosen = [v for v in chosen if getattr(v, attr) in wanted.split(",")]
    modes = [m for m in MODES if m in args.modes.split(",")]
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for v in tqdm(chosen, desc="models", disable=args.quiet or None, leave=False):
            results.append(run_variant(v, modes))

    width = max([len(r.variant.name) for r in results] + [7])
    head = (f"{'variant':<{width}} {'status':<8} {'compile':>7} {'sim s':>7} {'none/xla/stitch':>14} "
            f"{'kB moved':>10} {'kB bound':>10} {'×bound':>6}")
    print(head)
    print("-" * len(head))
    for r in results:
        print(line(r, width))
    counts = Counter(r.outcome for r in results)
    print("-" * len(head))
    print(", ".join(f"{counts[o]} {STATUS[o]}" for o in STATUS) + f" of {len(results)}")
    for r in results:
        if r.outcome != Outcome.PASSED:
            print(f"\n{r.variant.name}: {STATUS[r.outcome]}\n  " + r.message.strip().replace("\n", "\n  "))
    if args.tsv:
        with open(args.tsv, "w") as f:
            f.write("variant\tmode\tstatus\tcompile_s\tsim_s\tkernels\tdistinct_bytes\tlower_bound\tmessage\n")
            for r in results:
                for mode, m in r.modes.items():
                    msg = m.message.strip().replace("\n", " | ").replace("\t", " ")
                    f.write(f"{r.variant.name}\t{mode}\t{STATUS[m.outcome]}\t{m.compile_s:.3f}\t{m.sim_s:.3f}\t"
                            f"{m.kernels}\t{m.distinct_bytes}\t{r.lower_bound}\t{msg}\n")
    return 0 if counts[Outcome.PASSED] == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
