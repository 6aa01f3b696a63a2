"""Ready for the first real GPU: one command that checks fsir on a CUDA GPU and compares its
cost models with measurements (docs/gpu.md gives the commands and what each table means).

    python benchmarks/gpu_check.py --out gpu_report --budget-s 480
    python benchmarks/gpu_check.py --sim-models-only --out models    # no GPU: the simulator's models

Steps, in order of value; after each one (and each case) `DIR/gpu_check.json` and
`DIR/gpu_check.md` hold everything so far, and a step that fails is reported and the
next one runs. When the budget is spent the remaining cases and steps are reported as
not run; a watchdog writes the reports and exits if a launch hangs past the budget.

  a. device     the CUDA device (name, SMs, clocks, memory) and the gpuspec table fsir's
                models use for it (fsir.gpuspec.spec_for_device)
  b. check      every example model (examples/*.mlir, examples/hlo, examples/onnx) through
                `fs-run --device cuda --check`, and a fixed sample of ONNX's node tests
                (fsir.onnx.conformance) on the CUDA device: pass / mismatch / refused / error
  c. kernels    per kernel of the BERT layer (f32, tf32, bf16) and of ResNet-50 (the onnx
                wheel's light model): CUDA-event time (warm-up, median of repeats), the
                latency-evaluator's estimate (the kernel's `cost` estimate_us), the timeline
                model's and fs-bench's modeled time (both from the simulator's counters:
                computed by worker processes from the end of step a, or read from a
                `--sim-models-only` file), with each model's Spearman rank correlation and
                median ratio to the measurement
  d. peers      the BERT layer through eager PyTorch, torch.compile (Inductor) and fsir's
                stitch and xla modes: per-layer µs and launches (torch when importable)
  e. cusync     the GPT-3 MLP (examples/cusync/generate.py) without tile-sync and with
                TileSync and RowSync pipelines: µs per run (stream-serial kernels; a
                pipeline from its first start to its last end)
  f. tuner      three kernels of the BERT layer (a GEMM, the attention, a LayerNorm row):
                the prior's top 32 candidates and stitch-codegen's choice timed by the tuner's `cuda`
                and `model` measurers: their Spearman and Kendall rank correlation, and the
                model's pick's measured time against the measured best
                (benchmarks/gpu_check_tuner.py), within its own time cap
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import io
import json
import math
import os
import statistics
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
for _p in (ROOT / "benchmarks", EXAMPLES / "cusync"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

REPORT_JSON = "gpu_check.json"
REPORT_MD = "gpu_check.md"
SIM_MODELS_JSON = "sim_models.json"


# ---------------------------------------------------------------------------- report rows
@dataclass
class DeviceRow:
    name: str
    compute_capability: str | None
    sms: int | None
    clock_mhz: float | None
    memory_clock_mhz: float | None
    memory_gb: float | None
    l2_mb: float | None
    driver_version: int | None
    gpuspec: str  # the table fsir's models use (and why)


@dataclass
class CaseRow:
    suite: str  # example or onnx
    case: str
    status: str  # pass, mismatch, refused, error
    seconds: float
    message: str = ""


@dataclass
class KernelRow:
    config: str
    index: int  # the launch's position in the run
    kernel: str
    mapping: str
    grid: str
    measured_us: float  # CUDA events: median of the repeats
    estimate_us: float | None  # latency-evaluator (the kernel's cost)
    timeline_us: float | None  # timeline model (simulator counters)
    fs_bench_us: float | None  # fs-bench's max(memory, compute) + launch (simulator counters)


@dataclass
class ModelFit:
    config: str  # a configuration, or "all"
    model: str  # estimate, timeline or fs_bench
    kernels: int
    spearman: float | None
    median_ratio: float | None  # median of model ÷ measured


@dataclass
class PeerRow:
    system: str
    layer_us: float | None
    launches: int | None
    status: str
    note: str = ""


@dataclass
class MlpRow:
    tokens: int
    tile_sync: str
    launches: int
    run_us: float | None
    check: str
    note: str = ""


@dataclass
class StepReport:
    name: str
    title: str
    status: str = "not run"  # ok, failed, stopped (budget spent), not run (budget spent)
    seconds: float = 0.0
    error: str = ""
    notes: list[str] = field(default_factory=list)
    rows: list[Any] = field(default_factory=list)
    fits: list[ModelFit] = field(default_factory=list)


@dataclass
class Report:
    argv: list[str]
    budget_s: float
    started: str
    steps: list[StepReport] = field(default_factory=list)
    interrupted: str = ""

    def write(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / (REPORT_JSON + ".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1, default=str) + "\n")
        tmp.replace(out / REPORT_JSON)
        (out / REPORT_MD).write_text(markdown(self))


def markdown(report: Report) -> str:
    lines = ["# fsir on a CUDA GPU (benchmarks/gpu_check.py)", "",
             f"`{' '.join(report.argv)}`, started {report.started}, budget {report.budget_s:.0f} s"]
    if report.interrupted:
        lines += ["", f"**Interrupted:** {report.interrupted}"]
    for step in report.steps:
        lines += ["", f"## {step.name}. {step.title}", "", f"status: **{step.status}** ({step.seconds:.1f} s)"]
        if step.error:
            lines += ["", "```", step.error.strip(), "```"]
        lines += [f"- {n}" for n in step.notes]
        if step.rows:
            lines += ["", *md_table(step.rows)]
        if step.fits:
            lines += ["", "Models against the measurement:", "", *md_table(step.fits)]
    return "\n".join(lines) + "\n"


def md_table(rows: list[Any]) -> list[str]:
    names = [f.name for f in fields(rows[0])]
    out = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    for r in rows:
        out.append("| " + " | ".join(cell(getattr(r, n)) for n in names) + " |")
    return out


def cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    return str(v).replace("|", "\\|").replace("\n", " ")[:160]


# ---------------------------------------------------------------------------- budget and context
class BudgetSpent(Exception):
    pass


class StepSkipped(Exception):
    """A step that cannot run here (its reason is the message)."""


class Budget:
    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.deadline = clock() + seconds

    def left(self) -> float:
        return self.deadline - self.clock()

    def check(self, what: str) -> None:
        if self.left() <= 0:
            raise BudgetSpent(f"budget spent before {what}")


@dataclass
class Context:
    args: argparse.Namespace
    budget: Budget
    report: Report
    out: Path
    spec_name: str = "H100"  # the gpuspec table of the device (step a)
    current: str = ""  # the case in flight (for the watchdog)
    sim_jobs: SimJobs | None = None  # step c's simulator models, started after step a

    def start_sim_jobs(self) -> SimJobs:
        if self.sim_jobs is None:
            a = self.args
            self.sim_jobs = SimJobs(kernel_configs(a), self.spec_name, a.seed, a.sim_workers,
                                    load_sim_models(a.sim_models))
        return self.sim_jobs

    def add(self, step: StepReport, row: Any) -> None:
        step.rows.append(row)
        self.report.write(self.out)

    def case(self, what: str) -> None:
        self.budget.check(what)
        self.current = what


def one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


# ---------------------------------------------------------------------------- a. device
def step_device(ctx: Context, step: StepReport) -> None:
    from fsir.gpuspec import spec_for_device
    from fsir.runtime.cuda_device import CudaDevice

    props = CudaDevice().properties()
    spec = spec_for_device(props.name)
    if spec is None:
        ctx.spec_name = ctx.args.gpu_spec or "H100"
        why = f"{ctx.spec_name} (no table for '{props.name}': the fallback, --gpu-spec)"
    else:
        ctx.spec_name = ctx.args.gpu_spec or spec.name
        why = f"{ctx.spec_name} (by the device name)"
    gb = None if props.memory_bytes is None else props.memory_bytes / 1e9
    l2 = None if props.l2_bytes is None else props.l2_bytes / 2**20
    ctx.add(step, DeviceRow(props.name, props.compute_capability, props.sms, props.clock_mhz,
                            props.memory_clock_mhz, gb, l2, props.driver_version, why))
    from fsir.gpuspec import gpu_spec

    s = gpu_spec(ctx.spec_name)
    step.notes.append(f"gpuspec {s.name}: {s.sms} SMs, {s.clock_hz / 1e9:.2f} GHz, "
                      f"{s.hbm_bandwidth / 1e12:.2f} TB/s HBM, {s.l2_bytes / 2**20:.0f} MB L2")
    if props.sms is not None and props.sms != s.sms:
        step.notes.append(f"the device has {props.sms} SMs, the table {s.sms}: the models assume the table's")


# ---------------------------------------------------------------------------- b. check
def example_models(patterns: list[str]) -> list[Path]:
    paths: list[Path] = []
    for pattern in patterns:
        found = sorted(ROOT.glob(pattern)) if not Path(pattern).is_absolute() else [Path(pattern)]
        paths += [p for p in found if p.is_file()]
    return list(dict.fromkeys(paths))


def run_example(path: Path) -> tuple[str, str]:
    """(status, message) of `fs-run PATH --device cuda --check`."""
    from fsir.errors import UserError
    from fsir.tools.fs_run import main_impl

    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            rc = main_impl([str(path), "--device", "cuda", "--check"])
    except UserError as e:
        return "error", f"{e.loc}: {e.message}" if e.loc else e.message
    checks = " ".join(line for line in buf.getvalue().splitlines() if line.startswith("check "))
    return ("pass" if rc == 0 else "mismatch"), checks


ONNX_STATUS = {"passed": "pass", "failed": "mismatch", "refused": "refused", "crashed": "error"}


def onnx_sample(every: int, limit: int) -> list:
    from fsir.onnx.conformance import node_cases, sample

    with warnings.catch_warnings(), np.errstate(all="ignore"):  # ONNX's case generators' numpy warnings
        warnings.simplefilter("ignore")
        return sample(node_cases(), every)[:limit]


def step_check(ctx: Context, step: StepReport) -> None:
    from fsir.onnx.conformance import run_case

    for path in example_models(ctx.args.examples):
        ctx.case(f"example {path.name}")
        t0 = time.perf_counter()
        status, message = run_example(path)
        ctx.add(step, CaseRow("example", str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path),
                              status, time.perf_counter() - t0, message))
    if ctx.args.onnx_limit <= 0:
        return
    cases = onnx_sample(ctx.args.onnx_every, ctx.args.onnx_limit)
    step.notes.append(f"ONNX node tests: every {ctx.args.onnx_every}th case of each op type, the first "
                      f"{len(cases)} (--onnx-every, --onnx-limit)")
    for case in cases:
        ctx.case(f"onnx {case.name}")
        r = run_case(case, "CUDA")
        ctx.add(step, CaseRow("onnx", case.name, ONNX_STATUS[r.outcome.value], r.seconds,
                              r.message.strip().splitlines()[-1] if r.message.strip() else ""))
    summary = {s: sum(1 for r in step.rows if r.status == s) for s in ("pass", "mismatch", "refused", "error")}
    step.notes.append("totals: " + ", ".join(f"{n} {s}" for s, n in summary.items()))


# ---------------------------------------------------------------------------- c. kernels
@dataclass(frozen=True)
class Config:
    """A model compiled one way: `source` a file or a light CNN's name; `dtype` bf16 turns
    an MLIR model's f32 into bf16; `precision` is the pipeline's (fp32 or tf32)."""

    label: str
    source: str
    precision: str = "fp32"
    dtype: str = "f32"


@dataclass
class Compiled:
    lowered: Any
    ptx: str
    kernels: list  # KernelSummary per launch, in order
    inputs: list
    function: Any

    @property
    def ptx_sha(self) -> str:
        return hashlib.sha256(self.ptx.encode()).hexdigest()[:16]


def read_config(cfg: Config):
    from fsir.pipeline import parse_source, read_model
    from fsir.tools.fs_bench import model_path

    path = model_path(cfg.source)
    if cfg.dtype == "f32":
        return path, read_model(path)
    if path.suffix != ".mlir":
        raise ValueError(f"{cfg.dtype} needs an MLIR source (its f32 types are rewritten), got {path.name}")
    return path, parse_source(path.read_text().replace("f32", cfg.dtype), path.name, "mlir")


def compile_config(cfg: Config, gpu: str, seed: int = 0, tile_sync=None, fusion: str = "stitch") -> Compiled:
    from bert_layer import layer_inputs

    from fsir.api import kernel_summary
    from fsir.dialects.schedule import KernelOp
    from fsir.pipeline import PipelineOptions, emit_ptx, lower
    from fsir.runtime.reference import find_function

    path, module = read_config(cfg)
    f = find_function(module)
    inputs = layer_inputs(path, f, seed)
    kernels: list = []

    def on_stage(stage: str, _seconds: float, ir) -> None:
        if stage == "stitch-codegen":
            kernels.extend(kernel_summary(k) for k in ir.walk() if isinstance(k, KernelOp))

    options = PipelineOptions(fusion=fusion, gpu=gpu, precision=cfg.precision, tile_sync=tile_sync)
    lowered = lower(module, options, on_stage=on_stage)
    return Compiled(lowered, emit_ptx(lowered, options), kernels, inputs, f)


def kernel_configs(args) -> list[Config]:
    out = []
    if args.bert:
        name = Path(args.bert).stem
        for p in args.precisions:
            dtype, precision = ("bf16", "fp32") if p == "bf16" else ("f32", p)
            out.append(Config(f"{name} {p}", args.bert, precision, dtype))
    out += [Config(f"{Path(c).stem} fp32", c) for c in args.cnns]
    return out


def sim_models(cfg: Config, gpu: str, seed: int = 0) -> dict:
    """The simulator's models of every launch of `cfg` (run in a worker process): the
    timeline model's µs and fs-bench's max(memory, compute) + launch µs."""
    from fsir.gpuspec import gpu_spec
    from fsir.runtime.device import SimDevice
    from fsir.runtime.executor import execute
    from fsir.tools.fs_bench import model_launches

    c = compile_config(cfg, gpu, seed)
    dev = SimDevice(check_races=False, gpu=gpu, model_launches=True)
    records = []
    original = dev.launch_pipeline

    def launch_pipeline(requests):
        stats = original(requests)
        records.extend((r.kernel, tuple(r.grid), tuple(r.block), r.shared_bytes, s) for r, s in zip(requests, stats))
        return stats

    dev.launch_pipeline = launch_pipeline  # type: ignore[method-assign]
    execute(c.lowered, c.inputs, dev, ptx=c.ptx)
    figures = model_launches(c.lowered, records, gpu_spec(gpu))
    return {"config": asdict(cfg), "gpu": gpu, "ptx_sha": c.ptx_sha,
            "launches": [{"kernel": k, "timeline_us": us, "fs_bench_us": fig.modeled_us}
                         for (k, _st, us), fig in zip(dev.launch_log, figures)]}


def _sim_models_job(cfg_dict: dict, gpu: str, seed: int) -> dict:
    try:
        return sim_models(Config(**cfg_dict), gpu, seed)
    except Exception as e:  # reported with the configuration, not raised in the pool
        return {"config": cfg_dict, "gpu": gpu, "error": one_line(e)}


class SimJobs:
    """The simulator's models of each configuration: from a file, or computed by worker
    processes (spawned, so that no CUDA context is forked) while the GPU is measured;
    `workers` 0 computes them in this process when asked for."""

    def __init__(self, configs: list[Config], gpu: str, seed: int, workers: int, known: dict[str, dict]):
        self.gpu, self.seed, self.workers = gpu, seed, workers
        self.results: dict[str, dict] = dict(known)
        self.pending: dict[str, Any] = {}
        self.pool = None
        todo = [c for c in configs if c.label not in self.results]
        if todo and workers > 0:
            import multiprocessing

            self.pool = multiprocessing.get_context("spawn").Pool(min(workers, len(todo)))
            self.pending = {c.label: self.pool.apply_async(_sim_models_job, (asdict(c), gpu, seed)) for c in todo}

    def get(self, cfg: Config, wait_s: float) -> dict | None:
        if cfg.label in self.results:
            return self.results[cfg.label]
        job = self.pending.get(cfg.label)
        if job is None:
            if self.workers > 0:
                return None
            self.results[cfg.label] = _sim_models_job(asdict(cfg), self.gpu, self.seed)
            return self.results[cfg.label]
        job.wait(None if math.isinf(wait_s) else max(0.0, wait_s))
        if not job.ready():
            return None
        self.results[cfg.label] = job.get()
        return self.results[cfg.label]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()


def load_sim_models(path: str | None) -> dict[str, dict]:
    if not path:
        return {}
    data = json.loads(Path(path).read_text())
    return {r["config"]["label"]: r for r in data["configs"]}


def make_kernel_timer(warmup: int, repeats: int):
    """A CudaDevice whose every launch is timed alone: `warmup` + `repeats` launches between
    events; `measured` gets (kernel, grid, median µs) per launch."""
    from fsir.runtime.cuda_device import CudaDevice
    from fsir.runtime.device import CudaTiming

    class KernelTimer(CudaDevice):
        def __init__(self) -> None:
            super().__init__()
            self.measured: list[tuple[str, tuple, float]] = []

        def launch(self, module, kernel: str, grid, block, args, shared_bytes: int = 0) -> CudaTiming:
            times = self.time_launch(module, kernel, grid, block, args, shared_bytes, warmup, repeats)
            ms = statistics.median(times)
            self.measured.append((kernel, tuple(grid), 1000 * ms))
            return CudaTiming(1, ms)

    return KernelTimer()


def measure_kernels(c: Compiled, warmup: int, repeats: int) -> list[tuple[str, tuple, float]]:
    from fsir.runtime.executor import execute

    dev = make_kernel_timer(warmup, repeats)
    execute(c.lowered, c.inputs, dev, ptx=c.ptx)
    return dev.measured


def kernel_rows(cfg: Config, c: Compiled, measured: list, models: dict | None) -> list[KernelRow]:
    launches = (models or {}).get("launches") or []
    usable = models is not None and models.get("ptx_sha") == c.ptx_sha and len(launches) == len(measured)
    rows = []
    for i, (kernel, grid, us) in enumerate(measured):
        ks = c.kernels[i] if len(c.kernels) == len(measured) else None
        m = launches[i] if usable else {}
        rows.append(KernelRow(cfg.label, i, kernel, ks.mapping if ks else "?", "x".join(map(str, grid)), us,
                              ks.estimate_us if ks else None, m.get("timeline_us"), m.get("fs_bench_us")))
    return rows


MODELS = ("estimate_us", "timeline_us", "fs_bench_us")


def fit(config: str, rows: list[KernelRow], model: str) -> ModelFit:
    from scipy.stats import spearmanr

    pairs = [(getattr(r, model), r.measured_us) for r in rows
             if getattr(r, model) is not None and not math.isnan(getattr(r, model)) and r.measured_us > 0]
    if len(pairs) < 2:
        return ModelFit(config, model.removesuffix("_us"), len(pairs), None, None)
    xs, ys = zip(*pairs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant column: no correlation (nan)
        rho = float(spearmanr(xs, ys).statistic)
    ratio = float(np.median(np.array(xs) / np.array(ys)))
    return ModelFit(config, model.removesuffix("_us"), len(pairs), rho, ratio)


def step_kernels(ctx: Context, step: StepReport) -> None:
    args = ctx.args
    configs = kernel_configs(args)
    jobs = ctx.start_sim_jobs()
    try:
        measured: dict[str, tuple[Config, Compiled, list]] = {}
        for cfg in configs:  # the GPU first: the simulator's models come from the workers meanwhile
            ctx.case(f"kernels {cfg.label}")
            try:
                c = compile_config(cfg, ctx.spec_name, args.seed)
                measured[cfg.label] = (cfg, c, measure_kernels(c, args.warmup, args.repeats))
            except Exception as e:
                step.notes.append(f"{cfg.label}: {one_line(e)}")
        all_rows: list[KernelRow] = []
        for label, (cfg, c, times) in measured.items():
            wait = min(args.sim_wait_s, ctx.budget.left())
            models = jobs.get(cfg, wait)
            if models is None:
                step.notes.append(f"{label}: the simulator's models did not finish in time (precompute them: "
                                  "--sim-models-only, then --sim-models FILE)")
            elif "error" in models:
                step.notes.append(f"{label}: the simulator's models failed: {models['error']}")
            elif models.get("ptx_sha") != c.ptx_sha:
                step.notes.append(f"{label}: the precomputed models are of other PTX (another gpuspec or "
                                  "fsir version): left out")
            rows = kernel_rows(cfg, c, times, models)
            for r in rows:
                ctx.add(step, r)
            all_rows += rows
            step.fits += [fit(label, rows, m) for m in MODELS]
        step.fits += [fit("all", all_rows, m) for m in MODELS]
        ctx.report.write(ctx.out)
    finally:
        jobs.close()
        ctx.sim_jobs = None


# ---------------------------------------------------------------------------- d. peers
def fsir_layer(cfg: Config, spec: str, fusion: str, seed: int, warmup: int, repeats: int) -> PeerRow:
    c = compile_config(cfg, spec, seed, fusion=fusion)
    measured = measure_kernels(c, warmup, repeats)
    return PeerRow(f"fsir {fusion}", sum(us for *_, us in measured), len(measured), "ok",
                   "Σ per-kernel CUDA-event medians (launch gaps excluded)")


def torch_peers(c: Compiled, args, deadline: Budget) -> list[PeerRow]:
    """Eager PyTorch and torch.compile on the layer's inputs (the graph-IR BERT layer)."""
    if importlib.util.find_spec("torch") is None:
        return skipped_torch("torch is not importable here")
    import torch

    if not torch.cuda.is_available():
        return skipped_torch("torch finds no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    xs = [torch.from_numpy(np.asarray(a, np.float32)).cuda() for a in c.inputs]
    expected = run_reference(c)
    rows = []
    for name, fn in (("torch eager", torch_bert_layer), ("torch.compile", torch.compile(torch_bert_layer))):
        deadline.check(name)
        try:
            rows.append(time_torch(name, fn, xs, expected, args.warmup, args.repeats))
        except Exception as e:
            rows.append(PeerRow(name, None, None, "error", one_line(e)))
    return rows


def skipped_torch(why: str) -> list[PeerRow]:
    return [PeerRow(name, None, None, "skipped", why) for name in ("torch eager", "torch.compile")]


def run_reference(c: Compiled) -> np.ndarray:
    from fsir.runtime.reference import run_function

    return run_function(c.function, c.inputs)[0]


def torch_bert_layer(x, mask, wq, bq, wk, bk, wv, bv, wo, bo, g1, be1, w1, b1, w2, b2, g2, be2):
    """examples/bert_layer.mlir in PyTorch: post-LayerNorm BERT, heads of 64, erf GELU."""
    import torch
    import torch.nn.functional as F

    b, s, h = x.shape
    heads = h // 64

    def split(t):
        return t.reshape(b, s, heads, 64).transpose(1, 2)

    q, k, v = split(x @ wq + bq), split(x @ wk + bk), split(x @ wv + bv)
    p = torch.softmax(q @ k.transpose(-1, -2) / 8.0 + mask, dim=-1)
    attn = (p @ v).transpose(1, 2).reshape(b, s, h) @ wo + bo
    h1 = F.layer_norm(attn + x, (h,), g1, be1, 1e-5)
    ffn = F.gelu(h1 @ w1 + b1) @ w2 + b2
    return F.layer_norm(ffn + h1, (h,), g2, be2, 1e-5)


def time_torch(name: str, fn, xs, expected: np.ndarray, warmup: int, repeats: int) -> PeerRow:
    import torch

    for _ in range(max(1, warmup)):
        out = fn(*xs)
    torch.cuda.synchronize()
    err = float(np.max(np.abs(out.cpu().numpy() - expected)))
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*xs)
        end.record()
        end.synchronize()
        times.append(1000 * start.elapsed_time(end))
    return PeerRow(name, statistics.median(times), torch_launches(fn, xs), "ok",
                   f"events around the whole layer (launch gaps included); max |Δ| vs fsir's reference {err:.2e}")


