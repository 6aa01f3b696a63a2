"""Compile speed: seconds per stage from graph IR to PTX, for one BERT layer and for
BERT-base stacks of its layers (the same layer repeated, each with its own weights).

    python benchmarks/compile_speed.py                 # 1, 2, 4 and 12 layers
    python benchmarks/compile_speed.py --layers 1 12 --repeat 3
    python benchmarks/compile_speed.py --layers 1 12 --repeat 3 --markdown   # docs/benchmarks.md's table
    python benchmarks/compile_speed.py --resnet --repeat 3   # also ResNet-50 (the onnx wheel's `light` model)
    python benchmarks/compile_speed.py --round-trip          # would lowering in worker processes pay?
    python benchmarks/compile_speed.py --jobs 1 2 --repeat 3 # ResNet-50 lowered and printed by 1, 2 processes

Prints, per model, the CPU seconds of this process (`time.process_time`: on a shared
machine the wall clock counts the other processes too) of parsing, each pass of the
stitch pipeline and the PTX printer (the best of `--repeat` runs by their total), the
kernels and the distinct gpu.funcs, and the seconds per layer, so growth in the number
of layers can be read off.

`--round-trip` prints, for ResNet-50's kernels, the CPU seconds of lowering them, of
printing their gpu.funcs and of parsing them back: a worker process that lowers a
kernel hands it back as text (xDSL IR does not cross processes otherwise), so the
parent parses what it did not lower, and workers pay only when parsing costs less than
lowering.

`--jobs N...` compiles ResNet-50 to PTX with the kernels lowered and printed by N
processes (`fsir.pipeline.compile_ptx`; 1: serially in this one) and prints the wall
seconds of the stages up to stitch-codegen, of lowering + PTX (schedule-to-gpu and
the printer, the workers included) and of the whole compile (the model read
excluded), with the CPU seconds of this process (up to stitch-codegen, and after) and
of its workers, and the CPU path: this process's CPU seconds plus the workers' divided
by N, what the wall clock would read on N idle cores with the work evenly spread (a
shared machine's wall clock counts the other processes); each the best of `--repeat` runs. stitch-codegen
leaves the kernels' lowering to the later stage in every run (it lowers them to prove
them lowerable otherwise), so that stage holds the same work for every N.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # docgen, beside this script

LAYER = Path(__file__).resolve().parent.parent / "examples" / "bert_layer.mlir"
SHARED = {"x", "mask"}  # the first layer's input and the attention mask all layers read


def bert_stack(layers: int) -> str:
    """`layers` BERT layers in one function: layer l's input is layer l-1's output and
    its weights are arguments of their own."""
    text = LAYER.read_text()
    head, body = text.split("{\n", 1)
    body = body.rsplit("func.return", 1)[0]
    params = re.findall(r"%(\w+): (tensor<[^>]*>)", head)
    args = [f"%{n}: {t}" for n, t in params if n in SHARED]
    lines = []
    for layer in range(layers):
        def rename(m: re.Match, layer: int = layer) -> str:
            name = m.group(1)
            if name in SHARED:
                return f"%{name}" if name == "mask" or layer == 0 else f"%y_l{layer - 1}"
            return f"%{name}_l{layer}"

        args += [f"%{n}_l{layer}: {t}" for n, t in params if n not in SHARED]
        lines.append(re.sub(r"%([A-Za-z_]\w*)", rename, body))
    out_type = re.search(r"-> (tensor<[^>]*>) \{", text)
    assert out_type is not None
    return (f"func.func @bert_{layers}(" + ", ".join(args) + f") -> {out_type.group(1)} {{\n"
            + "".join(lines) + f"  func.return %y_l{layers - 1} : {out_type.group(1)}\n}}\n")


def compile_once(text: str) -> tuple[dict[str, float], int, int]:
    """Seconds per stage, kernels launched, distinct gpu.funcs."""
    from fsir.parse import parse_module

    t = time.process_time()
    module = parse_module(text, "<bert>")
    return compile_module(module, time.process_time() - t)


def compile_model(path: str) -> tuple[dict[str, float], int, int]:
    """`compile_once` of a model file (parse: reading and importing it)."""
    from fsir.pipeline import read_model

    t = time.process_time()
    module = read_model(path)
    return compile_module(module, time.process_time() - t)


def compile_module(module, parse_seconds: float) -> tuple[dict[str, float], int, int]:
    from fsir.pipeline import PipelineOptions, emit_ptx, lower

    times: dict[str, float] = {"parse": parse_seconds}
    last = [time.process_time()]

    def stage(name: str, _wall: float, _module) -> None:
        # CPU seconds since the previous stage ended (verification of the output
        # counts with the last pass)
        now = time.process_time()
        times[name], last[0] = now - last[0], now

    options = PipelineOptions()
    lowered = lower(module, options, on_stage=stage)
    last[0] = time.process_time()
    emit_ptx(lowered, options, on_stage=stage)
    launches = sum(1 for op in lowered.walk() if op.name == "gpu.launch_func")
    funcs = sum(1 for op in lowered.walk() if op.name == "gpu.func")
    return times, launches, funcs


def resnet50() -> str:
    """The `light` ResNet-50 of the onnx wheel's backend test data."""
    from fsir.onnx.conformance import DATA_DIR

    return os.path.join(DATA_DIR, "light", "light_resnet50.onnx")


