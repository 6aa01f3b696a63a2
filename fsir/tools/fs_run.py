"""fs-run: compile a model and run it, on a GPU, on the PTX simulator, or on the
numpy reference interpreter.

    fs-run examples/layernorm.mlir                       # auto device: CUDA if present, else the simulator
    fs-run model.mlir --device reference --seed 3 --outputs out.npz
    fs-run model.mlir --check --stats-json stats.json --dump-ptx model.ptx

Inputs come from `--inputs in.npz` (by argument name as written in the source, or
`arg0`, `arg1`, ...) or are random and reproducible by `--seed`. Outputs are printed as
shape, dtype and checksum, and saved as `out0`, `out1`, ... with `--outputs`.
Exit status: 0 ok, 1 user error, 2 `--check` found a mismatch, 3 internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import time
from typing import Any

import numpy as np

from fsir import registry
from fsir.codegen.options import FusionMode, Precision, Subroots
from fsir.errors import UserError
from fsir.pipeline import PipelineOptions, read_model
from fsir.runtime.inputs import describe, load_inputs, random_inputs
from fsir.runtime.reference import (
    check_inputs,
    check_memory,
    find_function,
    run_function,
    run_function_float64,
)
from fsir.tools.driver import run_tool

EXIT_CHECK_FAILED = 2
DEVICES = ("auto", "cuda", "sim", "reference")


class _ArgParser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2; fsir's user errors exit 1
        raise UserError(message)


def build_arg_parser() -> argparse.ArgumentParser:
    p = _ArgParser(prog="fs-run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="model: .mlir (graph dialect)" + "".join(f", .{f}" for f in registry.FRONTENDS))
    p.add_argument("-f", "--frontend", help="input format, if not given by the file extension")
    p.add_argument("--entry", help="function to run (default: the first)")
    p.add_argument("--inputs", help=".npz with inputs by argument name or arg0, arg1, ...")
    p.add_argument("--outputs", help="save outputs to this .npz as out0, out1, ...")
    p.add_argument("--seed", type=int, default=0, help="seed for random inputs (default 0)")
    p.add_argument("--dynamic-size", type=int, default=8,
                   help="size of `?` dims of random inputs without fsir.runtime_shape (default 8)")
    p.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="auto (CUDA if a GPU is present, else sim), cuda, sim (fsir's PTX simulator), reference (numpy)",
    )
    p.add_argument(
        "--fusion",
        default=str(PipelineOptions.fusion),
        choices=[str(m) for m in FusionMode],
        help="fusion-explore mode: stitch (FusionStitching, default), xla (XLA-style rules), none (a kernel per op)",
    )
    p.add_argument("--subroots", default=str(PipelineOptions.subroots), choices=[str(m) for m in Subroots],
                   help="stitch-codegen{subroots=...}: expensive elementwise sub-roots by the evaluator's choice "
                        "(auto, default), wherever they fit (all) or never (none)")
    p.add_argument("--precision", default=str(PipelineOptions.precision), choices=[str(m) for m in Precision],
                   help="what f32 GEMMs compute in: fp32 (exact FMAs, the default) or tf32 (tensor cores, "
                        "operands rounded to tf32); f16/bf16 GEMMs always use the tensor cores")
    p.add_argument("--tile-sync", default="off", metavar="POLICY",
                   help="run dependent GEMMs as cuSync pipelines synchronised tile by tile: off (default), auto, "
                        "tile (TileSync), row (RowSync), strided (StridedSync where a dependency is strided), "
                        "conv (Conv2DTileSync)")
    p.add_argument("--arch", default=PipelineOptions.arch, help="PTX target (sm_80, sm_90; default sm_80)")
    p.add_argument(
        "--check",
        action="store_true",
        help="compare every output with the reference interpreter; exit 2 beyond tolerance",
    )
    p.add_argument("--stats-json", help="write launch statistics (summed over launches) to this JSON file")
    p.add_argument("--dump-ptx", help="write the PTX module to this file")
    p.add_argument("--time-passes", action="store_true",
                   help="print each compile stage's seconds and the compile counts (fsir.stats) to stderr")
    p.add_argument("--tuning-log", metavar="FILE.jsonl",
                   help="apply the best configuration per kernel of this fs-tune log (docs/tuning.md)")
    p.add_argument("--no-cache", action="store_true",
                   help="lower every kernel: neither read nor write the kernel cache (FSIR_CACHE_DIR)")
    p.add_argument("-j", "--jobs", type=int, default=None,
                   help="processes that lower the kernels and print their PTX (default: FSIR_JOBS, else the "
                        "usable CPUs; a module of few kernels compiles in this process)")
    # the concurrent simulator and its timeline model (fsir/sim/concurrent.py, timeline.py)
    p.add_argument("--sim-dispatch", default="fifo",
                   help="block dispatch order of concurrent launches on the simulator: fifo (by stream priority, "
                        "then launch order: the default, as on a GPU), reverse, consumer-first, random:SEED")
    p.add_argument("--sim-gpu", default="A100", help="GPU whose SM slots the simulator and its timeline model use "
                                                     "(default A100)")
    p.add_argument("--sim-slots", metavar="SMSxBLOCKS",
                   help="shrink the simulated GPU to SMS SMs of at most BLOCKS resident blocks each (e.g. 2x2), so "
                        "that small grids fill it: how a dispatch order that deadlocks is shown on a small model")
    p.add_argument("--profile", action="store_true",
                   help="print a table per launch (kernel, mapping/config, grid x block, registers, shared bytes, "
                        "instructions by class, requested/distinct bytes, sectors, time and %% of the total), sorted "
                        "by time: measured on a GPU, else the kernel-time model on --sim-gpu (a model)")
    p.add_argument("--trace", metavar="FILE.json",
                   help="write the run as a Chrome trace (Perfetto, chrome://tracing): a track per stream, a slice per "
                        "launch with its figures; on the simulator the timeline model's times (a model)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar (shown on standard error when it is a terminal and a simulator run takes "
                        "more than two seconds)")
    p.add_argument("--timeline", help="draw the timeline model of every launch (SM slots x modeled time) into this "
                                      "PNG; also adds modeled_us to --stats-json (a model, not a measurement)")
    return p


def main_impl(argv=None) -> int:
    args = build_arg_parser().parse_args(argv)
    module = read_model(args.file, args.frontend)
    f = find_function(module, args.entry)
    check_memory(f)
    if args.inputs:
        inputs = load_inputs(f, args.inputs)
    else:
        inputs = random_inputs(f, args.seed, args.dynamic_size)
    inputs = check_inputs(f, inputs)

    device_name = args.device
    stats: dict | None = None
    t0 = time.perf_counter()
    if device_name == "reference":
        if args.dump_ptx or args.stats_json or args.timeline or args.profile or args.trace:
            raise UserError("--dump-ptx, --stats-json, --timeline, --profile and --trace need a compiled run "
                            "(--device sim or cuda)")
        outputs = run_function(f, inputs)
    else:
        outputs, stats, device_name = run_compiled(module, f.sym_name.data, inputs, args)
    elapsed = time.perf_counter() - t0

    print(f"@{f.sym_name.data} on {device_name} ({elapsed:.2f} s)")
    for i, out in enumerate(outputs):
        print(f"out{i}: {describe(out)}")
    if args.outputs:
        # Any: savez's typed **kwds would also match its bool allow_pickle
        arrays: dict[str, Any] = {f"out{i}": o for i, o in enumerate(outputs)}
        np.savez(args.outputs, **arrays)
    if args.stats_json and stats is not None:
        with open(args.stats_json, "w") as fh:
            json.dump(stats, fh, indent=2)
            fh.write("\n")
    if args.check:
        return check(f, inputs, outputs, args.precision)
    return 0


def run_compiled(module, entry: str, inputs, args):
    """Compile through the pipeline and run on a device; returns (outputs, stats, device)."""
    from fsir.codegen.tile_sync import parse_tile_sync
    from fsir.runtime.device import select_device
    from fsir.runtime.executor import execute
    from fsir.runtime.profile import LaunchRecord, model_launches

    device = select_device(args.device)
    configure_sim(device, args)
    options = PipelineOptions(fusion=args.fusion, subroots=args.subroots, arch=args.arch, precision=args.precision,
                              tile_sync=parse_tile_sync(args.tile_sync, "--tile-sync"), jobs=args.jobs)
    if args.tuning_log:
        from fsir.tune.database import Database
        from fsir.tune.sizes import specialized_for

        # a symbolic dim tuned at the inputs' size (fs-tune --sizes): compiled at that size
        mine = [r for r in Database(args.tuning_log).records if r.gpu == options.gpu and r.arch == options.arch]
        module, size = specialized_for(module, mine, inputs)
        if size is not None and not args.quiet:
            print(f"tuned at this size ({size}): compiled specialised to it", file=sys.stderr)
    resources: dict[str, tuple[int, int, int]] = {}  # of the kernels compiled as stubs (compile_ptx)
    lowered, ptx = compile_timed(module, options, args, resources)
    kernels = profile_kernels(module, options) if args.profile else []
    if args.dump_ptx:
        with open(args.dump_ptx, "w") as fh:
            fh.write(ptx)
    records: list[LaunchRecord] = []
    outputs, stats = execute(lowered, inputs, device, entry=entry, ptx=ptx, record=records,
                             progress=False if args.quiet else None)
    figures = model_launches(lowered, records, sim_gpu(args), resources)
    record = {"device": device.name, **stats_dict(stats), "kernels": count_kernels(lowered)}
    record.update(sim_record(device, args))
    record["per_launch"] = [launch_dict(r, f) for r, f in zip(records, figures)]
    report_launches(records, figures, kernels, args)
    return outputs, record, device.name


def sim_gpu(args):
    """The GpuSpec of --sim-gpu: the simulator's GPU and the one the per-launch model times."""
    from fsir.gpuspec import gpu_spec

    return gpu_spec(args.sim_gpu)


