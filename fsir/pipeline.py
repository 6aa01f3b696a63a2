"""The one pipeline from a model to PTX: every tool, the Python API and the tests use it.

    module = load("examples/layernorm.mlir")             # .mlir, .hlo, .onnx, IR text or a ModuleOp
    options = PipelineOptions(fusion="xla")              # defaults: what fs-run and fsir.compile use
    lowered = lower(module, options, on_stage=print)     # graph -> stitch -> schedule -> gpu (a copy)
    scheduled = lower(module, options, until="stitch-codegen")  # stop at a stage
    text = emit_ptx(lowered, options)
    lowered, text = compile_ptx(module, options)          # both, kernels lowered in worker processes
    pipeline_text(options), target_text(options)         # the same steps as `fs-opt -p ... -t ...`

The stages are the passes of `passes(options)`, then the PTX printer (`fsir.ptx`).
`lower` and `emit_ptx` call `on_stage(stage, seconds, module)` after each one, so
benchmarks can time every stage and callers can look at the IR between stages.
The input formats are those of `fsir.registry.FRONTENDS` plus MLIR text.
"""

from __future__ import annotations

import hashlib
import os
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fsir import registry
from fsir.codegen.options import DEFAULT, PipelineOptions
from fsir.errors import UserError

if TYPE_CHECKING:
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.passes import ModulePass

    from fsir.cache import KernelCache


StageCallback = Callable[[str, float, "ModuleOp"], None]
"""Called as `on_stage(stage, seconds, module)` after each stage (module: the IR after it)."""

PTX_STAGE = "ptx"




def passes(options: PipelineOptions = DEFAULT) -> list[ModulePass]:
    """The passes from the graph dialect to the gpu dialect, in order."""
    from fsir.codegen.schedule_to_gpu import ScheduleToGpuPass
    from fsir.codegen.stitch_codegen import StitchCodegenPass
    from fsir.codegen.tile_sync import TileSyncPass
    from fsir.fusion.explore import FusionExplorePass
    from fsir.transforms.intervals import ProveGatherBoundsPass

    sync = [] if options.tile_sync is None else [TileSyncPass(policy=str(options.tile_sync), gpu=options.gpu)]
    return [
        ProveGatherBoundsPass(),
        FusionExplorePass(mode=str(options.fusion), gpu=options.gpu),
        StitchCodegenPass.from_options(options),
        *sync,
        ScheduleToGpuPass(),
    ]


def stages(options: PipelineOptions = DEFAULT) -> list[str]:
    """The names `on_stage` receives, in order: the passes', then `ptx`."""
    return [p.name for p in passes(options)] + [PTX_STAGE]


def pipeline_text(options: PipelineOptions = DEFAULT) -> str:
    """The `fs-opt -p` argument that runs the same passes (options equal to a pass's
    default are left out)."""
    return ",".join(str(p.pipeline_pass_spec()) for p in passes(options))


def target_text(options: PipelineOptions = DEFAULT) -> str:
    """The `fs-opt -t` argument that prints the same PTX."""
    return f"ptx{{arch={options.arch}}}"


def lower(module: ModuleOp, options: PipelineOptions = DEFAULT, *, until: str | None = None,
          after: str | None = None, on_stage: StageCallback | None = None,
          verify_each: bool = False) -> ModuleOp:
    """A copy of `module` lowered by `passes(options)` (the original is left untouched).
    Each pass is timed and reported to `on_stage`. `until` stops after the pass of that
    name (e.g. `stitch-codegen` for the schedule IR); `after` resumes from the output of
    the pass of that name (`module` is that IR).

    The result is verified once, at the end (the input was verified when it was
    parsed or built); `verify_each` verifies after every pass instead, so that invalid
    IR is blamed on the pass that made it. Python's cycle collector is paused while
    the passes run (`collector_paused`)."""
    from xdsl.context import Context

    from fsir.ir import collector_paused, verify

    pipeline = passes(options)
    names = [p.name for p in pipeline]
    for stage in (until, after):
        if stage is not None and stage not in names:
            raise UserError(f"unknown stage '{stage}' (stages: {', '.join(names)})")
    if after is not None:
        pipeline = pipeline[names.index(after) + 1:]
    rest = [p.name for p in pipeline]
    if until in rest:
        pipeline = pipeline[:rest.index(until) + 1]
    ctx = Context()
    with collector_paused():
        lowered = module.clone()
        for i, p in enumerate(pipeline):
            t = time.perf_counter()
            p.apply(ctx, lowered)
            seconds = time.perf_counter() - t
            if verify_each or i == len(pipeline) - 1:
                verify(lowered)
            if on_stage is not None:
                on_stage(p.name, seconds, lowered)
    return lowered


