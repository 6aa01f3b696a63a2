"""The sketches of the attention, conv and columns mappings and the tensor-core GEMM's
pipeline stages: today's choice replays from a trace, the spaces are larger than
today's lists, and a random sample of each is forced through stitch-codegen (the
kernel's recorded configuration is the forced one) and lowered to gpu IR."""

from __future__ import annotations

import random

import pytest
from tune_graphs import EXAMPLES, gemm

from fsir.dialects.schedule import KernelOp
from fsir.pipeline import PipelineOptions, lower
from fsir.tune.measure import TaskSource, compile_candidate, stitched_from_text
from fsir.tune.space import Checked, Checker, Invalid, Knob, SketchKind, sample_valid, space_for, today_splits
from fsir.tune.task import CODEGEN_STAGE, STITCH_STAGE, capture, discover, forcing

H100 = PipelineOptions(fusion="stitch", gpu="H100")
ATTENTION = (EXAMPLES / "cusync" / "attention.mlir").read_text()
CONV = (EXAMPLES / "cusync" / "conv2.mlir").read_text()
COLUMNS = (EXAMPLES / "recom" / "recom_8.mlir").read_text()


def tasks_of(text: str, mapping: str):
    stitched = stitched_from_text(text, H100)
    for task in discover(stitched, H100):
        if task.mapping == mapping:
            request = capture(stitched, H100, task.key)
            yield task, request, space_for(request, today_splits(request))


def rule_valid(space) -> list:
    """The configurations of the space's rule-valid traces (of a space too large to
    enumerate, a columns kernel's with its knobs per cluster: of its sketches' shortlists)."""
    out = []
    traces = space.traces() if space.size() <= 100_000 else (t for s in space.sketches for t in s.shortlist())
    for t in traces:
        try:
            out.append(space.config(t))
        except Invalid:
            pass
    return out


def force_and_lower(text: str, task, cands: list[Checked]) -> None:
    source = TaskSource(text, H100, task.key, task.kernel)
    for cand in cands:
        with forcing({task.key: lambda _r, c=cand.config: c}, H100):
            scheduled = lower(stitched_from_text(text, H100), H100, after=STITCH_STAGE, until=CODEGEN_STAGE)
        configs = [op.cost.data["config"].data for op in scheduled.walk() if isinstance(op, KernelOp) and op.cost]
        assert cand.description in configs
        lowered = compile_candidate(source, cand.config)
        assert any(op.name == "gpu.func" for op in lowered.walk())


@pytest.mark.parametrize("text,mapping,kind,least", [(ATTENTION, "attention", SketchKind.ATTENTION, 20),
                                                     (CONV, "conv", SketchKind.CONV, 100),
                                                     (COLUMNS, "columns", SketchKind.COLUMNS, 3)])
def test_mapping_sketch_holds_today_and_its_samples_lower(text, mapping, kind, least):
    (task, request, space), *_ = tasks_of(text, mapping)
    assert [s.kind for s in space.sketches] == [kind]
    valid = rule_valid(space)
    assert len(set(valid)) >= max(least, len(space.fixed) + 1)
    for config in space.fixed:
        trace = space.trace_of(config)
        assert trace is not None and space.config(trace) == config
    drawn = sample_valid(Checker(request, space), random.Random(2), 4).candidates
    assert drawn
    force_and_lower(text, task, drawn[:4])


def test_attention_sketch_spans_the_thread_and_warp_schedules():
    (_, _, space), *_ = tasks_of(ATTENTION, "attention")
    valid = rule_valid(space)
    assert {c.warp_rows == 0 for c in valid} == {True, False}
    assert {c.block_k for c in valid if c.warp_rows == 0} >= {16, 32}


def test_gemm_pipeline_stages_are_a_knob_and_lower():
    text = gemm(256, 256, 256, "f16")
    ((task, request, space),) = tasks_of(text, "gemm")
    mma = space.trace_of(next(c for c in space.fixed if c.split == 1))
    assert mma is not None and mma.get(Knob.STAGES) == 0  # today's: as many as fit
    checker = Checker(request, space)
    staged = []
    for stages in (2, 3, 4):
        try:
            got = checker.check(mma.with_value(Knob.STAGES, stages))
        except Invalid:
            continue
        if isinstance(got, Checked):
            assert got.config.stages == stages and got.description.endswith(f"/p{stages}")
            staged.append(got)
    assert len(staged) >= 2  # the default depth itself is refused as a duplicate
    force_and_lower(text, task, staged)