def torch_launches(fn, xs) -> int | None:
    """CUDA kernels one call launches, by torch.profiler (None where it cannot tell)."""
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn(*xs)
            torch.cuda.synchronize()
        return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    except Exception:
        return None


def step_peers(ctx: Context, step: StepReport) -> None:
    args = ctx.args
    if not args.bert:
        step.notes.append("no --bert model")
        return
    cfg = Config(Path(args.bert).stem + " fp32", args.bert)
    for fusion in ("stitch", "xla"):
        ctx.case(f"peers fsir {fusion}")
        try:
            ctx.add(step, fsir_layer(cfg, ctx.spec_name, fusion, args.seed, args.warmup, args.repeats))
        except Exception as e:
            ctx.add(step, PeerRow(f"fsir {fusion}", None, None, "error", one_line(e)))
    ctx.case("peers torch")
    c = compile_config(cfg, ctx.spec_name, args.seed)
    for row in torch_peers(c, args, ctx.budget):
        ctx.add(step, row)
    step.notes.append("all f32 (PyTorch with TF32 off); fsir times its kernels one by one, PyTorch the layer")


# ---------------------------------------------------------------------------- e. cusync
def make_run_timer():
    """A CudaDevice that adds up a run's time: each stream-serial launch's kernel time and
    each pipeline's first start to last end."""
    from fsir.runtime.cuda_device import CudaDevice

    class RunTimer(CudaDevice):
        run_ms = 0.0
        launches = 0

        def launch(self, module, kernel, grid, block, args, shared_bytes=0):
            t = super().launch(module, kernel, grid, block, args, shared_bytes)
            self.run_ms += t.kernel_ms
            self.launches += 1
            return t

        def launch_pipeline(self, requests):
            out = super().launch_pipeline(requests)
            self.run_ms += self.last_pipeline_ms or 0.0
            self.launches += len(out)
            return out

    return RunTimer()