def round_trip(path: str) -> dict[str, float]:
    """CPU seconds of lowering the kernels of `path`, printing their gpu.funcs and
    parsing those back."""
    from xdsl.parser import Parser

    from fsir.codegen.mappings import mapping_of
    from fsir.dialects.schedule import KernelOp
    from fsir.parse import make_context
    from fsir.pipeline import PipelineOptions, lower, read_model

    scheduled = lower(read_model(path), PipelineOptions(), until="stitch-codegen")
    seconds = {"kernels": 0.0, "lower": 0.0, "print": 0.0, "parse": 0.0}
    ctx = make_context()
    for k in scheduled.walk():
        if not isinstance(k, KernelOp):
            continue
        seconds["kernels"] += 1
        t0 = time.process_time()
        fn = mapping_of(k).lower(k).func
        t1 = time.process_time()
        text = str(fn)
        t2 = time.process_time()
        Parser(ctx, text, "<round trip>").parse_op()
        t3 = time.process_time()
        seconds["lower"] += t1 - t0
        seconds["print"] += t2 - t1
        seconds["parse"] += t3 - t2
    return seconds


def jobs_once(path: str, jobs: int) -> dict[str, float]:
    """Seconds of one compile of `path` to PTX by `jobs` processes (see the module's doc)."""
    import resource

    from fsir.codegen.stitch_codegen import trials_deferred
    from fsir.pipeline import PipelineOptions, compile_ptx, emit_ptx, lower, read_model

    module = read_model(path)
    options = PipelineOptions(jobs=jobs)
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def stage(name: str, _seconds: float, _module) -> None:
        wall[name], cpu[name] = time.perf_counter(), time.process_time()

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    stage("start", 0.0, None)
    if jobs == 1:
        with trials_deferred():
            scheduled = lower(module, options, until="stitch-codegen", on_stage=stage)
        lowered = lower(scheduled, options, after="stitch-codegen", on_stage=stage)
        emit_ptx(lowered, options, on_stage=stage)
    else:
        compile_ptx(module, options, on_stage=stage)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    front, tail = cpu["stitch-codegen"] - cpu["start"], cpu["ptx"] - cpu["stitch-codegen"]
    return {"front": wall["stitch-codegen"] - wall["start"], "lower+ptx": wall["ptx"] - wall["stitch-codegen"],
            "total": wall["ptx"] - wall["start"], "cpu front": front, "cpu tail": tail, "cpu workers": workers,
            "cpu path": front + tail + workers / jobs}


