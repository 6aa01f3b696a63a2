"""fsir's Python API: compile a model once, run it many times.

    import fsir
    exe = fsir.compile("examples/layernorm.mlir")           # or IR text, a ModuleOp, .hlo, .onnx
    exe.kernels[0]                                           # KernelSummary(name='layernorm_k0', mapping='row', ...)
    outputs = exe.run({"x": x, "gamma": g, "beta": b})      # or a list in argument order
    exe.last_stats.launches                                  # the simulator's counters of that run
    exe.compile_stats.kernels_lowered                        # what the compile did (fsir.stats)

`compile` runs `fsir.pipeline` (the passes fs-run and fs-opt run) and keeps the lowered
module; its PTX is printed on first use. Lowered kernels can be kept in the persistent
kernel cache (`fsir.cache`: FSIR_CACHE=1 or `cache=True`). Problems with the model or the
inputs raise `fsir.errors.UserError` (with a `file:line:col` location when one is known).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from fsir import cache as kernel_cache
from fsir.errors import UserError
from fsir.pipeline import (
    PipelineOptions,
    emit_ptx,
    load,
    lower,
    pipeline_text,
    target_text,
)
from fsir.stats import CompileStats, collecting

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.dialects.func import FuncOp

    from fsir.dialects.schedule import KernelOp
    from fsir.runtime.profile import RunStats

__all__ = ["Background", "BackgroundExecutable", "Executable", "KernelSummary", "PlanCache", "QuickPlan", "compile",
           "kernel_summary"]


@dataclass(frozen=True)
class KernelSummary:
    """One kernel as stitch-codegen chose it.

    mapping: loop, row or gemm. config: the chosen configuration (e.g.
    `block/256/reg3/steps8`: row schedule, threads per block, row kept in registers,
    row steps). grid, block: launch dimensions (None where known only at run time).
    estimate_us, registers: the latency-evaluator's estimate (None where it did not run).
    """

    name: str
    mapping: str
    config: str
    grid: tuple[int | None, ...]
    block: tuple[int, ...]
    estimate_us: float | None
    registers: int | None


def kernel_summary(kernel: KernelOp) -> KernelSummary:
    """The summary of a schedule.kernel: the one place the API reads its mapping,
    parameters and cost."""
    from fsir.dialects.schedule import DYNAMIC

    values = {} if kernel.cost is None else {k: _value(v) for k, v in kernel.cost.data.items()}
    config = values.get("config")
    if not isinstance(config, str):
        config = str(kernel.params)
    grid, block = kernel.launch()
    estimate = values.get("estimate_us")
    registers = values.get("registers")
    return KernelSummary(
        name=kernel.sym_name.data,
        mapping=str(kernel.mapping.data),
        config=config,
        grid=tuple(None if g == DYNAMIC else int(g) for g in grid),
        block=tuple(int(b) for b in block),
        estimate_us=None if estimate is None else float(estimate),
        registers=None if registers is None else int(registers),
    )


def _value(attr: Any) -> Any:
    """The Python value of a string, integer or float attribute."""
    from xdsl.dialects.builtin import FloatAttr, IntegerAttr

    if isinstance(attr, (IntegerAttr, FloatAttr)):
        return attr.value.data
    return getattr(attr, "data", attr)


@dataclass
class Executable:
    """A compiled model: the lowered module, its kernels, its PTX, and `run`.

    source: the graph module it was compiled from (argument names and types).
    module: the lowered IR (gpu dialect kernels and a host function per function).
    kernels: one KernelSummary per kernel, in the order stitch-codegen made them.
    options: the pipeline options it was compiled with.
    compile_stats: what the compile did (`fsir.stats.CompileStats`: fusions explored,
        candidates scored and lowered, kernels lowered, kernel cache hits and misses).
    last_stats: a `fsir.runtime.profile.RunStats` of the last `run` (None before the
        first run): the device's summed counters read through it (`last_stats.launches`
        is the launch count; the simulator counts bytes, sectors and instructions), and
        `last_stats.per_launch` holds one LaunchRecord per launch.
    """

    source: ModuleOp
    module: ModuleOp
    kernels: list[KernelSummary]
    options: PipelineOptions
    compile_stats: CompileStats = field(default_factory=CompileStats)
    last_stats: RunStats | None = field(default=None, init=False)

    @cached_property
    def ptx(self) -> str:
        """The PTX module (for `options.arch`), printed on first use."""
        return emit_ptx(self.module, self.options)

    @property
    def pipeline(self) -> str:
        """The `fs-opt -p` argument that reproduces `module` from `source`."""
        return pipeline_text(self.options)

    @property
    def target(self) -> str:
        """The `fs-opt -t` argument that prints `ptx`."""
        return target_text(self.options)

    def run(self, inputs: Sequence[Any] | Mapping[str, Any], device: str = "auto",
            entry: str | None = None, progress: bool | None = None) -> list[np.ndarray]:
        """Run function `entry` (default: the first) on `inputs` and return its outputs.

        inputs: arrays in argument order, or a dict by argument name (as written in
        the source, without `%`, or arg0, arg1, ...). Shapes must match the signature
        (`?` dims take any size) and element types must be of the same kind (floats
        are converted to the argument's precision). device: auto (a GPU when
        cuda-python finds one, else the simulator), cuda, or sim. progress: the
        simulator's progress bar on standard error (None: on a terminal, for runs longer
        than two seconds; False: never; True: always). Leaves a `RunStats` in `last_stats`."""
        from fsir.runtime.device import select_device
        from fsir.runtime.executor import execute
        from fsir.runtime.profile import LaunchRecord, RunStats
        from fsir.runtime.reference import check_inputs, find_function

        f = find_function(self.source, entry)
        arrays = check_inputs(f, _bind(f, inputs))
        dev = select_device(device)
        records: list[LaunchRecord] = []
        outputs, stats = execute(self.module, arrays, dev, entry=f.sym_name.data, ptx=self.ptx, record=records,
                                 progress=progress)
        self.last_stats = None if stats is None else RunStats(stats, tuple(records), self.module)
        return outputs

    def __repr__(self) -> str:
        funcs = ", ".join(f"@{n}" for n in _function_names(self.source))
        return f"<fsir.Executable {funcs}: {len(self.kernels)} kernel(s), fusion={self.options.fusion}>"


def _function_names(module: ModuleOp) -> list[str]:
    from xdsl.dialects import func

    return [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]


def _bind(f: FuncOp, inputs: Sequence[Any] | Mapping[str, Any]) -> list[Any]:
    """Inputs in argument order, from a sequence or a mapping by argument name."""
    from fsir.runtime.inputs import inputs_by_name

    if isinstance(inputs, Mapping):
        return inputs_by_name(f, inputs, "inputs")
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence):
        raise UserError(f"inputs must be a list of arrays or a dict by argument name, got {type(inputs).__name__}")
    return list(inputs)


@overload
def compile(source: str | bytes | os.PathLike[str] | ModuleOp, *, fusion: str = ..., arch: str = ...,
            frontend: str | None = ..., plans: PlanCache | None = ..., cache: bool | None = ...,
            tuning_log: str | os.PathLike[str] | None = ..., background: Literal[False] = ...,
            **options: Any) -> Executable: ...


@overload
def compile(source: str | bytes | os.PathLike[str] | ModuleOp, *, fusion: str = ..., arch: str = ...,
            frontend: str | None = ..., plans: PlanCache | None = ..., cache: bool | None = ...,
            tuning_log: str | os.PathLike[str] | None = ..., background: Literal[True] | Background,
            **options: Any) -> BackgroundExecutable: ...


def compile(source: str | bytes | os.PathLike[str] | ModuleOp, *, fusion: str = PipelineOptions.fusion,
            arch: str = PipelineOptions.arch, frontend: str | None = None, plans: PlanCache | None = None,
            cache: bool | None = None, tuning_log: str | os.PathLike[str] | None = None,
            background: bool | Background = False, **options: Any) -> Executable | BackgroundExecutable:
    """Compile a model to GPU kernels.

    source: a file (.mlir, .hlo, .onnx, by extension or `frontend`), IR text (MLIR, or
    HLO text with frontend="hlo"), an ONNX model's bytes, or an xDSL ModuleOp of the
    graph dialect (left untouched). fusion: stitch (FusionStitching), xla (XLA-style
    rules) or none (one kernel per op). arch: the PTX target (sm_80, sm_90).
    options: the other fields of `fsir.pipeline.PipelineOptions` (gpu, rows,
    registers, subroots, vector, gemm, precision: fp32 or tf32 for f32 GEMMs,
    traffic_slack: GEMM time traded for fewer requested bytes (0 to 1),
    tile_sync: off (None), auto or a `tile-sync` policy: tile, row, strided, conv;
    text or a `SyncPolicy`). plans: a `PlanCache` shared between compiles (of one
    model in several fusion modes, say): a compile whose fusion plan equals one compiled
    before reuses its lowering. cache: use the persistent kernel cache (`fsir.cache`,
    in FSIR_CACHE_DIR): None follows FSIR_CACHE (off unless 1), True uses it, False
    lowers every kernel and writes nothing. tuning_log: a `fs-tune` log whose best
    record per kernel is applied (`fsir.tune.apply`, docs/tuning.md); where the log
    tuned a symbolic dim at some sizes (`fs-tune --sizes`), a `SizedExecutable` that
    dispatches on the size at each run. The executable's
    `compile_stats` counts what this compile did. background: True (or a `Background`)
    returns at once a `BackgroundExecutable`, which runs a quick plan while this compile
    runs in a worker process and swaps its kernels in between two runs."""
    known = {f.name for f in fields(PipelineOptions)} - {"fusion", "arch"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise UserError(f"unknown compile option(s) {', '.join(unknown)} (known: fusion, arch, frontend, "
                        f"{', '.join(sorted(known))})")
    if background:
        settings = background if isinstance(background, Background) else Background()
        kwargs = dict(options, fusion=fusion, arch=arch, cache=cache,
                      tuning_log=None if tuning_log is None else os.fspath(tuning_log))
        return BackgroundExecutable.start(load(source, frontend), kwargs, settings)
    store = None if cache is False else kernel_cache.KernelCache.from_environment(force=bool(cache))
    opts = PipelineOptions.parse(fusion=fusion, arch=arch, **options)
    module = load(source, frontend)
    with collecting() as counts, kernel_cache.active(store), _tuned(tuning_log, opts):
        exe = _compile(module, opts, plans)
    exe = replace(exe, compile_stats=counts.result())
    if tuning_log is None:
        return exe

    def compile_at(symbol: str, size: int) -> Executable:
        from fsir.tune.sizes import specialize

        return compile(specialize(module, symbol, size), fusion=fusion, arch=arch, cache=cache,
                       tuning_log=tuning_log, **options)

    return SizedExecutable.of(exe, os.fspath(tuning_log), compile_at)


@dataclass
class SizedExecutable(Executable):
    """A model with a symbolic dim tuned at some of its sizes (`fs-tune --sizes`,
    `fsir.tune.sizes`): `run` reads the symbol's size from the inputs and runs the model
    compiled specialised to that size under the tuning log (compiled on first use) when
    the log has it, else this symbolic executable. Both compute the same function, so
    every size runs exactly. `last_size_compiled` tells which ran last: the size, or
    None for the symbolic executable."""

    symbol: str = ""
    where: tuple[int, int] = (0, 0)
    sizes: tuple[int, ...] = ()
    compile_at: Any = None  # (symbol, size) -> Executable
    specialized: dict[int, Executable] = field(default_factory=dict)
    last_size_compiled: int | None = field(default=None, init=False)

    @staticmethod
    def of(exe: Executable, log: str, compile_at: Any) -> Executable:
        """`exe` with a dispatch on the size `log` tuned its symbolic dim at (`exe`
        itself where the log has no sizes of its symbols)."""
        from fsir.tune.database import Database
        from fsir.tune.sizes import dispatch_symbol

        opts = exe.options
        found = dispatch_symbol(exe.source, [r for r in Database(log).records
                                             if r.gpu == opts.gpu and r.arch == opts.arch])
        if found is None:
            return exe
        symbol, where, sizes = found
        return SizedExecutable(exe.source, exe.module, exe.kernels, exe.options, exe.compile_stats, symbol, where,
                               sizes, compile_at)

    def run(self, inputs: Sequence[Any] | Mapping[str, Any], device: str = "auto",
            entry: str | None = None, progress: bool | None = None) -> list[np.ndarray]:
        from fsir.runtime.reference import find_function
        from fsir.tune.sizes import size_in

        size = size_in(_bind(find_function(self.source, entry), inputs), self.where)
        if size not in self.sizes:
            self.last_size_compiled = None
            return super().run(inputs, device, entry, progress)
        if size not in self.specialized:
            self.specialized[size] = self.compile_at(self.symbol, size)
        exe = self.specialized[size]
        self.last_size_compiled = size
        outputs = exe.run(inputs, device, entry, progress)
        self.last_stats = exe.last_stats
        return outputs


def _tuned(log: str | os.PathLike[str] | None, opts: PipelineOptions):
    """Within: stitch-codegen applies `log`'s tuned configurations (none: nothing)."""
    if log is None:
        return contextlib.nullcontext()
    from fsir.tune.apply import tuned

    return tuned(os.fspath(log), opts)


