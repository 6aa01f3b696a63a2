"""The concurrent simulator (fsir/sim/concurrent.py) and its timeline model (timeline.py) on
hand-written tile-synchronised PTX (tests/sim/ptx/tile_pipeline.ptx): results under every
dispatch order, the paper's Fig. 4a wait counts, deadlock reports, parked warps, the model's
waves, stream order and semaphore delays."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from fsir.errors import SimulatorError, UserError
from fsir.gpuspec import gpu_spec
from fsir.runtime.device import LaunchRequest, SimDevice
from fsir.sim import load_module, run_ptx
from fsir.sim.concurrent import (
    DeadlockError,
    DispatchQueue,
    Launch,
    blocks_per_sm,
    dispatch_order,
    parse_dispatch,
    run_concurrent,
)
from fsir.sim.loader import sync_roles
from fsir.sim.parser import parse_ptx
from fsir.sim.timeline import block_seconds, draw_timeline, model_timeline, sharing

PTX = (Path(__file__).parent / "ptx" / "tile_pipeline.ptx").read_text()
ORDERS = ("fifo", "reverse", "consumer-first", "random:0", "random:1", "random:2", "random:3", "random:4")
TILE, ROW = 0, 1


def small_gpu(sms: int, slots: int):
    return dataclasses.replace(gpu_spec("A100"), sms=sms, max_blocks_per_sm=slots)


def pipeline(m: int, n: int, p: int, policy: int, seed: int = 0, streams=(0, 1), priorities=(0, 0)):
    """Launches of producer (Y = 2X + 1, m x n) and consumer (Z = Y W, m x p) and the expected Z."""
    mod = load_module(PTX)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, n)).astype(np.float32)
    w = rng.standard_normal((n, p)).astype(np.float32)
    y = np.zeros((m, n), np.float32)
    z = np.zeros((m, p), np.float32)
    sem = np.zeros((m // 4) * (n // 8), np.uint32)
    launches = [
        Launch(mod, "producer", (n // 8, m // 4), 32, [x, y, sem, np.uint32(n), np.uint32(policy)],
               stream=streams[0], priority=priorities[0]),
        Launch(mod, "consumer", (p // 8, m // 4), 32, [y, w, z, sem, np.uint32(n), np.uint32(p), np.uint32(policy)],
               stream=streams[1], priority=priorities[1]),
    ]
    expected = (2 * x.astype(np.float64) + 1) @ w.astype(np.float64)
    return launches, z, expected


def test_tile_pipeline_ptx_assembles():
    from fsir.ptx.ptxas import assemble, find_ptxas

    assert find_ptxas() is not None
    result = assemble(PTX, "sm_80")
    assert result.ok, result.errors


@pytest.mark.parametrize("policy", [TILE, ROW], ids=["tilesync", "rowsync"])
@pytest.mark.parametrize("order", ORDERS)
def test_results_under_every_dispatch_order(policy, order):
    launches, z, expected = pipeline(16, 32, 24, policy)
    run = run_concurrent(launches, dispatch=order)
    np.testing.assert_allclose(z, expected, rtol=1e-5, atol=1e-5)
    producer, consumer = run.stats
    assert producer.posts == 4 * 4  # one per producer tile, whatever the semaphore
    assert consumer.waits == (4 * 3 * 4 if policy == TILE else 4 * 3)
    assert len(run.blocks) == 16 + 12


def test_fig4a_counts():
    """Producer 2x2 tiles, consumer 2x3 tiles: 12 TileSync waits against 6 RowSync waits."""
    counts = {}
    for policy in (TILE, ROW):
        launches, z, expected = pipeline(8, 16, 24, policy)
        run = run_concurrent(launches)
        np.testing.assert_allclose(z, expected, rtol=1e-5, atol=1e-5)
        counts[policy] = (run.stats[1].waits, run.stats[0].posts, run.stats[1].spins)
    assert counts[TILE] == (12, 4, 0)  # fifo: every producer tile is done before a consumer block runs
    assert counts[ROW] == (6, 4, 0)


def test_consumer_first_waits_park_instead_of_spinning():
    """Consumer blocks run first and find no tile ready: each parks and is woken by a post,
    so a wait costs at most one re-read per post to its semaphore, not a busy loop."""
    for policy, posts_per_word in ((TILE, 1), (ROW, 2)):
        launches, z, expected = pipeline(8, 16, 24, policy)
        run = run_concurrent(launches, dispatch="consumer-first")
        np.testing.assert_allclose(z, expected, rtol=1e-5, atol=1e-5)
        consumer = run.stats[1]
        assert 0 < consumer.spins <= posts_per_word * consumer.waits
        fifo = run_concurrent(pipeline(8, 16, 24, policy)[0]).stats[1]
        # the extra instructions are the re-read iterations only (3 instructions by one thread each)
        assert consumer.instructions - fifo.instructions == 3 * consumer.spins


def test_consumer_first_deadlocks_when_consumers_fill_every_slot():
    launches, _, _ = pipeline(8, 16, 24, TILE)
    with pytest.raises(DeadlockError) as e:
        run_concurrent(launches, spec=small_gpu(2, 2), dispatch="consumer-first")
    msg = str(e.value)
    assert "deadlock" in msg and "kernel 'consumer'" in msg
    assert "block (0,0,0) on 0x" in msg and "psem" in msg
    assert "4 blocks of 'producer'" in msg
    # the same slots suffice in FIFO order
    launches, z, expected = pipeline(8, 16, 24, TILE)
    run_concurrent(launches, spec=small_gpu(2, 2), dispatch="fifo")
    np.testing.assert_allclose(z, expected, rtol=1e-5, atol=1e-5)


def test_same_stream_runs_launches_one_after_another():
    """On one stream the consumer starts after the producer finished: no wait spins even in
    consumer-first order, and no deadlock with one slot."""
    launches, z, expected = pipeline(8, 16, 24, TILE, streams=(0, 0))
    run = run_concurrent(launches, spec=small_gpu(1, 1), dispatch="consumer-first")
    np.testing.assert_allclose(z, expected, rtol=1e-5, atol=1e-5)
    assert run.stats[1].spins == 0


CHAIN = """
.version 7.8
.target sm_80
.address_size 64
// block b waits until block b+1 set flag[b], then sets flag[b-1]: a chain against block order
.visible .entry chain(.param .u64 pflag, .param .u64 pout)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pflag];
  ld.param.u64 %rd2, [pout];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %nctaid.x;
  add.u32 %r3, %r1, 1;
  setp.ge.u32 %p1, %r3, %r2;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  mov.u32 %r5, 0;
  @%p1 bra GO;