def jobs_table(path: str, jobs: list[int], repeat: int) -> None:
    """`jobs_once` for each number of processes, the best of `repeat` runs per column."""
    jobs_once(path, 1)  # imports and first-use caches outside the figures
    rows = {n: [jobs_once(path, n) for _ in range(repeat)] for n in jobs}
    header = ["jobs", "front", "lower+ptx", "total", "cpu front", "cpu tail", "cpu workers", "cpu path"]
    print(" | ".join(f"{h:>12}" for h in header))
    for n, runs in rows.items():
        best = {k: min(r[k] for r in runs) for k in runs[0]}
        print(" | ".join(f"{c:>12}" for c in [n, *(f"{v:.2f}" for v in best.values())]), flush=True)
    def best(n: int, key: str) -> float:
        return min(r[key] for r in rows[n])

    for n in jobs[1:]:
        tail = best(jobs[0], "lower+ptx") / best(n, "lower+ptx")
        print(f"{n} over {jobs[0]} process(es), wall: lower+ptx {tail:.2f}x, "
              f"total {best(jobs[0], 'total') / best(n, 'total'):.2f}x (load {os.getloadavg()[0]:.1f}); "
              f"cpu path: total {best(jobs[0], 'cpu path') / best(n, 'cpu path'):.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, nargs="+", default=[1, 2, 4, 12])
    ap.add_argument("--repeat", type=int, default=1, help="runs per model; the fastest is shown")
    ap.add_argument("--markdown", action="store_true", help="also write the table into the documents that show it")
    ap.add_argument("--resnet", action="store_true", help="also ResNet-50 (the onnx wheel's light model)")
    ap.add_argument("--round-trip", action="store_true",
                    help="only: CPU seconds of lowering ResNet-50's kernels, printing and parsing them back")
    ap.add_argument("--jobs", type=int, nargs="+",
                    help="only: ResNet-50 compiled to PTX with the kernels lowered by each number of processes")
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    if args.jobs:
        jobs_table(resnet50(), args.jobs, args.repeat)
        return 0
    if args.round_trip:
        seconds = round_trip(resnet50())
        print(" | ".join(f"{k} {v:.2f}" if k != "kernels" else f"{k} {v:.0f}" for k, v in seconds.items()))
        return 0
    compile_once(bert_stack(1))  # imports and first-use caches outside the figures
    header, rows = None, []
    for layers in args.layers:
        text = bert_stack(layers)
        runs = [compile_once(text) for _ in range(args.repeat)]
        times, launches, funcs = min(runs, key=lambda r: sum(r[0].values()))
        if header is None:
            header = ["layers", *times, "total", "s/layer", "launches", "gpu.funcs"]
            print(" | ".join(f"{h:>14}" for h in header))
        total = sum(times.values())
        row = [layers, *(f"{v:.2f}" for v in times.values()), f"{total:.2f}", f"{total / layers:.2f}", launches, funcs]
        print(" | ".join(f"{c:>14}" for c in row), flush=True)
        rows.append(row)
    if args.resnet:
        runs = [compile_model(resnet50()) for _ in range(args.repeat)]
        times, launches, funcs = min(runs, key=lambda r: sum(r[0].values()))
        total = sum(times.values())
        print(" | ".join(f"{c:>14}" for c in ["resnet50", *(f"{v:.2f}" for v in times.values()), f"{total:.2f}",
                                              "", launches, funcs]), flush=True)
    if args.markdown and header is not None:
        publish(argv, header, rows, args.repeat)
    return 0


def publish(argv: list[str], header: list[str], rows: list[list[object]], repeat: int) -> None:
    import docgen

    load = os.getloadavg()[0]
    caption = (f"CPU seconds of the compiling process, the best of {repeat} runs, on {os.cpu_count()} cores at "
               f"load {load:.1f}, {time.strftime('%Y-%m-%d')}; a loaded machine reads somewhat slower "
               "(its cores and caches are shared).")
    table = docgen.markdown_table(header, rows, [True] * len(header))
    docgen.publish(__file__, argv, table + "\n\n" + caption)


if __name__ == "__main__":
    sys.exit(main())
