"""The columns sketch's knobs per cluster (`lanes.N`, `vector.N`): their domains are what
each cluster may take, today's choice is the trace of the builder's own schedules
(the configuration without schedules), a value outside a domain is refused by the
space's static checks before anything is built, a schedule the builder refuses is a
`build` rejection, traces with part knobs survive the log's JSON, mutation moves one
cluster's knob, the fast mode's shortlist stays small, and random samples are forced
through stitch-codegen and lowered with the schedules they name."""

from __future__ import annotations

import random

from test_sketches import COLUMNS, H100, force_and_lower, tasks_of

from fsir.codegen.mappings.columns import ColumnsConfig
from fsir.tune.construct import shortlist
from fsir.tune.sketches import ColumnsSketch
from fsir.tune.space import (
    Checked,
    Checker,
    Knob,
    PartKnob,
    Rejected,
    Rejection,
    Trace,
    sample_valid,
)

# three clusters: a hashed sum (dim 16, bag 5), a weighted max (dim 8, bag 2), a mean
# (dim 4, bag 40); a dense copy (tests/lit: stitch-codegen/columns.mlir)
THREE = """
func.func @cols(%dense: tensor<8x3xf32>, %ids0: tensor<8x5xi32>, %t0: tensor<100x16xf32>, %ids1: tensor<8x2xi32>,
                %t1: tensor<30x8xf32>, %w1: tensor<8x2xf32>, %ids2: tensor<8x40xi32>, %t2: tensor<50x6xf32>)
                -> tensor<8x33xf32> {
  %m0 = graph.constant dense<100> : tensor<8x5xi32>
  %h0 = graph.rem %ids0, %m0 : tensor<8x5xi32>
  %e0 = graph.gather %t0, %h0 : (tensor<100x16xf32>, tensor<8x5xi32>) -> tensor<8x5x16xf32>
  %r0 = graph.reduce sum %e0 dims [1] : (tensor<8x5x16xf32>) -> tensor<8x16xf32>
  %e1 = graph.gather %t1, %ids1 : (tensor<30x8xf32>, tensor<8x2xi32>) -> tensor<8x2x8xf32>
  %wb1 = graph.broadcast %w1 dims [0, 1] : (tensor<8x2xf32>) -> tensor<8x2x8xf32>
  %we1 = graph.mul %e1, %wb1 : tensor<8x2x8xf32>
  %r1 = graph.reduce max %we1 dims [1] : (tensor<8x2x8xf32>) -> tensor<8x8xf32>
  %e2 = graph.gather %t2, %ids2 : (tensor<50x6xf32>, tensor<8x40xi32>) -> tensor<8x40x6xf32>
  %r2 = graph.reduce sum %e2 dims [1] : (tensor<8x40x6xf32>) -> tensor<8x6xf32>
  %s2 = graph.constant dense<0.025> : tensor<8x6xf32>
  %a2 = graph.mul %r2, %s2 : tensor<8x6xf32>
  %x = graph.concat %dense, %r0, %r1, %a2 dim 1 : (tensor<8x3xf32>, tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x6xf32>) -> tensor<8x33xf32>
  func.return %x : tensor<8x33xf32>
}
"""


def _space(text: str = THREE):
    (task, request, space), *_ = tasks_of(text, "columns")
    (sketch,) = space.sketches
    assert isinstance(sketch, ColumnsSketch)
    return task, request, space, sketch


def test_domains_are_what_each_cluster_may_take():
    _, _, space, sketch = _space()
    doms = {str(d.knob): d.choices for d in sketch.domains()}
    # lanes: fewer than twice the longest bag (5, 2, 40); vectors: an aligned load of
    # the table rows (dims 16, 8, 6)
    assert doms["lanes.0"] == (1, 2, 4, 8) and doms["lanes.1"] == (1, 2) and doms["lanes.2"] == (1, 2, 4, 8, 16, 32)
    assert doms["vector.0"] == (1, 2, 4) and doms["vector.1"] == (1, 2, 4) and doms["vector.2"] == (1, 2)
    assert space.size() == 6 * (4 * 3) * (2 * 3) * (6 * 2)


