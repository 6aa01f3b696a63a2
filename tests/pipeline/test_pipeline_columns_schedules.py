"""A columns kernel's lanes and vector width per cluster (`ColumnsConfig.schedules`, the
tuner's knobs): on a few column layouts — columns of three structures beside a dense
copy, three columns sharing one code body, ragged columns beside a fixed one — every
legal (lanes, vector) of every cluster (lanes 1 to 32, idle ones past the bag
included; every vector width an aligned load of the cluster's table rows allows)
computes on the simulator what the reference interpreter does and assembles (ptxas,
sm_80 and sm_90); the kernel carries the forced schedules; an illegal one is refused
by the builder, naming the concat."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fsir.analysis.columns import column_sets
from fsir.codegen.mappings.columns import LANES, ColumnsConfig, cluster_columns, schedule_problem, vector_widths
from fsir.dialects.schedule import ColumnsParamsAttr, KernelOp
from fsir.errors import UserError
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.testing.pipeline import check
from fsir.tune.task import config_hook

# three structures: a hashed sum (dim 8, bag 3), a weighted max (dim 4, bag 5), a mean
# (dim 6, bag 2: vectors 1 and 2); a dense copy first; 5 rows (a partial last tile)
DISTINCT = """
func.func @f(%dense: tensor<5x3xf32>, %ids0: tensor<5x3xi32>, %t0: tensor<11x8xf32>, %ids1: tensor<5x5xi32>,
             %t1: tensor<9x4xf32>, %w1: tensor<5x5xf32>, %ids2: tensor<5x2xi32>, %t2: tensor<7x6xf32>)
             -> tensor<5x21xf32> {
  %m0 = graph.constant dense<11> : tensor<5x3xi32>
  %h0 = graph.rem %ids0, %m0 : tensor<5x3xi32>
  %e0 = graph.gather %t0, %h0 : (tensor<11x8xf32>, tensor<5x3xi32>) -> tensor<5x3x8xf32>
  %r0 = graph.reduce sum %e0 dims [1] : (tensor<5x3x8xf32>) -> tensor<5x8xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<9x4xf32>, tensor<5x5xi32>) -> tensor<5x5x4xf32>
  %wb1 = graph.broadcast %w1 dims [0, 1] : (tensor<5x5xf32>) -> tensor<5x5x4xf32>
  %we1 = graph.mul %e1, %wb1 : tensor<5x5x4xf32>
  %r1 = graph.reduce max %we1 dims [1] : (tensor<5x5x4xf32>) -> tensor<5x4xf32>
  %e2 = graph.gather %t2, %ids2 : (tensor<7x6xf32>, tensor<5x2xi32>) -> tensor<5x2x6xf32>
  %r2 = graph.reduce sum %e2 dims [1] : (tensor<5x2x6xf32>) -> tensor<5x6xf32>
  %s2 = graph.constant dense<0.5> : tensor<5x6xf32>
  %a2 = graph.mul %r2, %s2 : tensor<5x6xf32>
  %x = graph.concat %dense, %r0, %r1, %a2 dim 1 : (tensor<5x3xf32>, tensor<5x8xf32>, tensor<5x4xf32>, tensor<5x6xf32>) -> tensor<5x21xf32>
  func.return %x : tensor<5x21xf32>
}
"""

# one structure (a sum of dim 8) with bags of 3, 9 and 2 and tables of 13, 6 and 20
# rows: one code body reading each column's sizes from its row of the table
SHARED = """
func.func @f(%ids0: tensor<6x3xi32>, %t0: tensor<13x8xf32>, %ids1: tensor<6x9xi32>, %t1: tensor<6x8xf32>,
             %ids2: tensor<6x2xi32>, %t2: tensor<20x8xf32>, %dense: tensor<6x2xf32>) -> tensor<6x26xf32> {
  %e0 = graph.gather %t0, %ids0 : (tensor<13x8xf32>, tensor<6x3xi32>) -> tensor<6x3x8xf32>
  %r0 = graph.reduce sum %e0 dims [1] : (tensor<6x3x8xf32>) -> tensor<6x8xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<6x8xf32>, tensor<6x9xi32>) -> tensor<6x9x8xf32>
  %r1 = graph.reduce sum %e1 dims [1] : (tensor<6x9x8xf32>) -> tensor<6x8xf32>
  %e2 = graph.gather %t2, %ids2 : (tensor<20x8xf32>, tensor<6x2xi32>) -> tensor<6x2x8xf32>
  %r2 = graph.reduce sum %e2 dims [1] : (tensor<6x2x8xf32>) -> tensor<6x8xf32>
  %x = graph.concat %r0, %r1, %r2, %dense dim 1 : (tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x2xf32>) -> tensor<6x26xf32>
  func.return %x : tensor<6x26xf32>
}
"""

# a ragged max (EmbeddingBag over offsets: 14 ids of 4 examples, dim 8) and a fixed sum
# (dim 4, bag 6)
RAGGED = """
func.func @f(%ids0: tensor<14xi32>, %off0: tensor<4xi32>, %t0: tensor<10x8xf32>, %ids1: tensor<4x6xi32>,
             %t1: tensor<12x4xf32>) -> tensor<4x12xf32> {
  %e0 = graph.gather %t0, %ids0 : (tensor<10x8xf32>, tensor<14xi32>) -> tensor<14x8xf32>
  %r0 = graph.segment_reduce max %e0, %off0 : (tensor<14x8xf32>, tensor<4xi32>) -> tensor<4x8xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<12x4xf32>, tensor<4x6xi32>) -> tensor<4x6x4xf32>
  %r1 = graph.reduce sum %e1 dims [1] : (tensor<4x6x4xf32>) -> tensor<4x4xf32>
  %x = graph.concat %r0, %r1 dim 1 : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x12xf32>
  func.return %x : tensor<4x12xf32>
}
"""

STITCH = PipelineOptions(fusion="stitch")
ROWS = (1, 2, 4, 8)


def _inputs(text: str) -> list[np.ndarray]:
    """Ids from -3 to twice a table's rows (the gather clamps), a ragged column's
    offsets non-decreasing with an empty bag, floats standard normal."""
    f = next(iter(parse_module(text, "<test>").ops))
    rng = np.random.default_rng(7)
    out = []
    for arg in f.body.block.args:
        shape = tuple(arg.type.get_shape())
        name = arg.name_hint or ""
        if name.startswith("ids"):
            out.append(rng.integers(-3, 40, shape).astype(np.int32))
        elif name.startswith("off"):
            out.append(np.array([0, 5, 5, 9], np.int32))  # bags of 5, 0, 4 and 5 ids
        else:
            out.append(rng.standard_normal(shape).astype(np.float32))
    return out


def _clusters(text: str):
    f = next(iter(parse_module(text, "<test>").ops))
    (s,) = column_sets(f.body.block.ops)
    return cluster_columns(s)


def _legal(members) -> list[tuple[int, int]]:
    return [(n, v) for n in LANES for v in vector_widths(members[0])]


def _covering(clusters) -> list[tuple[int, tuple[tuple[int, int], ...]]]:
    """Configurations covering every legal (lanes, vector) of every cluster: the k-th
    takes each cluster's k-th (cycling) and rows per tile in turn."""
    legal = [_legal(m) for m in clusters]
    n = max(len(choices) for choices in legal)
    return [(ROWS[k % len(ROWS)], tuple(choices[k % len(choices)] for choices in legal)) for k in range(n)]


