"""Tuning tasks: the distinct fusions of a model, each named by a workload key, and
the stitch-codegen hooks that find them, capture one for the search space, and force
a configuration on one (`fsir.codegen.mappings.base.CONFIG_HOOK`).

    tasks = discover(source, options)           # one Task per distinct fusion
    request = capture(stitched, options, key)   # that fusion's ChoiceRequest, alive
    with forcing({key: config}, options): lower(...)

A workload key is a hash of the fusion up to value names (`FusionContext.signature`:
argument and result types, ops, attributes, shapes), the mapping, the GPU, the PTX
arch and the precision option: a record applies to any fusion of any model that is
structurally the same kernel on the same target.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp, StringAttr

from fsir.codegen.mappings.base import CONFIG_HOOK, ChoiceRequest, FusionContext
from fsir.dialects.schedule import KernelOp
from fsir.pipeline import PipelineOptions, lower

STITCH_STAGE = "fusion-explore"  # the tuner lowers from the stitched module on
CODEGEN_STAGE = "stitch-codegen"


def workload_key(fusion: FusionContext, mapping: str, options: PipelineOptions) -> str:
    """The structural hash naming a fusion's tuning task (module docstring)."""
    text = repr((fusion.signature(), mapping, options.gpu, options.arch, str(options.precision)))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Task:
    """One distinct fusion of a model: its key, its mapping, the kernel name
    stitch-codegen gives it, today's choice and how many configurations today's lists
    compare; `launches`: how many of the model's kernels are this one up to names (the
    task scheduler's weight)."""

    key: str
    mapping: str
    kernel: str
    default_config: str
    default_candidates: int
    launches: int = 1


class _Captured(Exception):  # noqa: N818 (a control-flow signal, not an error)
    """Stops stitch-codegen at the fusion being captured, leaving it intact."""

    def __init__(self, request: ChoiceRequest):
        super().__init__("captured")
        self.request = request


@contextmanager
def config_hook(hook: Callable[[ChoiceRequest], Sequence[Any]]) -> Iterator[None]:
    token = CONFIG_HOOK.set(hook)
    try:
        yield
    finally:
        CONFIG_HOOK.reset(token)


def stitched_module(module: ModuleOp, options: PipelineOptions) -> ModuleOp:
    """`module` through fusion exploration: what every later step starts from."""
    return lower(module, options, until=STITCH_STAGE)


def discover(stitched: ModuleOp, options: PipelineOptions) -> list[Task]:
    """The tasks of a stitched module, in kernel order (fusions equal up to names are
    planned once, so each distinct one is a task once)."""
    seen: dict[str, tuple[str, str, int]] = {}

    def record(request: ChoiceRequest) -> Sequence[Any]:
        if request.fusion is not None:
            key = workload_key(request.fusion, str(request.mapping.name), options)
            name, mapping, count = seen.get(key, (request.fusion.name, str(request.mapping.name), 0))
            seen[key] = (name, mapping, count + len(request.configs))
        return request.configs

    with config_hook(record):
        scheduled = lower(stitched, options, after=STITCH_STAGE, until=CODEGEN_STAGE)
    kernels = {k.sym_name.data: k for k in scheduled.walk() if isinstance(k, KernelOp)}
    chosen = {name: _config_text(k) for name, k in kernels.items()}
    return [Task(key, mapping, name, chosen.get(name, "?"), count, _launches(kernels, name))
            for key, (name, mapping, count) in seen.items()]


def _launches(kernels: Mapping[str, KernelOp], name: str) -> int:
    """How many of `kernels` equal the one named `name` up to names (stitch-codegen
    copies a planned kernel for every fusion equal to it; the copies differ in their
    symbol and operands only)."""
    mine = kernels.get(name)
    if mine is None:
        return 1
    count = 0
    for k in kernels.values():
        if _config_text(k) != _config_text(mine) or len(k.operands) != len(mine.operands):
            continue
        other = k.clone()
        other.sym_name = mine.sym_name
        if mine.is_structurally_equivalent(other, context=dict(zip(mine.operands, k.operands))):
            count += 1
        other.drop_all_references()
    return max(1, count)


def _config_text(k: KernelOp) -> str:
    cost = k.cost.data if k.cost is not None else {}
    config = cost.get("config")
    return config.data if isinstance(config, StringAttr) else "?"


def capture(stitched: ModuleOp, options: PipelineOptions, key: str) -> ChoiceRequest:
    """The `ChoiceRequest` of the fusion of workload `key`, its first `choose`: its
    builder stays usable (stitch-codegen stops there, before the fusion is replaced)."""

    def stop(request: ChoiceRequest) -> Sequence[Any]:
        if request.fusion is not None and workload_key(request.fusion, str(request.mapping.name), options) == key:
            raise _Captured(request)
        return request.configs

    try:
        with config_hook(stop):
            lower(stitched, options, after=STITCH_STAGE, until=CODEGEN_STAGE)
    except _Captured as got:
        return got.request
    raise KeyError(f"no fusion of workload {key} in the module")


ConfigOf = Callable[[ChoiceRequest], Any]
"""Given a fusion's request, the configuration to force (None: leave it alone)."""


@contextmanager
def forcing(configs: Mapping[str, ConfigOf], options: PipelineOptions) -> Iterator[None]:
    """Within: stitch-codegen builds the fusion of each workload key in `configs` in the
    configuration its function gives (the others as usual)."""

    def force(request: ChoiceRequest) -> Sequence[Any]:
        if request.fusion is None:
            return request.configs
        pick = configs.get(workload_key(request.fusion, str(request.mapping.name), options))
        config = pick(request) if pick is not None else None
        return request.configs if config is None else [config]

    with config_hook(force):
        yield


def isolate(stitched: ModuleOp, options: PipelineOptions, key: str) -> tuple[ModuleOp, str] | None:
    """The fusion of workload `key` alone, for measuring its kernel without compiling
    the model around it: a stitched module whose function takes the fusion's operands
    as arguments (constants cloned: stitch-codegen folds them into the kernel) and
    returns its results, and the name its kernel gets there. None where that is not the
    same task: a fusion with a dynamic shape (its sizes come from the model's inputs), or
    one whose isolated copy has another workload key (checked by `discover`)."""
    from xdsl.dialects import func
    from xdsl.ir import Region

    from fsir.codegen.plan_latency import scratch_copy
    from fsir.dialects.graph import DYN, shape_of
    from fsir.dialects.stitch import FusionOp

    fusion = capture(stitched, options, key).fusion
    op = fusion.fusion if fusion is not None else None
    if not isinstance(op, FusionOp) or any(DYN in shape_of(v.type) for v in (*op.operands, *op.results)):
        return None
    block, _ = scratch_copy([op])
    returned = block.last_op
    assert isinstance(returned, func.ReturnOp)
    name = f"{fusion.name}_alone" if fusion is not None else "alone"
    f = func.FuncOp(name, ([a.type for a in block.args], [v.type for v in returned.operands]), Region(block))
    module = ModuleOp([f])
    tasks = discover(module, options)
    if len(tasks) != 1 or tasks[0].key != key:
        return None
    return module, tasks[0].kernel