def emit_ptx(lowered: ModuleOp, options: PipelineOptions = DEFAULT, *,
             on_stage: StageCallback | None = None) -> str:
    """The PTX module of a lowered module for `options.arch` (with the cycle collector
    paused, as in `lower`)."""
    from fsir.ir import collector_paused
    from fsir.ptx import print_ptx

    t = time.perf_counter()
    with collector_paused():
        text = print_ptx(lowered, arch=options.arch)
    if on_stage is not None:
        on_stage(PTX_STAGE, time.perf_counter() - t, lowered)
    return text


def compile_ptx(module: ModuleOp, options: PipelineOptions = DEFAULT, *, on_stage: StageCallback | None = None,
                resources: dict[str, tuple[int, int, int]] | None = None,
                whole: bool = True) -> tuple[ModuleOp, str]:
    """`lower` and `emit_ptx` of `module`, with the kernels lowered and printed by
    `options.jobs` processes (`fsir.codegen.parallel`; None: FSIR_JOBS, else the usable
    CPUs) where there are enough of them to pay. The PTX is byte-identical to the serial
    compile's; in the module, the gpu.funcs that workers lowered are stubs (signature
    and attributes; a caller that reads kernel bodies uses `lower`), and `resources`
    (when given) receives what the kernel-time model reads of their bodies, for
    `fsir.runtime.profile.model_launches`. `on_stage` reports the workers' time as the
    `ptx` stage's.

    With a kernel cache active (`fsir.cache.active`), the whole compile is looked up
    first (`whole`: keyed by the module as printed, the options and the arch; a hit
    returns its stub module and PTX and runs no pass), and each kernel's PTX and stub
    are looked up before it is lowered (`parallel.lower_in_workers`). `whole=False`
    where something the key does not hold steers the compile (a tuning log)."""
    from fsir import cache as kernel_cache
    store = kernel_cache.current()
    key = None
    if store is not None and whole:
        key, hit = read_compile(store, module, options, measure=resources is not None)
        if hit is not None:
            lowered, text, used = hit
            if resources is not None:
                resources.update(used)
            return lowered, text
    found: dict[str, tuple[int, int, int]] = {}
    lowered, text = _compile_ptx(module, options, on_stage, found, store, measure=resources is not None)
    if resources is not None:
        resources.update(found)
    if store is not None and key is not None:
        write_compile(store, key, lowered, text, found if resources is not None else None)
    return lowered, text


