"""The columns summary's cost of blocks (`fsir/codegen/mappings/columns_cost.py`): blocks
summed by difference arrays equal the warps summed one by one, and the prior of a
columns kernel follows its heaviest block: a long bag walked by one lane per (row,
element) costs more than by eight, and a cluster's vector width changes its sectors."""

from __future__ import annotations

import random

from test_columns_space import THREE
from test_sketches import tasks_of

from fsir.codegen.mappings.columns import ColumnsConfig
from fsir.codegen.mappings.columns_cost import OperandWarps, WarpCost, block_costs
from fsir.tune.space import Checked, Checker


def _naive(operands: list[OperandWarps], per_block: int) -> list[WarpCost]:
    nblocks = -(-max(o.start + o.count for o in operands) // per_block)
    blocks = [WarpCost() for _ in range(nblocks)]
    for o in operands:
        for w in range(o.start, o.start + o.count):
            last = w == o.start + o.count - 1 and o.threads % 32
            blocks[w // per_block].add(o.last if last else o.full)
    return blocks


def test_block_costs_sum_the_warps_of_each_block():
    rng = random.Random(3)
    for _ in range(50):
        operands, start = [], 0
        for _ in range(rng.randint(1, 6)):
            count = rng.randint(0, 30)
            threads = rng.choice([count * 32, max(0, count * 32 - rng.randint(1, 31))])
            full = WarpCost(rng.randint(1, 100), {"int": rng.randint(1, 999)}, rng.randint(0, 50))
            last = WarpCost(rng.randint(1, 100), {"lsu": rng.randint(1, 999)}, rng.randint(0, 50))
            operands.append(OperandWarps(start, count, threads, full, last))
            start += count
        if start == 0:
            continue
        got = block_costs(operands, 8, 32)
        want = _naive(operands, 8)
        assert [(round(b.issued), {k: round(v) for k, v in b.lanes.items() if round(v)}, round(b.sectors))
                for b in got] == \
               [(round(b.issued), {k: round(v) for k, v in b.lanes.items() if round(v)}, round(b.sectors))
                for b in want]


def _prior(schedules) -> float:
    (_, request, space), *_ = tasks_of(THREE, "columns")
    trace = space.trace_of(ColumnsConfig(8, schedules))
    assert trace is not None
    got = Checker(request, space).check(trace)
    assert isinstance(got, Checked)
    return got.prior_seconds


def test_the_prior_sees_the_long_bags_lanes_and_the_vectors():
    # clusters: a hashed sum (dim 16, bag 5), a weighted max (dim 8, bag 2), a mean (dim 6, bag 40)
    one_lane = _prior(((1, 1), (1, 1), (1, 1)))
    eight = _prior(((1, 1), (1, 1), (8, 1)))
    assert eight < one_lane  # the bag of 40: 40 serial steps against 5
    assert _prior(((1, 4), (1, 1), (8, 1))) != eight  # a vector of 4 of the dim-16 column
