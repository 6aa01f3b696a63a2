"""Profiler-style counters of simulated launches.

Predicated-off lanes still count as executing an instruction (as `inst_executed` does).
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass
class LaunchStats:
    """Profiler-style counters of one launch (or, summed with `+`, of several)."""

    launches: int = 0
    threads: int = 0
    instructions: int = 0  # dynamic thread-instructions (active lanes summed over executed instructions)
    warp_instructions: int = 0  # dynamic warp-instructions
    global_load_bytes: int = 0  # bytes requested by threads
    global_store_bytes: int = 0
    global_atomic_bytes: int = 0
    global_unique_bytes: int = 0  # distinct global bytes touched (what a perfect cache sends to DRAM)
    global_sectors: int = 0  # 32-byte sectors per warp-level request, summed (loads, stores, atomics)
    global_load_sectors: int = 0
    global_store_sectors: int = 0  # stores and atomics
    global_load_requests: int = 0  # warp-level global load instructions
    global_store_requests: int = 0
    shared_loads: int = 0  # warp-level shared-memory load instructions
    shared_stores: int = 0  # warp-level shared-memory store instructions (atomics included)
    shared_load_bytes: int = 0
    shared_store_bytes: int = 0
    barriers: int = 0  # barrier releases
    mma_instructions: int = 0  # warp-level mma.sync instructions
    tensor_flops: int = 0  # 2*m*n*k per warp-level mma.sync (the tensor cores' multiply-adds, counted twice)
    # Thread-instructions by the pipe they run on (fsir/sim/classes.py; they sum to
    # `instructions` plus the extra machine instructions of a rounding to tf32, which
    # ptxas spreads over two pipes), for the throughput model (fsir/codegen/kernel_time.py).
    fp32_instructions: int = 0
    fp16_instructions: int = 0
    fp64_instructions: int = 0
    sfu_instructions: int = 0
    int_instructions: int = 0
    lsu_instructions: int = 0
    tensor_instructions: int = 0
    fma_instructions: int = 0  # the floating-point fma/mad among them (two FLOPs each)
    tf32_tensor_flops: int = 0  # the part of tensor_flops with tf32 inputs (the rest is f16/bf16)
    # Inter-block synchronisation through global memory (fsir/sim/concurrent.py): thread
    # executions of the first acquire/volatile/relaxed load of a spin loop that are not
    # re-iterations (waits), spin-loop back edges taken (spins), and release/acq_rel
    # reductions, atomics and stores outside spin loops, or relaxed ones right after a fence
    # (posts): thread executions, as loader.sync_roles classes them.
    waits: int = 0
    spins: int = 0
    posts: int = 0

    def __add__(self, other: LaunchStats) -> LaunchStats:
        if not isinstance(other, LaunchStats):
            return NotImplemented
        return LaunchStats(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def __radd__(self, other):
        if other == 0:  # sum([...])
            return self
        return NotImplemented

    @property
    def flops(self) -> int:
        """Floating-point operations: one per floating-point lane instruction, two per
        fma/mad, and the tensor cores' multiply-adds (two each)."""
        return (self.fp32_instructions + self.fp16_instructions + self.fp64_instructions + self.fma_instructions
                + self.tensor_flops)

    @property
    def global_bytes(self) -> int:
        return self.global_load_bytes + self.global_store_bytes + self.global_atomic_bytes
