"""Per-launch profiles of a run: what each launch was, what it counted, what it costs.

    records = []
    outputs, totals = execute(lowered, inputs, device, record=records)   # one LaunchRecord per launch
    figures = model_launches(lowered, records, gpu_spec("A100"))        # LaunchFigures: counters + model
    print(format_profile(figures, "A100"))                              # fs-run --profile
    json.dump(chrome_trace(records, figures, "A100"), fh)                # fs-run --trace (Perfetto)

The one home of the per-launch kernel-time model that fs-run, fs-bench,
benchmarks/bert_layer.py and `Executable.last_stats` share. Modeled times come from
fsir/codegen/kernel_time.py (max(memory, compute) + launch cost) or, where the simulator ran
the launch through its timeline model, fsir/sim/timeline.py; both are models, not
measurements, and say so wherever they are printed. On a GPU a launch carries its
CUDA-event time instead of counters.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from fsir.runtime.device import SimDevice
from fsir.sim.stats import LaunchStats

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from fsir.api import KernelSummary
    from fsir.gpuspec import GpuSpec

# The simulator's thread-instruction counters by the pipe they run on (fsir/sim/classes.py).
INSTRUCTION_CLASSES = ("fp32", "fp16", "fp64", "sfu", "int", "lsu", "tensor")
KERNEL_TIME_MODEL = "kernel-time model (fsir/codegen/kernel_time.py: max(memory, compute) + launch; a model)"
TIMELINE_MODEL = "timeline model (fsir/sim/timeline.py; a model, not a measurement)"
MEASURED = "measured (CUDA events)"


@dataclass(frozen=True)
class LaunchRecord:
    """One launch of a run as the executor issued it and the device reported it.

    stats: the simulator's counters (None on a GPU). measured_us: the CUDA-event time (None
    on the simulator). timeline: the launch's (start, end) µs in the timeline model of its
    pipeline, with `timeline_index` numbering those pipelines within the run (None where the
    simulator did not model the launch)."""

    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared_bytes: int = 0
    stream: int = 0
    stats: LaunchStats | None = None
    measured_us: float | None = None
    timeline_index: int | None = None
    timeline: tuple[float, float] | None = None
    timeline_us: float | None = None  # the timeline model's time of the launch, from its issue


def launch_record(kernel: str, grid: Sequence[int], block: Sequence[int], shared_bytes: int, result: Any,
                  stream: int = 0) -> LaunchRecord:
    """The record of a launch whose device returned `result` (LaunchStats or CudaTiming)."""
    stats = result if isinstance(result, LaunchStats) else None
    ms = getattr(result, "kernel_ms", None)
    return LaunchRecord(kernel, tuple(int(g) for g in grid), tuple(int(b) for b in block), int(shared_bytes),
                        int(stream), stats, None if ms is None else 1e3 * float(ms))


def attach_timelines(records: list[LaunchRecord], device: SimDevice, log_from: int,
                     timelines_from: int) -> list[LaunchRecord]:
    """`records` with the timeline-model spans of the launches the simulator modeled since its
    `launch_log` had `log_from` entries and `timelines` `timelines_from` (launch_log names
    which launches a timeline covers: those with modeled µs, in order)."""
    spans = [(i, (1e6 * s, 1e6 * e)) for i, tl in enumerate(device.timelines[timelines_from:])
             for s, e in zip(tl.launch_start, tl.launch_end)]
    modeled = [us for _, _, us in device.launch_log[log_from:]]
    if len(modeled) != len(records) or sum(us is not None for us in modeled) != len(spans):
        return records  # another caller launched on this device meanwhile: leave the records alone
    placed = iter(spans)
    out = []
    for rec, us in zip(records, modeled):
        if us is not None:
            index, span = next(placed)
            rec = replace(rec, timeline_index=index, timeline=span, timeline_us=float(us))
        out.append(rec)
    return out


@dataclass(frozen=True)
class LaunchFigures:
    """One launch, as the simulator counted it and the model times it (memory_us, compute_us,
    modeled_us: the kernel-time model; timeline_us: the timeline model, where it ran;
    measured_us: CUDA events on a GPU)."""

    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    bytes: int  # distinct global bytes
    requested_bytes: int  # loads and stores as the threads request them
    load_bytes: int  # the loads among them
    flops: int
    memory_us: float
    compute_us: float
    modeled_us: float  # max(memory, compute) + launch cost
    registers: int = 0  # the latency-evaluator's estimate for the gpu.func
    shared_bytes: int = 0  # static + dynamic shared memory per block
    sectors: int = 0  # 32-byte global sectors
    instructions: Mapping[str, int] = field(default_factory=dict)  # thread-instructions by pipe
    stream: int = 0
    timeline_us: float | None = None
    measured_us: float | None = None

    @property
    def time_us(self) -> float:
        """The best time known: measured, else the kernel-time model's."""
        return self.measured_us if self.measured_us is not None else self.modeled_us