def _compile(module: ModuleOp, opts: PipelineOptions, plans: PlanCache | None) -> Executable:
    """`module`'s executable, through `plans` when given."""
    if plans is None:
        return _lower_from(module, module, opts)
    stitched = lower(module, opts, until=FUSION_STAGE)
    # the fusion mode made the plan; equal plans lower alike whichever mode made them
    key = (plan_text(stitched), tuple(kv for kv in opts.key() if kv[0] != "fusion"))
    if key not in plans.executables:
        plans.executables[key] = _lower_from(module, stitched, opts, after=FUSION_STAGE)
    return replace(plans.executables[key], source=module, options=opts)


FUSION_STAGE = "stitch-codegen"


@dataclass
class PlanCache:
    """Executables by fusion plan (the stitch IR `fusion-explore` made, up to its
    annotations, and the options of the later passes), for `compile(..., plans=)`: modes
    whose plans are equal (one-op models, say) share one lowering, and executables
    compiled from the same plan share their lowered `module`."""

    executables: dict[tuple[str, tuple], Executable] = field(default_factory=dict)


def plan_text(stitched: ModuleOp) -> str:
    """The stitch IR without the explorer's annotations (a fusion's pattern number and
    score), which no later pass reads."""
    from fsir.dialects.stitch import FusionOp

    plain = stitched.clone()
    for op in plain.walk():
        if isinstance(op, FusionOp):
            for name in ("pattern", "score"):
                op.attributes.pop(name, None)
    return str(plain)