def mlp_row(tokens: int, hidden: int, policy: str, spec: str, seed: int, repeats: int) -> MlpRow:
    from generate import gpt3_mlp

    from fsir.codegen.tile_sync import parse_tile_sync
    from fsir.pipeline import PipelineOptions, lower, parse_source
    from fsir.runtime.compare import compare
    from fsir.runtime.executor import execute
    from fsir.runtime.inputs import random_inputs
    from fsir.runtime.reference import find_function, run_function

    module = parse_source(gpt3_mlp(tokens, hidden), f"gpt3_mlp_{tokens}.mlir", "mlir")
    f = find_function(module)
    inputs = random_inputs(f, seed)
    sync = None if policy == "off" else parse_tile_sync(policy, "tile_sync")
    lowered = lower(module, PipelineOptions(gpu=spec, tile_sync=sync))
    runs = []
    dev = make_run_timer()
    for i in range(max(1, repeats)):
        dev.run_ms, dev.launches = 0.0, 0
        outputs, _ = execute(lowered, inputs, dev)
        if i == 0:
            ok = all(compare(g, w).ok for g, w in zip(outputs, run_function(f, inputs)))
        runs.append(1000 * dev.run_ms)
    return MlpRow(tokens, policy, dev.launches, statistics.median(runs), "ok" if ok else "MISMATCH")


