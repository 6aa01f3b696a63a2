"""The latency-evaluator (FusionStitching §4.3): L = N_wave × L_warp.

It reads a kernel at the gpu level (the code that will run), so what it estimates is
what the PTX printer will print:

- registers per thread by liveness over the structured IR (a value defined outside a
  loop and used inside stays live for the whole loop; loop-carried values for the
  whole loop), in 32-bit registers; predicates and immediates are not counted;
- N_instruction per thread by instruction class, loops weighted by their trip counts;
- occupancy from threads per block, registers and shared memory against `gpuspec`;
- N_wave = ceil(N_warp / (resident warps per SM × SMs)), L_warp = Σ count × CPI.

`estimate(kernel, grid, block, spec)` returns all of these, so the schedule IR can show
the choice and its reasons. A simplified form (fixed 16 registers, given shared memory)
serves the fusion explorer's delta-evaluator.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from fsir.dialects import gpu
from fsir.gpuspec import GpuSpec

# Registers ptxas keeps besides the kernel's values (parameter pointers it converts,
# address temporaries, the stack pointer). Calibrated against `ptxas -v` on the
# examples' kernels (tests/test_latency.py): with 8, and `index` counted as one
# register (ptxas does most index arithmetic of bounded thread/block ids in 32 bits),
# estimates are within 8 registers per kernel and 4 on average.
BASE_REGISTERS = 8
# Trip count assumed for a loop whose bounds are only known at run time.
UNKNOWN_TRIP_COUNT = 8
# Register allocation granularity: registers are given to warps in blocks of 256.
REG_ALLOC_UNIT = 256

# Instruction classes of math ops; the sequences the PTX printer emits are several
# instructions long, which the second number counts (documented in fsir/ptx/math_ops.py).
_MATH_COST: dict[str, tuple[str, int]] = {
    "math.exp": ("sfu", 4), "math.exp2": ("sfu", 1), "math.log": ("sfu", 4), "math.log2": ("sfu", 1),
    "math.tanh": ("sfu", 12), "math.erf": ("sfu", 16), "math.sqrt": ("sfu", 1), "math.rsqrt": ("sfu", 1),
    "math.powf": ("sfu", 20), "math.sin": ("sfu", 2), "math.cos": ("sfu", 2),
}


def _registers_of(t: Attribute) -> int:
    """32-bit registers one value of type `t` occupies (0 for predicates)."""
    if isinstance(t, IntegerType):
        w = t.width.data
        return 0 if w == 1 else (2 if w > 32 else 1)
    if isinstance(t, (Float64Type, MemRefType)):
        return 2
    if isinstance(t, (Float32Type, Float16Type, BFloat16Type, IndexType)):
        return 1
    return 1


def _is_immediate(v: SSAValue) -> bool:
    return isinstance(v.owner, arith.ConstantOp)


@dataclass(frozen=True)
class Interval:
    start: int
    end: int
    size: int


def live_intervals(kernel: gpu.FuncOp) -> list[Interval]:
    """Live range of every register-held value, over a program-order numbering of ops."""
    order: dict[Operation, int] = {}
    loop_end: dict[Operation, int] = {}

    def number(block: Block) -> None:
        for op in block.ops:
            order[op] = len(order)
            for region in op.regions:
                for b in region.blocks:
                    number(b)
            loop_end[op] = len(order)  # one past the last op nested in `op`

    number(kernel.body.blocks[0])

    def enclosing_loops(op: Operation) -> list[Operation]:
        loops, parent = [], op.parent_op()
        while parent is not None and parent is not kernel:
            if isinstance(parent, (scf.ForOp, scf.WhileOp)):
                loops.append(parent)
            parent = parent.parent_op()
        return loops

    intervals = []
    values: list[tuple[SSAValue, int, Operation | None]] = []
    for arg in kernel.body.blocks[0].args:
        values.append((arg, 0, None))
    for op in order:
        for r in op.results:
            values.append((r, order[op], op))
        for region in op.regions:
            for b in region.blocks:
                for a in b.args:
                    # loop-carried / region arguments live from the op's start
                    values.append((a, order[op], op))
    for value, start, def_op in values:
        size = _registers_of(value.type)
        if size == 0 or _is_immediate(value):
            continue
        end = start
        def_loops = set(enclosing_loops(def_op)) if def_op is not None else set()
        if def_op is not None and isinstance(def_op, (scf.ForOp, scf.WhileOp)) and value not in def_op.results:
            end = max(end, loop_end[def_op])  # region args of a loop live through it
        for use in value.uses:
            user = use.operation
            if user not in order:
                continue
            end = max(end, order[user])
            # Used inside a loop that does not contain the definition: live until that
            # loop ends, since every iteration reads it.
            for loop in enclosing_loops(user):
                if loop not in def_loops and loop is not def_op:
                    end = max(end, loop_end[loop])
        intervals.append(Interval(start, end, size))
    # A load or store forms a 64-bit address (base + scaled index) just before it.
    for op, i in order.items():
        if isinstance(op, (memref.LoadOp, memref.StoreOp)):
            intervals.append(Interval(i, i, 2))
    return intervals


def estimate_registers(kernel: gpu.FuncOp) -> int:
    """Peak simultaneously-live 32-bit registers per thread, plus ptxas's base."""
    events: Counter[int] = Counter()
    for iv in live_intervals(kernel):
        events[iv.start] += iv.size
        events[iv.end + 1] -= iv.size
    live = peak = 0
    for point in sorted(events):
        live += events[point]
        peak = max(peak, live)
    return peak + BASE_REGISTERS