def test_today_is_the_builders_schedules():
    task, request, space, sketch = _space()
    (today,) = space.fixed
    assert today == ColumnsConfig(8) and task.default_config == "columns/8"
    trace = space.trace_of(today)
    assert trace is not None and space.config(trace) == today
    assert [(trace.number(PartKnob(Knob.LANES, n)), trace.number(PartKnob(Knob.VECTOR, n))) for n in range(3)] \
        == list(sketch.derived)
    # the same schedules given explicitly are today's trace, and replay to today's config
    assert space.trace_of(ColumnsConfig(8, sketch.derived)) == trace
    other = trace.with_value(PartKnob(Knob.LANES, 2), 4)
    assert space.config(other) == ColumnsConfig(8, tuple((4, 1) if n == 2 else s for n, s in enumerate(sketch.derived)))
    got = Checker(request, space).check(trace)
    assert isinstance(got, Checked) and got.description == "columns/8"


def test_illegal_values_are_refused_statically():
    _, request, space, sketch = _space()
    trace = space.trace_of(space.fixed[0])
    assert trace is not None
    checker = Checker(request, space)
    for knob, value in ((PartKnob(Knob.VECTOR, 2), 4),  # dim 6
                        (PartKnob(Knob.LANES, 1), 4),  # a bag of 2: two idle lanes
                        (PartKnob(Knob.LANES, 0), 64), (PartKnob(Knob.LANES, 0), 3)):
        got = checker.check(trace.with_value(knob, value))
        assert isinstance(got, Rejected) and got.reason == Rejection.RULE, (knob, value)
        assert f"{knob} = {value} is outside" in got.detail
    # a configuration the space cannot give (a dim-6 cluster's 4 elements per thread)
    # is the builder's to refuse: a `build` rejection, nothing lowered
    assert space.trace_of(ColumnsConfig(8, ((8, 1), (2, 1), (32, 4)))) is None
    forced = ColumnsConfig(8, ((8, 1), (2, 1), (32, 4)))
    try:
        request.build(forced)
    except Exception as err:  # noqa: BLE001 (the checker's own catch)
        assert "cluster 2 cannot take 4 elements per thread" in str(err)
    else:
        raise AssertionError("the builder took 4 elements per thread of a dim-6 column")
    assert sketch.derived[2][1] in (1, 2)


def test_part_knobs_survive_json_and_mutation_moves_one_cluster():
    _, _, space, _ = _space()
    rng = random.Random(3)
    for _ in range(50):
        trace = space.sample(rng)
        assert Trace.from_json(trace.to_json()) == trace
        assert any(name == "lanes.1" for name, _ in trace.to_json())
        mutated = space.mutate(trace, rng)
        changed = [a.knob for a, b in zip(trace.decisions, mutated.decisions) if a.value != b.value]
        assert len(changed) == 1
    for bad in ([["sketch", "columns"], ["lanes.x", 2]], [["sketch", "columns"], ["width.0", 2]]):
        try:
            Trace.from_json(bad)
        except ValueError:
            continue
        raise AssertionError(bad)


def test_the_fast_modes_shortlist_is_todays_neighbourhood():
    """recom_8's six clusters multiply into ~5 x 10^7 traces; the fast mode checks each
    rows per tile with today's schedules and every one-knob change of them."""
    _, request, space, sketch = _space(COLUMNS)
    assert space.size() > 10**7
    traces = shortlist(request, space, random.Random(0))
    assert 20 < len(traces) < 400
    today = space.trace_of(space.fixed[0])
    assert today in traces
    for t in traces:
        differs = [d for d, e in zip(t.decisions[2:], today.decisions[2:]) if d != e]
        assert len(differs) <= 1


def test_samples_lower_with_the_schedules_they_name():
    task, request, space, _ = _space()
    drawn = sample_valid(Checker(request, space), random.Random(5), 3).candidates
    assert len(drawn) == 3 and all(c.config.schedules is not None for c in drawn)
    force_and_lower(THREE, task, drawn)


def test_the_model_measurer_simulates_every_block_of_a_columns_kernel():
    """A columns kernel's blocks serve different operands (tables, bags, schedules): a
    few sampled blocks would stand for the others wrongly, so all are simulated, and
    the time is the one a sample of 4 blocks gives only by chance."""
    from fsir.tune.measure import MeasureInput, ModelBackend, TaskSource

    task, request, space, sketch = _space()
    trace = space.trace_of(space.fixed[0])
    assert trace is not None
    inp = MeasureInput(TaskSource(THREE, H100, task.key, task.kernel), trace)
    every = ModelBackend().measure_one(inp)
    assert every.error is None and every.blocks > 4
    assert every.simulated_blocks == every.blocks
    forced = ModelBackend(samples=every.blocks).measure_one(inp)
    assert forced.seconds == every.seconds
