"""The explorer's work grows linearly with the graph (issue: compile speed).

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

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from explorer_speed import build  # noqa: E402

SMALL, LARGE = 1000, 4000
SLACK = 1.125  # 4.5x for 4x the ops


def _steps_per_op(kind: str, n: int) -> tuple[int, int]:
    f = build(kind, n).ops.first
    assert isinstance(f, func.FuncOp)
    block = f.body.block
    ops = sum(1 for _ in block.ops) - 1
    ex = explore(block, ExplorerOptions(evaluator="simple"))
    return ops, ex.work.steps


@pytest.mark.parametrize("kind", ["dense", "mixed", "wide"])
def test_explorer_work_grows_linearly(kind: str):
    small_ops, small = _steps_per_op(kind, SMALL)
    large_ops, large = _steps_per_op(kind, LARGE)
    assert small > small_ops  # every op is visited at least once
    growth = (large / large_ops) / (small / small_ops)
    assert growth <= SLACK, (f"{kind}: explorer steps per op grew {growth:.2f}x from {small_ops} to {large_ops} "
                             f"ops ({small} -> {large} steps)")
