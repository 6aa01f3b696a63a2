"""The latency-evaluator (FusionStitching §4.3): L = N_wave × L_warp.

It reads a kernel at the gpu level (the code that will run), so what it estimates is
what the PTX printer will print:

- registers per thread by liveness over the structured IR (a value defined outside a
  loop and used inside stays live for the whole loop; loop-carried values for the
  whole loop), in 32-bit registers; predicates and immediates are not counted;
- N_instruction per thread by instruction class, loops weighted by their trip counts;
- occupancy from threads per block, registers and shared memory against `gpuspec`;
- N_wave = ceil(N_warp / (resident warps per SM × SMs)), L_warp = Σ count × CPI;
  with `ilp=True` (GEMM configurations), L_warp follows dependences instead
  (`ilp_warp_cycles`) and the SM's issue rate bounds each wave.

`estimate(kernel, grid, block, spec)` returns all of these, so the schedule IR can show
the choice and its reasons. A simplified form (fixed 16 registers, given shared memory)
serves the fusion explorer's delta-evaluator.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache

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

from fsir.codegen.kernel_time import Launch, compute_time, memory_time
from fsir.codegen.summary import Summary
from fsir.dialects import gpu
from fsir.gpuspec import TF32_ROUNDING, GpuSpec
from fsir.ir import integer_constant
from fsir.ptx.divide import reducible, sequence_length
from fsir.stats import count as tally

# Registers ptxas keeps besides the kernel's values (parameter pointers it converts,
# address temporaries, the stack pointer). Calibrated against `ptxas -v` on the
# examples' kernels (tests/codegen/test_latency.py): with 8, `index` counted as one register
# (ptxas does most index arithmetic of bounded thread/block ids in 32 bits) and kernel
# parameters live from their first use, estimates are within 11 registers per kernel
# and 3.9 on average (signed mean within ±0.8, so neither side is favoured). Index
# divisions are multiplies and shifts (`fsir/ptx/divide.py`); a call of ptxas's
# division routine would hold about 8 more.
BASE_REGISTERS = 8
# Trip count assumed for a loop whose bounds are only known at run time.
UNKNOWN_TRIP_COUNT = 8
# Register allocation granularity: registers are given to warps in blocks of 256.
REG_ALLOC_UNIT = 256

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

    # `x + c` used only as addresses costs no register: ptxas folds the constant into
    # the loads' immediate offsets ([%rd + 1024]), and x stays live to those loads.
    folded: dict[SSAValue, SSAValue] = {}
    for op in order:
        if (isinstance(op, arith.AddiOp) and _is_immediate(op.rhs) and op.result.uses
                and all(isinstance(u.operation, _MEMORY_OPS) for u in op.result.uses)):
            folded[op.result] = op.lhs
    aliases: dict[SSAValue, list[SSAValue]] = {}
    for v, base in folded.items():
        aliases.setdefault(base, []).append(v)

    intervals = []
    values: list[tuple[SSAValue, int, Operation | None]] = []
    # Kernel parameters sit in the constant bank: ptxas loads one into a register where
    # it is first needed (before the outermost loop using it), not at the entry, so a
    # kernel with many outputs does not hold every output pointer from the start.
    for arg in kernel.body.blocks[0].args:
        firsts = []
        for use in arg.uses:
            if use.operation in order:
                loops = enclosing_loops(use.operation)
                firsts.append(order[loops[-1]] if loops else order[use.operation])
        values.append((arg, min(firsts, default=0), None))
    for op in order:
        for r in op.results:
            # a loop's or branch's results exist once it is done (its iteration values
            # are the region arguments, counted below)
            values.append((r, loop_end[op] if op.regions else order[op], op))
        for region in op.regions:
            for b in region.blocks:
                for a in b.args:
                    # loop-carried / region arguments live from the op's start
                    values.append((a, order[op], op))
    hoisted = _hoisted_load_starts(order)
    for value, start, def_op in values:
        start = hoisted.get(def_op, start) if def_op is not None else start
        size = _registers_of(value.type)
        if size == 0 or _is_immediate(value) or (FOLD and value in folded):
            continue
        end = start
        def_loops = set(enclosing_loops(def_op)) if def_op is not None else set()
        if def_op is not None and isinstance(def_op, (scf.ForOp, scf.WhileOp)) and value not in def_op.results:
            # A loop's induction variable lives through it; a loop-carried value
            # (an scf.for iter_arg) only until its last use, as the value yielded for the
            # next iteration takes its register (a GEMM's accumulators count once).
            if not (isinstance(def_op, scf.ForOp) and value in def_op.body.block.args[1:]):
                end = max(end, loop_end[def_op])
        for use in [u for v in (value, *aliases.get(value, ())) for u in v.uses]:
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
        if isinstance(op, _MEMORY_OPS):
            intervals.append(Interval(i, i, 2))
    return intervals


FOLD = True
# A vector access (gpu.load_vector / store_vector) is one memory instruction moving
# its V elements, like a scalar one moving one.
_MEMORY_OPS = (memref.LoadOp, memref.StoreOp, gpu.LoadVectorOp, gpu.StoreVectorOp)
_LOADS = (memref.LoadOp, gpu.LoadVectorOp)


def _hoisted_load_starts(order: dict[Operation, int]) -> dict[Operation, int]:
    """ptxas issues a straight-line run's global loads as early as it can, to overlap
    their latencies: a load's value is live from the start of its run (the last barrier,
    nested region or global store before it in its block), not from where it was
    written. The index arithmetic computing its address moves up with it, unless that
    address was itself loaded (a gather waits for its load). Shared loads see
    `_prefetched_smem_start`."""
    starts: dict[Operation, int] = {}
    for op, i in order.items():
        if not isinstance(op, _LOADS):
            continue
        if _classify(op) == ("smem", 1):
            starts[op] = _prefetched_smem_start(op, order)
            continue
        parent = op.parent_op()
        earliest = order.get(parent, 0) if parent is not None else 0
        address = {o.owner for o in op.operands}
        prev = op.prev_op
        while prev is not None:
            global_store = isinstance(prev, _MEMORY_OPS) and not isinstance(prev, _LOADS) \
                and _classify(prev) == ("global", 1)
            if (isinstance(prev, gpu.BarrierOp) or prev.regions or global_store
                    or (isinstance(prev, _MEMORY_OPS) and prev in address)):
                earliest = order[prev]
                break
            if prev in address:
                address.update(o.owner for o in prev.operands)
            prev = prev.prev_op
        starts[op] = min(i, earliest + 1)
    return starts


def _prefetched_smem_start(load: Operation, order: dict[Operation, int]) -> int:
    """ptxas software-pipelines an unrolled run of shared-memory steps (a GEMM's k-steps:
    fragment loads, then multiply-adds): the next step's loads issue before the current
    step's arithmetic, so a shared load's value is live from the previous step's loads
    on (it never moves above a barrier, a store, or the ops computing its address)."""
    address = {o.owner for o in load.operands}
    prev = load.prev_op
    while isinstance(prev, _LOADS) and prev not in address:  # its own step's loads
        prev = prev.prev_op
    while (prev is not None and prev not in address and not prev.regions
           and not isinstance(prev, (*_MEMORY_OPS, gpu.BarrierOp))):
        prev = prev.prev_op  # the previous step's arithmetic
    if prev is None:
        if load.parent_block() is None:
            return order[load]
        parent = load.parent_op()
        return order.get(parent, -1) + 1 if parent is not None else 0
    return min(order[load], order[prev] + 1)


# The most registers ptxas gives a thread (PTX ISA: 255 per thread on every target);
# what a kernel needs beyond it is spilled to local memory.
MAX_THREAD_REGISTERS = 255


def estimate_registers(kernel: gpu.FuncOp) -> int:
    """Peak simultaneously-live 32-bit registers per thread, plus ptxas's base, at most
    the 255 ptxas allocates (the rest spills; `live_register_demand` is the demand)."""
    return min(MAX_THREAD_REGISTERS, live_register_demand(kernel))


def live_register_demand(kernel: gpu.FuncOp) -> int:
    """Peak simultaneously-live 32-bit registers per thread, plus ptxas's base."""
    events: Counter[int] = Counter()
    for iv in live_intervals(kernel):
        events[iv.start] += iv.size
        events[iv.end + 1] -= iv.size
    live = peak = 0
    for point in sorted(events):
        live += events[point]
        peak = max(peak, live)
    return peak + _unrolled_overlap(kernel) + BASE_REGISTERS