def step_cusync(ctx: Context, step: StepReport) -> None:
    args = ctx.args
    for tokens in args.mlp_tokens:
        for policy in ("off", "tile", "row"):
            ctx.case(f"cusync {tokens} {policy}")
            try:
                ctx.add(step, mlp_row(tokens, args.mlp_hidden, policy, ctx.spec_name, args.seed, args.mlp_repeats))
            except Exception as e:
                ctx.add(step, MlpRow(tokens, policy, 0, None, "error", one_line(e)))
    step.notes.append(f"GPT-3 MLP, H = {args.mlp_hidden} split 8 ways (examples/cusync/generate.py); median of "
                      f"{args.mlp_repeats} runs; off: Σ kernel times, tile/row: the pipeline's span")


# ---------------------------------------------------------------------------- f. tuner
def step_tuner(ctx: Context, step: StepReport) -> None:
    import gpu_check_tuner as gt

    from fsir.pipeline import PipelineOptions
    from fsir.runtime.cuda_device import probe_gpu
    from fsir.tools.fs_bench import model_path
    from fsir.tune.measure import CudaBackend, ModelBackend

    args = ctx.args
    ok, why = probe_gpu()
    if not ok:
        raise StepSkipped(f"skipped: no CUDA GPU found: {why}")
    if not args.bert:
        raise StepSkipped("skipped: no BERT layer (--bert '')")
    cap = min(args.tuner_cap_s, max(0.0, ctx.budget.left()))
    deadline = ctx.budget.clock() + cap
    text = model_path(args.bert).read_text()
    options = PipelineOptions(gpu=ctx.spec_name)
    tasks = gt.tasks_of(text, options)
    kernels = []
    for task in tasks:
        if ctx.budget.clock() >= deadline:
            break
        ctx.case(f"tuner: the prior's ranking of {task.kernel}")
        kernels.append(gt.candidates(text, options, task, args.tuner_top))

    def on_case(what: str) -> None:
        ctx.current = what  # for the watchdog; the deadline holds the budget

    done = len(kernels) == len(tasks) and gt.measure_all(
        kernels, args.sim_workers, CudaBackend(warmup=args.warmup, repeats=args.repeats),
        ModelBackend(samples=args.tuner_samples), deadline, ctx.budget.clock, on_case)
    for task, cs in zip(tasks, kernels):
        ctx.add(step, gt.row_of(task, cs))
        errors = [c for c in cs if c.error]
        if errors:
            step.notes.append(f"{task.kernel}: {len(errors)} of {len(cs)} candidates failed, e.g. "
                              f"{errors[0].config}: {errors[0].error[:200]}")
    step.notes.append(f"the prior's top {args.tuner_top} candidates of each kernel (the fast mode's ranking) and "
                      f"stitch-codegen's choice; cuda: median of {args.repeats} CUDA-event timings after {args.warmup} "
                      f"warm-ups; model: the timeline model of {args.tuner_samples} simulated blocks per launch")
    if not done:
        raise BudgetSpent(f"the step's time cap ({cap:.0f} s) passed: the rows hold the pairs measured by then")


