"""Measurers (MetaSchedule's builder + runner): `Measurer.measure(batch)` gives one
`MeasureResult` per input, a time or a typed error, never an exception.

    measurer = PoolMeasurer(ModelBackend(), workers=4, timeout=120)
    results = measurer.measure([MeasureInput(source, trace), ...])

A backend measures one candidate in a worker process: it compiles the task's module
with the candidate forced on the task's fusion (`task.forcing`), assembles it with
ptxas, and times the task's kernel. `ModelBackend` times it on the simulator
(`sampling.SampledSimDevice`: sampled blocks' counters through the timeline model),
optionally checking the outputs against the reference on a full simulation
(`check=True`: slow, for tests and small problems). `PoolMeasurer` runs a backend in a
`ProcessPoolExecutor`: a worker that crashes or runs past the timeout is recorded as
`CRASH` or `TIMEOUT`, its pool replaced, and the rest of the batch goes on.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import os
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp

from fsir.pipeline import PipelineOptions, emit_ptx, lower
from fsir.tune.space import Invalid, SketchKind, Space, Trace, space_for, today_splits
from fsir.tune.task import STITCH_STAGE, capture, forcing, isolate


class MeasureError(StrEnum):
    INVALID = "invalid"  # the trace is not a configuration of its task's space
    LOWERING_FAILED = "lowering_failed"  # stitch-codegen or schedule-to-gpu refused it
    PTXAS_FAILED = "ptxas_failed"
    RUNTIME_FAILED = "runtime_failed"  # the simulator (or device) refused the launch
    WRONG_RESULT = "wrong_result"
    TIMEOUT = "timeout"
    CRASH = "crash"  # the worker process died


@dataclass(frozen=True)
class TaskSource:
    """What a worker needs to rebuild a task: the model's text, the options, the
    workload key and the kernel's name."""

    text: str
    options: PipelineOptions
    key: str
    kernel: str


@dataclass(frozen=True)
class MeasureInput:
    task: TaskSource
    trace: Trace


@dataclass(frozen=True)
class MeasureResult:
    trace: Trace
    seconds: float | None
    error: MeasureError | None = None
    detail: str = ""
    registers: int | None = None
    blocks: int = 0
    simulated_blocks: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None and self.seconds is not None


class Measurer(Protocol):
    def measure(self, batch: Sequence[MeasureInput]) -> list[MeasureResult]: ...


class Backend(Protocol):
    def measure_one(self, inp: MeasureInput) -> MeasureResult: ...


@dataclass(frozen=True)
class Built:
    """A candidate built for timing, in a form that crosses processes: the lowered
    module's text, its PTX, ptxas's registers and the task's kernel's name in it."""

    lowered: str
    ptx: str
    registers: int | None
    kernel: str


class SplitBackend(Backend, Protocol):
    """A backend whose building (lowering, PTX, ptxas) and timing run apart, for
    measurers that build on one machine and time on another (`ray_measure`):
    `time(inp, build(inp))` is `measure_one(inp)`."""

    def build(self, inp: MeasureInput) -> Built | MeasureResult: ...

    def time(self, inp: MeasureInput, built: Built) -> MeasureResult: ...


def build_candidate(inp: MeasureInput, ptxas: bool, alone: bool = False) -> Built | MeasureResult:
    got = compile_for_measuring(inp, ptxas, alone)
    return got if isinstance(got, MeasureResult) else Built(str(got.lowered), got.ptx, got.registers, got.kernel)


def parse_built(built: Built) -> Compiled:
    from fsir.parse import parse_module

    return Compiled(parse_module(built.lowered, "<built>"), built.ptx, built.registers, built.kernel)


# -- per-process caches: a worker rebuilds each task once -------------------------------


@functools.lru_cache(maxsize=8)
def stitched_from_text(text: str, options: PipelineOptions) -> ModuleOp:
    from fsir.parse import parse_module
    from fsir.tune.task import stitched_module

    return stitched_module(parse_module(text, "<tune>"), options)


@functools.lru_cache(maxsize=32)
def task_space(text: str, options: PipelineOptions, key: str) -> Space:
    request = capture(stitched_from_text(text, options), options, key)
    return space_for(request, today_splits(request))


@functools.lru_cache(maxsize=32)
def isolated_from_text(text: str, options: PipelineOptions, key: str) -> tuple[ModuleOp, str] | None:
    """The task's fusion in a module of its own and its kernel's name there
    (`task.isolate`; None: measured in its model)."""
    return isolate(stitched_from_text(text, options), options, key)


