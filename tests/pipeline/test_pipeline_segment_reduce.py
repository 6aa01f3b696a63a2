"""graph.segment_reduce (ragged bags by offsets) end to end: graph → PTX → simulator
against the numpy reference, with empty segments, offsets outside the data, f16 and
integer data, several run-time sizes with one compiled module, and the reference
against a plain loop over the documented semantics (EmbeddingBag with offsets)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import fsir
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.reference import run
from fsir.testing.pipeline import check

KINDS = ["sum", "mean", "max", "min"]


def bag_text(kind: str, t: str = "f32", rows: str = "?", segments: str = "?", dim: int = 16) -> str:
    d, o = f"tensor<{rows}x{dim}x{t}>", f"tensor<{segments}xi32>"
    r = f"tensor<{segments}x{dim}x{t}>"
    return f"""
func.func @bag(%data: {d}, %offsets: {o}) -> {r} {{
  %b = graph.segment_reduce {kind} %data, %offsets : ({d}, {o}) -> {r}
  func.return %b : {r}
}}
"""


EMBEDDING_BAG = """
func.func @embedding_bag(%t: tensor<1000x32xf32>, %ids: tensor<?xi32>, %offsets: tensor<?xi32>) -> tensor<?x32xf32> {
  %rows = graph.gather %t, %ids : (tensor<1000x32xf32>, tensor<?xi32>) -> tensor<?x32xf32>
  %b = graph.segment_reduce KIND %rows, %offsets : (tensor<?x32xf32>, tensor<?xi32>) -> tensor<?x32xf32>
  func.return %b : tensor<?x32xf32>
}
"""


STATIC_BAG = """
func.func @static_bag(%t: tensor<1000x32xf32>, %ids: tensor<8192xi32>, %offsets: tensor<32xi32>) -> tensor<32x32xf32> {
  %rows = graph.gather %t, %ids : (tensor<1000x32xf32>, tensor<8192xi32>) -> tensor<8192x32xf32>
  %b = graph.segment_reduce sum %rows, %offsets : (tensor<8192x32xf32>, tensor<32xi32>) -> tensor<32x32xf32>
  func.return %b : tensor<32x32xf32>
}
"""


def loop_segments(kind, data, offsets):
    """EmbeddingBag's semantics written out: clamped bounds, 0 for an empty bag."""
    n = data.shape[0]
    out = np.zeros((len(offsets), *data.shape[1:]), dtype=np.float64)
    for s in range(len(offsets)):
        lo = min(max(int(offsets[s]), 0), n)
        hi = min(max(int(offsets[s + 1]), 0), n) if s + 1 < len(offsets) else n
        if hi <= lo:
            continue
        rows = data[lo:hi].astype(np.float64)
        out[s] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0), "min": rows.min(0)}[kind]
    return out


def ragged(rng, segments: int, max_len: int = 6):
    lengths = rng.integers(0, max_len, segments)
    lengths[::3] = 0  # every third bag empty
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int32)
    return offsets, int(lengths.sum())