# Loops with this many iterations or fewer (a block's row steps) are unrolled by ptxas.
PTXAS_UNROLL_TRIPS = 4


def _unrolled_overlap(kernel: gpu.FuncOp) -> int:
    """ptxas unrolls short constant-trip loops and issues the next iteration's first
    loads (those before its first barrier) while the current one finishes, so their
    registers add to the peak. Calibrated on the examples' row-step loops (e.g. RMSNorm
    with 8 row elements per thread and 2 steps: ptxas 56 registers, 44 without this)."""
    extra = 0
    for op in kernel.walk():
        if not isinstance(op, scf.ForOp) or not 2 <= _trip_count(op) <= PTXAS_UNROLL_TRIPS:
            continue
        if any(c is None for c in (integer_constant(op.lb), integer_constant(op.ub))):
            continue
        body = [o for o in op.body.block.ops if not isinstance(o, scf.YieldOp)]
        if body and isinstance(body[-1], gpu.BarrierOp):
            continue  # nothing moves above a barrier ending the iteration (a GEMM k-step)
        regs = 0
        for inner in op.body.block.ops:
            if isinstance(inner, gpu.BarrierOp) or (inner.regions and any(
                    isinstance(o, gpu.BarrierOp) for o in inner.walk())):
                break
            if isinstance(inner, _LOADS) and _classify(inner) == ("global", 1):
                regs += sum(_registers_of(r.type) for r in inner.results)
        extra = max(extra, regs)
    return extra