def compile_candidate(task: TaskSource, config: Any, alone: bool = False) -> ModuleOp:
    """The task's module lowered to gpu IR with `config` forced on its fusion; `alone`:
    the task's fusion alone (`isolated_from_text`) where it can be."""
    alone_got = isolated_from_text(task.text, task.options, task.key) if alone else None
    stitched = alone_got[0] if alone_got is not None else stitched_from_text(task.text, task.options)
    with forcing({task.key: lambda _request: config}, task.options):
        return lower(stitched, task.options, after=STITCH_STAGE)


def random_inputs(module: ModuleOp, seed: int = 0, text: str | None = None) -> list[np.ndarray]:
    """Standard-normal floats and zero integers (valid indices) for the host function.
    A `?` dim (a model specialised to a size of one symbol, `--sizes`, keeps the others)
    takes its size from the source `text`'s `fsir.runtime_shape`, else `DYNAMIC_SIZE`."""
    from fsir.dialects.graph import numpy_dtype
    from fsir.runtime.executor import host_function

    rng = np.random.default_rng(seed)
    hints = _runtime_shapes(text) if text is not None else ()
    out = []
    for i, a in enumerate(host_function(module).body.blocks[0].args):
        t = a.type
        assert isinstance(t, MemRefType)
        dtype = numpy_dtype(t.element_type)
        hint = hints[i] if i < len(hints) else None
        shape = tuple(d if d >= 0 else (hint[j] if hint is not None else DYNAMIC_SIZE)
                      for j, d in enumerate(t.get_shape()))
        out.append(rng.standard_normal(shape).astype(dtype) if dtype.kind == "f" else np.zeros(shape, dtype))
    return out


DYNAMIC_SIZE = 8  # a `?` dim's size in measurements without a `fsir.runtime_shape` (as fs-run's default)