def profile_kernels(module, options: PipelineOptions) -> list:
    """The KernelSummary of each kernel (its mapping and configuration) for --profile: the
    schedule.kernel ops stitch-codegen makes, which the lowered module no longer has (a
    second lowering up to that pass, only with --profile)."""
    from fsir.api import kernel_summary
    from fsir.dialects.schedule import KernelOp
    from fsir.pipeline import lower

    scheduled = lower(module, options, until="stitch-codegen")
    return [kernel_summary(op) for op in scheduled.walk() if isinstance(op, KernelOp)]


def report_launches(records, figures, kernels: list, args) -> None:
    """--profile's table and --trace's Chrome trace."""
    from fsir.runtime.profile import chrome_trace, format_profile

    if args.profile:
        print(format_profile(figures, args.sim_gpu, {k.name: k for k in kernels}))
    if args.trace:
        with open(args.trace, "w") as fh:
            json.dump(chrome_trace(records, figures, args.sim_gpu), fh, indent=1)
            fh.write("\n")


def launch_dict(rec, fig) -> dict:
    """--stats-json's entry of one launch: the summed counters' keys (so the list sums to
    the totals), the launch's configuration and the kernel-time model's figures."""
    item = {"kernel": rec.kernel, "grid": list(rec.grid), "block": list(rec.block), "stream": rec.stream,
            "shared_bytes": fig.shared_bytes, "registers": fig.registers,
            **{k: v for k, v in stats_dict(rec.stats or {"launches": 1}).items() if k != "kernels"},
            "requested_bytes": fig.requested_bytes, "instructions_by_class": dict(fig.instructions),
            "kernel_time_us": round(fig.modeled_us, 4), "memory_us": round(fig.memory_us, 4),
            "compute_us": round(fig.compute_us, 4)}
    if rec.timeline_us is not None:
        item["modeled_us"] = round(rec.timeline_us, 4)  # the timeline model's, as before
    if rec.measured_us is not None:
        item["measured_us"] = round(rec.measured_us, 4)
    return item


