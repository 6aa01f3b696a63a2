"""The row mapping's configurations (FusionStitching §4.2-4.3): the row schedules
(`ROW_SCHEDULES`: a thread, a warp segment, a block or interleaved slices per row), the
rules that choose among them where the evaluator does not (`default_row_schedule`,
`default_steps`), and every configuration worth scoring (`row_candidates`): block sizes,
rows kept in register slots of each vector width, row steps. The mapping itself
(`fsir/codegen/mappings/row.py`) builds and lowers the chosen one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from fsir.codegen.mappings.base import BLOCK
from fsir.codegen.options import RowSchedule
from fsir.dialects.schedule import WARP, Composition, Storage
from fsir.gpuspec import GpuSpec

WARP_ROW_LIMIT = 512  # rows up to this length get one warp (BladeDISC's threshold)
COLUMN_SLICES = 8  # threads per row of a column reduction with few rows
COLUMN_SPLIT_MIN = 64  # ... when its rows are at least this long
COLUMN_THREAD_ROWS = 8192  # with this many rows a thread per row already fills the GPU
SUBROOT_MODES = ("auto", "all", "none")

# Row elements a thread keeps in registers: 8 is where the register estimate still tracks
# ptxas (at 16 slots plus 16 cached γ values ptxas -v reports 90 registers against an
# estimate of 60, and the evaluator could not be trusted). Longer rows stay on chip by
# taking more threads per row (up to 1024).
MAX_REGISTER_SLOTS = 8
ROW_STEPS = (1, 2, 4, 8)  # row-blocks a block may take in turn
BLOCK_SIZES = (128, 256, 512, 1024)  # threads per block of the block schedule (a row each)


@dataclass
class SubRoot:
    """An expensive elementwise op that may lead a group of its own (§4.1): its value,
    which of its dims are the rows, its row length (None: `?`), the groups reading it
    and whether each reads it at its own columns (so registers can hold it)."""

    value: SSAValue
    row_dims: tuple[int, ...]
    length: int | None
    readers: list[tuple]
    in_registers: bool

    @property
    def op(self) -> Operation:
        op = self.value.owner
        assert isinstance(op, Operation)  # an elementwise op's result
        return op


@dataclass
class RowLayout:
    """What the configurations of one fusion share: its groups and row extents."""

    reduces: list
    roots: list[SSAValue]
    root_dims: list[tuple[int, ...]]
    packed: list[SSAValue]
    rows: int | None  # rows the grid covers (None: `?`)
    lengths: list[int | None]  # each group's row length (reduced / column elements)
    subroots: list[SubRoot] = field(default_factory=list)  # expensive sub-root candidates


@dataclass(frozen=True)
class RowConfig:
    schedule: RowSchedule  # never AUTO: a configuration is one schedule
    block: int  # threads per block
    per_row: int
    composition: Composition
    storage: Storage
    interleaved: bool
    slots: int = 0
    steps: int = 1
    # the expensive elementwise ops leading groups of their own (op names), kept in
    # the threads' slots when `slots`, else as rows in shared memory
    subroots: tuple[str, ...] = ()
    vector: int = 1  # elements per slot (a vector access); slots x vector in registers

    @staticmethod
    def make(schedule: str, block: int, longest: int, layout: RowLayout, spec: GpuSpec,
             cached: bool = True, steps: int | None = None, vector: int = 1) -> RowConfig:
        schedule = RowSchedule(schedule)
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
            where = ("lanes" if self.composition == Composition.WARP else "reg") if self.slots else "smem"
            out += f"/{where}-{'+'.join(self.subroots)}"
        return out


def register_slots(lengths: list[int | None], per_row: int, rows: int | None, vector: int = 1) -> int:
    """Keep the row on chip: when every group's row is static and
    fits `MAX_REGISTER_SLOTS` elements per thread, each thread's share of the row is
    unrolled into registers (a value read before a reduction and used after it is
    loaded once), in slots of `vector` elements. 0: too long or dynamic; the groups
    loop over the row and re-read."""
    if not rows or any(not n for n in lengths):
        return 0
    slots = max(-(-n // (per_row * vector)) for n in lengths if n)
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
    # Register slots on a block past the row's end leave lanes that load a clamped
    # element and discard it (768 columns on 512 threads: a quarter of the loads), a
    # cost the latency model does not see either: of the block sizes, a register-cached
    # configuration is offered only at those that clamp the fewest elements for its
    # vector width (768: 128 and 256 threads, not 512).
    least = {vec: min((clamped(layout.lengths, b, vec) for b in blocks
                       if register_slots(layout.lengths, b, layout.rows, vec)), default=0)
             for vec in (1, *vectors)}
    out: list[RowConfig] = []
    for name, block in shapes:
        base = RowConfig.make(name, block, longest, layout, spec, cached=False)
        out.append(base)

        def tight(vec: int, name=name, block=block) -> bool:
            return name != "block" or clamped(layout.lengths, block, vec) <= least[vec]

        if register_slots(layout.lengths, base.per_row, layout.rows) and tight(1):
            out.append(RowConfig.make(name, block, longest, layout, spec))
        for vec in vectors if trailing and not base.interleaved else ():
            if (register_slots(layout.lengths, base.per_row, layout.rows, vec) and tight(vec)
                    and clamped(layout.lengths, base.per_row, vec) <= clamped(layout.lengths, base.per_row, 1)):
                out.append(RowConfig.make(name, block, longest, layout, spec, vector=vec))
    return out


def clamped(lengths: list[int | None], per_row: int, vector: int) -> int:
    """Elements past the rows' ends that register slots of `vector` elements compute
    (and load, clamped to the row's last vector) and discard. Vector slots are offered
    only where they add none: like idle threads, such loads are a cost the latency
    model does not see (they repeat addresses other lanes read)."""
    step = per_row * vector
    return sum(-(-n // step) * step - n for n in lengths if n)


def _segment(longest: int) -> int:
    """Rows shorter than a warp get the smallest power-of-two segment of lanes that
    covers them, so short rows do not idle most of a warp."""
    return min(WARP, max(2, 1 << (max(longest, 2) - 1).bit_length()))


# Every row schedule is correct for any fusion the row mapping accepts (any dims); they
# differ in speed. name -> longest row -> (threads per row, composition, storage, interleaved)
ROW_SCHEDULES = {
    RowSchedule.THREAD: lambda longest: (1, Composition.THREAD, Storage.REG, False),
    RowSchedule.WARP: lambda longest: (_segment(longest), Composition.WARP, Storage.LANES, False),
    RowSchedule.BLOCK: lambda longest: (BLOCK, Composition.BLOCK, Storage.SHARED, False),
    # COLUMN_SLICES threads per row, the rows of a block interleaved (consecutive threads
    # take consecutive rows, so column loads stay coalesced); slices meet in shared memory
    RowSchedule.INTERLEAVED: lambda longest: (COLUMN_SLICES, Composition.BLOCK, Storage.SHARED, True),
}


def default_row_schedule(trailing: bool, longest: int, rows: int | None) -> str:
    """The rules' schedule (for forced options and `?` row counts, where the evaluator
    does not choose): column reductions get a thread per row, or interleaved slices when their rows are
    few and long; row reductions a warp (segment) up to 512 elements, else a block."""
    if not trailing:
        if longest >= COLUMN_SPLIT_MIN and (rows is None or rows < COLUMN_THREAD_ROWS):
            return "interleaved"
        return "thread"
    if longest <= 1:
        return "thread"
    return "warp" if longest <= WARP_ROW_LIMIT else "block"