# ---------------------------------------------------------------------------- driver
STEPS: list[tuple[str, str, Callable[[Context, StepReport], None]]] = [
    ("a", "CUDA device and its gpuspec table", step_device),
    ("b", "examples and ONNX node tests on --device cuda --check", step_check),
    ("c", "per-kernel measurement against the cost models", step_kernels),
    ("d", "BERT layer: PyTorch eager, torch.compile, fsir stitch and xla", step_peers),
    ("e", "cuSync GPT-3 MLP with and without tile-sync", step_cusync),
    ("f", "the tuner's cuda and model measurers on three BERT kernels", step_tuner),
]


def run_step(ctx: Context, name: str, title: str, fn: Callable[[Context, StepReport], None]) -> None:
    step = StepReport(name, title)
    ctx.report.steps.append(step)
    t0 = time.perf_counter()
    try:
        if name != "a":  # the device is always reported
            ctx.budget.check(f"step {name}")
        step.status = "running"
        fn(ctx, step)
        step.status = "ok"
    except StepSkipped as e:
        step.status = "skipped"
        step.notes.append(str(e))
    except BudgetSpent as e:
        step.status = "not run (budget spent)" if step.status == "not run" else "stopped (budget spent)"
        step.notes.append(str(e))
    except Exception as e:
        step.status = "failed"
        step.error = one_line(e) + "\n" + traceback.format_exc(limit=-4)
    step.seconds = time.perf_counter() - t0
    ctx.report.write(ctx.out)