@functools.lru_cache(maxsize=8)
def _runtime_shapes(text: str) -> tuple[tuple[int, ...] | None, ...]:
    """The `fsir.runtime_shape` of each argument of the first function of `text`."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr

    from fsir.parse import parse_module
    from fsir.runtime.inputs import RUNTIME_SHAPE_ATTR

    f = next(op for op in parse_module(text, "<tune>").ops if isinstance(op, func.FuncOp))
    out: list[tuple[int, ...] | None] = []
    for attrs in (f.arg_attrs.data if f.arg_attrs is not None else [None] * len(f.args)):
        hint = attrs.data.get(RUNTIME_SHAPE_ATTR) if isinstance(attrs, DictionaryAttr) else None
        out.append(tuple(int(v) for v in hint.get_values()) if isinstance(hint, DenseArrayBase) else None)
    return tuple(out)


@dataclass(frozen=True)
class Compiled:
    """A candidate compiled for measuring: its module, PTX, ptxas's registers, and the
    task's kernel's name in the module (another where the fusion is compiled alone)."""

    lowered: ModuleOp
    ptx: str
    registers: int | None
    kernel: str


def compile_for_measuring(inp: MeasureInput, ptxas: bool, alone: bool = False) -> Compiled | MeasureResult:
    """The candidate compiled (`Compiled`), or the typed error that stopped it;
    `alone`: its fusion without the model around it, where it can be (a kernel's time
    does not depend on the others; compiling and loading a model of dozens of kernels
    for each candidate does)."""
    task, trace = inp.task, inp.trace
    try:
        config = task_space(task.text, task.options, task.key).config(trace)
    except Invalid as err:
        return MeasureResult(trace, None, MeasureError.INVALID, str(err))
    alone_got = isolated_from_text(task.text, task.options, task.key) if alone else None
    kernel = alone_got[1] if alone_got is not None else task.kernel
    try:
        lowered = compile_candidate(task, config, alone)
    except Exception as err:  # noqa: BLE001 (any refusal of the compiler is this error)
        return MeasureResult(trace, None, MeasureError.LOWERING_FAILED, first_line(err))
    ptx = emit_ptx(lowered, task.options)
    registers = None
    if ptxas:
        registers, why = _registers(ptx, task.options.arch, kernel)
        if why is not None:
            return MeasureResult(trace, None, MeasureError.PTXAS_FAILED, why)
    return Compiled(lowered, ptx, registers, kernel)


class TimingBackend:
    """What the `model` and `cuda` backends share: compile the candidate (`build` in
    one process and `time` in another, or both in `measure_one`), then `_time` the
    compiled candidate; an error of `runtime_errors()` while timing is
    `runtime_failed`. A backend sets `ptxas` and may compile the fusion `alone`."""

    ptxas: bool

    def compile_alone(self) -> bool:
        return False

    def runtime_errors(self) -> tuple[type[Exception], ...]:
        from fsir.errors import UserError

        return (UserError,)

    def measure_one(self, inp: MeasureInput) -> MeasureResult:
        got = compile_for_measuring(inp, self.ptxas, self.compile_alone())
        return got if isinstance(got, MeasureResult) else self._timed(inp, got)

    def build(self, inp: MeasureInput) -> Built | MeasureResult:
        return build_candidate(inp, self.ptxas, self.compile_alone())

    def time(self, inp: MeasureInput, built: Built) -> MeasureResult:
        return self._timed(inp, parse_built(built))

    def _timed(self, inp: MeasureInput, got: Compiled) -> MeasureResult:
        try:
            return self._time(inp.task, inp.trace, got)
        except self.runtime_errors() as err:
            return MeasureResult(inp.trace, None, MeasureError.RUNTIME_FAILED, first_line(err), got.registers)

    def _time(self, task: TaskSource, trace: Trace, got: Compiled) -> MeasureResult:
        raise NotImplementedError


# sketches whose kernels' blocks do unequal work (`ModelBackend.samples_for`)
UNEVEN_BLOCKS = frozenset({SketchKind.COLUMNS})
UNBOUNDED = 1 << 62  # samples: every block


@dataclass(frozen=True)
class ModelBackend(TimingBackend):
    """The `model` measurer (module docstring). `samples`: blocks simulated per launch;
    `check`: also run the module in full and compare with the reference; `alone`:
    the task's fusion compiled and run without the rest of the model (not with
    `check`, which compares the model's outputs)."""

    samples: int = 4
    check: bool = False
    ptxas: bool = True
    alone: bool = True

    def samples_for(self, trace: Trace) -> int:
        """Blocks to simulate per launch: `samples`, except for a kernel whose blocks do
        unequal work by construction (a columns kernel: each block serves one operand,
        with its own tables, bags and schedule), where every block is simulated, since a
        sample stands for its neighbours and would miss the heaviest operand."""
        return UNBOUNDED if trace.sketch in UNEVEN_BLOCKS else self.samples

    def compile_alone(self) -> bool:
        return self.alone and not self.check

    def runtime_errors(self) -> tuple[type[Exception], ...]:
        from fsir.errors import SimulatorError, UserError

        return (SimulatorError, UserError)

    def _time(self, task: TaskSource, trace: Trace, got: Compiled) -> MeasureResult:
        from fsir.gpuspec import gpu_spec
        from fsir.runtime.executor import execute
        from fsir.tune.sampling import SampledSimDevice

        # a fusion alone has static shapes only: the model's runtime-shape hints are its inputs'
        inputs = random_inputs(got.lowered, text=task.text if got.kernel == task.kernel else None)
        device = SampledSimDevice(got.kernel, gpu_spec(task.options.gpu), self.samples_for(trace), got.registers)
        execute(got.lowered, inputs, device=device, ptx=got.ptx)
        if not device.results:
            return MeasureResult(trace, None, MeasureError.RUNTIME_FAILED, f"no launch of {got.kernel}",
                                 got.registers)
        first = device.results[0]
        if self.check:
            why = _wrong_result(task, got.lowered, got.ptx, inputs)
            if why is not None:
                return MeasureResult(trace, None, MeasureError.WRONG_RESULT, why, got.registers)
        return MeasureResult(trace, first.seconds, None, "", got.registers, first.blocks, first.simulated)


@dataclass(frozen=True)
class CudaBackend(TimingBackend):
    """The `cuda` measurer: the task's kernel timed on the GPU by CUDA events
    (`CudaDevice.time_launch`: `warmup` + `repeats` launches, the median kept); the
    module's other kernels run once each, as usual. Outputs are compared with the
    reference when `check`."""

    warmup: int = 2
    repeats: int = 10
    check: bool = False
    ptxas: bool = False  # ptxas's registers are not needed: the GPU's own occupancy applies

    def _time(self, task: TaskSource, trace: Trace, got: Compiled) -> MeasureResult:
        import statistics

        from fsir.runtime.cuda_device import CudaDevice, CudaTiming
        from fsir.runtime.executor import execute

        backend = self
        timed: list[float] = []

        class TimingDevice(CudaDevice):
            """Times the task's kernel's launches (its name in the built module: a fusion
            built alone, as the model measurer builds it, renames it); runs the others."""

            def launch(self, module, kernel: str, grid, block, args, shared_bytes: int = 0):
                if kernel != got.kernel:
                    return super().launch(module, kernel, grid, block, args, shared_bytes)
                ms = self.time_launch(module, kernel, grid, block, args, shared_bytes, backend.warmup,
                                      backend.repeats)
                timed.append(statistics.median(ms) * 1e-3)
                return CudaTiming(len(ms), sum(ms))

        # a fusion alone has static shapes only: the model's runtime-shape hints are its inputs'
        inputs = random_inputs(got.lowered, text=task.text if got.kernel == task.kernel else None)
        outputs, _ = execute(got.lowered, inputs, device=TimingDevice(), ptx=got.ptx)
        if not timed:
            return MeasureResult(trace, None, MeasureError.RUNTIME_FAILED, f"no launch of {got.kernel}",
                                 got.registers)
        if self.check:
            why = _compare(task, outputs, inputs)
            if why is not None:
                return MeasureResult(trace, None, MeasureError.WRONG_RESULT, why, got.registers)
        return MeasureResult(trace, timed[0], None, "", got.registers)


