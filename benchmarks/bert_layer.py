"""The BERT layer (B=2, S=128, H=768) launch by launch, with the kernel-time model.

    python benchmarks/bert_layer.py                       # the layer, its HLO dump and ONNX export; A100
    python benchmarks/bert_layer.py --models examples/hlo/bert_layer.hlo --gpu H100
    python benchmarks/bert_layer.py --markdown            # the README's table of what fusion buys

For each model and fusion mode (none, xla, stitch), the model is compiled and run on the
PTX simulator, and every launch is printed: kernel, mapping and configuration, the graph
ops it computes, distinct global MB, requested MB (loads and stores as the threads issue
them), GFLOP (an fma counts two), and the modeled µs on the GPU (fsir/codegen/kernel_time.py:
memory, compute, and max(memory, compute) + launch cost). Totals per mode, the modeled
time of stitch against xla, and the stitch mode's targets (launches, bytes, requested
loads, modeled time against xla) with PASS/FAIL close the output. The code generator's
choices are made for the modeled GPU (`--gpu`);
`--precision tf32` lets f32 GEMMs use the tensor cores; `--traffic-slack 0.3` lets a
GEMM be up to 30% slower than its fastest configuration if it requests fewer bytes
(stitch-codegen's `traffic_slack`, applied to every mode). Modeled times are a model, not
measurements.

`--markdown` compiles each model in each mode without running it and writes the table of
launches and bytes (each kernel's inputs and outputs once, the schedule's own accounting)
into the documents that show it (benchmarks/docgen.py); `--markdown launches` runs the
simulator and writes the launch-by-launch tables instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # docgen, beside this script
# The layer at B=2, S=128, H=768 (graph IR), and the JAX dump and PyTorch export of the
# same layer at the small sizes examples/hlo and examples/onnx ship (B=2, S=16, H=64).
MODELS = [ROOT / "examples" / "bert_layer.mlir", ROOT / "examples" / "hlo" / "bert_layer.hlo",
          ROOT / "examples" / "onnx" / "bert_layer.onnx"]
MODES = ("none", "xla", "stitch")
# What each model is, for the markdown table: the same layer at two sizes, from three sources.
LABELS = {"bert_layer.mlir": "graph IR, B=2 S=128 H=768", "bert_layer.hlo": "JAX HLO, B=2 S=16 H=64",
          "bert_layer.opt.hlo": "JAX HLO after XLA's passes, B=2 S=16 H=64",
          "bert_layer.onnx": "PyTorch ONNX export, B=2 S=16 H=64"}
# Ops that only move or name data, left out of a kernel's "fused" column.
QUIET = {"graph.constant", "graph.reshape", "graph.broadcast", "graph.transpose"}


def fused_ops(kernel) -> str:
    """The distinct graph ops a schedule.kernel computes, in order of appearance."""
    names = dict.fromkeys(op.name.removeprefix("graph.") for op in kernel.walk()
                          if op.name.startswith("graph.") and op.name not in QUIET)
    return " ".join(names) or "copy"


def layer_inputs(path: Path, f, seed: int):
    """Inputs of the model: beside it (.inputs.npz), else random ones. The graph-IR
    layer's random weights are scaled by 1/√fan-in and its mask is BERT's additive
    0 / -10000, so activations stay O(1) through the dots (as tests/test_examples.py)."""
    import numpy as np

    from fsir.tools.fs_bench import model_inputs

    if path.suffix != ".mlir":
        return model_inputs(path, f, seed)
    rng = np.random.default_rng(seed)
    inputs = []
    for arg, t in zip(f.body.blocks[0].args, f.function_type.inputs.data):
        shape = tuple(t.get_shape())
        name = arg.name_hint or ""
        if name == "mask":
            value = np.where(rng.random(shape) < 0.2, -10000.0, 0.0)
        elif name.startswith("w"):
            value = rng.standard_normal(shape) / np.sqrt(shape[0])
        else:
            value = rng.standard_normal(shape)
        inputs.append(value.astype(np.float32))
    return inputs


def plan(path: Path, mode: str, gpu: str = "H100", precision: str = "fp32",
         traffic_slack: float = 0.0) -> tuple[int, int]:
    """Launches and global bytes of the model's plan, compiled to schedule kernels only:
    each kernel's inputs and outputs once (`cost.global_bytes`) and a split-K kernel's
    semaphores and workspace; the simulator's distinct bytes are at most this."""
    from fsir.dialects.schedule import KernelOp
    from fsir.lowering.split_k import buffer_sizes
    from fsir.pipeline import PipelineOptions, lower, read_model

    options = PipelineOptions(fusion=mode, gpu=gpu, precision=precision, traffic_slack=traffic_slack)
    module = lower(read_model(path), options, until="stitch-codegen")
    kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
    planned = sum(k.cost.data["global_bytes"].value.data for k in kernels)  # type: ignore[union-attr]
    splits = [buffer_sizes(k) for k in kernels if getattr(k.params, "split_k", 1) > 1]
    return len(kernels), planned + sum(4 * (sems + floats) for sems, floats in splits)