def _upper_bound(v: SSAValue) -> int | None:
    """A constant bound on an index: a constant, or either side of a select (a row
    loop's `valid ? n : 0`) or min."""
    c = integer_constant(v)
    if c is not None:
        return c
    owner = v.owner
    if isinstance(owner, arith.SelectOp):
        lhs, rhs = _upper_bound(owner.lhs), _upper_bound(owner.rhs)
        return None if lhs is None or rhs is None else max(lhs, rhs)
    if isinstance(owner, arith.MinSIOp):
        sides = [b for b in (_upper_bound(owner.lhs), _upper_bound(owner.rhs)) if b is not None]
        return min(sides) if sides else None
    return None


def _trip_count(op: scf.ForOp) -> int:
    """Iterations of the thread that runs the most: a lower bound that is a thread
    index (a row's lane) counts as 0."""
    lb, ub, step = (integer_constant(v) for v in (op.lb, op.ub, op.step))
    if lb is None:
        lb = 0
    ub = _upper_bound(op.ub)
    if ub is None or step is None or step <= 0:
        return UNKNOWN_TRIP_COUNT
    return max(0, -(-(ub - lb) // step))


def global_bytes(ops: Iterable[Operation], weight: int = 1) -> int:
    """Global-memory bytes one thread loads and stores (loops by trip count, scf.if:
    the costlier branch)."""
    total = 0
    for op in ops:
        if isinstance(op, scf.ForOp):
            total += global_bytes(op.body.block.ops, weight * _trip_count(op))
        elif isinstance(op, (scf.IfOp, scf.WhileOp)):
            trips = 1 if isinstance(op, scf.IfOp) else UNKNOWN_TRIP_COUNT
            branches = [global_bytes(b.ops, weight * trips) for r in op.regions for b in r.blocks]
            total += max(branches, default=0) if isinstance(op, scf.IfOp) else sum(branches)
        elif isinstance(op, _MEMORY_OPS) and _classify(op) == ("global", 1):
            ref = op.memref.type
            assert isinstance(ref, MemRefType)
            total += weight * _elem_bytes(ref.element_type) * _elements(op)
        elif isinstance(op, gpu.CpAsyncOp):
            total += weight * op.bytes.value.data
    return total


def _classify(op: Operation) -> tuple[str, int] | None:
    if isinstance(op, arith.ConstantOp):
        return None
    if isinstance(op, _MEMORY_OPS):
        ref = op.memref.type
        space = ref.memory_space if isinstance(ref, MemRefType) else None
        shared = isinstance(space, IntegerAttr) and space.value.data == 3
        return ("smem" if shared else "global", 1)
    if isinstance(op, gpu.ShuffleOp):
        return ("shuffle", 1)
    if isinstance(op, gpu.MmaSyncOp):
        return ("tensor", 1)
    if isinstance(op, gpu.LdMatrixOp):
        return ("smem", 1)
    if isinstance(op, gpu.CpAsyncOp):
        return ("global", 1)
    if isinstance(op, gpu.BarrierOp):
        return ("barrier", 1)
    if isinstance(op, arith.DivfOp):
        return ("div", 1)
    if isinstance(op, (arith.DivUIOp, arith.RemUIOp, arith.DivSIOp, arith.RemSIOp)):
        t = op.rhs.type
        width = 64 if isinstance(t, IndexType) else t.width.data if isinstance(t, IntegerType) else 0
        signed = isinstance(op, (arith.DivSIOp, arith.RemSIOp))
        d = reducible(integer_constant(op.rhs), width, signed)
        if d is not None:  # the printer's shifts and multiplies (`fsir/ptx/divide.py`)
            return ("int", sequence_length(d, width, isinstance(op, (arith.RemUIOp, arith.RemSIOp)), signed))
    if op.name.startswith(("arith.", "math.")):
        return ("int", 1) if _integer_result(op) else ("alu", 1)
    return None


# The evaluator's class of the instructions of a lane class (`LANE_CLASS` maps back).
_LANE_TO_CLASS = {"fp32": "alu", "fp16": "alu", "fp64": "alu", "sfu": "sfu", "int": "int", "lsu": "smem",
                  "tensor": "tensor"}
# A rounding to tf32 (`gpu.round_tf32`): the machine instructions ptxas makes of it.
TF32_ROUNDING_MIX: dict[str, int] = {_LANE_TO_CLASS[lane]: n for lane, n in TF32_ROUNDING.items()}
_ELEMENT_NAMES = {Float16Type: "f16", BFloat16Type: "bf16", Float32Type: "f32", Float64Type: "f64"}


@cache
def _printed(name: str, element: str, operands: int) -> dict[str, int]:
    from fsir.ptx.costs import printed_mix

    out: Counter[str] = Counter()
    for lane, n in printed_mix(name, element, operands).items():
        out[_LANE_TO_CLASS[lane]] += n
    return dict(out)


def _mix(op: Operation) -> dict[str, int] | None:
    """Instructions of one op by class (None: it costs none). A math function costs
    the instructions of the sequence the PTX printer emits for it (`printed_mix`)."""
    if isinstance(op, gpu.RoundTf32Op):
        return TF32_ROUNDING_MIX
    if op.name.startswith("math.") and op.results and not _integer_result(op):
        element = _ELEMENT_NAMES.get(type(op.results[0].type))
        if element is not None:
            return _printed(op.name, element, len(op.operands)) or {"alu": 1}
    c = _classify(op)
    return None if c is None else {c[0]: c[1]}


def _integer_result(op: Operation) -> bool:
    """Index and integer arithmetic (addresses, loop bounds, integer selects) runs on
    the integer pipe; float arithmetic and float compares on the FMA pipes."""
    if isinstance(op, arith.CmpfOp) or not op.results:
        return False
    return isinstance(op.results[0].type, (IntegerType, IndexType))


def _elements(op: Operation) -> int:
    """Elements one memory instruction moves."""
    if isinstance(op, (gpu.LoadVectorOp, gpu.StoreVectorOp)):
        return len(op.values)
    return 1


# The multiply-adds of one mma.sync (16 x 8 x k), a 32nd of them counted per lane.
MMA_LANE_FMAS = {kind: 16 * 8 * k // 32 for kind, k in gpu.MMA_K.items()}


def mma_precision(kind: gpu.MmaTypeEnum) -> str:
    """The tensor-core rate (`GpuSpec.tensor_fma_per_cycle`) an mma runs at: bf16 at f16's."""
    return "tf32" if kind == gpu.MmaTypeEnum.TF32 else "f16"


def tensor_fma_counts(ops: Iterable[Operation], weight: int = 1) -> Counter[str]:
    """Tensor-core multiply-adds per thread by precision (scf.if: the costlier branch),
    weighted as `instruction_counts` weighs the mma instructions."""
    counts: Counter[str] = Counter()
    for op in ops:
        if isinstance(op, scf.ForOp):
            counts += tensor_fma_counts(op.body.block.ops, weight * _trip_count(op))
        elif isinstance(op, scf.IfOp):
            branches = [tensor_fma_counts(r.block.ops, weight) for r in op.regions if r.blocks]
            if branches:
                counts += max(branches, key=lambda c: sum(c.values()))
        elif isinstance(op, scf.WhileOp):
            for r in op.regions:
                for b in r.blocks:
                    counts += tensor_fma_counts(b.ops, weight * UNKNOWN_TRIP_COUNT)
        elif isinstance(op, gpu.MmaSyncOp):
            kind = op.operand_type.data
            counts[mma_precision(kind)] += weight * MMA_LANE_FMAS[kind]
    return counts


def bytes_in_flight(ops: Iterable[Operation]) -> int:
    """The most global bytes one thread loads in a straight run (between barriers,
    loops and branches, which ptxas does not hoist loads across): what it has in flight
    before it waits. A cp.async stage counts whole, as its group is waited for once
    (copies issued in a branch, as from the piece a tile reads, join the stage)."""
    most = run = 0
    for op in ops:
        if isinstance(op, scf.IfOp) and any(isinstance(o, gpu.CpAsyncOp) for o in op.walk()):
            run += max((bytes_in_flight(b.ops) for r in op.regions for b in r.blocks), default=0)
        elif op.regions or isinstance(op, gpu.BarrierOp):
            most = max(most, run)
            run = 0
            for r in op.regions:
                for b in r.blocks:
                    most = max(most, bytes_in_flight(b.ops))
        elif isinstance(op, gpu.CpAsyncOp):
            run += op.bytes.value.data
        elif isinstance(op, _LOADS) and _classify(op) == ("global", 1):
            ref = op.memref.type
            assert isinstance(ref, MemRefType)
            run += _elem_bytes(ref.element_type) * _elements(op)
    return max(most, run)


def instruction_counts(ops: Iterable[Operation], weight: int = 1) -> Counter[str]:
    """Dynamic instructions per thread by class (scf.if: the costlier branch)."""
    counts: Counter[str] = Counter()
    for op in ops:
        if isinstance(op, scf.ForOp):
            trips = _trip_count(op)
            counts += instruction_counts(op.body.block.ops, weight * trips)
            counts["int"] += 2 * weight * trips  # induction update and compare-branch
        elif isinstance(op, scf.IfOp):
            branches = [instruction_counts(r.block.ops, weight) for r in op.regions if r.blocks]
            if branches:
                counts += max(branches, key=lambda c: sum(c.values()))
            counts["int"] += weight
        elif isinstance(op, scf.WhileOp):
            for r in op.regions:
                for b in r.blocks:
                    counts += instruction_counts(b.ops, weight * UNKNOWN_TRIP_COUNT)
        else:
            for cls, n in (_mix(op) or {}).items():
                counts[cls] += n * weight
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
    # the throughput floors (kernel_time.py) behind `seconds`, when computed
    compute_seconds: float = 0.0
    memory_seconds: float = 0.0
    # global bytes the threads request (what the L2 serves), when computed
    requested_bytes: float = 0.0

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
             dynamic_smem: int = 0, bandwidth: bool = False, ilp: bool = False,
             distinct_bytes: int | None = None) -> Estimate:
    """L = N_wave × L_warp for `kernel` launched with `grid` × `block` on `spec`.

    ilp: L_warp from dependences (`ilp_warp_cycles`) instead of one CPI per
    instruction, with the SM's issue rate shared by the wave's warps as a floor.
    distinct_bytes: the launch's distinct global bytes, which the gpu IR's `?`-sized
    buffers do not tell (`Summary.distinct_bytes`)."""
    ops = kernel.body.blocks[0].ops
    summary = Summary(instruction_counts(ops), estimate_registers(kernel), shared_bytes(kernel) + dynamic_smem,
                      global_bytes(ops), ilp_warp_cycles(ops, spec) if ilp else None, tensor_fma_counts(ops))
    if ilp:  # a GEMM's throughput floors (as its mapping's summary states them)
        summary.bytes_in_flight = bytes_in_flight(ops)
        summary.distinct_bytes = distinct_bytes
    return estimate_summary(summary, grid, block, spec, bandwidth=bandwidth)


def estimate_summary(summary: Summary, grid: Sequence[int], block: Sequence[int], spec: GpuSpec,
                     bandwidth: bool = False) -> Estimate:
    """L = N_wave × L_warp from a kernel's summary (its gpu IR's, or one a mapping
    states without lowering: `fsir/codegen/summary.py`). With `summary.ilp_cycles`,
    L_warp follows dependences, the SM's issue rate shared by the wave's warps a floor."""
    tally("summaries_scored")
    regs, smem, counts = summary.registers, summary.shared_bytes, summary.counts
    occ = occupancy(math.prod(block), regs, smem, spec)
    if occ.blocks_per_sm == 0:
        return Estimate(math.inf, math.inf, 0, math.inf, regs, smem, occ, {})
    est = combine(waves_for(grid, block, occ, spec), counts, regs, smem, occ, spec)
    if summary.ilp_cycles is not None:
        est = _with_ilp(est, summary.ilp_cycles, grid, block, spec)
    # Throughput floors (fsir/codegen/kernel_time.py, the one formula fs-bench's model
    # uses too). With `bandwidth`: the bytes the threads request over the HBM bandwidth
    # their resident warps reach, which is what rewards loading a row, or γ and β, once.
    # For GEMM configurations (those scored by dependences): the pipes' rates, so a
    # tile's multiply-adds cost what the FMA pipes need for them on the SMs its grid
    # keeps busy, and its shared-memory fragment loads what the load/store units need.
    # Row and loop kernels keep the §4.3 latency: their summaries' instruction counts
    # are held to the gpu IR's only as far as that model's choices go
    # (tests/codegen/test_summary.py).
    load = launch_of(summary, grid, block, occ, spec, bandwidth)
    compute, memory = compute_time(load, spec), memory_time(load, spec)
    seconds = max(est.seconds, compute if summary.ilp_cycles is not None else 0.0, memory)
    requested = summary.global_bytes * math.prod(grid) * math.prod(block)
    if seconds <= est.seconds:
        return replace(est, compute_seconds=compute, memory_seconds=memory, requested_bytes=requested)
    return Estimate(seconds * spec.clock_hz, seconds, est.waves, est.warp_cycles, regs, smem, occ, dict(counts),
                    compute, memory, requested)


def launch_of(summary: Summary, grid: Sequence[int], block: Sequence[int], occ: Occupancy, spec: GpuSpec,
              bandwidth: bool = True) -> Launch:
    """The whole launch's work (`kernel_time.Launch`) that `summary`'s thread does in
    each of grid x block threads: instructions by lane class, tensor-core
    multiply-adds, and with `bandwidth` its bytes (the requested ones reach DRAM unless
    the summary states the distinct ones; a warp's bytes in flight)."""
    threads = math.prod(grid) * math.prod(block)
    requested = summary.global_bytes * threads if bandwidth else 0
    distinct = summary.distinct_bytes
    return Launch(math.prod(grid), math.prod(block), occ.blocks_per_sm,
                  requested if distinct is None or not bandwidth else min(distinct, requested),
                  lane_instructions(summary.counts, threads),
                  {p: n * threads for p, n in summary.tensor_fmas.items()},
                  requested_bytes=requested if distinct is not None else 0,
                  warp_bytes_in_flight=summary.bytes_in_flight * spec.warp_size)


# The latency-evaluator's instruction classes on the GPU's pipes (`gpuspec.LANE_CLASSES`).
# `alu` is f32 arithmetic and float compares, `int` index and integer arithmetic.
LANE_CLASS = {"alu": "fp32", "int": "int", "sfu": "sfu", "div": "sfu", "shuffle": "lsu", "smem": "lsu", "global": "lsu",
              "barrier": "int"}


def lane_instructions(counts: Counter[str] | dict[str, int], threads: int) -> dict[str, float]:
    """A launch's thread-instructions by lane class, from per-thread counts by class."""
    out: dict[str, float] = {}
    for cls, n in counts.items():
        if cls == "tensor":
            continue  # the tensor pipe's time is that of its multiply-adds (`Launch.tensor_fmas`)
        lane = LANE_CLASS.get(cls, "int")
        out[lane] = out.get(lane, 0.0) + n * threads
    return out


def ilp_warp_cycles(ops: Iterable[Operation], spec: GpuSpec) -> float:
    """L_warp of a warp that overlaps independent instructions (ptxas schedules a
    straight-line run freely; a warp issues one instruction per cycle): each run between
    loops, branches and barriers takes the longer of its dependence chain (an
    instruction starts when its operands are ready and takes its class's CPI) and its
    issue slots. A register-blocked GEMM's tm x tn independent multiply-adds cost their
    issue slots, a 1x1 tile's chain of dependent ones their latency each; the
    one-CPI-per-instruction L_warp (§4.3) charges both alike."""
    total = 0.0
    ready: dict[SSAValue, float] = {}
    chain = issued = 0.0

    def flush() -> None:
        nonlocal total, chain, issued
        total += max(chain, issued)
        ready.clear()
        chain = issued = 0.0

    for op in ops:
        if isinstance(op, scf.ForOp):
            flush()
            body = ilp_warp_cycles(op.body.block.ops, spec) + 2 * spec.cpi["alu"]
            total += _trip_count(op) * body
        elif isinstance(op, (scf.IfOp, scf.WhileOp)):
            flush()
            costs = [ilp_warp_cycles(b.ops, spec) for r in op.regions for b in r.blocks]
            total += (max(costs, default=0.0) if isinstance(op, scf.IfOp)
                      else UNKNOWN_TRIP_COUNT * sum(costs)) + spec.cpi["alu"]
        elif isinstance(op, gpu.BarrierOp):
            flush()
            total += spec.cpi["barrier"]
        else:
            mix = _mix(op)
            if mix is None:
                continue
            start = max((ready.get(o, 0.0) for o in op.operands), default=0.0)
            # a cp.async is waited for by a later step's wait_group, not by its issuer
            done = start + (1 if isinstance(op, gpu.CpAsyncOp)
                            else sum(n * spec.cpi.get(cls, spec.cpi["alu"]) for cls, n in mix.items()))
            for r in op.results:
                ready[r] = done
            chain = max(chain, done)
            issued += sum(mix.values())
    flush()
    return total


def _with_ilp(est: Estimate, ilp_cycles: float, grid: Sequence[int], block: Sequence[int],
              spec: GpuSpec) -> Estimate:
    """Waves of `ilp_warp_cycles`, each at least as long as the SM needs to issue its
    resident warps' instructions (`spec.issue_per_cycle` schedulers): overlapping
    instructions within a warp is only free while the SM has issue slots to spare."""
    warps_per_block = -(-math.prod(block) // spec.warp_size)
    blocks = math.prod(grid)
    per_sm = min(est.occupancy.blocks_per_sm, -(-blocks // spec.sms)) * warps_per_block
    issue = sum(est.instructions.values()) * per_sm / spec.issue_per_cycle
    warp_cycles = max(ilp_cycles, issue)
    cycles = est.waves * warp_cycles
    return Estimate(cycles, cycles / spec.clock_hz, est.waves, warp_cycles, est.registers, est.shared_bytes,
                    est.occupancy, est.instructions)


def simplified_estimate(n_threads: int, threads_per_block: int, counts: dict[str, int], smem_bytes: int,
                        spec: GpuSpec, registers: int = 16) -> Estimate:
    """§5.4's simplified form for the explorer: fixed registers, the largest smem use."""
    occ = occupancy(threads_per_block, registers, smem_bytes, spec)
    if occ.blocks_per_sm == 0:
        return Estimate(math.inf, math.inf, 0, math.inf, registers, smem_bytes, occ, dict(counts))
    grid = (-(-n_threads // threads_per_block),)
    return combine(waves_for(grid, (threads_per_block,), occ, spec), Counter(counts), registers,
                   smem_bytes, occ, spec)
