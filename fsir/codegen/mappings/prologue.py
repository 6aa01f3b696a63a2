"""What a GEMM prologue's loads cost (`fsir/lowering/prologue.py`): the tiled kernels
load the row statistics A's elements read (a LayerNorm's mean and rstd) once per
staged tile row before the k-loop and keep them in registers, and the column vectors
(its γ and β) once per k-step when all of a thread's staged A elements share a column
and are not guarded (the element emitter then reuses the load across them). The cost
summaries (`tiled_summary`, `mma_summary`) count those loads so, not per element; the
loads of one prologue element are independent (x, γ, β at their own indices), so its
dependence chain holds one global latency, then the normalisation's ops."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace

from xdsl.ir import SSAValue

from fsir.codegen.summary import Summary, chain_cycles, element_bytes_of, element_counts, loaded_inputs
from fsir.dialects import graph
from fsir.lowering.prologue import column_inputs, statistic_inputs


@dataclass(frozen=True)
class PrologueLoads:
    """A GEMM's A-operand inputs not loaded per staged element."""

    rows: frozenset[SSAValue] = frozenset()  # before the k-loop, one per staged row
    columns: frozenset[SSAValue] = frozenset()  # once per k-step
    # computing the row statistics that are not kernel inputs (a combination of partial
    # moments, an rsqrt), per staged row, and the bytes it loads
    row_counts: Counter[str] = field(default_factory=Counter)
    row_bytes: int = 0

    @property
    def skipped(self) -> frozenset[SSAValue]:
        return self.rows | self.columns

    def staged(self, threads: int, cols: int, guarded: bool) -> PrologueLoads:
        """These loads for a tile `cols` wide staged by `threads` threads: column
        vectors are shared by a thread's elements only when it stages one column and
        its elements are not each behind their own guard."""
        return self if threads % cols == 0 and not guarded else replace(self, columns=frozenset())

    def step_counts(self) -> Counter[str]:
        return Counter({"global": len(self.columns), "alu": len(self.columns)}) if self.columns else Counter()

    def step_bytes(self) -> int:
        return sum(element_bytes_of(v) for v in self.columns)

    def chain(self, loads: Counter[str], cpi) -> float:
        """The dependence chain of one staged element whose instructions are `loads`."""
        if not self.skipped:
            return chain_cycles(loads, cpi)
        parallel = Counter(loads)
        parallel["global"] = min(parallel["global"], 1)
        return chain_cycles(parallel, cpi)

    def add_row_loads(self, s: Summary, rows: int, block_rows: int = 0) -> None:
        """A thread's loads of the row statistics for its `rows` staged A-tile rows (one
        each, with its address and guard), kept in registers across the k-loop. The
        statistics computed in the kernel (`row_counts` each) are computed for
        `block_rows` rows of the block tile per thread into shared memory, then read
        once per staged row after a barrier (`fsir.lowering.prologue.hoist_row_statistics`)."""
        if not self.rows:
            return
        computed = self._computed if self.row_counts else frozenset()
        loaded = [v for v in self.rows if v not in computed]
        loads = rows * len(loaded)
        s.counts["global"] += loads
        s.counts["alu"] += 3 * loads
        s.global_bytes += rows * sum(element_bytes_of(v) for v in loaded)
        s.registers += rows * len(self.rows)
        if computed:
            s.add(self.row_counts, block_rows)
            s.global_bytes += block_rows * self.row_bytes
            s.counts["smem"] += (block_rows + rows) * len(computed)
            s.counts["barrier"] += 1

    @property
    def _computed(self) -> frozenset[SSAValue]:
        return frozenset(v for v in self.rows if isinstance(v.owner, graph.GraphOp))


NO_PROLOGUE = PrologueLoads()


def prologue_loads(product: SSAValue, inputs: set[SSAValue]) -> PrologueLoads:
    """The loads of a dot `product`'s A operand that a tile stages per row or per k-step."""
    dot = product.owner
    if not isinstance(dot, graph.DotOp):
        return NO_PROLOGUE
    rows = statistic_inputs(dot, inputs)
    computed = [v for v in rows if v not in inputs]
    counts = element_counts(computed, inputs) if computed else Counter()
    read = {u for v in computed for u in loaded_inputs(v, inputs)}
    return PrologueLoads(frozenset(rows), frozenset(column_inputs(dot, inputs) - rows), counts,
                         sum(element_bytes_of(v) * _row_elements(v, computed) for v in read))


def _row_elements(v: SSAValue, rows: list[SSAValue]) -> int:
    """Elements of input `v` one row of the statistics reads: all of v's elements per
    row of the statistics' shape (a row's partial moments)."""
    def elements(u: SSAValue) -> int:
        return math.prod(max(d, 1) for d in graph.shape_of(u.type))

    per_row = max((elements(r) for r in rows), default=1)
    return max(1, elements(v) // per_row)
