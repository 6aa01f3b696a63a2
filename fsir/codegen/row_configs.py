"""The configurations a row kernel can run in (FusionStitching §4.2), and the choice
among them by the latency-evaluator (§4.3).

A configuration is a row schedule (a thread, a warp segment, a block or interleaved
slices per row), the threads per block, whether each thread keeps its share of the row
in registers (`slots` elements, unrolled; 0 re-reads the row in every group) and how
many row-blocks a block takes in turn (`steps`, so row-invariant operands such as γ and
β are loaded once and reused). `choose` lowers every candidate kernel to gpu IR, scores
it with `fsir.codegen.latency.estimate` (L = N_wave × L_warp) and keeps the fastest,
recording the estimate in the kernel's `cost`. Loop kernels (`LoopConfig`: vector
widths) and GEMM kernels (`fsir/codegen/gemm_configs.py`: tiles) go through the same
`choose` with their configurations, so every kernel carries the evaluator's figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from xdsl.dialects.builtin import DictionaryAttr, FloatAttr, IntegerAttr, StringAttr, f64, i64
from xdsl.ir import SSAValue

from fsir.codegen.summary import Summary
from fsir.dialects.schedule import DYNAMIC, KernelOp
from fsir.gpuspec import GpuSpec

WARP = 32
# Row elements a thread keeps in registers. The brief allows ~32 f32; 8 is where the
# register estimate still tracks ptxas (at 16 slots plus 16 cached γ values ptxas -v
# reports 90 registers against an estimate of 60, and the evaluator could not be
# trusted). Longer rows stay on chip by taking more threads per row (up to 1024).
MAX_REGISTER_SLOTS = 8
ROW_STEPS = (1, 2, 4, 8)  # row-blocks a block may take in turn
BLOCK_SIZES = (128, 256, 512, 1024)  # threads per block of the block schedule (a row each)


@dataclass
class RowLayout:
    """What the configurations of one fusion share: its groups and row extents."""

    reduces: list
    roots: list[SSAValue]
    root_dims: list[tuple[int, ...]]
    packed: list[SSAValue]
    rows: int | None  # rows the grid covers (None: `?`)
    lengths: list[int | None]  # each group's row length (reduced / column elements)
    subroots: list = field(default_factory=list)  # expensive sub-root candidates (stitch_codegen.SubRoot)


@dataclass(frozen=True)
class RowConfig:
    schedule: str  # thread | warp | block | interleaved
    block: int  # threads per block
    per_row: int
    composition: str
    storage: str
    interleaved: bool
    slots: int = 0
    steps: int = 1
    # the expensive elementwise ops leading groups of their own (op names), kept in
    # the threads' slots when `slots`, else as rows in shared memory
    subroots: tuple[str, ...] = ()
    vector: int = 1  # elements per slot (a vector access); slots x vector in registers

    @staticmethod
    def make(schedule: str, block: int, longest: int, layout: RowLayout, spec: GpuSpec,
             cached: bool = True, steps: int | None = None, vector: int = 1) -> "RowConfig":
        from fsir.codegen.stitch_codegen import ROW_SCHEDULES

        per_row, comp, where, interleaved = ROW_SCHEDULES[schedule](longest)
        if schedule == "block":
            per_row = block
        slots = register_slots(layout.lengths, per_row, layout.rows, vector) if cached else 0
        if steps is None:
            steps = default_steps(-(-layout.rows // (block // per_row)), spec) if slots and layout.rows else 1
        return RowConfig(schedule, block, per_row, comp, where, interleaved, slots, steps if slots else 1,
                         vector=vector if slots else 1)

    def describe(self) -> str:
        out = f"{self.schedule}/{self.block}"
        if self.slots:
            out += f"/reg{self.slots}"
        if self.steps > 1:
            out += f"/steps{self.steps}"
        if self.vector > 1:
            out += f"/v{self.vector}"
        if self.subroots:
            where = ("lanes" if self.composition == "warp" else "reg") if self.slots else "smem"
            out += f"/{where}-{'+'.join(self.subroots)}"
        return out


@dataclass(frozen=True)
class LoopConfig:
    """A loop kernel's configuration: `vector` consecutive elements per thread."""

    block: int
    vector: int = 1

    def describe(self) -> str:
        return f"loop/{self.block}" + (f"/v{self.vector}" if self.vector > 1 else "")


