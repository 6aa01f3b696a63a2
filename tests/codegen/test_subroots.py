"""Expensive elementwise ops as sub-roots (FusionStitching §4.1-4.2, §4.4): every
choice forced with stitch-codegen{subroots=...} (none: recomputed by every reader;
all: a group of its own, kept in registers when the row is cached, in shared rows when
the groups loop) matches the reference interpreter on the simulator and assembles for
sm_80 and sm_90; in a looping configuration the shared rows save the global reads the
recomputation repeats; and the evaluator keeps registers for short rows."""

from __future__ import annotations

import pytest

from fsir.dialects.schedule import KernelOp, Mapping, Storage
from fsir.testing.graphs import gelu_sum, layernorm_exp, softmax
from fsir.testing.pipeline import check, measure, schedule_kernels


def two_subroots(rows: int, cols: int, overlap: bool) -> str:
    """exp's rows are read by two sums, then tanh's by a third and the output: their
    live ranges are disjoint (tanh reuses exp's space) unless the output reads exp too."""
    x, r = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}xf32>"
    out = "%y = graph.mul %q, %e : " + x if overlap else "%y = graph.add %q, %t : " + x
    return f"""
func.func @two(%x: {x}) -> {x} {{
  %m = graph.reduce max %x dims [1] : ({x}) -> {r}
  %mb = graph.broadcast %m dims [0] : ({r}) -> {x}
  %d = graph.sub %x, %mb : {x}
  %e = graph.exp %d : {x}
  %s1 = graph.reduce sum %e dims [1] : ({x}) -> {r}
  %ex = graph.mul %e, %x : {x}
  %s2 = graph.reduce sum %ex dims [1] : ({x}) -> {r}
  %s12 = graph.div %s2, %s1 : {r}
  %b = graph.broadcast %s12 dims [0] : ({r}) -> {x}
  %xb = graph.sub %x, %b : {x}
  %t = graph.tanh %xb : {x}
  %s3 = graph.reduce sum %t dims [1] : ({x}) -> {r}
  %b3 = graph.broadcast %s3 dims [0] : ({r}) -> {x}
  %q = graph.div %t, %b3 : {x}
  {out}
  func.return %y : {x}
}}
"""


def chained(rows: int, cols: int) -> str:
    """tanh(exp(...)): exp is read by a sum, tanh's group and the output; tanh by a
    second sum and the output (a sub-root reading a sub-root)."""
    x, r = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}xf32>"
    return f"""
func.func @chain(%x: {x}) -> {x} {{
  %m = graph.reduce max %x dims [1] : ({x}) -> {r}
  %mb = graph.broadcast %m dims [0] : ({r}) -> {x}
  %d = graph.sub %x, %mb : {x}
  %e = graph.exp %d : {x}
  %s1 = graph.reduce sum %e dims [1] : ({x}) -> {r}
  %b1 = graph.broadcast %s1 dims [0] : ({r}) -> {x}
  %en = graph.div %e, %b1 : {x}
  %t = graph.tanh %en : {x}
  %s2 = graph.reduce sum %t dims [1] : ({x}) -> {r}
  %b2 = graph.broadcast %s2 dims [0] : ({r}) -> {x}
  %te = graph.mul %t, %e : {x}
  %y = graph.sub %te, %b2 : {x}
  func.return %y : {x}
}}
"""


def subroot_storage(k: KernelOp) -> list[Storage]:
    """The storage of each elementwise sub-root group."""
    from fsir.lowering.rows import group_reduce

    return [g.storage.data for g in k.groups()
            if g.storage.data != Storage.GLOBAL and group_reduce(g) is None]


# (graph, forced row schedule, the storage its sub-roots get with subroots=all)
CASES = {
    "softmax-warp-loop": (softmax(7, 300), "warp", ["shared"]),
    "softmax-block-loop": (softmax(3, 3000), "block", ["shared"]),
    "softmax-thread-loop": (softmax(9, 20), "thread", ["shared"]),
    "softmax-warp-reg": (softmax(16, 64), "warp", ["lanes"]),
    "softmax-block-reg": (softmax(3, 1000), "block", ["reg"]),
    "softmax-thread-reg": (softmax(9, 6), "thread", ["reg"]),
    "softmax-f16-loop": (softmax(5, 3000, "f16"), "block", ["shared"]),
    "softmax-f16-reg": (softmax(5, 96, "f16"), "warp", ["lanes"]),
    "gelu-loop": (gelu_sum(6, 500), "warp", ["shared"]),
    "gelu-reg": (gelu_sum(6, 200), "block", ["reg"]),
    # (the mean, a division per row read by two groups too, is no sub-root: each
    # reader computes it once per thread)
    "layernorm-exp-loop": (layernorm_exp(4, 2500), "block", ["shared"]),
    "layernorm-exp-reg": (layernorm_exp(8, 128), "warp", ["lanes"]),
    # en = e / sum is a div read by tanh's group only (no sub-root); tanh's group
    # reads exp's rows
    "chained-loop": (chained(3, 3000), "block", ["shared", "shared"]),
    "chained-reg": (chained(8, 64), "warp", ["lanes", "lanes"]),
    "two-disjoint": (two_subroots(5, 3000, False), "block", ["shared", "shared"]),
    "two-overlap": (two_subroots(5, 3000, True), "block", ["shared", "shared"]),
}