@pytest.mark.parametrize("kind", KINDS)
def test_reference_is_the_loop(kind):
    rng = np.random.default_rng(0)
    offsets = np.array([0, 2, 2, 7, -3, 20, 4], np.int32)  # empty, backwards, outside
    data = rng.standard_normal((9, 3)).astype(np.float32)
    (got,) = run(parse_module(bag_text(kind, dim=3)), [data, offsets])
    np.testing.assert_allclose(got, loop_segments(kind, data, offsets), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_kinds_with_empty_and_out_of_range_segments(kind):
    rng = np.random.default_rng(1)
    offsets, n = ragged(rng, 23)
    offsets[5], offsets[9] = -4, n + 7  # clamped into [0, n]
    data = rng.standard_normal((n, 16)).astype(np.float32)
    check(bag_text(kind), inputs=[data, offsets], fusion="stitch")


@pytest.mark.parametrize("t", ["f16", "i32"])
def test_element_types(t):
    rng = np.random.default_rng(2)
    offsets, n = ragged(rng, 17)
    if t == "i32":
        data = rng.integers(-50, 50, (n, 8)).astype(np.int32)
    else:
        data = rng.standard_normal((n, 8)).astype(np.float16)
    for kind in ("sum", "max") if t == "i32" else ("sum", "mean"):
        check(bag_text(kind, t, dim=8), inputs=[data, offsets], fusion="stitch")


@pytest.mark.parametrize("kind", ["sum", "mean", "max"])
def test_embedding_bag_is_one_kernel_for_every_batch(kind):
    """Gather and bag reduction stitch into one kernel; one compiled module runs every
    batch size, including all-empty bags over no ids at all."""
    exe = fsir.compile(EMBEDDING_BAG.replace("KIND", kind))
    assert len(exe.kernels) == 1
    rng = np.random.default_rng(3)
    table = rng.standard_normal((1000, 32)).astype(np.float32)
    for batch in (1, 7, 37, 128):
        offsets, n = ragged(rng, batch, max_len=12)
        ids = rng.integers(0, 1000, n).astype(np.int32)
        (got,) = exe.run([table, ids, offsets], device="sim")
        want = loop_segments(kind, table[ids], offsets)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
        assert exe.last_stats is not None and exe.last_stats.launches == 1


def test_static_shapes_assemble():
    rng = np.random.default_rng(4)
    offsets = np.array([0, 3, 3, 9, 10], np.int32)
    data = rng.standard_normal((12, 16)).astype(np.float32)
    check(bag_text("mean", rows="12", segments="5"), inputs=[data, offsets], fusion="none")


def scheduled(text: str, rows: str = "auto") -> str:
    return str(lower(parse_module(text), PipelineOptions(fusion="stitch", rows=rows), until="stitch-codegen"))


def kernel_config(text: str, rows: str = "auto") -> str:
    """The configuration stitch-codegen records on the (one) kernel of `text`."""
    m = re.search(r'config = "([^"]*)"', scheduled(text, rows))
    assert m is not None
    return m.group(1)


# what each schedule's lowered kernel combines with (16-element rows, bags split over
# 64 lanes in a block, a few in a warp, none in a thread)
COMBINES = {"thread": ([], ["gpu.shuffle", "gpu.barrier"]), "warp": (["gpu.shuffle"], ["gpu.barrier"]),
            "block": (["gpu.shuffle", "gpu.barrier"], [])}


@pytest.mark.parametrize("schedule", ["thread", "warp", "block"])
@pytest.mark.parametrize("kind", KINDS)
def test_each_schedule_matches_the_reference(schedule, kind):
    """Every segment schedule (forced by `rows=`), with empty segments and offsets
    outside the data; block bags are long enough to split over warps (64 lanes a run,
    combined through shared memory). The PTX assembles (check runs ptxas)."""
    rng = np.random.default_rng(5)
    offsets, n = ragged(rng, 23, max_len=150 if schedule == "block" else 6)
    offsets[4], offsets[10] = -2, n + 3
    data = rng.standard_normal((n, 16)).astype(np.float32)
    lowered = str(check(bag_text(kind), inputs=[data, offsets], fusion="stitch", rows=schedule))
    assert kernel_config(bag_text(kind), schedule).startswith(f"segments/{schedule}/")
    present, absent = COMBINES[schedule]
    assert all(x in lowered for x in present) and not any(x in lowered for x in absent)


@pytest.mark.parametrize("schedule", ["warp", "block"])
def test_wide_rows_and_f16(schedule):
    """64-element rows: a warp's share takes 16 vectors, a block's runs 16 lanes each
    (shuffles only); f16 data accumulates in f32."""
    rng = np.random.default_rng(6)
    offsets, n = ragged(rng, 19, max_len=40)
    data = rng.standard_normal((n, 64)).astype(np.float16)
    for kind in ("sum", "max"):
        check(bag_text(kind, "f16", dim=64), inputs=[data, offsets], fusion="stitch", rows=schedule)


@pytest.mark.parametrize(("rows", "segments", "dim", "schedule"), [
    (8192, 32, 16, "block"),  # bags of 256 rows: a block each
    (65536, 65536, 4, "thread"),  # bags of one row of 4 elements: a thread each
    (640, 20, 64, "warp"),  # bags of 32 rows of 64 elements
])
def test_the_evaluator_chooses_by_bag_and_row(rows, segments, dim, schedule):
    config = kernel_config(bag_text("sum", rows=str(rows), segments=str(segments), dim=dim))
    assert config.startswith(f"segments/{schedule}/")


@pytest.mark.parametrize("schedule", ["thread", "warp", "block"])
def test_one_module_runs_every_batch_in_each_schedule(schedule):
    exe = fsir.compile(EMBEDDING_BAG.replace("KIND", "mean"), rows=schedule)
    rng = np.random.default_rng(7)
    table = rng.standard_normal((1000, 32)).astype(np.float32)
    for batch in (1, 7, 37, 128):
        offsets, n = ragged(rng, batch, max_len=70)
        ids = rng.integers(0, 1000, n).astype(np.int32)
        (got,) = exe.run([table, ids, offsets], device="sim")
        np.testing.assert_allclose(got, loop_segments("mean", table[ids], offsets), rtol=2e-5, atol=2e-5)


def test_other_fusions_stay_with_the_loop_mapping():
    """A segment_reduce with a consumer fused in is not the segments mapping's."""
    text = """
func.func @scaled(%rows: tensor<?x16xf32>, %offsets: tensor<?xi32>) -> tensor<?x16xf32> {
  %b = graph.segment_reduce sum %rows, %offsets : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  %e = graph.exp %b : tensor<?x16xf32>
  func.return %e : tensor<?x16xf32>
}"""
    rng = np.random.default_rng(8)
    offsets, n = ragged(rng, 9)
    check(text, inputs=[rng.standard_normal((n, 16)).astype(np.float32), offsets], fusion="stitch")
    assert re.search(r"schedule.kernel @scaled_k0 loop", scheduled(text))


def test_summaries_state_the_lowered_registers():
    """Every candidate's summary states within 2 the registers the gpu-IR evaluator finds
    in its lowered kernel. (Its trip counts it cannot compare: the bag loop's bounds
    are data, which the summary takes from the static shapes and the gpu IR does not.)"""
    from fsir.codegen.mappings.segments import SegmentsMapping, segment_candidates, segment_vectors, static_bag
    from fsir.codegen.stitch_codegen import FusionCodegen
    from fsir.dialects import graph
    from fsir.dialects.stitch import FusionOp

    mapping = SegmentsMapping()
    module = lower(parse_module(STATIC_BAG), PipelineOptions(fusion="stitch"), until="fusion-explore")
    fusion = next(op for op in module.walk() if isinstance(op, FusionOp))
    ctx = FusionCodegen(fusion, "k")
    s = next(op for op in ctx.ops if isinstance(op, graph.SegmentReduceOp))
    candidates = segment_candidates(32, segment_vectors(s, list(fusion.operands)), static_bag(s) or 0)
    assert {c.schedule for c in candidates} == {"warp", "block"}
    for c in candidates:
        k = mapping.kernel(ctx, s, c)
        stated, lowered = mapping.score(k, c, ctx.spec), mapping.score_lowered(k, ctx.spec)
        assert abs(stated.registers - lowered.registers) <= 2, c.describe()
        k.drop_all_references()


@pytest.mark.parametrize("schedule", ["thread", "warp", "block"])
def test_integer_data_and_i64_offsets(schedule):
    text = """
func.func @bag(%data: tensor<?x8xi32>, %offsets: tensor<?xi64>) -> tensor<?x8xi32> {
  %b = graph.segment_reduce KIND %data, %offsets : (tensor<?x8xi32>, tensor<?xi64>) -> tensor<?x8xi32>
  func.return %b : tensor<?x8xi32>
}"""
    rng = np.random.default_rng(9)
    for kind in ("sum", "min"):
        offsets, n = ragged(rng, 17, max_len=100 if schedule == "block" else 6)
        data = rng.integers(-50, 50, (n, 8)).astype(np.int32)
        check(text.replace("KIND", kind), inputs=[data, offsets.astype(np.int64)], fusion="stitch", rows=schedule)


def test_the_columns_hook_scores_warp_shapes():
    """`segment_column_schedule` (for a ragged column of the columns mapping): lanes
    within a warp, more of them for long bags over few rows than for short bags."""
    from collections import Counter

    from fsir.codegen.mappings.segments import SegmentWork, segment_column_schedule
    from fsir.gpuspec import gpu_spec

    work = SegmentWork(Counter({"global": 1, "alu": 4}), Counter({"global": 1, "alu": 1}), 4, 4, 4)
    spec = gpu_spec("H100")
    long_few = segment_column_schedule(16, [1, 2, 4], work, rows=8, bag=48, spec=spec)
    short_many = segment_column_schedule(16, [1, 2, 4], work, rows=4096, bag=2, spec=spec)
    for lanes, vector in (long_few, short_many):
        assert 16 // vector * lanes <= 32 and lanes & (lanes - 1) == 0
    assert long_few[0] > short_many[0]