SPIN:
  WAITLOAD
  setp.eq.u32 %p2, %r4, 0;
  @%p2 bra SPIN;
  ld.global.u32 %r5, [%rd2+0];
GO:
  add.s64 %rd5, %rd2, %rd3;
  add.u32 %r6, %r1, 100;
  st.global.u32 [%rd5+4], %r6;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra END;
  fence.acq_rel.gpu;
  membar.gl;
  atom.acq_rel.gpu.global.exch.b32 %r7, [%rd4+-4], 1;
END:
  ret;
}
"""


@pytest.mark.parametrize("load", ["ld.acquire.gpu.global.u32 %r4, [%rd4];", "ld.relaxed.gpu.global.u32 %r4, [%rd4];",
                                  "ld.volatile.global.u32 %r4, [%rd4];",
                                  "atom.acquire.gpu.global.or.b32 %r4, [%rd4], 0;"])
def test_blocks_of_one_launch_wait_for_each_other(load):
    """A single launch whose block b waits for block b+1: run_ptx runs such a kernel's blocks
    concurrently (it livelocked before); with one slot it is a deadlock report."""
    ptx = CHAIN.replace("WAITLOAD", load)
    flag = np.zeros(8, np.uint32)
    out = np.zeros(9, np.uint32)
    st = run_ptx(ptx, "chain", 8, 32, [flag, out])
    assert out[1:].tolist() == [100 + b for b in range(8)]
    assert flag[:7].tolist() == [1] * 7
    assert st.waits == 7 * 32 and st.posts == 7 * 32
    mod = load_module(ptx)
    with pytest.raises(DeadlockError, match=r"kernel 'chain'.*block \(0,0,0\) on 0x.*pflag"):
        run_concurrent([Launch(mod, "chain", 8, 32, [np.zeros(8, np.uint32), np.zeros(9, np.uint32)])],
                       spec=small_gpu(1, 1))


def test_spin_loop_analysis():
    def roles(body: str):
        ptx = f""".version 7.8
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
{body}
  ret;
}}"""
        fn = parse_ptx(ptx).kernels["k"]
        from fsir.sim.parser import Instr, Label

        labels, instrs = {}, []
        for s in fn.body:
            if isinstance(s, Label):
                labels[s.name] = len(instrs)
            elif isinstance(s, Instr):
                instrs.append(s)
        r, edges = sync_roles(instrs, labels)
        return {instrs[i].opcode: v for i, v in r.items()}, len(edges)

    spin = "L:\n  ld.acquire.gpu.global.u32 %r1, [%rd1];\n  setp.eq.u32 %p1, %r1, 0;\n  @%p1 bra L;"
    assert roles(spin) == ({"ld.acquire.gpu.global.u32": "head"}, 1)
    # a loop that stores is not a spin loop; a plain (weak) load loop is not one either
    assert roles(spin.replace("setp", "st.global.u32 [%rd1+4], %r1;\n  setp"))[1] == 0
    assert roles(spin.replace("ld.acquire.gpu", "ld"))[1] == 0
    # a loop carrying a register from one iteration to the next (a counter, a CAS loop's
    # expected value) is no wait: its next iteration may differ without any write
    assert roles(spin.replace("setp", "add.u32 %r2, %r2, 1;\n  setp"))[1] == 0
    cas = ("L:\n  mov.u32 %r2, %r1;\n  atom.global.cas.b32 %r1, [%rd1], %r2, 5;\n  setp.ne.u32 %p1, %r1, %r2;\n"
           "  @%p1 bra L;")
    assert roles(cas)[1] == 0
    assert roles("L:\n  atom.global.cas.b32 %r1, [%rd1], 0, 1;\n  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra L;")[1] == 1
    # an atomic that adds 1 in a loop is a ticket, not a wait
    assert roles("L:\n  atom.global.add.u32 %r1, [%rd1], 1;\n  setp.eq.u32 %p1, %r1, 0;\n  @%p1 bra L;")[1] == 0
    assert roles("  red.release.gpu.global.add.u32 [%rd1], 1;") == ({"red.release.gpu.global.add.u32": "post"}, 0)
    assert roles("  st.release.gpu.global.u32 [%rd1], 1;") == ({"st.release.gpu.global.u32": "post"}, 0)
    # CUDA's __threadfence(); atomicAdd(sem, 1): a fence, then a relaxed reduction
    assert roles("  membar.gl;\n  add.s64 %rd1, %rd1, 4;\n  red.global.add.u32 [%rd1], 1;") == (
        {"red.global.add.u32": "post"}, 0)
    assert roles("  membar.gl;\n  ld.global.u32 %r1, [%rd1];\n  red.global.add.u32 [%rd1], 1;") == ({}, 0)
    assert roles("  red.global.add.u32 [%rd1], 1;") == ({}, 0)


def test_dispatch_orders():
    mod = load_module(PTX)
    a = Launch(mod, "producer", 3, 32, [])
    b = Launch(mod, "consumer", 2, 32, [], stream=1)
    assert dispatch_order("fifo", 0, [a, b], [3, 2]) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
    assert dispatch_order("reverse", 0, [a, b], [3, 2]) == [(0, 2), (0, 1), (0, 0), (1, 1), (1, 0)]
    assert dispatch_order("consumer-first", 0, [a, b], [3, 2]) == [(1, 0), (1, 1), (0, 0), (0, 1), (0, 2)]
    hi = dataclasses.replace(b, priority=-1)  # a higher-priority stream goes first
    assert dispatch_order("fifo", 0, [a, hi], [3, 2])[:2] == [(1, 0), (1, 1)]
    r = dispatch_order("random", 7, [a, b], [3, 2])
    assert sorted(r) == dispatch_order("fifo", 0, [a, b], [3, 2]) and r == dispatch_order("random", 7, [a, b], [3, 2])
    assert parse_dispatch("random:12") == ("random", 12)
    for bad in ("lifo", "random:x"):
        with pytest.raises(UserError, match="unknown dispatch order"):
            parse_dispatch(bad)


def test_occupancy():
    a100 = gpu_spec("A100")
    assert blocks_per_sm(a100, 32, 0) == 32
    assert blocks_per_sm(a100, 256, 0) == 8
    assert blocks_per_sm(a100, 100, 0) == 16  # 4 warps
    assert blocks_per_sm(a100, 128, 48 * 1024) == 3
    launches, _, _ = pipeline(8, 16, 24, TILE)
    no_smem = dataclasses.replace(gpu_spec("A100"), smem_per_sm=0)
    with pytest.raises(SimulatorError, match="does not fit an SM"):
        run_concurrent([dataclasses.replace(launches[0], shared_bytes=64)], spec=no_smem)


# ------------------------------------------------------------------------ the timeline model


def test_model_waves_and_partial_last_wave():
    """Independent blocks: ceil(blocks / slots) waves of equal blocks after the launch latency."""
    spec = small_gpu(2, 2)
    for blocks, waves in ((4, 1), (5, 2), (8, 2), (9, 3)):
        launches, _, _ = pipeline(4, 8 * blocks, 8, TILE)
        run = run_concurrent(launches[:1], spec=spec)
        tl = model_timeline(run)
        assert tl.waves == [waves]
        t_block = block_seconds(run.blocks[0].stats, spec, 2)
        assert tl.total == pytest.approx(spec.launch_cost + waves * t_block)
        assert tl.launch_us[0] == pytest.approx(tl.modeled_us)
        assert {(s.sm, s.slot) for s in tl.spans} <= {(0, 0), (0, 1), (1, 0), (1, 1)}
    # a grid smaller than a wave spreads over the SMs: fewer blocks share each SM
    a100 = gpu_spec("A100")
    assert [sharing(a100, 8, b) for b in (1, 108, 109, 500, 5000)] == [1, 1, 2, 5, 8]


def test_model_delays_waiting_blocks_until_their_posters_end():
    launches, _, _ = pipeline(16, 32, 24, TILE)
    run = run_concurrent(launches, spec=small_gpu(4, 2), dispatch="reverse")
    tl = model_timeline(run)
    spans = {(s.launch, s.block): s for s in tl.spans}
    recs = {(r.launch, r.block): r for r in run.blocks}
    checked = 0
    for (li, b), sp in spans.items():
        if li != 1:
            continue
        assert len(sp.waited) == 4  # one per producer tile of its row
        for w in recs[(li, b)].waits.values():
            assert w.posters, "every consumer wait saw a producer post"
            ends = max(spans[p].end for p in w.posters)
            assert any(to >= ends for _, to in sp.waited)
            checked += 1
    assert checked == 12 * 4
    assert tl.total == max(s.end for s in tl.spans)


def test_model_stream_serial_against_concurrent():
    """On one stream the consumer starts a launch latency after the producer's last block; on
    two streams it starts with the producer, and its blocks wait for their tiles."""
    serial, _, _ = pipeline(16, 32, 24, TILE, streams=(0, 0))
    tl_s = model_timeline(run_concurrent(serial, spec=small_gpu(8, 4)))
    lat = tl_s.spec.launch_cost
    assert tl_s.launch_start[1] == pytest.approx(tl_s.launch_end[0] + lat)
    conc, _, _ = pipeline(16, 32, 24, TILE, streams=(0, 1))
    tl_c = model_timeline(run_concurrent(conc, spec=small_gpu(8, 4)))
    assert tl_c.launch_start[1] == pytest.approx(lat)
    assert tl_c.total < tl_s.total
    # a higher-priority consumer stream is dispatched first in the model as in the simulator
    prio, _, _ = pipeline(16, 32, 24, TILE, streams=(0, 1), priorities=(0, -1))
    tl_p = model_timeline(run_concurrent(prio, spec=small_gpu(8, 4)))
    first = min(tl_p.spans, key=lambda s: (s.start, s.sm))
    assert first.launch == 1


def test_sim_device_launch_pipeline_and_timeline_png(tmp_path):
    launches, z, expected = pipeline(8, 16, 24, ROW)
    dev = SimDevice(dispatch="random:3")
    reqs = [LaunchRequest(ln.module, ln.kernel, ln.grid, ln.block, ln.args, 0, ln.stream, ln.priority)
            for ln in launches]
    stats = dev.launch_pipeline(reqs)
    np.testing.assert_allclose(z, expected, rtol=1e-5, atol=1e-5)
    assert [s.waits for s in stats] == [0, 6] and dev.stats.posts == 4
    assert len(dev.timelines) == 1 and [k for k, _, us in dev.launch_log if us] == ["producer", "consumer"]
    png = tmp_path / "t.png"
    draw_timeline(dev.timelines, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(UserError, match="unknown dispatch order"):
        SimDevice(dispatch="backwards")


MLIR = """func.func @f(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %y = graph.exp %x : tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}
"""


def test_fs_run_timeline_and_stats(tmp_path):
    from fsir.tools.fs_run import main_impl

    src = tmp_path / "m.mlir"
    src.write_text(MLIR)
    png, js = tmp_path / "t.png", tmp_path / "s.json"
    assert main_impl([str(src), "--device", "sim", "--check", "--timeline", str(png), "--stats-json", str(js),
                      "--sim-dispatch", "reverse", "--sim-gpu", "V100"]) == 0
    rec = json.loads(js.read_text())
    assert rec["waits"] == rec["posts"] == rec["spins"] == 0
    assert rec["modeled_us"] > 1.0 and "model" in rec["model"] and rec["waves"] == [1]
    assert rec["per_launch"][0]["modeled_us"] == pytest.approx(rec["modeled_us"], rel=1e-3)
    assert png.read_bytes()[:4] == b"\x89PNG"
    # without --timeline single launches run chunk by chunk and are not modeled
    assert main_impl([str(src), "--device", "sim", "--stats-json", str(js)]) == 0
    rec = json.loads(js.read_text())
    assert "modeled_us" not in rec and "modeled_us" not in rec["per_launch"][0]
    with pytest.raises(UserError, match="unknown dispatch order"):
        main_impl([str(src), "--device", "sim", "--sim-dispatch", "sideways"])
    with pytest.raises(UserError, match="need a compiled run"):
        main_impl([str(src), "--device", "reference", "--timeline", str(png)])


SMID = """
.version 7.8
.target sm_80
.address_size 64
.visible .entry smid(.param .u64 pout)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [pout];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %smid;
  mov.u32 %r3, %nsmid;
  mul.wide.u32 %rd2, %r1, 8;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v2.u32 [%rd3], {%r2, %r3};
  ret;
}
"""


def test_blocks_see_the_sm_they_were_placed_on():
    out = np.zeros((6, 2), np.uint32)
    run_concurrent([Launch(load_module(SMID), "smid", 6, 64, [out])], spec=small_gpu(3, 4))
    assert out[:, 1].tolist() == [3] * 6
    assert sorted(out[:, 0].tolist()) == [0, 0, 1, 1, 2, 2]  # spread over the least loaded SMs


def test_consumer_first_ignores_priorities():
    """The consumer's launch reaches the scheduler first, whatever its stream's priority."""
    mod = load_module(PTX)
    a = Launch(mod, "producer", 3, 32, [])
    lo = Launch(mod, "consumer", 2, 32, [], stream=1, priority=1)
    assert dispatch_order("consumer-first", 0, [a, lo], [3, 2])[:2] == [(1, 0), (1, 1)]


def test_a_launch_queues_when_its_stream_lets_it_run():
    """Producer on stream 0; wait-kernel and consumer on stream 1. In consumer-first order
    the wait-kernel is queued before the producer, but the consumer arrives only when the
    wait-kernel has finished, behind every producer block already queued."""
    mod = load_module(PTX)
    prod = Launch(mod, "producer", 3, 32, [])
    wait = Launch(mod, "consumer", 1, 32, [], stream=1, priority=1)
    cons = Launch(mod, "consumer", 2, 32, [], stream=1, priority=1)
    q = DispatchQueue("consumer-first", 0, [prod, wait, cons], [3, 1, 2])
    q.arrive([0, 1], 0)
    assert list(q.queued()) == [(1, 0), (0, 0), (0, 1), (0, 2)]
    q.take((1, 0))
    q.take((0, 0))
    q.arrive([2], 1)  # the wait-kernel finished
    assert list(q.queued()) == [(0, 1), (0, 2), (2, 0), (2, 1)]
    assert q.waiting() == [(0, 1), (0, 2), (2, 0), (2, 1)]
    r = DispatchQueue("random", 3, [prod, wait, cons], [3, 1, 2])
    r.arrive([0, 1], 0)
    assert sorted(r.queued()) == [(0, 0), (0, 1), (0, 2), (1, 0)]