def _compile_ptx(module: ModuleOp, options: PipelineOptions, on_stage: StageCallback | None,
                 resources: dict[str, tuple[int, int, int]], store: KernelCache | None,
                 measure: bool) -> tuple[ModuleOp, str]:
    """`compile_ptx` without the whole-compile entry."""
    from fsir.codegen import parallel
    from fsir.codegen.stitch_codegen import trials_deferred
    from fsir.ir import collector_paused

    jobs = parallel.jobs_wanted(options.jobs)
    if (jobs < 2 and store is None) or options.tile_sync is not None:
        # tile-sync rewrites kernels per pipeline, in the parent
        lowered = lower(module, options, on_stage=on_stage)
        return lowered, emit_ptx(lowered, options, on_stage=on_stage)
    codegen = "stitch-codegen"
    with trials_deferred():  # the workers (or the kernel cache) supply the kernels instead
        scheduled = lower(module, options, until=codegen, on_stage=on_stage)
    done = None
    t = time.perf_counter()
    many = len(parallel.first_kernels(scheduled)) >= parallel.MIN_KERNELS
    if many or store is not None:
        with collector_paused():  # (workers inherit it: a collection would scan, and copy, the parent's heap)
            done = parallel.lower_in_workers(scheduled, jobs if many else 1, measure=measure, store=store,
                                             arch=options.arch)
    seconds = time.perf_counter() - t
    if done is None:  # few kernels, a worker failed, or a kernel refuses to lower: serially
        try:
            lowered = lower(scheduled, options, after=codegen, on_stage=on_stage)
        except UserError:  # a refusal splits its fusion in stitch-codegen's trial lowering
            lowered = lower(module, options, on_stage=on_stage)
        return lowered, emit_ptx(lowered, options, on_stage=on_stage)
    from fsir import cache as kernel_cache

    resources.update(done.resources)
    with kernel_cache.ready(done.funcs):
        lowered = lower(scheduled, options, after=codegen, on_stage=on_stage)
    t = time.perf_counter()
    with collector_paused():
        text = done.ptx(lowered, options.arch)
    if on_stage is not None:
        on_stage(PTX_STAGE, seconds + time.perf_counter() - t, lowered)
    return lowered, text


# -- the whole-compile entry --------------------------------------------------------

Resources = dict[str, tuple[int, int, int]]


def read_compile(store: KernelCache, module: ModuleOp, options: PipelineOptions,
                 measure: bool) -> tuple[str, tuple[ModuleOp, str, Resources] | None]:
    """The key of `module`'s whole compile and, where `store` holds a valid entry (with
    the kernels' resources where `measure` asks for them), its result: the lowered
    module (kernels as stubs), the PTX and the kernels' resources."""
    from fsir.cache import entry_key
    from fsir.stats import count as tally

    key = entry_key("compile", module_digest(module), repr(options.key()), options.arch)
    record = store.read_record(key)
    hit = None if record is None else _compile_result(record, measure)
    tally("cache_compile_hits" if hit is not None else "cache_compile_misses")
    return key, hit


def _compile_result(record: dict, measure: bool) -> tuple[ModuleOp, str, Resources] | None:
    from xdsl.dialects.builtin import ModuleOp

    from fsir.cache import parse_module_text
    from fsir.codegen.parallel import valid_resources

    text, ptx, used = record.get("module"), record.get("ptx"), record.get("resources")
    if not (isinstance(text, str) and isinstance(ptx, str)
            and (isinstance(used, dict) or used is None and not measure)):
        return None
    resources: Resources = {}
    for name, r in (used or {}).items():
        if not valid_resources(r):
            return None
        resources[name] = (r[0], r[1], r[2])
    lowered = parse_module_text(text)
    return None if not isinstance(lowered, ModuleOp) else (lowered, ptx, resources)


def write_compile(store: KernelCache, key: str, lowered: ModuleOp, ptx: str, resources: Resources | None) -> None:
    """Store a compile's result under `key`: the module with its kernels as stubs
    (what the host side reads of them), the PTX, and every kernel's resources where
    the caller measured them (`resources`: those of the kernels already stubs; the
    entry serves only callers that do not measure where None)."""
    from fsir.codegen.parallel import resources as measure
    from fsir.codegen.parallel import stubbed
    from fsir.ptx.module import kernels

    used = None
    if resources is not None:
        used = dict(resources)
        for fn in kernels(lowered):
            if fn.sym_name.data not in used:
                used[fn.sym_name.data] = measure(fn)
    with stubbed(list(kernels(lowered))):
        text = str(lowered)
    store.write_record(key, {"module": text, "ptx": ptx,
                             "resources": None if used is None else {n: list(r) for n, r in used.items()}})


