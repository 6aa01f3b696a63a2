"""The delta-evaluator's numbers (FusionStitching §5.4), the GPU tables, and plan repair."""

from __future__ import annotations

import dataclasses

import pytest

from fsir.errors import UserError
from fsir.fusion.dataflow import build_dataflow
from fsir.fusion.delta_evaluator import DeltaEvaluator
from fsir.fusion.explorer import ExplorerOptions, explore
from fsir.fusion.plan import beam_search, build_plan
from fsir.gpuspec import GPUS, gpu_spec
from fsir.parse import parse_module
from fsir.runtime.reference import find_function

MB4 = 4 * 1024 * 1024  # bytes of a 1024x1024 f32 tensor


def _graph(text: str, gpu: str = "H100"):
    f = find_function(parse_module(text))
    g = build_dataflow(f.body.block)
    return g, DeltaEvaluator(g, gpu_spec(gpu))


CHAIN = """
func.func @chain(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %a = graph.neg %x : tensor<1024x1024xf32>
  %b = graph.abs %a : tensor<1024x1024xf32>
  func.return %b : tensor<1024x1024xf32>
}
"""


def test_two_op_chain_saves_one_round_trip_and_one_launch():
    g, ev = _graph(CHAIN)
    assert ev.own == [2 * MB4, 2 * MB4]
    p = ev.extend(ev.singles[1], 0)
    assert p.baseline == 4 * MB4 and p.traffic == 2 * MB4 and p.kernels == 2
    # 8 MiB saved at 3350 GB/s, one launch of 1 µs, no penalty: a million threads
    # keep every SM busy and the kernel stays memory-bound.
    assert ev.excess(p) == 0.0
    assert p.score == pytest.approx(2 * MB4 / 3350e9 + 1e-6, rel=1e-9)
    assert p.score == pytest.approx(3.504e-6, rel=1e-3)


def test_saved_bytes_are_worth_more_on_a_slower_gpu():
    _, h100 = _graph(CHAIN, "H100")
    _, t4 = _graph(CHAIN, "T4")
    f_t4 = t4.extend(t4.singles[1], 0).score
    assert f_t4 == pytest.approx(2 * MB4 / 320e9 + 1e-6, rel=1e-9)
    assert f_t4 > h100.extend(h100.singles[1], 0).score


def test_single_ops_score_zero():
    g, ev = _graph(CHAIN)
    assert [p.score for p in ev.singles] == [0.0, 0.0]


def test_incremental_and_from_scratch_scores_agree():
    text = """
func.func @f(%x: tensor<256x512xf32>, %g: tensor<512xf32>) -> (tensor<256x512xf32>, tensor<256xf32>) {
  %s = graph.reduce sum %x dims [1] : (tensor<256x512xf32>) -> tensor<256xf32>
  %sb = graph.broadcast %s dims [0] : (tensor<256xf32>) -> tensor<256x512xf32>
  %d = graph.sub %x, %sb : tensor<256x512xf32>
  %gb = graph.broadcast %g dims [1] : (tensor<512xf32>) -> tensor<256x512xf32>
  %y = graph.mul %d, %gb : tensor<256x512xf32>
  func.return %y, %s : tensor<256x512xf32>, tensor<256xf32>
}
"""
    g, ev = _graph(text)
    p = ev.singles[4]
    for v in (3, 2, 1, 0):
        p = ev.extend(p, v)
        q = ev.of(p.members, v)
        assert (p.traffic, p.baseline, p.kernels) == (q.traffic, q.baseline, q.kernels)
        assert p.score == pytest.approx(q.score)
    # %s is returned too: it is written even though its consumer is fused
    assert p.traffic == 256 * 512 * 4 + 512 * 4 + 256 * 512 * 4 + 256 * 4


FEW_LONG_ROWS = """
func.func @f(%x: tensor<2x1048576xf32>) -> tensor<2x1048576xf32> {
  %s = graph.reduce sum %x dims [1] : (tensor<2x1048576xf32>) -> tensor<2xf32>
  %b = graph.broadcast %s dims [0] : (tensor<2xf32>) -> tensor<2x1048576xf32>
  %y = graph.sub %x, %b : tensor<2x1048576xf32>
  func.return %y : tensor<2x1048576xf32>
}
"""


