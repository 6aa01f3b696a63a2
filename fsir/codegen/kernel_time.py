"""A kernel's modeled time on a GPU: max(memory, compute) + launch cost.

    t = kernel_time(launch, spec)     # KernelTime(memory=..., compute=..., launch=...)
    t.total                           # seconds: max(memory, compute) + launch
    plan_time([t0, t1, ...])          # a plan's time: the sum over its kernels

The one home of the throughput formula (docs/cost-models.md, "Kernel time"). Its
callers state a launch (`Launch`): the work of the whole launch by instruction class
(thread-instructions per lane class of `fsir.gpuspec.LANE_CLASSES`, tensor-core
multiply-adds per precision), the bytes it moves, its grid and block and how many of
its blocks fit on an SM at once. fs-bench states them from the simulator's counters
(distinct bytes), the latency-evaluator from a kernel's summary (requested bytes).

- **compute** = the slowest of the pipes (the busiest SM's share of a class's work ÷
  (that class's rate per SM × clock)) and of issue (its warp-instructions ÷ the SM's
  `issue_per_cycle`): pipes run concurrently, fed by the schedulers. Blocks are
  spread over the SMs, so the busiest SM runs ⌈blocks ÷ SMs⌉ of them: a grid of
  fewer blocks than SMs uses only that many, and waves of resident blocks end with
  a partial one (full waves × blocks per SM plus the last wave's ⌈remainder ÷ SMs⌉
  is the same ⌈blocks ÷ SMs⌉). A warp runs on one
  of the SM's `issue_per_cycle` sub-partitions, each holding a quarter of its pipes,
  so fewer resident warps than sub-partitions leave pipes idle.
- **memory** = max(bytes ÷ HBM bandwidth, requested bytes ÷ L2 bandwidth) ÷ share,
  share = resident warps × bytes a warp keeps in flight (at least `lane_bytes_in_flight`
  per lane) ÷ (`saturating_bytes_in_flight` × SMs), at most 1: too few bytes in flight
  cannot keep HBM busy (Little's law). The requested bytes are what the threads load
  and store, the re-reads among them served by the L2 (a GEMM re-reading its
  operands' tiles); `bytes` what reaches DRAM.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from fsir.gpuspec import GpuSpec


@dataclass(frozen=True)
class Launch:
    """What one launch does, summed over its threads."""

    blocks: int
    threads_per_block: int
    blocks_per_sm: int  # resident blocks per SM (occupancy)
    bytes: float  # global bytes to or from DRAM
    instructions: Mapping[str, float] = field(default_factory=dict)  # thread-instructions by lane class
    tensor_fmas: Mapping[str, float] = field(default_factory=dict)  # tensor-core multiply-adds by precision
    requested_bytes: float = 0.0  # global bytes the threads load and store (served by the L2; 0: not stated)
    warp_bytes_in_flight: float = 0.0  # bytes a warp requests before it waits (at least the spec's default)


@dataclass(frozen=True)
class KernelTime:
    memory: float  # seconds
    compute: float  # seconds
    launch: float  # seconds

    @property
    def total(self) -> float:
        return max(self.memory, self.compute) + self.launch

    @property
    def bound(self) -> str:
        return "compute" if self.compute > self.memory else "memory"


def warps_per_block(launch: Launch, spec: GpuSpec) -> int:
    return -(-launch.threads_per_block // spec.warp_size)


def busiest_sm_blocks(blocks: int, spec: GpuSpec) -> int:
    """Blocks the busiest SM runs over the launch (all its waves)."""
    return -(-max(1, blocks) // spec.sms)


def memory_time(launch: Launch, spec: GpuSpec) -> float:
    """Seconds to move `launch.bytes` at the share of HBM bandwidth its warps reach."""
    if launch.bytes <= 0 and launch.requested_bytes <= 0:
        return 0.0
    resident = min(launch.blocks, max(0, launch.blocks_per_sm) * spec.sms) * warps_per_block(launch, spec)
    # a warp is taken to keep at least the typical kernel's bytes in flight (the
    # assumption behind `saturating_warps_per_sm`); more when it states them
    per_warp = max(launch.warp_bytes_in_flight, spec.lane_bytes_in_flight * spec.warp_size)
    share = min(1.0, resident * per_warp / (spec.saturating_bytes_in_flight * spec.sms))
    if share <= 0:
        return math.inf
    seconds = launch.bytes / spec.hbm_bandwidth
    if spec.l2_bandwidth > 0:
        seconds = max(seconds, launch.requested_bytes / spec.l2_bandwidth)
    return seconds / share


def compute_time(launch: Launch, spec: GpuSpec) -> float:
    """Seconds the busiest SM needs for its share of the launch's instructions."""
    if launch.blocks_per_sm <= 0:
        return math.inf
    per_sm = busiest_sm_blocks(launch.blocks, spec)
    share = per_sm / max(1, launch.blocks)  # of the whole launch's work
    resident_warps = min(launch.blocks_per_sm, per_sm) * warps_per_block(launch, spec)
    busy = min(1.0, resident_warps / spec.issue_per_cycle)  # sub-partitions with a warp
    # Each pipe works through its own class concurrently with the others; the
    # sub-partitions' schedulers issue one warp-instruction per cycle between them.
    pipes = [0.0]
    warp_instructions = 0.0
    for cls, n in launch.instructions.items():
        if n:
            pipes.append(_seconds(n * share, spec.lanes_per_cycle.get(cls, 0) * busy, spec.clock_hz))
            warp_instructions += n * share / spec.warp_size
    clock = spec.tensor_clock_hz or spec.clock_hz
    for precision, n in launch.tensor_fmas.items():
        if n:
            pipes.append(_seconds(n * share, spec.tensor_fma_per_cycle.get(precision, 0) * busy, clock))
    issue = _seconds(warp_instructions, spec.issue_per_cycle * busy, spec.clock_hz)
    return max(max(pipes), issue)