def _const_index(v: SSAValue) -> int | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _trip_count(op: scf.ForOp) -> int:
    lb, ub, step = (_const_index(v) for v in (op.lb, op.ub, op.step))
    if lb is None or ub is None or step is None or step <= 0:
        return UNKNOWN_TRIP_COUNT
    return max(0, -(-(ub - lb) // step))


def _classify(op: Operation) -> tuple[str, int] | None:
    if isinstance(op, arith.ConstantOp):
        return None
    if isinstance(op, (memref.LoadOp, memref.StoreOp)):
        ref = op.memref.type
        space = ref.memory_space if isinstance(ref, MemRefType) else None
        shared = isinstance(space, IntegerAttr) and space.value.data == 3
        return ("smem" if shared else "global", 1)
    if isinstance(op, gpu.ShuffleOp):
        return ("shuffle", 1)
    if isinstance(op, gpu.BarrierOp):
        return ("barrier", 1)
    if isinstance(op, arith.DivfOp):
        return ("div", 1)
    if op.name in _MATH_COST:
        return _MATH_COST[op.name]
    if op.name.startswith(("arith.", "math.")):
        return ("alu", 1)
    return None


def instruction_counts(ops: Iterable[Operation], weight: int = 1) -> Counter[str]:
    """Dynamic instructions per thread by class (scf.if: the costlier branch)."""
    counts: Counter[str] = Counter()
    for op in ops:
        if isinstance(op, scf.ForOp):
            trips = _trip_count(op)
            counts += instruction_counts(op.body.block.ops, weight * trips)
            counts["alu"] += 2 * weight * trips  # induction update and compare-branch
        elif isinstance(op, scf.IfOp):
            branches = [instruction_counts(r.block.ops, weight) for r in op.regions if r.blocks]
            if branches:
                counts += max(branches, key=lambda c: sum(c.values()))
            counts["alu"] += weight
        elif isinstance(op, scf.WhileOp):
            for r in op.regions:
                for b in r.blocks:
                    counts += instruction_counts(b.ops, weight * UNKNOWN_TRIP_COUNT)
        else:
            c = _classify(op)
            if c is not None:
                counts[c[0]] += c[1] * weight
    return counts


def shared_bytes(kernel: gpu.FuncOp) -> int:
    total = 0
    for t in _workgroup_types(kernel):
        n = math.prod(t.get_shape())
        total += n * _elem_bytes(t.element_type)
    return total


def _workgroup_types(kernel: gpu.FuncOp) -> list[MemRefType]:
    args = kernel.body.blocks[0].args
    return [a.type for a in args if isinstance(a.type, MemRefType) and _space(a.type) == 3]


def _space(t: MemRefType) -> int:
    s = t.memory_space
    return s.value.data if isinstance(s, IntegerAttr) else 0


def _elem_bytes(t: Attribute) -> int:
    if isinstance(t, (Float64Type,)) or (isinstance(t, IntegerType) and t.width.data == 64):
        return 8
    if isinstance(t, (Float16Type, BFloat16Type)) or (isinstance(t, IntegerType) and t.width.data == 16):
        return 2
    if isinstance(t, IntegerType) and t.width.data <= 8:
        return 1
    return 4


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    limited_by: str

    def fraction(self, spec: GpuSpec) -> float:
        return self.warps_per_sm / spec.max_warps_per_sm


def occupancy(threads_per_block: int, registers: int, smem_bytes: int, spec: GpuSpec) -> Occupancy:
    """Resident blocks and warps per SM, and which resource limits them."""
    warps = -(-threads_per_block // spec.warp_size)
    regs_per_warp = -(-registers * spec.warp_size // REG_ALLOC_UNIT) * REG_ALLOC_UNIT
    limits = {
        "threads": spec.max_threads_per_sm // max(1, warps * spec.warp_size),
        "blocks": spec.max_blocks_per_sm,
        "registers": spec.regs_per_sm // max(1, regs_per_warp * warps),
        "shared memory": spec.smem_per_sm // smem_bytes if smem_bytes else spec.max_blocks_per_sm,
    }
    reason = min(limits, key=lambda k: limits[k])
    blocks = max(0, limits[reason])
    return Occupancy(blocks, blocks * warps, reason)


@dataclass(frozen=True)
class Estimate:
    """One kernel configuration's estimated latency and the figures behind it."""

    cycles: float
    seconds: float
    waves: int
    warp_cycles: float
    registers: int
    shared_bytes: int
    occupancy: Occupancy
    instructions: dict[str, int]

    def summary(self) -> str:
        return (f"{self.seconds * 1e6:.2f} us = {self.waves} waves x {self.warp_cycles:.0f} cycles/warp; "
                f"{self.registers} regs, {self.shared_bytes} B smem, {self.occupancy.warps_per_sm} warps/SM "
                f"(limited by {self.occupancy.limited_by})")


def combine(waves: int, counts: Counter[str] | dict[str, int], registers: int, smem: int,
            occ: Occupancy, spec: GpuSpec) -> Estimate:
    warp_cycles = sum(n * spec.cpi.get(cls, spec.cpi["alu"]) for cls, n in counts.items())
    cycles = waves * warp_cycles
    return Estimate(cycles, cycles / spec.clock_hz, waves, warp_cycles, registers, smem, occ, dict(counts))


def waves_for(grid: Sequence[int], block: Sequence[int], occ: Occupancy, spec: GpuSpec) -> int:
    threads = math.prod(block)
    n_warp = math.prod(grid) * -(-threads // spec.warp_size)
    per_wave = max(1, occ.warps_per_sm) * spec.sms
    return max(1, -(-n_warp // per_wave))


def estimate(kernel: gpu.FuncOp, grid: Sequence[int], block: Sequence[int], spec: GpuSpec,
             dynamic_smem: int = 0) -> Estimate:
    """L = N_wave × L_warp for `kernel` launched with `grid` × `block` on `spec`."""
    regs = estimate_registers(kernel)
    smem = shared_bytes(kernel) + dynamic_smem
    occ = occupancy(math.prod(block), regs, smem, spec)
    if occ.blocks_per_sm == 0:
        return Estimate(math.inf, math.inf, 0, math.inf, regs, smem, occ, {})
    counts = instruction_counts(kernel.body.blocks[0].ops)
    return combine(waves_for(grid, block, occ, spec), counts, regs, smem, occ, spec)


def simplified_estimate(n_threads: int, threads_per_block: int, counts: dict[str, int], smem_bytes: int,
                        spec: GpuSpec, registers: int = 16) -> Estimate:
    """§5.4's simplified form for the explorer: fixed registers, the largest smem use."""
    occ = occupancy(threads_per_block, registers, smem_bytes, spec)
    if occ.blocks_per_sm == 0:
        return Estimate(math.inf, math.inf, 0, math.inf, registers, smem_bytes, occ, dict(counts))
    grid = (-(-n_threads // threads_per_block),)
    return combine(waves_for(grid, (threads_per_block,), occ, spec), Counter(counts), registers,
                   smem_bytes, occ, spec)
