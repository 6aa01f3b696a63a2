"""The search space: today's configurations inside it, its size, replay, mutation and
hashing, static checks, and that sampled candidates lower."""

from __future__ import annotations

import random

import pytest
from tune_graphs import column_sum, elementwise, gemm, layernorm

from fsir.codegen.mappings.gemm import GemmConfig
from fsir.dialects.schedule import KernelOp
from fsir.pipeline import PipelineOptions, lower
from fsir.tune.measure import TaskSource, compile_candidate, stitched_from_text
from fsir.tune.space import (
    Checked,
    Checker,
    Decision,
    Invalid,
    Knob,
    SketchKind,
    Trace,
    sample_valid,
    space_for,
    today_splits,
)
from fsir.tune.task import CODEGEN_STAGE, STITCH_STAGE, capture, discover, forcing

H100 = PipelineOptions(fusion="stitch", gpu="H100")


def task_of(text: str, options: PipelineOptions = H100):
    stitched = stitched_from_text(text, options)
    (task,) = discover(stitched, options)
    request = capture(stitched, options, task.key)
    return task, request, space_for(request, today_splits(request))


def rule_valid(space) -> int:
    n = 0
    for t in space.traces():
        try:
            space.config(t)
            n += 1
        except Invalid:
            pass
    return n


def test_gemm_1024_f16_space_has_today_and_ten_thousand_points():
    task, request, space = task_of(gemm(1024, 1024, 1024, "f16"))
    assert task.mapping == "gemm"
    assert {s.kind for s in space.sketches} == {SketchKind.GEMM_FMA, SketchKind.GEMM_MMA}
    # today's lists: the tensor-core candidates and their split-K variants
    assert len(space.fixed) == task.default_candidates
    assert any(c.split > 1 for c in space.fixed)
    for config in space.fixed:
        trace = space.trace_of(config)
        assert trace is not None, config
        assert space.config(trace) == config
    assert task.default_config in {c.describe() for c in space.fixed}
    assert rule_valid(space) >= 10_000


@pytest.mark.parametrize("text,mapping,kind", [(layernorm(), "row", SketchKind.ROW),
                                               (column_sum(), "row", SketchKind.ROW),
                                               (elementwise(), "loop", SketchKind.LOOP),
                                               (gemm(96, 64, 128, "f32"), "gemm", SketchKind.GEMM_FMA)])
def test_today_lies_in_the_space(text, mapping, kind):
    task, _, space = task_of(text)
    assert task.mapping == mapping
    assert [s.kind for s in space.sketches] == [kind]
    assert space.fixed
    for config in space.fixed:
        trace = space.trace_of(config)
        assert trace is not None and space.config(trace) == config, config


def test_traces_replay_mutate_and_hash_deterministically():
    _, _, space = task_of(gemm(1024, 1024, 1024, "f16"))
    t = space.sample(random.Random(3))
    assert space.sample(random.Random(3)) == t
    assert Trace.from_json(t.to_json()) == t
    assert Trace.from_json(t.to_json()).digest() == t.digest()
    assert len({space.sample(random.Random(s)).digest() for s in range(50)}) > 40
    # a tile mutation keeps the block tile: threads x micro (or warps x warp tile)
    fma = space.trace_of(GemmConfig(64, 64, 16, 4, 4))
    assert fma is not None
    rng = random.Random(0)
    kept = 0
    for _ in range(200):
        m = space.mutate(fma, rng)
        assert m != fma
        assert sum(a != b for a, b in zip(m.decisions, fma.decisions)) <= 2
        c0 = space.config(fma)
        try:
            c = space.config(m)
        except Invalid:
            continue
        kept += (c.bm, c.bn) == (c0.bm, c0.bn)
    assert kept > 20
    assert [space.mutate(fma, random.Random(9)) for _ in range(3)] == [space.mutate(fma, random.Random(9))] * 3


def test_invalid_traces_are_refused():
    _, request, space = task_of(gemm(1024, 1024, 1024, "f16"))
    good = space.trace_of(space.fixed[0])
    assert good is not None
    with pytest.raises(Invalid):
        space.config(good.with_value(Knob.K_TILE, 12))  # outside the domain
    with pytest.raises(Invalid):
        space.config(Trace((Decision(Knob.SKETCH, "row"),)))
    checker = Checker(request, space)
    # 8 warps of 64 x 64 along m and n: 2048 threads
    huge = good.with_value(Knob.M_THREADS, 8).with_value(Knob.N_THREADS, 8)
    assert not isinstance(checker.check(huge), Checked)


@pytest.mark.parametrize("text", [gemm(128, 96, 64, "f16"), gemm(64, 64, 128, "f32"), layernorm(), column_sum(),
                                  elementwise()])
def test_sampled_candidates_lower_and_are_what_was_asked(text):
    task, request, space = task_of(text)
    checker = Checker(request, space)
    drawn = sample_valid(checker, random.Random(1), 10)
    got = drawn.candidates[:10]
    assert got and drawn.draws >= len(got)
    print(f"{task.mapping}: {drawn.rejected} of {drawn.draws} drawn candidates rejected statically")
    source = TaskSource(text, H100, task.key, task.kernel)
    for cand in got:
        with forcing({task.key: lambda _r, c=cand.config: c}, H100):
            scheduled = lower(stitched_from_text(text, H100), H100, after=STITCH_STAGE, until=CODEGEN_STAGE)
        (kernel,) = [op for op in scheduled.walk() if isinstance(op, KernelOp)]
        assert kernel.cost is not None and kernel.cost.data["config"].data == cand.description
        lowered = compile_candidate(source, cand.config)  # schedule-to-gpu takes it
        assert any(op.name == "gpu.func" for op in lowered.walk())


def test_rejection_rate_of_the_gemm_space_is_reported():
    _, request, space = task_of(gemm(1024, 1024, 1024, "f16"))
    checker = Checker(request, space)
    drawn = sample_valid(checker, random.Random(0), 40)
    assert len(drawn.candidates) == 40 == len({c.trace for c in drawn.candidates})
    assert drawn.rejected == sum(checker.rejections.values()) == drawn.draws - 40
    assert 0 <= drawn.rejected / drawn.draws < 0.5
    # annotations breaking the space's rules are redrawn before any kernel is built
    assert space.draws["drawn"] - space.draws["broke_rules"] == drawn.draws