def test_reduction_over_few_long_rows_is_penalised():
    """Stitching the consumers forces one block per row: 2 blocks for the whole
    kernel, a sliver of the bandwidth (§2.3); the penalty outweighs the savings."""
    g, ev = _graph(FEW_LONG_ROWS)
    p = ev.extend(ev.extend(ev.singles[2], 1), 0)
    threads, per_row, smem = ev.launch_shape(p)
    assert (threads, per_row) == (512, 256) and smem > 0
    assert ev.excess(p) - p.excess_sum > 1e-4
    assert p.score < 0
    ex = explore(find_function(parse_module(FEW_LONG_ROWS)).body.block, ExplorerOptions())
    assert [sorted(k.members) for k in ex.plan.kernels if k.kernels] == [[0], [1, 2]]


def test_reshapes_are_free_and_splat_constants_cost_nothing():
    text = """
func.func @f(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %c = graph.constant dense<2.0> : tensor<4x8xf32>
  %m = graph.mul %x, %c : tensor<4x8xf32>
  %r = graph.reshape %m : (tensor<4x8xf32>) -> tensor<32xf32>
  func.return %r : tensor<32xf32>
}
"""
    g, ev = _graph(text)
    assert g.kind == ["light", "free"]
    assert ev.own == [128 + 128, 0]
    assert ev.singles[1].kernels == 0 and ev.kernel_time(ev.singles[1]) == 0.0
    assert sorted(g.ext_bytes) == [0, 128]


def test_gpu_tables():
    assert set(GPUS) == {"V100", "T4", "A100", "H100", "H200"}
    h100 = gpu_spec("h100")
    assert (h100.sms, h100.hbm_bandwidth, h100.launch_cost) == (132, 3350e9, 1e-6)
    assert gpu_spec("A100-80GB") is GPUS["A100"]
    assert gpu_spec("T4").max_warps_per_sm == 32
    with pytest.raises(UserError, match=r"unknown GPU 'B200' \(known: V100, T4, A100, H100, H200\)"):
        gpu_spec("B200")
    with pytest.raises(dataclasses.FrozenInstanceError):
        h100.sms = 1  # type: ignore[misc]


def test_plan_dissolves_a_cycle_between_two_patterns():
    """A = {a1, a2} and B = {b1, b2, m} are each free of cycles, but a1 feeds B and B
    feeds a2: as kernels, A must run before B and B before A."""
    text = """
func.func @f(%x: tensor<64xf32>, %y: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %a1 = graph.neg %x : tensor<64xf32>
  %b2 = graph.abs %y : tensor<64xf32>
  %b1 = graph.neg %a1 : tensor<64xf32>
  %a2 = graph.exp %b2 : tensor<64xf32>
  %m = graph.add %b1, %b2 : tensor<64xf32>
  func.return %m, %a2 : tensor<64xf32>, tensor<64xf32>
}
"""
    g, ev = _graph(text)
    a = ev.of(frozenset({0, 3}), 0)
    b = ev.of(frozenset({1, 2, 4}), 1)
    plan = build_plan(g, ev, [a, b])
    assert plan.dissolved == 1
    fused = [sorted(k.members) for k in plan.fused]
    assert fused in ([[0, 3]], [[1, 2, 4]])
    assert sum(len(k) for k in plan.kernels) == 5


def test_beam_search_keeps_plans_that_skip_a_greedy_choice():
    g, ev = _graph("""
func.func @f(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %a = graph.neg %x : tensor<1024x1024xf32>
  %b = graph.abs %a : tensor<1024x1024xf32>
  %c = graph.neg %b : tensor<1024x1024xf32>
  func.return %c : tensor<1024x1024xf32>
}
""")
    small = ev.of(frozenset({0, 1}), 0)
    large = ev.of(frozenset({1, 2}), 1)
    large.score = 10 * small.score  # pretend the later pattern is far better
    greedy = beam_search([[small], [large], []], beam=1)
    wide = beam_search([[small], [large], []], beam=3)
    assert [sorted(p.members) for p in greedy[0]] == [[0, 1]]
    assert [sorted(p.members) for p in wide[0]] == [[1, 2]]