@pytest.mark.parametrize("subroots", ["none", "all"])
@pytest.mark.parametrize("case", list(CASES))
def test_subroot_choice_matches_reference(case, subroots):
    text, rows, storage = CASES[case]
    (k,) = schedule_kernels(text, rows, subroots)
    assert subroot_storage(k) == (storage if subroots == "all" else [])
    # f16 and long sums differ from numpy's pairwise order by rounding only
    check(text, fusion="stitch", rows=rows, subroots=subroots, scale=8 if "f16" in case else 2)


@pytest.mark.parametrize("rows", ["thread", "warp", "block"])
def test_dynamic_row_count(rows):
    """A `?` row count: the shared rows are sized per block (rows_per_block x 40), so
    a sub-root is still possible; rows past the end only shorten the loops."""
    text = softmax(1, 1).replace("1x1", "?x40").replace("tensor<1xf32>", "tensor<?xf32>")
    (k,) = schedule_kernels(text, rows, "all")
    assert subroot_storage(k) == ["shared"]
    check(text, shapes=[(9, 40)], fusion="stitch", rows=rows, subroots="all")


def test_two_subroots_share_space_when_disjoint():
    """The allocator (§4.4): tanh's rows take exp's space once exp's last reader (the
    second sum) is done; when the output reads both, they get two spaces."""
    for overlap, offsets in ((False, [0, 0]), (True, [0, 3000])):
        (k,) = schedule_kernels(two_subroots(5, 3000, overlap), "block", "all")
        subs = [g for g in k.groups() if g.buffer is not None and g.buffer.root_reference.data == "rows_f32"]
        assert [g.offset.value.data for g in subs] == offsets
        assert k.shared_buffers()["rows_f32"].size == offsets[-1] + 3000


def test_evaluator_picks_shared_rows_for_long_rows():
    """10240-element rows are too long for the registers (8 slots x 1024 threads): the
    evaluator keeps exp's rows in shared memory (40 KB, under the 48 KB static limit),
    and the kernel reads x from global memory twice instead of three times."""
    text = softmax(4, 10240)
    (k,) = schedule_kernels(text)
    assert k.cost.data["config"].data.endswith("/smem-exp")
    assert subroot_storage(k) == ["shared"]
    (_, before, _), (_, after, _) = (measure(text, atol=1e-5, subroots=s) for s in ("none", "auto"))
    x_bytes = 4 * 10240 * 4
    assert before.global_load_bytes == 3 * x_bytes
    assert after.global_load_bytes == 2 * x_bytes
    assert after.global_unique_bytes == before.global_unique_bytes


def test_evaluator_sees_the_difference():
    """The latency-evaluator's view of softmax's 3000-element rows on a 256-thread
    block (12 elements a thread, looping): with exp's rows in shared memory each thread
    runs exp 12 times instead of 24 and loads x 24 times instead of 36, and pays 24
    shared loads, 12 shared stores and one barrier more, and 12 KB of shared memory."""
    from fsir.codegen.latency import estimate
    from fsir.codegen.mappings import lower_kernel
    from fsir.gpuspec import gpu_spec
    from fsir.ptx.costs import printed_mix

    spec = gpu_spec("H100")
    est = {}
    for mode in ("none", "all"):
        (k,) = schedule_kernels(softmax(2, 3000), "block", mode)
        grid, block = k.launch()
        est[mode] = estimate(lower_kernel(k).func, grid, block, spec, bandwidth=True)
    none, sub = est["none"].instructions, est["all"].instructions
    exp = printed_mix("math.exp", "f32")["sfu"]  # the SFU instructions of the printer's exp
    assert (none["sfu"], sub["sfu"]) == (24 * exp, 12 * exp)
    assert none["global"] - sub["global"] == 12
    assert sub["smem"] - none["smem"] == 24 + 12
    assert sub["barrier"] - none["barrier"] == 1
    assert est["all"].shared_bytes - est["none"].shared_bytes == 3000 * 4
    assert est["all"].seconds < est["none"].seconds


def test_evaluator_keeps_registers_for_short_rows():
    """Rows a warp caches in registers: the sub-root costs the same as the memo's reuse,
    so the evaluator keeps the configuration without it (the first of a tie)."""
    (k,) = schedule_kernels(softmax(128, 64))
    assert k.cost.data["config"].data.startswith("warp/256/reg")
    assert subroot_storage(k) == []


def test_shared_rows_dropped_when_too_big():
    """16384 f32 per row (64 KB) is over the 48 KB a kernel may declare statically: no
    configuration keeps exp in shared rows, even when forced."""
    # 256 rows: with only a few, the explorer's latency-evaluator prefers spreading the
    # exp over the whole GPU in a kernel of its own to one block per row doing it twice
    (k,) = schedule_kernels(softmax(256, 16384), subroots="all")
    assert "smem" not in k.cost.data["config"].data
    assert subroot_storage(k) == []
    assert k.shared_bytes() <= 48 * 1024


def test_nonlocal_reader_is_not_a_subroot():
    """A reader wanting exp of other rows (the output reads exp transposed) would need
    inter-block communication: exp is recomputed by index propagation instead."""
    x, r = "tensor<64x64xf32>", "tensor<64xf32>"
    text = f"""
func.func @f(%x: {x}) -> {x} {{
  %e = graph.exp %x : {x}
  %s = graph.reduce sum %e dims [1] : ({x}) -> {r}
  %sb = graph.broadcast %s dims [0] : ({r}) -> {x}
  %et = graph.transpose %e perm [1, 0] : ({x}) -> {x}
  %y = graph.div %et, %sb : {x}
  func.return %y : {x}
}}
"""
    ks = schedule_kernels(text, "block", "all")
    assert any(k.mapping.data == Mapping.ROW for k in ks)
    assert all(subroot_storage(k) == [] for k in ks)