def fusion_markdown(models, modes, gpu: str = "H100", precision: str = "fp32", traffic_slack: float = 0.0) -> str:
    """The table of launches and MB per model and fusion mode, with its caption."""
    from docgen import markdown_table

    rows = []
    for path in models:
        figures = [plan(path, mode, gpu, precision, traffic_slack) for mode in modes]
        name = f"`{path.relative_to(ROOT)}` ({LABELS.get(path.name, 'BERT layer')})"
        rows.append([name, *(f"{n}, {b / 1e6:.2f}" for n, b in figures)])
    header = ["BERT layer", *(f"{m}: launches, MB" for m in modes)]
    return (markdown_table(header, rows, [False, *(True for _ in modes)])
            + f"\n\nCompiled for the {gpu} (precision {precision}); MB are the bytes the kernels read and write"
            " in global memory, each kernel's inputs and outputs once.")


def launches_markdown(path: Path, mode: str, rows) -> str:
    """One launch-by-launch table of a simulated run."""
    from docgen import markdown_table

    body, total = [], [0.0, 0.0, 0.0, 0.0]
    for i, (fig, (ks, ops)) in enumerate(rows):
        figures = (fig.bytes, fig.requested_bytes, fig.flops, fig.modeled_us)
        body.append([i, f"`{fig.kernel}`", f"{ks.mapping} {ks.config}", ops, f"{fig.bytes / 1e6:.2f}",
                     f"{fig.requested_bytes / 1e6:.2f}", f"{fig.flops / 1e9:.3f}", f"{fig.modeled_us:.1f}"])
        total = [t + v for t, v in zip(total, figures)]
    body.append(["", "total", "", "", f"{total[0] / 1e6:.2f}", f"{total[1] / 1e6:.2f}", f"{total[2] / 1e9:.3f}",
                 f"{total[3]:.1f}"])
    header = ["#", "kernel", "mapping / config", "fused", "distinct MB", "requested MB", "GFLOP", "modeled µs"]
    return f"`{path.relative_to(ROOT)}`, fusion={mode}:\n\n" + markdown_table(
        header, body, [True, False, False, False, True, True, True, True])


def run_mode(path: Path, mode: str, spec, seed: int, precision: str = "fp32", traffic_slack: float = 0.0):
    from fsir.api import kernel_summary
    from fsir.dialects.schedule import KernelOp
    from fsir.pipeline import PipelineOptions, emit_ptx, lower, read_model
    from fsir.runtime.compare import compare
    from fsir.runtime.executor import execute
    from fsir.runtime.reference import find_function, run_function
    from fsir.tools.fs_bench import RecordingSimDevice, model_launches

    module = read_model(path)
    f = find_function(module)
    inputs = layer_inputs(path, f, seed)
    expected = run_function(f, inputs)
    kernels = []

    def on_stage(stage: str, _seconds: float, ir) -> None:
        if stage == "stitch-codegen":
            kernels.extend((kernel_summary(k), fused_ops(k)) for k in ir.walk() if isinstance(k, KernelOp))

    options = PipelineOptions(fusion=mode, gpu=spec.name, precision=precision, traffic_slack=traffic_slack)
    lowered = lower(module, options, on_stage=on_stage)
    device = RecordingSimDevice()
    outputs, _ = execute(lowered, inputs, device, ptx=emit_ptx(lowered, options))
    # tf32 keeps f16's 10 mantissa bits: its results are held to f16's tolerance (100x f32's)
    scale = 100.0 if precision == "tf32" else 1.0
    ok = all(compare(g, w, scale=scale).ok for g, w in zip(outputs, expected))
    figures = model_launches(lowered, device.records, spec)
    # schedule-to-gpu turns the kernels into launches in order (equal kernels share a gpu.func)
    assert len(figures) == len(kernels), (len(figures), len(kernels))
    return list(zip(figures, kernels)), ok