def _forced(config: ColumnsConfig):
    return config_hook(lambda r: [config] if str(r.mapping.name) == "columns" else r.configs)


@pytest.mark.parametrize("text,clusters", [(DISTINCT, 3), (SHARED, 1), (RAGGED, 2)], ids=["distinct", "shared", "ragged"])
def test_every_legal_schedule_matches_the_reference(text, clusters):
    found = _clusters(text)
    assert len(found) == clusters
    inputs = _inputs(text)
    configs = _covering(found)
    assert {(c, s) for _, sch in configs for c, s in enumerate(sch)} == \
        {(c, s) for c, m in enumerate(found) for s in _legal(m)}
    for rows, schedules in configs:
        with _forced(ColumnsConfig(rows, schedules)):
            lowered = check(text, inputs=inputs, fusion="stitch")  # (and ptxas assembles it)
        assert any(op.name == "gpu.func" for op in lowered.walk())


def test_the_kernel_carries_the_forced_schedules():
    found = _clusters(DISTINCT)
    schedules = ((16, 4), (2, 2), (32, 2))
    with _forced(ColumnsConfig(4, schedules)):
        module = lower(parse_module(DISTINCT, "<test>"), STITCH, until="stitch-codegen")
    (k,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    p = k.params
    assert isinstance(p, ColumnsParamsAttr)
    assert p.rows_per_tile == 4
    # the dense copy (operand 0) keeps one lane and one element
    assert list(zip(p.lanes, p.vectors)) == [(1, 1), *schedules]
    assert k.cost is not None and k.cost.data["config"].data == "columns/4/l16v4,l2v2,l32v2"
    assert len(found) == len(schedules)


@pytest.mark.parametrize("schedules,message", [
    (((4, 1), (2, 1), (1, 4)), "cluster 2 cannot take 4 elements per thread (its dim, its tables' rows and element "
                               "types allow [1, 2])"),
    (((3, 1), (2, 1), (1, 1)), "cluster 0 cannot take 3 lanes (a power of two up to 32)"),
    (((64, 1), (2, 1), (1, 1)), "cluster 0 cannot take 64 lanes"),
    (((4, 1), (2, 1)), "the configuration gives 2 clusters their lanes and vectors, the columns form 3"),
])
def test_an_illegal_schedule_is_refused(schedules, message):
    with _forced(ColumnsConfig(4, schedules)), pytest.raises(UserError) as err:
        lower(parse_module(DISTINCT, "<test>"), STITCH, until="stitch-codegen")
    assert err.value.message.startswith("'graph.concat' op cannot be generated by the columns mapping: ")
    assert message in err.value.message
    concat_line = next(n for n, line in enumerate(DISTINCT.splitlines(), 1) if "graph.concat" in line)
    assert err.value.loc is not None and err.value.loc.line == concat_line


def test_schedule_problem_agrees_with_the_legal_set():
    (members,) = _clusters(SHARED)
    legal = set(_legal(members))
    for schedule in itertools.product((1, 2, 3, 4, 8, 16, 32, 64), (1, 2, 3, 4, 8)):
        assert (schedule_problem(members, schedule) is None) == (schedule in legal), schedule