def _lower_from(source: ModuleOp, module: ModuleOp, opts: PipelineOptions, after: str | None = None) -> Executable:
    """`source`'s executable, lowered from `module` (`source` itself, or the output of
    the pass `after`)."""
    kernels: list[KernelSummary] = []

    def on_stage(stage: str, seconds: float, ir: ModuleOp) -> None:
        if stage == "stitch-codegen":
            from fsir.dialects.schedule import KernelOp

            kernels.extend(kernel_summary(op) for op in ir.walk() if isinstance(op, KernelOp))

    lowered = lower(module, opts, after=after, on_stage=on_stage)
    return Executable(source, lowered, kernels, opts)


# -- background compilation --------------------------------------------------------------

class QuickPlan(StrEnum):
    """What a `BackgroundExecutable` runs until its compile is done."""

    NONE = "none"  # fusion=none kernels (one per op), compiled at once: quick to lower
    REFERENCE = "reference"  # fsir's reference interpreter (numpy), nothing compiled
    BLOCK = "block"  # nothing: a run waits for the compile


class Worker(StrEnum):
    """Where the background compile runs."""

    PROCESS = "process"  # a worker process (spawned): the compile does not hold this process's GIL
    THREAD = "thread"  # a thread of this process (no start-up cost; shares the GIL)