def start_watchdog(ctx: Context, grace_s: float) -> threading.Timer:
    """Past the budget and `grace_s`, a launch that never returns (a hung kernel) cannot be
    interrupted: write what the report holds, say where it stopped, and exit."""

    def fire() -> None:
        ctx.report.interrupted = f"the budget and {grace_s:.0f} s of grace passed during {ctx.current or 'setup'}"
        ctx.report.write(ctx.out)
        os._exit(3)

    timer = threading.Timer(max(0.0, ctx.budget.left()) + grace_s, fire)
    timer.daemon = True
    timer.start()
    return timer


def sim_models_only(args) -> int:
    """Compute the simulator's models of every configuration of step c (no GPU needed)."""
    from fsir.gpuspec import gpu_spec

    gpu = gpu_spec(args.gpu_spec or "H200").name
    configs = kernel_configs(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = SimJobs(configs, gpu, args.seed, args.sim_workers, {})
    try:
        results = []
        for cfg in configs:
            r = jobs.get(cfg, math.inf)
            assert r is not None
            results.append(r)
            (out / SIM_MODELS_JSON).write_text(json.dumps({"gpu": gpu, "configs": results}, indent=1) + "\n")
            print(f"{cfg.label}: {r.get('error') or str(len(r['launches'])) + ' launches'}", flush=True)
    finally:
        jobs.close()
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="folder for gpu_check.json and gpu_check.md")
    p.add_argument("--budget-s", type=float, default=480.0, help="stop starting new work after this (default 480)")
    p.add_argument("--watchdog-grace-s", type=float, default=60.0,
                   help="past the budget by this, write the reports and exit even if a launch hangs")
    p.add_argument("--gpu-spec", default=None, help="the gpuspec table to use instead of the device's")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", default="abcdef", help="the steps to run (default abcdef)")
    p.add_argument("--examples", nargs="*", default=["examples/*.mlir", "examples/hlo/*.hlo", "examples/onnx/*.onnx"],
                   help="example models for step b (globs under the repository)")
    p.add_argument("--onnx-every", type=int, default=16, help="step b: every Nth ONNX node test of each op type")
    p.add_argument("--onnx-limit", type=int, default=150, help="step b: at most this many ONNX node tests")
    p.add_argument("--bert", default="examples/bert_layer.mlir", help="steps c, d and f: the BERT layer ('' skips)")
    p.add_argument("--precisions", type=lambda s: [x for x in s.split(",") if x], default=["fp32", "tf32", "bf16"])
    p.add_argument("--cnns", nargs="*", default=["resnet50"], help="step c: light CNNs of the onnx wheel, or files")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--sim-models", default=None, help=f"step c: a {SIM_MODELS_JSON} from --sim-models-only")
    p.add_argument("--sim-workers", type=int, default=min(8, os.cpu_count() or 1),
                   help="processes computing the simulator's models during step c (0: in this process)")
    p.add_argument("--sim-wait-s", type=float, default=120.0,
                   help="step c: how long to wait for a configuration's simulator models")
    p.add_argument("--sim-models-only", action="store_true",
                   help=f"only compute the simulator's models of step c into OUT/{SIM_MODELS_JSON} (no GPU)")
    p.add_argument("--mlp-tokens", type=int, nargs="*", default=[256, 2048])
    p.add_argument("--mlp-hidden", type=int, default=12288)
    p.add_argument("--mlp-repeats", type=int, default=5)
    p.add_argument("--tuner-top", type=int, default=32, help="step f: the prior's top N candidates per kernel")
    p.add_argument("--tuner-cap-s", type=float, default=120.0, help="step f: its own time cap (default 120)")
    p.add_argument("--tuner-samples", type=int, default=2,
                   help="step f: blocks the model measurer simulates per launch (fs-tune's: 4; fewer to fit the cap)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None, clock: Callable[[], float] = time.monotonic) -> int:
    args = parse_args(argv)
    if args.sim_models_only:
        return sim_models_only(args)
    out = Path(args.out)
    report = Report(["gpu_check.py", *(sys.argv[1:] if argv is None else argv)], args.budget_s,
                    time.strftime("%Y-%m-%d %H:%M:%S"))
    ctx = Context(args, Budget(args.budget_s, clock), report, out)
    report.write(out)
    watchdog = start_watchdog(ctx, args.watchdog_grace_s)
    try:
        for name, title, fn in STEPS:
            if name in args.steps:
                run_step(ctx, name, title, fn)
                print(f"step {name}: {report.steps[-1].status} ({report.steps[-1].seconds:.1f} s)", flush=True)
            if name == "a" and "c" in args.steps:
                ctx.start_sim_jobs()  # the simulator's models, in worker processes during steps b and c
    finally:
        watchdog.cancel()
        if ctx.sim_jobs is not None:
            ctx.sim_jobs.close()
    print(f"wrote {out / REPORT_JSON} and {out / REPORT_MD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
