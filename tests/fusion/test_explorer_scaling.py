"""The explorer's work grows linearly with the graph.

Counted, not timed: `Exploration.work.steps` (vertices visited by every candidate
generation, patterns scored, vertices of every plan built) on the layered synthetic
graphs of benchmarks/explorer_speed.py at about 1k and 4k ops. A search that redoes a
whole-graph pass per layer (a plan per GEMM prologue, say) grows with the square.
"""

import sys
from pathlib import Path

import pytest
from xdsl.dialects import func

from fsir.fusion.explorer import ExplorerOptions, explore
from fsir.fusion.patterns import Work

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from explorer_speed import build  # noqa: E402

SMALL, LARGE = 1000, 4000
SLACK = 1.125  # 4.5x for 4x the ops


def _work(kind: str, n: int) -> tuple[int, Work]:
    f = build(kind, n).ops.first
    assert isinstance(f, func.FuncOp)
    block = f.body.block
    ops = sum(1 for _ in block.ops) - 1
    ex = explore(block, ExplorerOptions(evaluator="simple"))
    return ops, ex.work


def _steps_per_op(kind: str, n: int) -> tuple[int, int]:
    ops, work = _work(kind, n)
    return ops, work.steps


@pytest.mark.parametrize("kind", ["dense", "mixed", "wide"])
def test_explorer_work_grows_linearly(kind: str):
    small_ops, small = _steps_per_op(kind, SMALL)
    large_ops, large = _steps_per_op(kind, LARGE)
    assert small > small_ops  # every op is visited at least once
    growth = (large / large_ops) / (small / small_ops)
    assert growth <= SLACK, (f"{kind}: explorer steps per op grew {growth:.2f}x from {small_ops} to {large_ops} "
                             f"ops ({small} -> {large} steps)")


def test_patterns_grown_by_a_reduction_are_not_walked_whole():
    """Softmax rows one after another: every pattern grown by a reduction is told by the
    row mapping's incremental check (fsir/codegen/row_growth.py), not by walking it;
    walking each (up to max-ops ops) costs about 50 ops per op of the graph."""
    ops, work = _work("reduce", SMALL)
    assert work.checked <= 2 * ops, f"full capability checks walked {work.checked} ops for {ops} ops"