@dataclass(frozen=True)
class Background:
    """`compile(..., background=Background(...))`: the quick plan, where the compile runs,
    and `hold`: an event (threading or multiprocessing) the compile waits for before it
    starts (a compile made slow on purpose, deterministically, for tests)."""

    quick: QuickPlan = QuickPlan.NONE
    worker: Worker = Worker.PROCESS
    hold: Any = None


def _compile_in_worker(text: str, kwargs: dict[str, Any], hold: Any) -> tuple[str, list[KernelSummary],
                                                                             PipelineOptions, CompileStats]:
    """The worker's compile of a module's text: the lowered module as text (re-parsed by
    the caller: xDSL operations do not cross processes), its kernels, options, stats."""
    from fsir.parse import parse_module

    hold = hold if hold is not None else _WORKER_HOLD
    if hold is not None:
        hold.wait()
    exe = compile(parse_module(text, "<background>"), **kwargs)
    return str(exe.module), exe.kernels, exe.options, exe.compile_stats


class BackgroundExecutable:
    """An executable whose compile runs in the background (`compile(..., background=True)`).

    `run` takes `Executable.run`'s arguments. Until the compile is done, runs use the
    quick plan (`settings.quick`); the first run that starts after it is done swaps the
    compiled kernels in. A swap happens only between runs (the check and the run hold
    one lock), so one run never mixes plans. `plan` names what the next run will use
    when nothing changes (`quick`'s value, or `compiled`); `last_plan` what the last run
    used; `swapped_at`: the number of runs made before the swap (None before it);
    `wait()` blocks until the compile is done and returns its Executable (a compile
    error is raised here, or by the first run after it)."""

    def __init__(self, source: ModuleOp, future: Future[Executable], settings: Background,
                 quick: Executable | None):
        self.source = source
        self.settings = settings
        self.quick = quick
        self.compiled: Executable | None = None
        self.runs = 0
        self.swapped_at: int | None = None
        self.last_plan: str | None = None
        self.last_stats: RunStats | None = None
        self._future = future
        self._lock = threading.Lock()

    @classmethod
    def start(cls, source: ModuleOp, kwargs: dict[str, Any], settings: Background) -> BackgroundExecutable:
        future = _submit(settings, str(source), kwargs)
        future = _parsed(future, source)
        quick = None
        if settings.quick == QuickPlan.NONE:
            quick_kwargs = {k: v for k, v in kwargs.items() if k not in ("fusion", "tuning_log")}
            quick = compile(source, **quick_kwargs, fusion="none")
        return cls(source, future, settings, quick)

    @property
    def ready(self) -> bool:
        """Whether the compile is done (its kernels run from the next run on)."""
        return self.compiled is not None or self._future.done()

    @property
    def plan(self) -> str:
        return "compiled" if self.ready else self.settings.quick.value

    def wait(self, timeout: float | None = None) -> Executable:
        """The compiled Executable, once the compile is done (waits up to `timeout` s)."""
        return self._future.result(timeout)

    def run(self, inputs: Sequence[Any] | Mapping[str, Any], device: str = "auto", entry: str | None = None,
            progress: bool | None = None) -> list[np.ndarray]:
        with self._lock:
            if self.compiled is None and (self._future.done() or self.settings.quick == QuickPlan.BLOCK):
                self.compiled = self._future.result()
                self.swapped_at = self.runs
            self.runs += 1
            if self.compiled is not None:
                exe, self.last_plan = self.compiled, "compiled"
            elif self.quick is not None:
                exe, self.last_plan = self.quick, self.settings.quick.value
            else:
                from fsir.runtime.reference import find_function, run_function

                f = find_function(self.source, entry)
                self.last_plan, self.last_stats = QuickPlan.REFERENCE.value, None
                return run_function(f, _bind(f, inputs))
            outputs = exe.run(inputs, device=device, entry=entry, progress=progress)
            self.last_stats = exe.last_stats
            return outputs

    def __repr__(self) -> str:
        return f"<fsir.BackgroundExecutable plan={self.plan} runs={self.runs} swapped_at={self.swapped_at}>"