def table(path: Path, mode: str, rows, ok: bool, gpu: str) -> tuple[str, dict[str, float]]:
    head = (f"{'#':>2} {'kernel':<22} {'mapping / config':<28} {'distinct MB':>11} {'requested MB':>12} "
            f"{'GFLOP':>7} {'mem µs':>7} {'comp µs':>7} {'µs':>7}  fused")
    lines = [f"{path.name}, fusion={mode}: {len(rows)} launches, check {'ok' if ok else 'MISMATCH'} "
             f"(modeled {gpu} µs = max(memory, compute) + launch; a model, not a measurement)", head, "-" * len(head)]
    tot = dict.fromkeys(("bytes", "requested", "flops", "memory", "compute", "total", "loads", "launches",
                         "gemm_bytes", "gemm_loads"), 0.0)
    for i, (fig, (ks, ops)) in enumerate(rows):
        lines.append(f"{i:>2} {fig.kernel[:22]:<22} {(ks.mapping + ' ' + ks.config)[:28]:<28} "
                     f"{fig.bytes / 1e6:>11.2f} {fig.requested_bytes / 1e6:>12.2f} {fig.flops / 1e9:>7.3f} "
                     f"{fig.memory_us:>7.2f} {fig.compute_us:>7.2f} {fig.modeled_us:>7.2f}  {ops}")
        gemm = ks.mapping == "gemm"
        for key, v in zip(tot, (fig.bytes, fig.requested_bytes, fig.flops, fig.memory_us, fig.compute_us,
                                fig.modeled_us, fig.load_bytes, 1, fig.bytes * gemm, fig.load_bytes * gemm)):
            tot[key] += v
    lines.append(f"{'':>2} {'total':<22} {'':<28} {tot['bytes'] / 1e6:>11.2f} {tot['requested'] / 1e6:>12.2f} "
                 f"{tot['flops'] / 1e9:>7.3f} {tot['memory']:>7.2f} {tot['compute']:>7.2f} {tot['total']:>7.2f}")
    return "\n".join(lines), tot


def targets(totals: dict[str, dict[str, float]]) -> list[tuple[str, str, bool]]:
    """The stitch mode's targets: (what, the measured figure, met)."""
    st = totals["stitch"]
    out = [("stitch launches ≤ 8", f"{st['launches']:.0f}", st["launches"] <= 8),
           ("stitch distinct MB ≤ 50", f"{st['bytes'] / 1e6:.2f}", st["bytes"] <= 50e6),
           ("stitch requested loads ≤ 3 × distinct", f"{st['loads'] / max(1.0, st['bytes']):.2f} ×",
            st["loads"] <= 3 * st["bytes"]),
           ("  of which the GEMM kernels' (informative)",
            f"{st['gemm_loads'] / max(1.0, st['gemm_bytes']):.2f} ×", st["gemm_loads"] <= 3 * st["gemm_bytes"])]
    if "xla" in totals:
        gain = 1 - st["total"] / totals["xla"]["total"]
        out.append(("stitch modeled time ≥ 25% below xla", f"{100 * gain:.1f}% below", gain >= 0.25))
    return out


def main(argv: list[str] | None = None) -> None:
    from docgen import publish

    from fsir.gpuspec import gpu_spec

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="*", type=Path, default=MODELS)
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--gpu", default="A100")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--precision", default="fp32", choices=("fp32", "tf32"),
                   help="what f32 GEMMs compute in (tf32: on the tensor cores)")
    p.add_argument("--traffic-slack", type=float, default=0.0,
                   help="the fraction of a GEMM's modeled time traded for fewer requested bytes")
    p.add_argument("--markdown", nargs="?", const="fusion", choices=("fusion", "launches"),
                   help="write the documents' table: launches and MB per mode (fusion, compiled only) "
                        "or launch by launch (launches, simulated)")
    argv = sys.argv[1:] if argv is None else argv
    args = p.parse_args(argv)
    spec = gpu_spec(args.gpu)
    modes = [m for m in args.modes.split(",") if m]
    models = [path.resolve() for path in args.models]
    if args.markdown == "fusion":
        publish(__file__, argv, fusion_markdown(models, modes, spec.name, args.precision, args.traffic_slack))
        return
    sections = []
    for path in models:
        totals = {}
        for mode in modes:
            rows, ok = run_mode(path, mode, spec, args.seed, args.precision, args.traffic_slack)
            text, totals[mode] = table(path, mode, rows, ok, spec.name)
            print(text + "\n", flush=True)
            sections.append(launches_markdown(path, mode, rows))
        summary = ", ".join(f"{m} {len(totals) and totals[m]['total']:.1f} µs" for m in modes)
        print(f"{path.name}: modeled {spec.name} time {summary}")
        if "stitch" in totals:
            print(f"{path.name}: targets (stated for the layer at B=2, S=128, H=768; "
                  f"precision={args.precision}, traffic_slack={args.traffic_slack}, modeled {spec.name}):")
            for what, figure, met in targets(totals):
                print(f"  {'PASS' if met else 'FAIL'}  {what:<44} {figure}")
            print()
    if args.markdown == "launches":
        publish(__file__, argv, "\n\n".join(sections))


if __name__ == "__main__":
    main()
