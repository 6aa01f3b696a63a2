"""The `model` measurer's clock: the simulator's exact per-block counters of a sample
of a launch's blocks, turned into time by the timeline model (`fsir/sim/timeline.py`),
which reads nothing of the latency-evaluator.

Blocks of a kernel without inter-block waits are independent, so `SampledSimDevice`
runs only `samples` of them (evenly spaced, the first and the last included: edge
tiles are guarded) and gives every other block the counters of the nearest sampled
one; the timeline model then places all of them on SM slots. A split-K kernel (whose
blocks wait on each other) is simulated in full. Occupancy is the resource rule
(`fsir.codegen.latency.occupancy`) on ptxas's registers when known: the simulator's
slots know threads and shared memory only, so each block is charged
`smem_per_sm / blocks_per_sm` shared bytes to hold the register limit.

Other launches of the module (not the task's kernel) are skipped: their outputs are
left as allocated, which the sampled kernel's counters do not depend on (no
data-dependent control flow in a GEMM, row or loop kernel).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fsir.codegen.latency import occupancy
from fsir.gpuspec import GpuSpec
from fsir.runtime.device import SimDevice, unwrap_sim
from fsir.sim.chunk import Chunk, LaunchState
from fsir.sim.concurrent import BlockRecord, ConcurrentRun, Launch, blocks_per_sm
from fsir.sim.engine import run_chunk
from fsir.sim.launcher import GlobalLayout, check_launch
from fsir.sim.params import pack_params
from fsir.sim.stats import LaunchStats
from fsir.sim.timeline import model_timeline

DEFAULT_SAMPLES = 4


@dataclass(frozen=True)
class SampledLaunch:
    """The modeled time of the task's launch and how it was simulated."""

    seconds: float
    blocks: int
    simulated: int  # blocks actually simulated
    blocks_per_sm: int


def sample_indices(nblocks: int, samples: int) -> list[int]:
    """`samples` evenly spaced block indices, first and last included."""
    if nblocks <= samples:
        return list(range(nblocks))
    if samples < 2:
        return [0]
    return sorted({round(i * (nblocks - 1) / (samples - 1)) for i in range(samples)})


class SampledSimDevice(SimDevice):
    """A simulator device that times only the launches of `kernel` (module docstring);
    `results` has one `SampledLaunch` per such launch."""

    def __init__(self, kernel: str, spec: GpuSpec, samples: int = DEFAULT_SAMPLES, registers: int | None = None):
        super().__init__(check_races=False, gpu=spec.name)
        self.kernel = kernel
        self.spec = spec
        self.samples = samples
        self.registers = registers
        self.results: list[SampledLaunch] = []

    def occupancy(self, threads: int, smem: int) -> int:
        if self.registers is None:
            return blocks_per_sm(self.spec, threads, smem)
        return occupancy(threads, self.registers, smem, self.spec).blocks_per_sm

    def launch(self, module, kernel: str, grid, block, args, shared_bytes: int = 0) -> LaunchStats:
        if kernel != self.kernel:
            return LaunchStats()
        if isinstance(module, str):
            module = self.load(module)
        args = [unwrap_sim(a) for a in args]
        K, grid, block, shared_bytes, args = check_launch(module, kernel, grid, block, args, shared_bytes)
        if K.spin_loops:
            return self._full(module, kernel, grid, block, args, shared_bytes)
        layout = GlobalLayout()
        layout.add_module(module, module.global_data)
        arg_buf = layout.add_args(K, args)
        gm = layout.build()
        addrs = {i: gm.address(bi) for i, bi in arg_buf.items()}
        params = pack_params(K.name, K.params, K.param_offsets, K.param_size, args, addrs)
        state = LaunchState(K, grid, block, shared_bytes, gm, params, False)
        picked = sample_indices(state.nblocks, self.samples)
        per_block: dict[int, LaunchStats] = {}
        with np.errstate(all="ignore"):
            for b in picked:
                before = _copy(state.stats)
                run_chunk(Chunk(state, b, 1))
                per_block[b] = _minus(state.stats, before)
        smem = state.smem_size
        self.results.append(self._model(kernel, grid, block, smem, state.nthreads, state.nblocks, per_block))
        return state.stats

    def launch_pipeline(self, requests):
        return [self.launch(r.module, r.kernel, r.grid, r.block, r.args, r.shared_bytes) for r in requests]

    def _model(self, kernel: str, grid, block, smem: int, threads: int, nblocks: int,
               per_block: dict[int, LaunchStats]) -> SampledLaunch:
        picked = sorted(per_block)
        records = []
        for b in range(nblocks):
            nearest = min(picked, key=lambda p: abs(p - b))
            records.append(BlockRecord(0, b, per_block[nearest]))
        occ = self.occupancy(threads, smem)
        if occ == 0:
            return SampledLaunch(math.inf, nblocks, len(picked), 0)
        held = max(smem, self.spec.smem_per_sm // occ) if self.registers is not None else smem
        launch = Launch(None, kernel, grid, block, [], smem)  # type: ignore[arg-type]  # the model reads no module
        run = ConcurrentRun([launch], [], records, [occ], [threads], [held], self.spec, "fifo")
        tl = model_timeline(run)
        return SampledLaunch(tl.launch_us[0] * 1e-6, nblocks, len(picked), occ)

    def _full(self, module, kernel: str, grid, block, args, shared_bytes: int) -> LaunchStats:
        from fsir.sim.concurrent import run_concurrent

        run = run_concurrent([Launch(module, kernel, grid, block, args, shared_bytes)], spec=self.spec,
                             check_races=False)
        threads = math.prod(block)
        occ = self.occupancy(threads, shared_bytes or run.smem[0])
        if occ == 0:
            self.results.append(SampledLaunch(math.inf, len(run.blocks), len(run.blocks), 0))
            return run.stats[0]
        held = max(run.smem[0], self.spec.smem_per_sm // occ) if self.registers is not None else run.smem[0]
        run.blocks_per_sm[0], run.smem[0] = occ, held
        tl = model_timeline(run)
        self.results.append(SampledLaunch(tl.launch_us[0] * 1e-6, len(run.blocks), len(run.blocks), occ))
        return run.stats[0]


def _copy(st: LaunchStats) -> LaunchStats:
    return st + LaunchStats()


def _minus(a: LaunchStats, b: LaunchStats) -> LaunchStats:
    from dataclasses import fields

    return LaunchStats(**{f.name: getattr(a, f.name) - getattr(b, f.name) for f in fields(a)})