def compile_timed(module, options: PipelineOptions, args, resources: dict[str, tuple[int, int, int]]):
    """(lowered module, PTX), through the kernel cache unless --no-cache, the kernels
    lowered by `options.jobs` processes (`compile_ptx`: `resources` receives what the
    per-launch model reads of the kernels it leaves as stubs); with --time-passes, each
    stage's seconds and the compile counts on stderr."""
    from fsir import cache as kernel_cache
    from fsir.pipeline import compile_ptx
    from fsir.stats import collecting

    def report(stage: str, seconds: float, _module) -> None:
        if args.time_passes:
            print(f"Pass {stage} took {seconds:.4f} seconds", file=sys.stderr)

    store = None if args.no_cache else kernel_cache.KernelCache.from_environment(default=True)
    tuning = contextlib.nullcontext()
    if args.tuning_log:
        from fsir.tune.apply import tuned

        tuning = tuned(args.tuning_log, options)
    with collecting() as counts, kernel_cache.active(store), tuning:
        lowered, ptx = compile_ptx(module, options, on_stage=report, resources=resources,
                                   whole=not args.tuning_log)  # the log steers what the key does not hold
    if args.time_passes:
        print("Compile counts:", *(f"  {line}" for line in counts.result().lines()), sep="\n", file=sys.stderr)
    return lowered, ptx


