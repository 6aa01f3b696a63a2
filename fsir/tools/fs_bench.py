"""fs-bench: what fusion does to real models, measured on fsir's PTX simulator.

    fs-bench --out bench/                          # every model in examples/hlo and examples/onnx
    fs-bench examples/hlo/bert_layer.hlo examples/layernorm.mlir --out bench/ --gpu H100
    fs-bench resnet50 --out bench/                 # a light CNN shipped in the onnx wheel

Each model is imported, compiled under each fusion mode (none: one kernel per op; xla:
XLA-style rules; stitch: FusionStitching) and run on the simulator, which counts what a
profiler would. One table per model:

  kernels    launches of the compiled host function
  MB         global bytes moved: per launch, the distinct bytes the kernel touches (what a
             perfect cache would move to and from DRAM), summed over launches
  bound      the lower bound: inputs and weights read once, outputs written once (a
             gather reading some rows of a table can beat it)
  ×bound     MB ÷ bound
  modeled    modeled time on the GPU from gpuspec (fsir/codegen/kernel_time.py): per launch
             max(memory, compute) + launch cost, memory = distinct bytes ÷ HBM bandwidth
             (requested bytes ÷ L2 bandwidth where that is longer, both at the share of
             bandwidth the bytes in flight reach), compute = the launch's instructions
             by class and tensor-core multiply-adds (simulator counters) at the
             GPU's pipe and tensor-core rates on the SMs its grid keeps busy; summed over
             launches. A model, not a measurement (labelled as such everywhere)
  compile    seconds per pipeline stage: import, fusion-explore, stitch-codegen,
             schedule-to-gpu, PTX printing
  check      outputs against the reference interpreter (fsir.runtime.compare tolerances)

`--out DIR` receives `bench.json` (every number above, plus requested load/store bytes,
sectors, instructions, the modeled memory and compute µs, and every launch's figures)
and `bench.png` (kernels and ×bound per model and mode).
Inputs come from `NAME.inputs.npz` beside a model when present, else are random (`--seed`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from fsir.errors import UserError
from fsir.runtime.device import SimDevice
from fsir.runtime.profile import LaunchFigures, LaunchRecord, RecordingSimDevice, model_launches
from fsir.runtime.progress import progress_over
from fsir.tools.driver import run_tool

# The per-launch model lives in fsir/runtime/profile.py (fs-run --profile and
# Executable.last_stats share it); these names stay importable from here.
__all__ = ["LaunchFigures", "RecordingSimDevice", "Result", "bench_model", "model_launches"]

MODES = ("none", "xla", "stitch")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
IMPORT_STAGE = "import"


@dataclass
class Result:
    model: str
    mode: str
    kernels: int = 0
    launches: int = 0
    bytes: int = 0  # sum over launches of distinct global bytes
    bound: int = 0
    modeled_us: float = 0.0  # Σ per launch max(memory, compute) + launch cost
    modeled_memory_us: float = 0.0  # Σ per launch memory time
    modeled_compute_us: float = 0.0  # Σ per launch compute time
    flops: int = 0  # floating-point operations (an FMA counts two; tensor cores' included)
    compile_s: dict[str, float] = field(default_factory=dict)
    run_s: float = 0.0
    check: str = ""
    load_bytes: int = 0
    store_bytes: int = 0
    sectors: int = 0
    instructions: int = 0
    per_launch: list[LaunchFigures] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.bytes / self.bound if self.bound else math.nan


def default_models() -> list[Path]:
    return sorted((EXAMPLES / "hlo").glob("*.hlo")) + sorted((EXAMPLES / "onnx").glob("*.onnx"))


def light_models() -> dict[str, Path]:
    """The `light` CNNs of ONNX's backend test data (resnet50, vgg19, ...) by name."""
    from fsir.onnx.conformance import DATA_DIR

    light = Path(DATA_DIR) / "light"
    return {p.stem.removeprefix("light_"): p for p in sorted(light.glob("light_*.onnx"))}