_WORKER_HOLD: Any = None  # a worker process's `Background.hold` (an event crosses by inheritance only)


def _set_worker_hold(hold: Any) -> None:
    global _WORKER_HOLD
    _WORKER_HOLD = hold


def _submit(settings: Background, text: str, kwargs: dict[str, Any]) -> Future[Any]:
    if settings.worker == Worker.THREAD:
        pool: Executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fsir-compile")
        future = pool.submit(_compile_in_worker, text, kwargs, settings.hold)
    else:
        import multiprocessing

        pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_set_worker_hold, initargs=(settings.hold,))
        future = pool.submit(_compile_in_worker, text, kwargs, None)
    pool.shutdown(wait=False)  # the worker exits once this compile is done
    return future


def _parsed(future: Future[Any], source: ModuleOp) -> Future[Executable]:
    """A future of the Executable from the worker's future of its text: parsed in the
    worker's done callback, so `done()` means a runnable Executable."""
    out: Future[Executable] = Future()

    def finish(done: Future[Any]) -> None:
        try:
            from fsir.parse import parse_module

            text, kernels, options, stats = done.result()
            out.set_result(Executable(source, parse_module(text, "<background>"), kernels, options, stats))
        except BaseException as err:  # the compile's error, raised where the result is asked for
            out.set_exception(err)

    future.add_done_callback(finish)
    return out