def _seconds(work: float, per_cycle: float, clock: float) -> float:
    return math.inf if per_cycle <= 0 else work / per_cycle / clock


def kernel_time(launch: Launch, spec: GpuSpec, launch_cost: bool = True) -> KernelTime:
    """max(memory, compute) + the launch cost (`spec.launch_cost`) of one launch."""
    return KernelTime(memory_time(launch, spec), compute_time(launch, spec),
                      spec.launch_cost if launch_cost else 0.0)


def plan_time(kernels: Iterable[KernelTime]) -> float:
    """A plan's time: its kernels run one after another."""
    return sum(k.total for k in kernels)


# The simulator's per-class counters (fsir/sim/classes.py) by lane class.
_STATS_FIELDS = {"fp32": "fp32_instructions", "fp16": "fp16_instructions", "fp64": "fp64_instructions",
                 "sfu": "sfu_instructions", "int": "int_instructions", "lsu": "lsu_instructions"}


def launch_from_stats(stats, blocks: int, threads_per_block: int, blocks_per_sm: int,
                      warp_bytes_in_flight: float = 0.0) -> Launch:
    """The `Launch` a simulated launch's `LaunchStats` describe: its distinct global
    bytes (what a perfect cache moves to and from DRAM), the bytes its threads request
    (through the L2), its thread-instructions by class and its tensor-core
    multiply-adds (mma instructions themselves are issue slots of the tensor pipe,
    whose time the multiply-adds state)."""
    tf32 = stats.tf32_tensor_flops // 2
    return Launch(blocks, threads_per_block, blocks_per_sm, stats.global_unique_bytes,
                  {cls: getattr(stats, name) for cls, name in _STATS_FIELDS.items()},
                  {"f16": stats.tensor_flops // 2 - tf32, "tf32": tf32}, requested_bytes=stats.global_bytes,
                  warp_bytes_in_flight=warp_bytes_in_flight)