def _as_record(r: LaunchRecord | tuple) -> LaunchRecord:
    """A record, also from the (kernel, grid, block, shared bytes, stats) tuples older callers build."""
    if isinstance(r, LaunchRecord):
        return r
    kernel, grid, block, smem, st = r
    return launch_record(kernel, grid, block, smem, st)


def model_launches(lowered: ModuleOp, records: Iterable[LaunchRecord | tuple], spec: GpuSpec,
                   known: Mapping[str, tuple[int, int, int]] | None = None) -> list[LaunchFigures]:
    """Every recorded launch timed by the kernel-time model (fsir/codegen/kernel_time.py),
    its occupancy from the gpu.func's estimated registers and shared memory, the bytes
    a warp keeps in flight from its straight runs of loads (or those three from `known`,
    by kernel: a compile whose kernels are stubs, `fsir.pipeline.compile_ptx`). A launch
    without counters (on a GPU) keeps its measured time and zero counters."""
    from fsir.codegen.latency import bytes_in_flight, estimate_registers, shared_bytes
    from fsir.dialects import gpu

    funcs = {op.sym_name.data: op for op in lowered.walk() if isinstance(op, gpu.FuncOp)}
    resources: dict[str, tuple[int, int, int]] = dict(known or {})
    out = []
    for rec in map(_as_record, records):
        if rec.kernel not in resources:
            f = funcs[rec.kernel]
            resources[rec.kernel] = (estimate_registers(f), shared_bytes(f), bytes_in_flight(f.body.blocks[0].ops))
        out.append(_figures(rec, *resources[rec.kernel], spec))
    return out


def _figures(rec: LaunchRecord, regs: int, static_smem: int, in_flight: int, spec: GpuSpec) -> LaunchFigures:
    from fsir.codegen.kernel_time import kernel_time, launch_from_stats
    from fsir.codegen.latency import occupancy

    threads = math.prod(rec.block)
    smem = static_smem + rec.shared_bytes
    st = rec.stats or LaunchStats()
    if rec.stats is None:
        memory = compute = total = 0.0
    else:
        occ = occupancy(threads, regs, smem, spec)
        t = kernel_time(launch_from_stats(st, math.prod(rec.grid), threads, occ.blocks_per_sm,
                                          in_flight * spec.warp_size), spec)
        memory, compute, total = 1e6 * t.memory, 1e6 * t.compute, 1e6 * t.total
    return LaunchFigures(rec.kernel, rec.grid, rec.block, int(st.global_unique_bytes), int(st.global_bytes),
                         int(st.global_load_bytes), int(st.flops), memory, compute, total, regs, smem,
                         int(st.global_sectors),
                         {c: int(getattr(st, f"{c}_instructions")) for c in INSTRUCTION_CLASSES},
                         rec.stream, rec.timeline_us, rec.measured_us)


@dataclass(frozen=True)
class RunStats:
    """What `Executable.run` leaves in `last_stats`: the summed counters (`totals`, whose
    fields read through, so `last_stats.launches` is the launch count and
    `last_stats.global_unique_bytes` the sum) and one LaunchRecord per launch (`per_launch`).
    `figures(gpu)` models each launch (LaunchFigures)."""

    totals: Any  # LaunchStats on the simulator, CudaTiming on a GPU
    per_launch: tuple[LaunchRecord, ...]
    module: ModuleOp | None = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        # Only called for names the dataclass lacks: the summed counters of `totals`.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.totals, name)

    def figures(self, gpu: str = "A100") -> list[LaunchFigures]:
        """Each launch timed by the kernel-time model on `gpu` (fsir.gpuspec names)."""
        from fsir.gpuspec import gpu_spec

        if self.module is None:
            raise ValueError("RunStats.figures needs the lowered module the run executed")
        return model_launches(self.module, self.per_launch, gpu_spec(gpu))


def figures_dict(fig: LaunchFigures) -> dict[str, Any]:
    """A launch's figures as JSON values (tuples as lists)."""
    d = asdict(fig)
    d["grid"], d["block"] = list(fig.grid), list(fig.block)
    return d