def _registers(ptx: str, arch: str, kernel: str) -> tuple[int | None, str | None]:
    from fsir.ptx.ptxas import assemble, find_ptxas

    if find_ptxas() is None:
        return None, None  # occupancy then from threads and shared memory only
    result = assemble(ptx, arch)
    if not result.ok:
        return None, "; ".join(result.errors)[:500]
    usage = result.kernels.get(kernel)
    return (usage.registers if usage is not None else None), None


def _wrong_result(task: TaskSource, lowered: ModuleOp, ptx: str, inputs: list[np.ndarray]) -> str | None:
    from fsir.runtime.executor import execute

    got, _ = execute(lowered, inputs, ptx=ptx)
    return _compare(task, got, inputs)


def _compare(task: TaskSource, got: Sequence[np.ndarray], inputs: list[np.ndarray]) -> str | None:
    """Why the outputs `got` differ from the reference interpreter's (None: they agree)."""
    from fsir.parse import parse_module
    from fsir.runtime.compare import compare
    from fsir.runtime.reference import run

    want = run(parse_module(task.text, "<tune>"), inputs)
    for i, (g, w) in enumerate(zip(got, want)):
        c = compare(g, w, scale=4.0)
        if not c.ok:
            return f"output {i}: {c}"
    return None


def first_line(err: BaseException) -> str:
    text = str(err).strip()
    return (text.splitlines()[0] if text else type(err).__name__)[:500]


# -- the process pool -------------------------------------------------------------------


def _run(backend: Backend, inp: MeasureInput) -> MeasureResult:
    """A worker's entry (top level: the pool pickles it)."""
    try:
        return backend.measure_one(inp)
    except Exception:  # noqa: BLE001 (an error the backend did not type is still a result)
        return MeasureResult(inp.trace, None, MeasureError.CRASH, traceback.format_exc(limit=2).splitlines()[-1])


@dataclass
class PoolMeasurer:
    """Runs `backend` on `workers` processes (module docstring); `workers = 0` runs in
    this process (no timeout)."""

    backend: Backend
    workers: int = 1
    timeout: float = 300.0
    _pool: cf.ProcessPoolExecutor | None = field(default=None, repr=False)

    def measure(self, batch: Sequence[MeasureInput]) -> list[MeasureResult]:
        if self.workers <= 0:
            return [_run(self.backend, inp) for inp in batch]
        results: list[MeasureResult | None] = [None] * len(batch)
        pending = list(range(len(batch)))
        while pending:
            pool = self._executor()
            futures = {i: pool.submit(_run, self.backend, batch[i]) for i in pending}
            pending = []
            broken = False
            for i, fut in futures.items():
                if broken:
                    pending.append(i)  # resubmitted to a fresh pool
                    continue
                try:
                    results[i] = fut.result(timeout=self.timeout)
                except cf.TimeoutError:
                    results[i] = MeasureResult(batch[i].trace, None, MeasureError.TIMEOUT,
                                               f"over {self.timeout:.0f} s")
                    broken = True
                except cf.process.BrokenProcessPool:
                    results[i] = MeasureResult(batch[i].trace, None, MeasureError.CRASH, "the worker process died")
                    broken = True
                if broken:
                    # a dead or stuck worker: the pool is replaced; inputs not yet done
                    # there are measured again (the ones already done keep their result)
                    done = {j: f for j, f in futures.items() if j != i and f.done() and not f.exception()}
                    for j, f in done.items():
                        if results[j] is None:
                            results[j] = f.result()
                    self.close(kill=True)
            pending = [i for i in pending if results[i] is None]
        return [r for r in results if r is not None]

    def _executor(self) -> cf.ProcessPoolExecutor:
        if self._pool is None:
            import multiprocessing as mp

            # spawn: workers must not inherit this process's locks or caches
            self._pool = cf.ProcessPoolExecutor(self.workers, mp_context=mp.get_context("spawn"))
        return self._pool

    def close(self, kill: bool = False) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if kill:
            # only the processes this pool started, by their ids
            for p in list(getattr(pool, "_processes", {}).values()):
                if p.is_alive():
                    # a worker may exit between the check and the kill (the crashing one)
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(p.pid, 9)
        pool.shutdown(wait=not kill, cancel_futures=True)
