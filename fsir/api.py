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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

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

__all__ = ["Executable", "KernelSummary", "PlanCache", "compile", "kernel_summary"]


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


def compile(source: str | bytes | os.PathLike[str] | ModuleOp, *, fusion: str = PipelineOptions.fusion,
            arch: str = PipelineOptions.arch, frontend: str | None = None, plans: PlanCache | None = None,
            cache: bool | None = None, tuning_log: str | os.PathLike[str] | None = None,
            **options: Any) -> Executable:
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
    record per kernel is applied (`fsir.tune.apply`, docs/tuning.md). The executable's
    `compile_stats` counts what this compile did."""
    known = {f.name for f in fields(PipelineOptions)} - {"fusion", "arch"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise UserError(f"unknown compile option(s) {', '.join(unknown)} (known: fusion, arch, frontend, "
                        f"{', '.join(sorted(known))})")
    if "tile_sync" in options:
        from fsir.codegen.tile_sync import parse_tile_sync

        options["tile_sync"] = parse_tile_sync(options["tile_sync"])
    store = None if cache is False else kernel_cache.KernelCache.from_environment(force=bool(cache))
    opts = PipelineOptions(fusion=fusion, arch=arch, **options)
    with collecting() as counts, kernel_cache.active(store), _tuned(tuning_log, opts):
        exe = _compile(load(source, frontend), opts, plans)
    return replace(exe, compile_stats=counts.result())


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
    key = (plan_text(stitched), replace(opts, fusion=""))
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

    executables: dict[tuple[str, PipelineOptions], Executable] = field(default_factory=dict)


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