def format_profile(figures: Sequence[LaunchFigures], gpu: str,
                   kernels: Mapping[str, KernelSummary] | None = None) -> str:
    """An nsys-like table, one row per launch sorted by time (measured on a GPU, else the
    kernel-time model on `gpu`), with each launch's share of the total."""
    kernels = kernels or {}
    measured = any(f.measured_us is not None for f in figures)
    source = MEASURED if measured else f"{KERNEL_TIME_MODEL} on {gpu}"
    total = sum(f.time_us for f in figures) or 1.0
    head = (f"{'time %':>6} {'µs':>9} {'kernel':<24} {'mapping / config':<30} {'grid × block':<22} {'regs':>4} "
            f"{'smem':>6} " + " ".join(f"{c:>8}" for c in INSTRUCTION_CLASSES)
            + f" {'req MB':>8} {'dist MB':>8} {'sectors':>9}")
    lines = [f"profile: {len(figures)} launches, {sum(f.time_us for f in figures):.2f} µs ({source})", head,
             "-" * len(head)]
    for f in sorted(figures, key=lambda f: -f.time_us):
        ks = kernels.get(f.kernel)
        config = f"{ks.mapping} {ks.config}" if ks is not None else "?"
        dims = f"{_dims(f.grid)} × {_dims(f.block)}"
        lines.append(f"{100 * f.time_us / total:>6.1f} {f.time_us:>9.2f} {f.kernel[:24]:<24} {config[:30]:<30} "
                     f"{dims[:22]:<22} {f.registers:>4} {f.shared_bytes:>6} "
                     + " ".join(f"{f.instructions.get(c, 0):>8}" for c in INSTRUCTION_CLASSES)
                     + f" {f.requested_bytes / 1e6:>8.3f} {f.bytes / 1e6:>8.3f} {f.sectors:>9}")
    return "\n".join(lines)


def _dims(d: Sequence[int]) -> str:
    return "x".join(str(x) for x in d)


def chrome_trace(records: Sequence[LaunchRecord], figures: Sequence[LaunchFigures], gpu: str) -> dict[str, Any]:
    """The run as a Chrome trace (the "traceEvents" JSON Perfetto and chrome://tracing open):
    one track (tid) per stream, one complete ("X") event per launch with its figures as args.
    A launch is placed by the timeline model where the simulator modeled it, by its CUDA-event
    time on a GPU, else by the kernel-time model, launches of a stream end to end; args name
    which ("time")."""
    events: list[dict[str, Any]] = []
    streams: set[int] = set()
    for rec, fig, (ts, dur, source) in zip(records, figures, _placements(records, figures, gpu)):
        streams.add(rec.stream)
        args = {"time": source, **figures_dict(fig)}
        events.append({"name": rec.kernel, "cat": "model" if source != MEASURED else "measured", "ph": "X",
                       "pid": 0, "tid": rec.stream, "ts": ts, "dur": dur, "args": args})
    label = "fsir run (CUDA events)" if any(r.measured_us is not None for r in records) else \
        f"fsir run on {gpu} (modeled: a model, not a measurement)"
    meta = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": label}}]
    meta += [{"name": "thread_name", "ph": "M", "pid": 0, "tid": s, "args": {"name": f"stream {s}"}}
             for s in sorted(streams)]
    return {"traceEvents": meta + events, "displayTimeUnit": "ns"}


def _placements(records: Sequence[LaunchRecord], figures: Sequence[LaunchFigures],
                gpu: str) -> list[tuple[float, float, str]]:
    """(start µs, duration µs, what the time is) per launch. A timeline's launches keep their
    places relative to where the run had got when the timeline began."""
    now = 0.0
    base: dict[int, float] = {}
    out = []
    for rec, fig in zip(records, figures):
        if rec.timeline is not None and rec.timeline_index is not None:
            start = base.setdefault(rec.timeline_index, now)
            ts, end = start + rec.timeline[0], start + rec.timeline[1]
            out.append((ts, end - ts, f"{TIMELINE_MODEL} on {gpu}"))
            now = max(now, end)
            continue
        dur = fig.time_us
        out.append((now, dur, MEASURED if rec.measured_us is not None else f"{KERNEL_TIME_MODEL} on {gpu}"))
        now += dur
    return out



class RecordingSimDevice(SimDevice):
    """The simulator, keeping a LaunchRecord of each single launch in `records` (what fs-bench
    used before `execute(..., record=)`, which also records the launches of pipelines)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[LaunchRecord] = []

    def launch(self, module, kernel: str, grid, block, args, shared_bytes: int = 0) -> LaunchStats:
        st = super().launch(module, kernel, grid, block, args, shared_bytes)
        self.records.append(launch_record(kernel, grid, block, shared_bytes, st))
        return st
