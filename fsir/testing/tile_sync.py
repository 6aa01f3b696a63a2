"""Test helpers for tile-synchronised pipelines (fsir/codegen/tile_sync.py).

`lower_synced` compiles a graph module with a configured `tile-sync` pass.
`check_dependencies` verifies a pipeline's dependency maps against its PTX on the
simulator, independently of launch order: each producer tile is computed alone (its
block takes the tile from a preset counter) to find the elements it writes; then each
consumer tile is computed alone from an input holding only the elements of the
producer tiles its dependency names (the rest NaN) and must equal the full run. A
dependency that misses a producer tile the consumer reads makes NaN appear.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from fsir.codegen.tile_sync import TileSyncPass, parse_tile_sync, tile_grid
from fsir.dialects import gpu
from fsir.dialects.schedule import PY_INDEX, KernelOp, StageOp, TileDepOp, TileOrder
from fsir.ir import verify
from fsir.pipeline import PipelineOptions, passes
from fsir.runtime.device import DeviceBuffer, LaunchRequest, SimDevice
from fsir.runtime.executor import execute
from fsir.runtime.inputs import random_inputs
from fsir.runtime.reference import find_function

READY = 1 << 30  # a semaphore value every wait accepts


def lower_synced(module: ModuleOp, sync: TileSyncPass, options: PipelineOptions | None = None,
                 until: str | None = None) -> ModuleOp:
    """`module` lowered by the pipeline with `sync` as its tile-sync pass."""
    lowered = module.clone()
    for p in passes(replace(options or PipelineOptions(), tile_sync=parse_tile_sync(sync.policy))):
        p = sync if isinstance(p, TileSyncPass) else p
        p.apply(Context(), lowered)
        verify(lowered)
        if p.name == until:
            break
    return lowered


class RecordingSim(SimDevice):
    """The simulator, keeping every pipeline's launches with copies of their buffers
    as they were before the pipeline ran."""

    def __init__(self):
        super().__init__()
        self.pipelines: list[list[tuple[LaunchRequest, list]]] = []

    def launch_pipeline(self, requests):
        self.pipelines.append([(r, [np.copy(a.handle) if isinstance(a, DeviceBuffer) else a for a in r.args])
                               for r in requests])
        return super().launch_pipeline(requests)


@dataclass
class _Launch:
    request: LaunchRequest
    args: list
    func: gpu.FuncOp

    def arg(self, hint: str) -> int:
        return next(i for i, a in enumerate(self.func.body.blocks[0].args) if a.name_hint == hint)

    def run_tile(self, device: SimDevice, tile: int, fill: dict[int, np.ndarray]) -> list:
        args = [np.copy(a) if isinstance(a, np.ndarray) else a for a in self.args]
        for i, value in fill.items():
            args[i] = value
        for i, a in enumerate(self.func.body.blocks[0].args):
            if a.name_hint in ("starts",) or (a.name_hint or "").startswith("sems_"):
                args[i] = np.full_like(args[i], READY)
        args[self.arg("counter")] = np.array([tile], np.int32)
        r = self.request
        device.launch(r.module, r.kernel, (1, 1, 1), r.block, args, r.shared_bytes)
        return args


def check_dependencies(module: ModuleOp, policy: str = "tile") -> list[str]:
    """Problems found with the dependency maps of `module`'s pipelines (empty: sound)."""
    sync = TileSyncPass(policy=policy, wait_kernel="false", tile_order="row-major")
    scheduled = lower_synced(module, sync, until="tile-sync")
    lowered = lower_synced(module, sync)
    f = find_function(module)
    device = RecordingSim()
    execute(lowered, random_inputs(f, 0), device)
    funcs = {op.sym_name.data: op for op in lowered.walk() if isinstance(op, gpu.FuncOp)}
    kernels = {k.sym_name.data: k for k in scheduled.walk() if isinstance(k, KernelOp)}
    stages = {s.kernel_name: s for s in scheduled.walk() if isinstance(s, StageOp)}
    launches = {r.kernel: _Launch(r, args, funcs[r.kernel]) for p in device.pipelines for r, args in p}
    problems: list[str] = []
    for dep in [d for d in scheduled.walk() if isinstance(d, TileDepOp)]:
        problems += _check(dep, kernels, stages, launches, device)
    return problems


def _check(dep: TileDepOp, kernels: dict[str, KernelOp], stages: dict[str, StageOp],
           launches: dict[str, _Launch], device: SimDevice) -> list[str]:
    prod, cons = launches[dep.producer_name], launches[dep.consumer_name]
    pk, ck = kernels[dep.producer_name], kernels[dep.consumer_name]
    pgx, pgy = tile_grid(pk) or (1, 1)
    cgx, cgy = tile_grid(ck) or (1, 1)
    assert stages[dep.producer_name].order is not None and stages[dep.consumer_name].order is not None
    out = len(pk.operands)  # the producer's (one) result follows its operands
    empty = np.full_like(prod.args[out], np.nan)
    written, full = [], np.copy(empty)
    for t in range(pgx * pgy):
        got = prod.run_tile(device, t, {out: np.copy(empty)})[out]
        written.append(~np.isnan(got))
        full[written[-1]] = got[written[-1]]
    if np.isnan(full).any():
        return [f"@{dep.producer_name}: its tiles leave elements of its result unwritten"]
    problems = []
    reference = None
    sentinel = 7777.0
    res = len(ck.operands)
    for c in range(cgx * cgy):
        x, y = TileOrder.ROW_MAJOR.tile(c, cgx, cgy, PY_INDEX)
        needed = dep.producer_tiles(x, y, pgx, pgy)
        partial = np.copy(empty)
        for px, py in needed:
            m = written[py * pgx + px]
            partial[m] = full[m]
        if reference is None:
            reference = np.full_like(cons.args[res], sentinel)
            for t in range(cgx * cgy):
                got = cons.run_tile(device, t, {dep.operand.data: full, res: np.full_like(reference, sentinel)})[res]
                reference[got != sentinel] = got[got != sentinel]
        got = cons.run_tile(device, c, {dep.operand.data: partial, res: np.full_like(reference, sentinel)})[res]
        mine = got != sentinel
        if not np.array_equal(got[mine], reference[mine]):
            problems.append(f"@{dep.consumer_name} tile ({x}, {y}) reads producer tiles beyond {needed}")
    return problems