def register_slots(lengths: list[int | None], per_row: int, rows: int | None, vector: int = 1) -> int:
    """Keep the row on chip (issue 5 item 5): when every group's row is static and
    fits `MAX_REGISTER_SLOTS` elements per thread, each thread's share of the row is
    unrolled into registers (a value read before a reduction and used after it is
    loaded once), in slots of `vector` elements. 0: too long or dynamic; the groups
    loop over the row and re-read."""
    if not rows or any(not n for n in lengths):
        return 0
    slots = max(-(-n // (per_row * vector)) for n in lengths)  # type: ignore[operator]
    return slots if slots * vector <= MAX_REGISTER_SLOTS else 0


def default_steps(row_blocks: int, spec: GpuSpec) -> int:
    """The rules' row steps: as many as keep at least two blocks per SM."""
    return max(s for s in ROW_STEPS if s == 1 or row_blocks // s >= 2 * spec.sms)


def row_candidates(trailing: bool, longest: int, layout: RowLayout, spec: GpuSpec,
                   vectors: tuple[int, ...] = ()) -> list[RowConfig]:
    """Every configuration worth scoring. Row reductions: a thread, a warp segment or a
    block of 128–1024 threads per row; column reductions: a thread per row or
    interleaved slices (a warp or block across a column row would read it uncoalesced).
    Each with the row in registers when it fits, and without; a row in registers also
    in slots of each vector width in `vectors` (those legal for the fusion). Row steps
    follow a rule (`default_steps`) rather than the evaluator: the latency model's wave
    quantisation would trade γ/β reuse for filling a last partial wave."""
    # A block with more threads than the row has elements leaves threads idle that the
    # wave count cannot see (a partly idle GPU looks free to L = N_wave x L_warp).
    blocks = [b for b in BLOCK_SIZES if b <= longest]
    shapes = [("thread", 256), ("interleaved", 256)] if not trailing else (
        [("thread", 256), ("warp", 256)] + [("block", b) for b in blocks])
    out: list[RowConfig] = []
    for schedule, block in shapes:
        base = RowConfig.make(schedule, block, longest, layout, spec, cached=False)
        out.append(base)
        if register_slots(layout.lengths, base.per_row, layout.rows):
            out.append(RowConfig.make(schedule, block, longest, layout, spec))
        for vec in vectors if trailing and not base.interleaved else ():
            if (register_slots(layout.lengths, base.per_row, layout.rows, vec)
                    and clamped(layout.lengths, base.per_row, vec) <= clamped(layout.lengths, base.per_row, 1)):
                out.append(RowConfig.make(schedule, block, longest, layout, spec, vector=vec))
    return out


def clamped(lengths: list[int | None], per_row: int, vector: int) -> int:
    """Elements past the rows' ends that register slots of `vector` elements compute
    (and load, clamped to the row's last vector) and discard. Vector slots are offered
    only where they add none: like idle threads, such loads are a cost the latency
    model does not see (they repeat addresses other lanes read)."""
    step = per_row * vector
    return sum(-(-n // step) * step - n for n in lengths if n)


class Config(Protocol):
    """One configuration of a mapping: what `record` shows of it."""

    def describe(self) -> str: ...


C = TypeVar("C", bound=Config)


def choose(configs: Sequence[C], build: Callable[[C], KernelOp], spec: GpuSpec,
           summarize: Callable[[KernelOp, GpuSpec], Summary] | None = None, **options) -> KernelOp:
    """Build, lower and score every configuration; return the fastest kernel with the
    evaluator's figures in its `cost` (the others are discarded). Every mapping's
    kernel is made here, so each carries its estimate. A launch with a `?` grid cannot
    be counted in waves: the first configuration (the rules' choice) is kept unscored.
    Between equal estimates (both at the bandwidth floor) the one issuing fewer
    instructions wins: it leaves more issue slots to the rest of the GPU. `options` go to
    `estimate` (e.g. `ilp` for GEMMs, `gemm_configs.GemmConfig`). With `summarize`, a
    candidate is scored from its summary (`fsir/codegen/summary.py`) instead of its
    lowered gpu IR."""
    from fsir.codegen.latency import estimate, estimate_summary
    from fsir.lowering.kernels import lower_kernel

    best: tuple[tuple[float, float], KernelOp, object, C] | None = None
    for config in configs:
        k = build(config)
        grid, block = k.launch()
        if DYNAMIC in grid:
            return k
        if summarize is not None:
            est = estimate_summary(summarize(k, spec), grid, block, spec, bandwidth=True)
        else:
            est = estimate(lower_kernel(k).func, grid, block, spec, bandwidth=True, **options)
        key = (est.seconds, est.waves * est.warp_cycles)
        if best is None or key < best[0]:
            if best is not None:
                _discard(best[1])
            best = (key, k, est, config)
        else:
            _discard(k)
    assert best is not None
    _, k, est, config = best
    record(k, est, config, len(configs))
    return k


def record(k: KernelOp, est, config: Config, candidates: int) -> None:
    """The evaluator's choice and estimate, visible in the schedule IR."""
    cost = dict(k.cost.data) if k.cost is not None else {}
    cost["estimate_us"] = FloatAttr(round(est.seconds * 1e6, 3) if math.isfinite(est.seconds) else -1.0, f64)
    cost["registers"] = IntegerAttr(est.registers, i64)
    cost["occupancy"] = IntegerAttr(est.occupancy.warps_per_sm, i64)
    cost["waves"] = IntegerAttr(est.waves, i64)
    cost["candidates"] = IntegerAttr(candidates, i64)
    cost["config"] = StringAttr(config.describe())
    k.cost = DictionaryAttr(cost)


def _discard(k: KernelOp) -> None:
    """A candidate not taken: drop its uses of the function's values."""
    k.drop_all_references()
