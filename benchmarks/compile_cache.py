"""The kernel cache on the PTX path, cold and warm, each compile in a new process.

    python benchmarks/compile_cache.py                 # the BERT layer and 12 chained layers
    python benchmarks/compile_cache.py --layers 1 --repeat 3
    python benchmarks/compile_cache.py --repeat 2 --markdown   # docs/benchmarks.md's table

For each model: a compile without the cache, a cold one (an empty cache directory) and
a warm one (the same directory again), each a fresh `python` process that imports fsir,
reads and parses the model, and runs `fsir.pipeline.compile_ptx` (the path fs-run
takes). It prints the CPU and wall seconds of the compile beyond parsing (and the
parse, and the whole process's wall clock), the best of `--repeat` runs, and the load
average, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compile_speed import bert_stack  # noqa: E402  (beside this benchmark)

ONE = """
import json, sys, time
from fsir.cache import KernelCache, active
from fsir.pipeline import PipelineOptions, compile_ptx, read_model
from fsir.stats import collecting
t, c = time.perf_counter(), time.process_time()
module = read_model(sys.argv[1])
t1, c1 = time.perf_counter(), time.process_time()
store = KernelCache.from_environment(force=True) if sys.argv[2] == "on" else None
with collecting() as counts, active(store):
    compile_ptx(module, PipelineOptions())
t2, c2 = time.perf_counter(), time.process_time()
r = counts.result()
print(json.dumps({"parse": t1 - t, "wall": t2 - t1, "cpu": c2 - c1, "hit": r.cache_compile_hits,
                  "lowered": r.kernels_lowered}))
"""


def run(path: str, cache: str, directory: str) -> dict:
    env = dict(os.environ, FSIR_CACHE_DIR=directory)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", ONE, path, cache], check=True, capture_output=True, text=True,
                         env=env).stdout
    return dict(json.loads(out), process=time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, nargs="+", default=[1, 12])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--markdown", action="store_true", help="also write the table into the documents that show it")
    argv = sys.argv[1:]
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} CPUs; seconds, best of {args.repeat}")
    header = ["model", "compile", "kernels lowered", "compile CPU s", "compile wall s", "parse s", "process wall s"]
    table: list[list[object]] = []
    print("| " + " | ".join(header) + " |")
    with tempfile.TemporaryDirectory() as tmp:
        for layers in args.layers:
            path = Path(tmp) / f"bert_{layers}.mlir"
            path.write_text(bert_stack(layers))
            rows: dict[str, list[dict]] = {"no cache": [], "cold": [], "warm": []}
            for i in range(args.repeat):
                directory = tempfile.mkdtemp(dir=tmp, prefix=f"cache{layers}_{i}_")
                rows["no cache"].append(run(str(path), "off", directory))
                rows["cold"].append(run(str(path), "on", directory))
                rows["warm"].append(run(str(path), "on", directory))
            for name, runs in rows.items():
                best = min(runs, key=lambda r: r["cpu"])
                row = [f"BERT x{layers}", name, best["lowered"], f"{best['cpu']:.2f}",
                       f"{min(r['wall'] for r in runs):.2f}", f"{min(r['parse'] for r in runs):.2f}",
                       f"{min(r['process'] for r in runs):.2f}"]
                print("| " + " | ".join(str(c) for c in row) + " |", flush=True)
                table.append(row)
    after = os.getloadavg()[0]
    print(f"load average after: {after:.1f}")
    if args.markdown:
        import docgen

        caption = (f"Seconds, the best of {args.repeat} runs, each a new process, on {os.cpu_count()} cores at "
                   f"load {load:.1f} to {after:.1f}, {time.strftime('%Y-%m-%d')}.")
        right = [False, False, True, True, True, True, True]
        docgen.publish(__file__, argv, docgen.markdown_table(header, table, right) + "\n\n" + caption)


if __name__ == "__main__":
    main()