# -- input formats ------------------------------------------------------------


def input_format(name: str | None, frontend: str | None = None) -> str:
    """`mlir` or a frontend of the registry: `frontend` when given, else the file
    name's extension (unknown extensions are read as MLIR, as mlir-opt does)."""
    if frontend is not None:
        if frontend != "mlir" and frontend not in registry.FRONTENDS:
            known = ", ".join(["mlir", *registry.FRONTENDS])
            raise UserError(f"unknown input format '{frontend}' (known: {known})")
        return frontend
    ext = Path(name).suffix.removeprefix(".") if name else ""
    return ext if ext in registry.FRONTENDS else "mlir"


def is_binary(fmt: str) -> bool:
    """Whether the format is read as bytes (e.g. onnx) rather than text."""
    return fmt in registry.BINARY_FRONTENDS


def parse_source(source: str | bytes, name: str, fmt: str, ctx: Context | None = None,
                 line_offset: int = 0, implicit_module: bool = True) -> ModuleOp:
    """A verified graph module from the text (or bytes) of a model in format `fmt`."""
    if fmt in registry.FRONTENDS:
        module = registry.FRONTENDS[fmt]()(source, name)
    else:
        from fsir.parse import parse_module

        if isinstance(source, bytes):
            raise UserError(f"'{name}': MLIR input must be text, got bytes (give frontend= for a binary format)")
        module = parse_module(source, name, ctx, line_offset, implicit_module)
    data = source.encode("utf-8") if isinstance(source, str) else source
    _SOURCE_DIGESTS[module] = hashlib.sha256(f"{fmt}\n{implicit_module}\n".encode() + data).hexdigest()
    return module


# the sha256 of the text each module `parse_source` made was parsed from: the whole
# compile's cache key (`module_digest`), since printing a module with its weights costs
# more than a warm compile (a BERT layer's: 0.45 s)
_SOURCE_DIGESTS: weakref.WeakKeyDictionary[ModuleOp, str] = weakref.WeakKeyDictionary()


def module_digest(module: ModuleOp) -> str:
    """A hash of `module`: of the text it was parsed from (`parse_source`; a module
    changed since is the caller's to print), else of the module as printed."""
    digest = _SOURCE_DIGESTS.get(module)
    return digest if digest is not None else hashlib.sha256(str(module).encode("utf-8")).hexdigest()


def read_model(path: str | os.PathLike[str], frontend: str | None = None) -> ModuleOp:
    """A verified graph module from a file; unreadable files are user errors."""
    from fsir.sources import read_source

    fmt = input_format(str(path), frontend)
    name, text = read_source(str(path), binary=is_binary(fmt))
    return parse_source(text, name, fmt)


def load(source: str | bytes | os.PathLike[str] | ModuleOp, frontend: str | None = None) -> ModuleOp:
    """A graph module from a path, from IR text (MLIR, or the format `frontend`
    names), from a binary model's bytes (onnx), or a ModuleOp (returned as is).

    A string is IR text when it spans several lines or holds `{`, else a file name."""
    from xdsl.dialects.builtin import ModuleOp

    if isinstance(source, ModuleOp):
        return source
    if isinstance(source, bytes):
        fmt = input_format(None, frontend) if frontend else min(registry.BINARY_FRONTENDS)
        if not is_binary(fmt):
            raise UserError(f"bytes are read by a binary format ({', '.join(sorted(registry.BINARY_FRONTENDS))}), "
                            f"not '{fmt}'")
        return parse_source(source, "<bytes>", fmt)
    if isinstance(source, os.PathLike):
        return read_model(source, frontend)
    if not isinstance(source, str):
        raise UserError(f"cannot compile a {type(source).__name__}: give a path, IR text or a ModuleOp")
    if "\n" in source or "{" in source:
        return parse_source(source, "<string>", input_format(None, frontend or "mlir"))
    return read_model(source, frontend)