def model_path(name: str) -> Path:
    """A model file, or the name of a light CNN of the onnx wheel."""
    path = Path(name)
    if path.exists():
        return path
    light = light_models()
    if name in light:
        return light[name]
    raise UserError(f"cannot open '{name}': no such file (nor one of the onnx wheel's light CNNs: "
                    f"{', '.join(light)})")


def lower_bound(module, inputs, outputs) -> int:
    """Inputs and weights read once, outputs written once. Splat constants are free
    (they become immediates in the kernels)."""
    from fsir.dialects.graph import ConstantOp, numpy_dtype, shape_of, splat_value

    total = sum(np.asarray(x).nbytes for x in inputs) + sum(np.asarray(y).nbytes for y in outputs)
    for op in module.walk():
        if isinstance(op, ConstantOp) and splat_value(op) is None:
            t = op.result_type
            total += math.prod(shape_of(t)) * numpy_dtype(t.element_type).itemsize
    return total


def model_inputs(path: Path, f, seed: int) -> list[np.ndarray]:
    from fsir.runtime.inputs import load_inputs, random_inputs
    from fsir.runtime.reference import check_inputs

    beside = path.with_name(path.name.split(".")[0] + ".inputs.npz")
    inputs = load_inputs(f, str(beside)) if beside.exists() else random_inputs(f, seed)
    return check_inputs(f, inputs)


def bench_model(path: Path, modes, spec, seed: int, check: bool, progress: bool | None = None) -> list[Result]:
    from fsir.pipeline import PipelineOptions, emit_ptx, lower, read_model
    from fsir.runtime.compare import compare
    from fsir.runtime.executor import execute
    from fsir.runtime.reference import find_function, run_function

    t0 = time.perf_counter()
    module = read_model(path)
    t_import = time.perf_counter() - t0
    f = find_function(module)
    inputs = model_inputs(path, f, seed)
    expected = run_function(f, inputs)
    bound = lower_bound(module, inputs, expected)
    results = []
    for mode in modes:
        r = Result(path.name, mode, bound=bound)
        r.compile_s[IMPORT_STAGE] = t_import

        def on_stage(stage: str, seconds: float, _module, r: Result = r) -> None:
            r.compile_s[stage] = seconds

        options = PipelineOptions(fusion=mode)
        lowered = lower(module, options, on_stage=on_stage)
        ptx = emit_ptx(lowered, options, on_stage=on_stage)
        t = time.perf_counter()
        device = SimDevice()
        records: list[LaunchRecord] = []
        outputs, stats = execute(lowered, inputs, device, ptx=ptx, record=records, progress=progress)
        r.run_s = time.perf_counter() - t
        assert stats is not None, f"{path.name} launches no kernel"
        r.kernels = r.launches = int(stats.launches)
        r.bytes = int(stats.global_unique_bytes)
        r.load_bytes, r.store_bytes = int(stats.global_load_bytes), int(stats.global_store_bytes)
        r.sectors, r.instructions = int(stats.global_sectors), int(stats.instructions)
        r.per_launch = model_launches(lowered, records, spec)
        r.modeled_us = sum(f.modeled_us for f in r.per_launch)
        r.modeled_memory_us = sum(f.memory_us for f in r.per_launch)
        r.modeled_compute_us = sum(f.compute_us for f in r.per_launch)
        r.flops = sum(f.flops for f in r.per_launch)
        if check:
            ok = all(compare(g, w).ok for g, w in zip(outputs, expected))
            r.check = "ok" if ok else "MISMATCH"
        results.append(r)
    return results


# Column heads for the pipeline's stages.
_SHORT = {"fusion-explore": "fusion", "stitch-codegen": "codegen", "schedule-to-gpu": "lower"}