def configure_sim(device, args) -> None:
    """Apply --sim-dispatch, --sim-gpu and --timeline (or --trace: both need the timeline
    model of every launch) to the simulator device."""
    from fsir.gpuspec import gpu_spec
    from fsir.runtime.device import SimDevice
    from fsir.sim.concurrent import parse_dispatch

    if not isinstance(device, SimDevice):
        if args.timeline or args.sim_dispatch != "fifo" or args.sim_slots:
            raise UserError("--timeline, --sim-dispatch and --sim-slots need the simulator (--device sim)")
        return
    parse_dispatch(args.sim_dispatch)
    device.dispatch = args.sim_dispatch
    device.spec = gpu_spec(args.sim_gpu)
    if args.sim_slots:
        sms, _, blocks = args.sim_slots.lower().partition("x")
        if not (sms.isdigit() and blocks.isdigit() and int(sms) > 0 and int(blocks) > 0):
            raise UserError(f"--sim-slots '{args.sim_slots}': expected SMSxBLOCKS, two positive integers (e.g. 2x2)")
        device.spec = dataclasses.replace(device.spec, sms=int(sms),
                                          max_blocks_per_sm=min(int(blocks), device.spec.max_blocks_per_sm))
    device.model_launches = bool(args.timeline or args.trace)


def sim_record(device, args) -> dict:
    """--stats-json keys of the simulator's timeline model: its µs (summed over pipelines
    run one after another), when it ran (each launch's entry is in `per_launch`)."""
    from fsir.runtime.device import SimDevice

    if not isinstance(device, SimDevice):
        return {}
    out: dict = {}
    if device.timelines:
        out["modeled_us"] = round(sum(tl.modeled_us for tl in device.timelines), 4)
        out["model"] = f"timeline model on {device.spec.name} (fsir/sim/timeline.py; a model, not a measurement)"
        out["waves"] = [w for tl in device.timelines for w in tl.waves]
    if args.timeline:
        from fsir.sim.timeline import draw_timeline

        draw_timeline(device.timelines, args.timeline)
    return out


def count_kernels(lowered) -> int:
    from fsir.dialects import gpu

    return sum(1 for op in lowered.walk() if isinstance(op, gpu.FuncOp) and op.kernel is not None)


def stats_dict(stats) -> dict:
    keys = ("kernels", "launches", "global_load_bytes", "global_store_bytes", "global_unique_bytes",
            "global_sectors", "instructions", "waits", "posts", "spins")
    return {k: int(getattr(stats, k, 0) if not isinstance(stats, dict) else stats.get(k, 0)) for k in keys}


def check(f, inputs, outputs, precision: str = "fp32") -> int:
    """Compare with the reference interpreter (its f32 dots rounding their operands to
    tf32 when the GEMMs did)."""
    from contextlib import nullcontext

    from fsir.dialects.graph import tf32_dots
    from fsir.runtime.compare import compare

    with tf32_dots() if precision == "tf32" else nullcontext():
        expected = run_function(f, inputs)
        exact = run_function_float64(f, inputs)
    status = 0
    for i, (got, want, ex) in enumerate(zip(outputs, expected, exact)):
        c = compare(got, want, exact=ex)
        print(f"check out{i}: {c}")
        if not c.ok:
            status = EXIT_CHECK_FAILED
    if status:
        print("fs-run: results differ from the reference interpreter beyond tolerance", file=sys.stderr)
    return status


def main(argv=None) -> None:
    run_tool("fs-run", lambda: main_impl(argv))


if __name__ == "__main__":
    main()