def format_table(results: list[Result], gpu: str) -> str:
    from fsir.pipeline import stages

    r0 = results[0]
    columns = [IMPORT_STAGE, *stages()]
    lines = [f"{r0.model}  (lower bound {r0.bound / 1e6:.3f} MB; modeled = {gpu} model, not measured: "
             "Σ launches max(memory, compute) + launch)"]
    head = (f"{'mode':<7} {'kernels':>7} {'MB':>9} {'×bound':>7} {'GFLOP':>7} {'modeled µs':>10} {'memory':>8} "
            f"{'compute':>8}  "
            + " ".join(f"{_SHORT.get(s, s)[:8]:>8}" for s in columns) + "  check")
    lines += [head, "-" * len(head)]
    for r in results:
        times = " ".join(f"{r.compile_s.get(s, 0):>7.2f}s" for s in columns)
        lines.append(f"{r.mode:<7} {r.kernels:>7} {r.bytes / 1e6:>9.3f} {r.ratio:>7.2f} {r.flops / 1e9:>7.3f} "
                     f"{r.modeled_us:>10.2f} {r.modeled_memory_us:>8.2f} {r.modeled_compute_us:>8.2f}  "
                     f"{times}  {r.check}")
    return "\n".join(lines)


def write_chart(results: list[Result], path: Path, gpu: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(r.model for r in results))
    modes = list(dict.fromkeys(r.mode for r in results))
    by = {(r.model, r.mode): r for r in results}
    fig, axes = plt.subplots(1, 2, figsize=(max(8, 1.2 * len(models) + 4), 4.5))
    width = 0.8 / len(modes)
    for k, mode in enumerate(modes):
        xs = [i + k * width for i in range(len(models))]
        axes[0].bar(xs, [by[(m, mode)].kernels for m in models], width, label=mode)
        axes[1].bar(xs, [by[(m, mode)].ratio for m in models], width, label=mode)
    for ax, title in zip(axes, ("kernels launched", "global bytes ÷ lower bound")):
        ax.set_title(title)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(models))])
        ax.set_xticklabels(models, rotation=45, ha="right", fontsize=8)
        ax.legend()
    axes[1].axhline(1.0, color="black", linewidth=0.8)
    fig.suptitle(f"fs-bench on the PTX simulator (fusion modes {', '.join(modes)}; modeled GPU: {gpu})")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main_impl(argv=None) -> int:
    from fsir.gpuspec import gpu_spec

    p = argparse.ArgumentParser(prog="fs-bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*", help="model files, or names of the onnx wheel's light CNNs (resnet50, "
                   "vgg19, ...; default: examples/hlo/*.hlo, examples/onnx/*.onnx)")
    p.add_argument("--out", required=True, help="folder for bench.json and bench.png")
    p.add_argument("--modes", default=",".join(MODES), help="fusion modes, comma-separated (default: none,xla,stitch)")
    p.add_argument("--gpu", default="A100", help="GPU whose bandwidth and launch cost model the time (default A100)")
    p.add_argument("--seed", type=int, default=0, help="seed for random inputs")
    p.add_argument("--no-check", action="store_true", help="skip comparing with the reference interpreter")
    p.add_argument("--quiet", action="store_true", help="no progress bars on standard error (shown on a terminal "
                                                        "when a run takes more than two seconds)")
    args = p.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    spec = gpu_spec(args.gpu)
    paths = [model_path(m) for m in args.models] or default_models()
    out = Path(args.out)
    os.makedirs(out, exist_ok=True)
    results: list[Result] = []
    progress = False if args.quiet else None
    for path in progress_over(paths, desc="models", enabled=progress):
        rows = bench_model(path, modes, spec, args.seed, not args.no_check, progress)
        results += rows
        print(format_table(rows, spec.name) + "\n", flush=True)
    with open(out / "bench.json", "w") as fh:
        json.dump({"gpu": spec.name, "modes": modes,
                   "modeled": "sum over launches of max(memory, compute) + launch_cost (fsir/codegen/kernel_time.py)",
                   "results": [asdict(r) | {"ratio": r.ratio} for r in results]}, fh, indent=2)
        fh.write("\n")
    write_chart(results, out / "bench.png", spec.name)
    print(f"wrote {out / 'bench.json'} and {out / 'bench.png'}")
    return 1 if any(r.check == "MISMATCH" for r in results) else 0


def main(argv=None) -> None:
    run_tool("fs-bench", lambda: main_impl(argv))


if __name__ == "__main__":
    main()
